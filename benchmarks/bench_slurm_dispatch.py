"""Slurm executor dispatch overhead and `slakit watch` CPU use.

Targets (issue 6): a trivial check on all 4 nodes through the executor takes at most 1.5x a
bare `srun -N4` of the same command; `watch` uses under 1 % of a core at a 30 s interval.

Run: .venv/bin/python benchmarks/bench_slurm_dispatch.py [--reps 30]
Uses the cluster named by SLURM_CONF when `sinfo` answers; otherwise starts
scripts/slurm-testbed with gpu-[01-04] in a temporary directory and stops it afterwards.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from acceptance.executors.slurm import SlurmExecutor, slurm_nodes  # noqa: E402
from slaschema.hostlist import compress  # noqa: E402


def _free_port_base(n_nodes: int) -> int:
    """A controller port P with P and P+100.. free (the testbed's port layout)."""
    import random
    import socket

    for _ in range(50):
        base = random.randrange(20000, 29000)
        try:
            for port in (base, *range(base + 100, base + 100 + n_nodes)):
                with socket.socket() as s:
                    s.bind(("", port))
        except OSError:
            continue
        return base
    sys.exit("no free port range for the testbed")


def _cluster() -> tuple[list[str], Path | None, dict[str, str]]:
    env = dict(os.environ)
    if env.get("SLURM_CONF"):
        try:
            return sorted(slurm_nodes())[:4], None, env
        except RuntimeError:
            pass
    state = Path(tempfile.mkdtemp(prefix="slakit-bench-slurm-"))
    env.update(SLURM_TESTBED_DIR=str(state), SLURM_TESTBED_PORT=str(_free_port_base(4)))
    proc = subprocess.run(["bash", str(REPO / "scripts" / "slurm-testbed"), "start", "gpu-[01-04]"],
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"cannot start the testbed:\n{proc.stderr}")
    for line in proc.stdout.splitlines():
        if line.startswith("export "):
            k, _, v = line[7:].partition("=")
            env[k] = v
            os.environ[k] = v
    return ["gpu-01", "gpu-02", "gpu-03", "gpu-04"], state, env


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--pause", type=float, default=0.3, help="seconds of quiet before each launch")
    args = ap.parse_args()
    nodes, state, env = _cluster()
    try:
        argv = ["true"]
        bare_cmd = ["srun", "-N", str(len(nodes)), "-w", compress(nodes), "--ntasks-per-node=1", *argv]
        ex = SlurmExecutor()
        ex_nostate = SlurmExecutor(check_states=False)
        for _ in range(3):  # warm up
            subprocess.run(bare_cmd, check=True, capture_output=True)
            ex.run(argv, nodes, 60)
        bare, full, nostate = [], [], []
        # Interleaved so drift hits all three alike, with a pause before each so every launch
        # finds the previous job's nodes released (back-to-back jobs wait for "completing").
        for _ in range(args.reps):
            time.sleep(args.pause)
            t = time.perf_counter()
            subprocess.run(bare_cmd, check=True, capture_output=True)
            bare.append(time.perf_counter() - t)
            time.sleep(args.pause)
            t = time.perf_counter()
            res = ex.run(argv, nodes, 60)
            full.append(time.perf_counter() - t)
            assert all(r.ok for r in res.values()), res
            time.sleep(args.pause)
            t = time.perf_counter()
            ex_nostate.run(argv, nodes, 60)
            nostate.append(time.perf_counter() - t)
        mb, mf, mn = (statistics.median(x) for x in (bare, full, nostate))
        print(f"dispatch on {len(nodes)} nodes ({compress(nodes)}), {args.reps} runs each, median:")
        print(f"  bare srun -N{len(nodes)} true           {mb * 1000:8.1f} ms")
        print(f"  SlurmExecutor.run (with sinfo)    {mf * 1000:8.1f} ms   ratio {mf / mb:.2f}x (target <= 1.5x)")
        print(f"  SlurmExecutor.run (check_states=False) {mn * 1000:6.1f} ms   ratio {mn / mb:.2f}x")

        # watch: CPU per poll, from the difference between 1 and 11 polls (interpreter start cancels)
        with tempfile.TemporaryDirectory() as tmp:
            def watch_cpu(polls: int) -> float:
                before = _cpu_children()
                subprocess.run([sys.executable, "-m", "slakit", "watch", "--slurm", "-o", f"{tmp}/w{polls}.csv",
                                "--interval", "1s", "--max-polls", str(polls)],
                               check=True, capture_output=True, cwd=REPO, env=env)
                return _cpu_children() - before
            one = min(watch_cpu(1) for _ in range(2))
            eleven = watch_cpu(11)
        per_poll = max(eleven - one, 0.0) / 10
        print(f"watch: {per_poll * 1000:.1f} ms CPU per poll (slakit + sinfo), start-up {one * 1000:.0f} ms once; "
              f"at a 30 s interval {per_poll / 30 * 100:.3f} % of a core (target < 1 %)")
    finally:
        if state is not None:
            subprocess.run(["bash", str(REPO / "scripts" / "slurm-testbed"), "stop"], env=env, capture_output=True)
            shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
