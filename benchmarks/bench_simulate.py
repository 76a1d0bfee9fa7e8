"""Benchmark: `slakit simulate` on the 4-rack GB200 NVL72 example (72 nodes, 288 GPUs).

Target: 1,000 runs x 12 months in <= 60 s on the 2-core CI machine. Prints the time to
generate the logs, the time through the engine, the total, and the result's headline
figures so a regression in speed or in the numbers is visible.

Usage: .venv/bin/python benchmarks/bench_simulate.py [--runs 1000] [--months 12] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from calculators.simulate.generate import generate
from calculators.simulate.models import load_model
from calculators.simulate.run import _evaluate, horizon
from slaschema.loader import load_contract

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 60.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--months", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="llama3")
    args = ap.parse_args()
    lc = load_contract(ROOT / "examples" / "gb200-contract.yaml")
    model = load_model(args.model)
    periods = horizon(lc, args.months)
    t0 = time.perf_counter()
    logs = generate(lc.topology, model, periods[0].start, periods[-1].end, args.runs,
                    np.random.default_rng(args.seed))
    t1 = time.perf_counter()
    figures = _evaluate(lc, logs, periods)
    t2 = time.perf_counter()
    total = t2 - t0
    c = lc.topology.counts()
    print(f"contract: {lc.id} ({c['racks']} racks, {c['nodes']} nodes, {c['gpus']} GPUs), model {model.name}")
    print(f"runs x months: {args.runs} x {args.months}; incidents generated: {len(logs)} "
          f"({len(logs) / args.runs:.1f} per run)")
    print(f"generate: {t1 - t0:.3f} s; engine (compute per run + chronic per month): {t2 - t1:.2f} s "
          f"({(t2 - t1) / args.runs * 1000:.1f} ms per run)")
    print(f"total: {total:.2f} s (target <= {TARGET_S:.0f} s for 1,000 x 12): "
          f"{'OK' if total <= TARGET_S or args.runs != 1000 else 'SLOW'}")
    print(f"mean credits: {figures.credits_cents.mean() / 100:.2f} {lc.model.contract.currency}; "
          f"mean % of fee: {figures.credits_cents.mean() / figures.fee_cents * 100:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
