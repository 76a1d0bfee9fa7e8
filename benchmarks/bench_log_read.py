"""Reading an incident log into the columns the loader keeps, three ways, in one process.

Run: .venv/bin/python benchmarks/bench_log_read.py [--incidents 1000000] [--workdir DIR] [--rounds 5]

On the credits benchmark's log (benchmarks/synthetic.py, the same file `bench_credits_cli.py`
writes: N incidents on 12,600 nodes, no quote character, times as 2027-02-03T10:00:00Z), each
round times, alternating, from the file's bytes in memory:
- `pyarrow.csv.read_csv` of the bytes (all threads, every column as Arrow infers it): the
  yardstick, the fastest well-kept reader of a CSV;
- Arrow's path: `log_csv_parse.read_csv_arrow` (the format's columns as strings) and then
  `log_csv.convert_columns` (times to epoch seconds, text columns to codes), what the loader
  did for every CSV before the one-pass read;
- the one-pass read: `log_csv_plain.read_plain` (the same columns, the same result; the two
  halves of the file in two threads).
It prints the median wall and CPU seconds of each and their ratios to the pyarrow read, and
checks that the two slakit paths agree on every column. In one process the later rounds reuse
the memory the earlier ones freed; a command reads its log once, into memory it faults in
afresh, so each is also timed once in a fresh process of its own ("first read", the memory
settings of `slakit` applied as it applies them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _timed(fn, *args):
    t, c = time.perf_counter(), time.process_time()
    got = fn(*args)
    return got, time.perf_counter() - t, time.process_time() - c


def _arrow_path(data: bytes):
    from calculators.log_csv import TEXT_CONVERTED, TIME_COLUMNS, convert_columns, read_csv_arrow

    table, raw_names, names, _ = read_csv_arrow(data)
    return table.num_rows, convert_columns(table, raw_names, TEXT_CONVERTED, TIME_COLUMNS)


def _same(arrow, plain) -> None:
    n, conv = arrow
    assert plain is not None, "the one-pass read refused the benchmark log"
    assert plain.n == n, (plain.n, n)
    for key, want in conv.items():
        got = plain.converted[key]
        if key[0] == "times":
            assert np.array_equal(got, want), key
        else:
            assert np.array_equal(got.codes, want.codes) and got.dictionary.equals(want.dictionary), key


READERS = ("pyarrow.csv.read_csv", "Arrow's path", "one pass")


def _reader(name: str):
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    from calculators.log_csv_plain import read_plain

    return {READERS[0]: lambda b: pa_csv.read_csv(pa.py_buffer(b)), READERS[1]: _arrow_path,
            READERS[2]: read_plain}[name]


def _first_read(name: str, log: str) -> None:
    """(in a child process) one read of `log` by `name`, as JSON [wall, CPU]"""
    from slakit.entry import settle_environment

    settle_environment()
    from calculators.memory import tune_memory

    tune_memory()
    fn = _reader(name)
    data = Path(log).read_bytes()
    _, w, c = _timed(fn, data)
    print(json.dumps([w, c]))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--first-read":
        _first_read(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=1_000_000)
    ap.add_argument("--workdir", default=None, help="Keep the generated log here (default: a temp dir).")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from benchmarks.synthetic import make_incidents_csv

    tmp = tempfile.TemporaryDirectory() if not args.workdir else None
    work = Path(args.workdir or tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    log = work / f"incidents-{args.incidents}.csv"
    if not log.exists():
        make_incidents_csv(log, args.incidents, seed=1)
    data = log.read_bytes()
    print(f"reading {args.incidents:,} incidents ({len(data) / 1e6:.0f} MB CSV) from memory, "
          f"{args.rounds} alternating rounds; seconds wall (CPU)")
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in READERS}
    checked = False
    for _ in range(max(1, args.rounds)):
        _, w, c = _timed(_reader(READERS[0]), data)
        runs[READERS[0]].append((w, c))
        arrow, w, c = _timed(_reader(READERS[1]), data)
        runs[READERS[1]].append((w, c))
        plain, w, c = _timed(_reader(READERS[2]), data)
        runs[READERS[2]].append((w, c))
        if not checked:
            _same(arrow, plain)
            checked = True
        del arrow, plain
    first: dict[str, list[tuple[float, float]]] = {name: [] for name in READERS}
    for _ in range(max(1, args.rounds)):
        for name in READERS:
            out = subprocess.run([sys.executable, __file__, "--first-read", name, str(log)], check=True,
                                 capture_output=True, text=True).stdout
            first[name].append(tuple(json.loads(out.splitlines()[-1])))
    base = statistics.median(w for w, _ in runs[READERS[0]])
    base_first = statistics.median(w for w, _ in first[READERS[0]])
    print(f"{'':22s} {'in one process (medians)':>30s}   {'first read, a process each (medians)':>38s}")
    for name in READERS:
        w, c = (statistics.median(x[k] for x in runs[name]) for k in (0, 1))
        fw, fc = (statistics.median(x[k] for x in first[name]) for k in (0, 1))
        print(f"{name:22s} {w:8.3f} s ({c:5.3f} CPU) {w / base:5.2f}x   {fw:11.3f} s ({fc:5.3f} CPU) {fw / base_first:5.2f}x")
    print("the two slakit paths give the same columns (checked on the first round)")


if __name__ == "__main__":
    main()
