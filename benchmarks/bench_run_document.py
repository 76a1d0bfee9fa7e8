"""The acceptance run document (results.json) at scale: writing it, reading it back strictly, and
refusing one over the limits.

    .venv/bin/python benchmarks/bench_run_document.py [--nodes 12600] [--criteria 7] [--repeat 3]
                                                      [--refuse-criteria 100000] [--workdir /tmp]

1. Builds a run document of C criteria on N nodes (a verdict per node and criterion, with
   floats in every spelling: exponent form, below 1e-4, integral; non-ASCII text; a node and a
   rack roll-up each), reads it with the strict reader `accept report` uses
   (`read_run_document`) and times `RunDocument.dumps()` against `json.dumps` of the same
   plain data (the bytes must be the same; the script checks).
2. Writes a results.json of `--refuse-criteria` criteria (100,000: about 290 MB, ten times
   the criteria a document may have) into `--workdir` and times, in a fresh process with the
   memory settings the `slakit` command applies (`calculators/memory.py`), how long the
   reader takes to read and refuse it and the peak memory of that process (target: well
   under 2 s, under 1 GB). The file is deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

STATUSES = ("fail", "error", "not_run", "skip", "waived", "warn", "pass")
# what a check measures, spelled every way a float is written: plain, exponent form, below 1e-4, integral
MEASURED = (31.047481130268917, 2.5e-07, 1e-05, 0.00012, 1.2345678901234568e17, 400.0, 7.25, -3e-09, "570.86.15")


def _counts(**given: int) -> dict[str, int]:
    return {s: given.get(s, 0) for s in STATUSES}


def document_data(criteria: int, nodes: int) -> dict[str, Any]:
    """The plain data of a run document: `criteria` criteria, each with a verdict per node."""
    names = [f"gpu{n:05d}" for n in range(nodes)]
    racks = [f"r{n // 18:03d}" for n in range(nodes)]
    crits = []
    for c in range(criteria):
        cid = f"c{c:02d}"
        verdicts = []
        for n, node in enumerate(names):
            m = MEASURED[(n + c) % len(MEASURED)]
            bad = n % 97 == 0
            verdicts.append({
                "criterion": cid, "node": node, "status": "fail" if bad else "pass", "measured": m,
                "expected": ">= 1e-07 s" if c % 2 else ">= 400 TFLOP/s",
                "reason": "below_min" if bad else "within_bounds",
                "remediation": "Kühlung prüfen – Temperatur über 85 °C" if bad else "",
                "details": {"metric": "latency_s", "samples": [m, 0.5, 1e-06] if isinstance(m, float) else [],
                            "gpu": n % 4}})
        crits.append({
            "id": cid, "check": "gpu.gemm", "area": "gpu", "metric": "tflops_bf16", "severity": "major",
            "source": "contract §4.2", "description": "GEMM-Durchsatz je GPU (bf16)",
            "params": {"dtype": "bf16", "size": 8192}, "thresholds": {"min": 1800.0, "max": None, "warn_below": None,
                                                                     "warn_above": None, "expect": None},
            "expected": "tflops_bf16 >= 1800", "unit": "TFLOP/s", "status": "fail", "reason": "below_min",
            "reason_text": f"below_min on {len(range(0, nodes, 97))} nodes", "state": "done", "duration_s": 12.5,
            "nodes": names, "evidence_outside_scope": [], "verdicts": verdicts})
    bad_nodes = set(range(0, nodes, 97))
    node_rollups = [{"node": node, "rack": racks[n], "status": "fail" if n in bad_nodes else "pass",
                     "counts": _counts(fail=criteria) if n in bad_nodes else _counts(**{"pass": criteria}),
                     "criteria": {f"c{c:02d}": "fail" for c in range(criteria)} if n in bad_nodes else {}}
                    for n, node in enumerate(names)]
    rack_rollups = [{"rack": r, "status": "fail", "nodes": 18, "node_counts": _counts(fail=1, **{"pass": 17}),
                     "counts": _counts(fail=criteria, **{"pass": 17 * criteria})} for r in sorted(set(racks))]
    total = criteria * nodes
    failed = criteria * len(bad_nodes)
    return {
        "format": "slakit-acceptance-run/2",
        "contract": {"id": "synthetic-gb200-fleet", "title": "Abnahme GB200 – Flotte", "provider": "Example Neocloud",
                     "customer": "Example AI Lab", "file": "/srv/contracts/fleet.yaml", "sha256": "0" * 64},
        "run": {"mode": "evaluate", "state": "complete", "started": "2027-01-10T10:00:00+00:00",
                "finished": "2027-01-10T11:00:00+00:00", "executor": "slurm", "nodes": names, "only": [],
                "overrides": {}, "resumed": False},
        "status": "fail", "counts": _counts(fail=failed, **{"pass": total - failed}), "criteria": crits,
        "aggregate": {"overall": {"status": "fail", "nodes": nodes,
                                  "node_counts": _counts(fail=len(bad_nodes), **{"pass": nodes - len(bad_nodes)}),
                                  "counts": _counts(fail=failed, **{"pass": total - failed}),
                                  "cluster_counts": _counts()},
                      "racks": rack_rollups, "nodes": node_rollups},
        "as_of": "2027-01-20T00:00:00+00:00",
    }


def bench_dumps(criteria: int, nodes: int, repeat: int) -> None:
    from acceptance.document import read_run_document

    data = json.dumps(document_data(criteria, nodes), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    read, doc = _best(lambda: read_run_document("results.json", data), repeat)
    plain = doc.to_json()
    dumps, text = _best(doc.dumps, repeat)
    reference, want = _best(lambda: json.dumps(plain, ensure_ascii=False, default=str, separators=(",", ":")), repeat)
    to_json, _ = _best(doc.to_json, repeat)
    same = text == want + "\n"
    print(f"document: {criteria} criteria x {nodes} nodes = {criteria * nodes} verdicts, {len(data) / 1e6:.1f} MB "
          f"(best of {repeat}; wall s / CPU s)")
    print(f"  strict read (read_run_document): {read}")
    print(f"  RunDocument.dumps(): {dumps}; json.dumps of to_json(): {reference}; to_json() itself: {to_json}; "
          f"bytes identical: {same}")
    if not same:
        raise SystemExit("RunDocument.dumps() differs from json.dumps of its plain data")


def _best(fn: Any, repeat: int) -> tuple[str, Any]:
    """The best wall and CPU seconds of `repeat` calls (the machine may be shared), and the result."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    return f"{wall:.3f} / {cpu:.3f}", out


