"""`slakit claim status` on a large claims ledger, process start to exit.

    .venv/bin/python benchmarks/bench_claim_status.py [--rows 200000]

Writes a synthetic ledger (400 contracts x monthly rows; filed, answered, partly paid and
lapsed claims mixed, fixed seed) and times the table and `--format json`. On the 2-core
machine, 200,000 rows: table 11.5 s (3 min 18 s when Rich laid out the whole table; the table is
slaschema/plain_table.py, the plain-text layout the credits tables use too), JSON
8.2 s (12.9 s before).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEADER = "contract,month,amount_claimed,currency,due,filed,reference,answer,amount_accepted,amount_paid,paid_on,note"


def ledger(rows: int) -> str:
    rnd = random.Random(1)
    out = [HEADER]
    for n in range(rows):
        c, k = divmod(n, 504)
        y, m = 2000 + k // 12, k % 12 + 1
        filed = f"{y}-{m:02d}-20" if rnd.random() < 0.6 else ""
        answer = rnd.choice(["pending", "accepted", "partial", "rejected"]) if filed else ""
        accepted = "100.00" if answer == "partial" else ""
        paid = "50.00" if answer in ("accepted", "partial") and rnd.random() < 0.5 else ""
        due_y, due_m = (y + 1, 1) if m == 12 else (y, m + 1)
        out.append(f"c{c:03d},{y}-{m:02d},{rnd.randint(100, 99999)}.{rnd.randint(0, 99):02d},USD,"
                   f"{due_y}-{due_m:02d}-28T00:00:00Z,{filed},R{n},{answer},{accepted},{paid},,")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "claims.csv"
        path.write_text(ledger(args.rows))
        for extra in ([], ["--format", "json"]):
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "slakit", "claim", "status", str(path), "--as-of",
                                   "2030-01-01T00:00:00Z", *extra], cwd=REPO, capture_output=True)
            wall = time.perf_counter() - t0
            assert proc.returncode == 0, proc.stderr.decode()[-2000:]
            print(f"claim status {' '.join(extra) or '(table)'}: {args.rows:,} rows in {wall:.1f} s "
                  f"({len(proc.stdout) / 1e6:.0f} MB out)")


if __name__ == "__main__":
    main()
