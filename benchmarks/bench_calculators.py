"""Credits engine on a synthetic GB200 fleet: 700 NVL72 racks (12,600 nodes, 50,400 GPUs,
7 clusters, 2 sites), rack and cluster rules on, incidents over 2027-Q1.

Run: .venv/bin/python benchmarks/bench_calculators.py [--sizes 10000,100000,1000000] [--workdir DIR]

Targets at 1,000,000 incidents (2 cores): all three months computed in <= 10 s, peak RSS
<= 4 GB, and compute time <= 3x the time `pandas.read_csv` takes for the same CSV. Each
size runs in its own process (so peak RSS is per size); in that process the CSV is read
with pandas, loaded and validated with `load_incidents`, computed with `compute` (3
months), and turned into the JSON document. The CSVs are generated once into --workdir
(benchmarks/synthetic.py) and reused.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def one(contract: str, csv_path: str) -> dict:
    import pandas as pd

    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    lc = load_contract(contract)
    t = time.perf_counter()
    c0 = time.process_time()
    frame = pd.read_csv(csv_path)
    read_cpu_s = time.process_time() - c0
    read_s = time.perf_counter() - t
    rows = len(frame)
    del frame
    t = time.perf_counter()
    log = load_incidents(csv_path, lc)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    c0 = time.process_time()
    result = compute(lc, log, ["2027-Q1"], support=False)
    compute_cpu_s = time.process_time() - c0
    compute_s = time.perf_counter() - t
    t = time.perf_counter()
    from calculators import support

    support.compute_support(lc, log, result.periods[0].period.start, result.periods[-1].period.end)
    support_s = time.perf_counter() - t
    t = time.perf_counter()
    doc = result.to_json()
    json_s = time.perf_counter() - t
    return {
        "incidents": rows, "log_rows": len(log.frame), "read_csv_s": read_s, "read_csv_cpu_s": read_cpu_s, "load_s": load_s,
        "compute_s": compute_s, "compute_cpu_s": compute_cpu_s, "support_s": support_s, "to_json_s": json_s,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "credit_total": [p["credit_total"] for p in doc["periods"]],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--workdir", default=None, help="Keep generated files here (default: a temp dir).")
    ap.add_argument("--one", nargs=2, metavar=("CONTRACT", "CSV"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    from benchmarks.synthetic import make_fleet_contract, make_incidents_csv

    tmp = None
    if args.workdir:
        work = Path(args.workdir)
        work.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory()
        work = Path(tmp.name)
    contract = make_fleet_contract(work)
    print("wall seconds (CPU seconds of the process in brackets: the machine may be shared)")
    print("     size    read_csv          load+check  compute (3 months)   ratio c/r  support  to_json  peak RSS  "
          "credits per month")
    figures = []
    for n in (int(x) for x in args.sizes.split(",")):
        csv_path = work / f"incidents-{n}.csv"
        if not csv_path.exists():
            make_incidents_csv(csv_path, n, seed=1)
        out = subprocess.run([sys.executable, __file__, "--one", str(contract), str(csv_path)],
                             check=True, capture_output=True, text=True)
        f = json.loads(out.stdout.strip().splitlines()[-1])
        figures.append(f)
        print(f"{n:>9,}  {f['read_csv_s']:6.2f} s ({f['read_csv_cpu_s']:5.2f})  {f['load_s']:7.2f} s  "
              f"{f['compute_s']:8.2f} s ({f['compute_cpu_s']:5.2f})  {f['compute_s'] / f['read_csv_s']:8.2f}x  "
              f"{f['support_s']:6.2f} s  {f['to_json_s']:6.2f} s  {f['peak_rss_mb']:6.0f} MB  "
              f"{', '.join(f['credit_total'])}")
    big = figures[-1]
    if big["incidents"] >= 1_000_000:
        ok = big["compute_s"] <= 10 and big["peak_rss_mb"] <= 4096 and big["compute_s"] <= 3 * big["read_csv_s"]
        print(f"targets at {big['incidents']:,}: compute <= 10 s: {big['compute_s']:.2f} s; peak RSS <= 4 GB: "
              f"{big['peak_rss_mb']:.0f} MB; compute <= 3x read_csv: {big['compute_s'] / big['read_csv_s']:.2f}x; "
              f"load+compute vs read_csv: {(big['load_s'] + big['compute_s']) / big['read_csv_s']:.2f}x -> "
              f"{'met' if ok else 'NOT met'}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
