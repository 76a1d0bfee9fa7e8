"""Cost of the security checks: collection on this host, and judging probe documents at scale.

Prints the median time to collect each check on this machine (real commands and files), the
time to judge one node's probe document, and the time to judge 1,000 nodes' documents (what
the runner pays centrally for a 1,000-node handover).
Run: .venv/bin/python benchmarks/bench_security.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from acceptance.security import audit_access, audit_isolation, audit_versions  # noqa: E402
from acceptance.security.audit import evaluate_probe  # noqa: E402
from acceptance.security.host import Host  # noqa: E402
from acceptance.security.minimums import load_minimums  # noqa: E402
from acceptance.security.serial import probe_document  # noqa: E402


def median_s(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    host = Host()
    table = load_minimums()
    collectors = {
        "security.versions": lambda: audit_versions.collect(host),
        "security.access": lambda: audit_access.collect(host, audit_access.AccessParams()),
        "security.isolation": lambda: audit_isolation.collect(host, audit_isolation.IsolationParams()),
    }
    now = datetime.now(timezone.utc).isoformat()
    contract = {"access": {"customer_keys": [], "allowed_ports": [22]}}
    print(f"{'check':<20} {'collect ms':>11} {'judge 1 node ms':>16} {'judge 1000 nodes s':>19} {'doc KB':>7}")
    for check, collect in collectors.items():
        c = median_s(collect, 5)
        doc = json.loads(json.dumps(probe_document(check, collect(), now, "n1")))
        size = len(json.dumps(doc)) / 1024

        def judge(doc=doc, check=check):
            return evaluate_probe(doc, check, contract=contract, table=table, node="n1")

        one = median_s(judge, 20)
        t = time.perf_counter()
        for i in range(1000):
            evaluate_probe(doc, check, contract=contract, table=table, node=f"n{i}")
        batch = time.perf_counter() - t
        print(f"{check:<20} {c * 1000:>11.1f} {one * 1000:>16.2f} {batch:>19.2f} {size:>7.1f}")


if __name__ == "__main__":
    main()
