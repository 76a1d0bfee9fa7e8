"""The engine's int64 sorts: the compiled radix sort (`calculators._kernels.sort_i64`, through
`calculators.kernels.sort`) against numpy's `ndarray.sort` and Arrow's `pyarrow.compute.sort_indices`
+ take, on the shapes of keys `slakit credits` sorts, in the same process.

    .venv/bin/python benchmarks/bench_sort.py [--n 2000000] [--repeat 5]

Shapes (each of n values): the interval keys `(unit << 33) | time` (12,600 units, a quarter's
times), the packed keys of `intervals.sorted_packed` (unit, time and position in 59 bits, the
positions in order: only the bits above them sorted), the same already sorted, 64-bit hashes
(signed, every bit used). Each figure is the best of `--repeat` runs on a fresh copy; every
result is checked equal to numpy's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def best(fn, a: np.ndarray, repeat: int) -> tuple[float, np.ndarray]:
    times, out = [], None
    for _ in range(repeat):
        b = a.copy()
        t = time.perf_counter()
        out = fn(b)
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import pyarrow as pa
    import pyarrow.compute as pc

    from calculators import kernels

    if kernels.compiled is None:
        raise SystemExit("the compiled kernels are not built (pip install -e . with a C compiler)")
    n = args.n
    rng = np.random.default_rng(1)
    unit, t = rng.integers(0, 12_600, n), rng.integers(0, 90 * 86_400, n)
    tb, ib = (90 * 86_400).bit_length(), (n - 1).bit_length()
    keys = (unit << 33) | t
    shapes = {
        "interval keys (47 bits)": (keys, 0),
        f"packed keys ({14 + tb + ib} bits, positions in order)": ((((unit << tb) | t) << ib) | np.arange(n), ib),
        "interval keys, sorted": (np.sort(keys), 0),
        "64-bit hashes (signed)": (rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64, endpoint=True), 0),
    }
    print(f"{n:,} int64 values, best of {args.repeat} (ms)")
    print(f"{'shape':<44} {'numpy sort':>11} {'arrow':>8} {'radix':>8}  radix vs numpy")
    for name, (a, lo_bit) in shapes.items():
        t_np, want = best(lambda b: (b.sort(), b)[1], a, args.repeat)
        t_pa, got_pa = best(lambda b: pc.take(pa.array(b), pc.sort_indices(pa.array(b))).to_numpy(), a, args.repeat)
        t_rx, got = best(lambda b: kernels.sort(b, lo_bit), a, args.repeat)
        if not (np.array_equal(got, want) and np.array_equal(got_pa, want)):
            raise SystemExit(f"{name}: the sorts disagree")
        print(f"{name:<44} {t_np * 1e3:11.1f} {t_pa * 1e3:8.1f} {t_rx * 1e3:8.1f}  {t_np / t_rx:5.1f}x faster")


if __name__ == "__main__":
    main()
