"""Loading and validating incident logs: `load_incidents` against `pandas.read_csv` alone.

Run: .venv/bin/python benchmarks/bench_incidents_load.py [--sizes 10000,100000,1000000]

A synthetic log on the example GB200 contract's 72 nodes: mostly node incidents, some rack,
cluster and site ones, a few hostlist targets, degraded rows with gpus_affected, severities,
notice and support timestamps with mixed UTC offsets. For each size it prints the time of
`pd.read_csv(dtype=str)` on the file, the time of `load_incidents` (read + every check +
the typed frame), their ratio, and the process's peak RSS. Target: a 1,000,000-row log in a
few seconds.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from calculators.incidents import load_incidents  # noqa: E402
from slaschema.loader import load_contract  # noqa: E402

Q1_START = 1_798_783_200          # 2027-01-01T00:00:00-06:00


def make_log(path: Path, n: int, nodes: list[str], seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    start = Q1_START + rng.integers(0, 90 * 86400, n)
    dur = rng.integers(60, 8 * 3600, n)
    scope = rng.choice(np.array(["node", "rack", "cluster", "site"]), n, p=[0.96, 0.03, 0.007, 0.003])
    target = np.array(nodes, dtype=object)[rng.integers(0, len(nodes), n)]
    target[scope == "rack"] = np.array(["r01", "r02", "r03", "r04"], dtype=object)[rng.integers(0, 4, (scope == "rack").sum())]
    target[scope == "cluster"] = "c1"
    target[scope == "site"] = "dfw1"
    hl = (scope == "node") & (rng.random(n) < 0.01)
    target[hl] = "r02-n[03-05]"
    degraded = (scope == "node") & (rng.random(n) < 0.05)
    impact = np.where(degraded, "degraded", "")
    gpus = np.where(degraded, rng.integers(1, 5, n).astype(str), "")
    open_ = rng.random(n) < 0.001
    sev = np.array(["sev1", "sev2", "sev3", "sev4", ""], dtype=object)[rng.integers(0, 5, n)]
    category = np.array(["", "unplanned", "maintenance", "customer_caused"], dtype=object)[
        rng.choice(4, n, p=[0.6, 0.3, 0.08, 0.02])]

    def ts(sec: np.ndarray, offset_h: int) -> np.ndarray:
        t = pd.to_datetime(sec + offset_h * 3600, unit="s")
        suffix = "Z" if offset_h == 0 else f"{offset_h:+03d}:00"
        return (t.strftime("%Y-%m-%dT%H:%M:%S") + suffix).to_numpy(dtype=object).copy()

    end = ts(start + dur, 0)
    end[open_] = ""
    notice = np.where(category == "maintenance", ts(start - 4 * 86400, -6), "")
    frame = pd.DataFrame({
        "id": np.char.add("INC-", np.arange(n).astype(str)), "scope": scope, "target": target,
        "start": ts(start, -6), "end": end, "impact": impact, "gpus_affected": gpus, "category": category,
        "notice_at": notice, "severity": sev, "detected_at": ts(start + rng.integers(10, 300, n), 0),
        "responded_at": ts(start + rng.integers(300, 7200, n), 0), "cause": "synthetic",
    })
    frame.to_csv(path, index=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    args = ap.parse_args()
    lc = load_contract(REPO / "examples" / "gb200-contract.yaml")
    print("wall seconds (CPU seconds in brackets; on a shared machine CPU time is the steadier figure)")
    print(f"{'rows':>9} {'read_csv s':>16} {'load s':>16} {'ratio':>6} {'frame rows':>11} {'peak RSS MB':>12}")
    with tempfile.TemporaryDirectory() as d:
        for n in (int(x) for x in args.sizes.split(",")):
            path = Path(d) / f"log-{n}.csv"
            make_log(path, n, list(lc.topology.nodes))
            t, c = time.perf_counter(), time.process_time()
            pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
            t_read, c_read = time.perf_counter() - t, time.process_time() - c
            t, c = time.perf_counter(), time.process_time()
            log = load_incidents(path, lc)
            t_load, c_load = time.perf_counter() - t, time.process_time() - c
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            read = f"{t_read:.2f} ({c_read:.2f})"
            load = f"{t_load:.2f} ({c_load:.2f})"
            print(f"{n:>9,} {read:>16} {load:>16} {t_load / t_read:>6.1f} {len(log.frame):>11,} {rss:>12.0f}")


if __name__ == "__main__":
    main()