def write_huge(path: Path, criteria: int, nodes: int = 12) -> int:
    """A results.json of `criteria` criteria of `nodes` verdicts each, written piece by piece."""
    base = document_data(1, nodes)
    crit = json.dumps(base["criteria"][0], separators=(",", ":"))
    head = json.dumps({k: v for k, v in base.items() if k not in ("criteria", "aggregate", "as_of")},
                      separators=(",", ":"))[:-1]
    with path.open("w", encoding="utf-8") as f:
        f.write(head + ',"criteria":[')
        for c in range(criteria):
            f.write(("," if c else "") + crit.replace('"c00"', f'"c{c:06d}"'))
        f.write('],"aggregate":' + json.dumps(base["aggregate"], separators=(",", ":")) + "}")
    return path.stat().st_size


# peak resident memory from /proc (VmHWM starts afresh at exec; ru_maxrss keeps the parent's peak)
REFUSE = """
import sys, time
def peak_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
from calculators.memory import tune_memory
tune_memory()                           # as the slakit command does at start
from acceptance.document import read_run_document
from slaschema.errors import InputError
before = peak_mb()
t1, c1 = time.perf_counter(), time.process_time()
try:
    read_run_document(sys.argv[1])
    codes = ["(accepted)"]
except InputError as exc:
    codes = sorted({p.code for p in exc.problems})
t2, c2 = time.perf_counter(), time.process_time()
print(f"{t2 - t1:.3f} {c2 - c1:.3f} {peak_mb():.0f} {before:.0f} {','.join(codes)}")
"""


def bench_refuse(criteria: int, workdir: Path) -> None:
    with tempfile.TemporaryDirectory(dir=workdir) as d:
        path = Path(d) / "results.json"
        size = write_huge(path, criteria)
        r = subprocess.run([sys.executable, "-c", REFUSE, str(path)], cwd=REPO, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
        if r.returncode:
            raise SystemExit(r.stderr)
        seconds, cpu, peak, imported, codes = r.stdout.split()
        print(f"refuse: {criteria} criteria, {size / 1e6:.0f} MB: {codes} in {float(seconds):.2f} s "
              f"({float(cpu):.2f} s CPU), peak RSS {peak} MB ({imported} MB after the imports) "
              f"(target well under 2 s, under 1 GB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=12600)
    ap.add_argument("--criteria", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--refuse-criteria", type=int, default=100_000)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    args = ap.parse_args()
    bench_dumps(args.criteria, args.nodes, args.repeat)
    if args.refuse_criteria:
        bench_refuse(args.refuse_criteria, args.workdir)


if __name__ == "__main__":
    main()
