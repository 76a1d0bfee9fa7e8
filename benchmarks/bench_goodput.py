"""Goodput on the synthetic GB200 fleet (12,600 nodes, 50,400 GPUs): 1,000,000 sacct job rows
and an incident log over 2027-Q1.

Run: .venv/bin/python benchmarks/bench_goodput.py [--jobs 1000000] [--incidents 100000] [--workdir DIR]
                                                 [--repeat N]

Target (2 cores): the whole `slakit goodput --quarter 2027-Q1 --format json` pipeline -- load
the contract and the incident log, read and validate the sacct file, the credits engine's
availability and fees for the three months, the goodput figures with the attribution of every
NODE_FAIL/REQUEUED run, and the JSON document -- in <= 10 s and <= 4 GB peak RSS, measured in
a fresh process (`/usr/bin/time`-style: wall, CPU and ru_maxrss of that process).

The sacct file is what `sacct -a -X -D -P --format=...` prints: job sizes from 1 node to 4 racks
(node lists compressed the way Slurm writes them, e.g. `c1-r[001-002]-n[01-18]`), AllocTRES with
gres/gpu, states mostly COMPLETED with FAILED, CANCELLED, TIMEOUT, RUNNING, NODE_FAIL (ending
at the start of an incident on their first node, so they are attributed) and REQUEUED runs.
Files are generated once into --workdir and reused.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.synthetic import (  # noqa: E402
    NODES_PER_RACK, Q_END, Q_START, RACKS, make_fleet_contract, make_incidents_csv, rack_name)

HEADER = "JobID|State|ExitCode|NodeList|NNodes|AllocTRES|Start|End|Elapsed|Reason|Comment\n"
SIZES = np.array([1, 1, 1, 1, 2, 4, 8, 18, 36, 72], dtype=np.int64)


def _nodelist(first: int, k: int) -> str:
    r, n = divmod(first, NODES_PER_RACK)
    if k == 1:
        return f"{rack_name(r)}-n{n + 1:02d}"
    if k <= NODES_PER_RACK - n:
        return f"{rack_name(r)}-n[{n + 1:02d}-{n + k:02d}]"
    racks = k // NODES_PER_RACK          # whole racks, aligned (sizes 36, 72 start at n01)
    c = r // 100
    lo, hi = r % 100 + 1, r % 100 + racks
    return f"c{c + 1}-r[{lo:03d}-{hi:03d}]-n[01-{NODES_PER_RACK:02d}]"


def make_sacct(path: Path, n: int, incidents_csv: Path, seed: int = 1) -> Path:
    import pandas as pd

    rng = np.random.default_rng(seed)
    q0 = int(Q_START.astype("datetime64[s]").astype(np.int64))
    q1 = int(Q_END.astype("datetime64[s]").astype(np.int64))
    k = SIZES[rng.integers(0, len(SIZES), n)]
    rack = rng.integers(0, RACKS, n)
    rack = np.where(k > NODES_PER_RACK, np.minimum(rack - rack % 100 + (rack % 100) // 4 * 4, rack), rack)
    rack = np.where((k > NODES_PER_RACK) & (rack % 100 > 100 - k // NODES_PER_RACK), rack - k // NODES_PER_RACK, rack)
    off = np.where(k >= NODES_PER_RACK, 0, rng.integers(0, NODES_PER_RACK, n) % (NODES_PER_RACK - np.minimum(k, 17)))
    first = rack * NODES_PER_RACK + off
    dur = np.exp(rng.normal(np.log(2400), 1.0, n)).astype(np.int64) + 60     # median 40 min: ~60% of the fleet busy
    start = rng.integers(q0 - 86400, q1, n)
    end = start + dur
    u = rng.random(n)
    state = np.where(u < 0.90, "COMPLETED", np.where(u < 0.94, "FAILED", np.where(u < 0.97, "CANCELLED by 1000",
                     np.where(u < 0.98, "TIMEOUT", np.where(u < 0.99, "RUNNING",
                              np.where(u < 0.995, "NODE_FAIL", "REQUEUED")))))).astype(object)
    # NODE_FAIL runs end where a node incident starts, on that node
    inc = pd.read_csv(incidents_csv, usecols=["scope", "target", "start"], dtype=str)
    inc = inc[inc["scope"] == "node"]
    names = {f"{rack_name(r)}-n{i:02d}": r * NODES_PER_RACK + i - 1
             for r in range(RACKS) for i in range(1, NODES_PER_RACK + 1)}
    inc_node = inc["target"].map(names).to_numpy(dtype=np.int64)
    inc_start = ((pd.to_datetime(inc["start"], utc=True) - pd.Timestamp(0, tz="UTC"))
                 // pd.Timedelta(seconds=1)).to_numpy(dtype=np.int64)
    nf = np.flatnonzero(state == "NODE_FAIL")
    pick = rng.integers(0, len(inc_node), len(nf))
    k[nf] = 1
    first[nf] = inc_node[pick]
    end[nf] = inc_start[pick] + rng.integers(0, 60, len(nf))
    start[nf] = end[nf] - dur[nf]
    gpus = 4 * k
    def local(epoch: np.ndarray) -> np.ndarray:       # Slurm prints the controller's local time
        t = pd.to_datetime(pd.Series(epoch), unit="s", utc=True).dt.tz_convert("America/Chicago")
        return t.dt.strftime("%Y-%m-%dT%H:%M:%S").to_numpy(dtype=object)

    s_txt = local(start)
    e_txt = local(end)
    running = state == "RUNNING"
    e_txt[running] = "Unknown"
    el = np.where(running, np.minimum(dur, 3600), end - start)
    el_txt = [f"{x // 86400}-{x % 86400 // 3600:02d}:{x % 3600 // 60:02d}:{x % 60:02d}" if x >= 86400 else
              f"{x // 3600:02d}:{x % 3600 // 60:02d}:{x % 60:02d}" for x in el.tolist()]
    nl_cache: dict[tuple[int, int], str] = {}
    with open(path, "w") as f:
        f.write(HEADER)
        ks, fs, gs = k.tolist(), first.tolist(), gpus.tolist()
        for i in range(n):
            key = (fs[i], ks[i])
            nl = nl_cache.get(key)
            if nl is None:
                nl = nl_cache[key] = _nodelist(fs[i], ks[i])
            f.write(f"{1000000 + i}|{state[i]}|{'0:0' if state[i] == 'COMPLETED' else '1:0'}|{nl}|{ks[i]}|"
                    f"billing={gs[i] * 16},cpu={gs[i] * 16},gres/gpu={gs[i]},mem={gs[i] * 200}G,node={ks[i]}|"
                    f"{s_txt[i]}|{e_txt[i]}|{el_txt[i]}|None|\n")
    return path


def run_once(contract: Path, sacct: Path, incidents: Path) -> dict:
    argv = [sys.executable, "-c", (
        "import resource, sys, time\n"
        "t = time.perf_counter(); c = time.process_time()\n"
        "from slakit.cli import main\n"
        "try:\n"
        f"    main([ 'goodput', {str(contract)!r}, '--sacct', {str(sacct)!r}, '--incidents', {str(incidents)!r},"
        " '--quarter', '2027-Q1', '--assume-tz', 'America/Chicago', '--checkpoint-interval', '30m', '--format', 'json',"
        f" '-o', {str(sacct) + '.goodput.json'!r}])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print(time.perf_counter() - t, time.process_time() - c,"
        " resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr)\n")]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    wall, cpu, rss = map(float, proc.stderr.strip().splitlines()[-1].split())
    doc = json.loads(Path(str(sacct) + ".goodput.json").read_text())
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mb": round(rss), "doc": doc}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--incidents", type=int, default=100_000)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--repeat", type=int, default=1, help="run N times and keep the fastest (shared machines)")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-goodput-"))
    work.mkdir(parents=True, exist_ok=True)
    contract = make_fleet_contract(work)
    inc = work / f"incidents-{args.incidents}.csv"
    if not inc.exists():
        make_incidents_csv(inc, args.incidents)
    sacct = work / f"sacct-{args.jobs}.txt"
    if not sacct.exists():
        t = time.perf_counter()
        make_sacct(sacct, args.jobs, inc)
        print(f"generated {sacct} ({sacct.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")
    runs = [run_once(contract, sacct, inc) for _ in range(max(1, args.repeat))]
    for k, x in enumerate(runs):
        print(f"  run {k + 1}: wall {x['wall_s']} s, CPU {x['cpu_s']} s, peak RSS {x['peak_rss_mb']:,} MB")
    r = min(runs, key=lambda x: x["wall_s"])
    tot = r["doc"]["total"]
    print(f"goodput: {args.jobs:,} sacct rows, {args.incidents:,} incidents, 12,600 nodes, 2027-Q1: "
          f"wall {r['wall_s']} s (CPU {r['cpu_s']} s), peak RSS {r['peak_rss_mb']:,} MB "
          f"[targets: 10 s, 4,096 MB]")
    print(f"  paid {tot['paid_gpu_hours']} GPU-h, useful {tot['useful_gpu_hours']}, lost {tot['lost_gpu_hours']}, "
          f"goodput {tot['goodput_pct']}%, infra runs {tot['jobs']['ended_by_infrastructure']:,} "
          f"({tot['jobs']['infrastructure_unattributed']:,} unattributed), "
          f"{len(r['doc']['incidents']):,} incidents with lost work")
    ok = r["wall_s"] <= 10 and r["peak_rss_mb"] <= 4096
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
