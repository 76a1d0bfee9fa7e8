"""Time, memory and size of `slakit review` for a 12,600-node fleet and up to 1,000,000 incidents.

    .venv/bin/python benchmarks/bench_review.py [--incidents 1000000] [--seed 1] [--keep DIR] [--cli]

Prints, per stage, the seconds taken (load contract, load log, engine with per-incident
figures, review extras, document, PDF render) and the process's peak RSS after it (the
stages run with the memory settings the `slakit` command applies), then the PDF's size and
page count. `--cli` also runs `slakit review FLEET LOG --quarter 2027-Q1 -o review.pdf` on the
same files in a child process, as a user runs it, and prints its wall and CPU seconds and
peak RSS. Targets: <= 60 s end to end, <= 20 MB, < 2 GB peak RSS.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calculators.memory import tune_memory  # noqa: E402

tune_memory()                                # as the slakit command does, before numpy is imported

SLAKIT = Path(sys.executable).with_name("slakit")


def peak_mb() -> float:
    """This process's peak resident set so far, in MB (ru_maxrss, KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_cli(contract: Path, log: Path, out: Path) -> tuple[float, float, float]:
    """(wall seconds from fork to exit, CPU seconds, peak RSS in MB) of one `slakit review`."""
    cmd = [str(SLAKIT), "review", str(contract), str(log), "--quarter", "2027-Q1", "-o", str(out), "--no-progress"]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {os.waitstatus_to_exitcode(status)}: {err}")
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, default=None, help="write review.pdf (and attachments) here")
    ap.add_argument("--cli", action="store_true", help="also time `slakit review` on the same files in a child process")
    args = ap.parse_args()

    from pypdf import PdfReader

    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from calculators.reports.pdf import render_pdf
    from calculators.reports.review import REGISTER_LIMIT, ReviewInputs, review_document
    from calculators.reports.review_model import review_extras
    from slaschema.loader import load_contract

    with tempfile.TemporaryDirectory() as tmp:
        # the inputs are made in a child process, so that this one's peak RSS is the review's alone
        cpath, lpath = Path(tmp) / "fleet-contract.yaml", Path(tmp) / "incidents.csv"
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                        "from pathlib import Path; from benchmarks.synthetic import make_fleet_contract, "
                        "make_incidents_csv; assert make_fleet_contract(sys.argv[2]) == Path(sys.argv[3]); "
                        "make_incidents_csv(Path(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))",
                        str(Path(__file__).resolve().parents[1]), tmp, str(cpath), str(lpath), str(args.incidents),
                        str(args.seed)], check=True)
        cli = None
        if args.cli:                  # first, while this process holds nothing of its own
            out = Path(tmp) / "cli" / "review.pdf"
            out.parent.mkdir()
            cli = (*run_cli(cpath, lpath, out), out.stat().st_size)
        times: dict[str, tuple[float, float, float]] = {}
        t0, c0 = time.perf_counter(), time.process_time()

        def lap(name: str, t: float, c: float) -> None:
            times[name] = (time.perf_counter() - t, time.process_time() - c, peak_mb())

        lc = load_contract(cpath)
        lap("load contract", t0, c0)
        t, c = time.perf_counter(), time.process_time()
        log = load_incidents(lpath, lc, skip_bad_rows=True)
        lap("load incident log", t, c)
        t, c = time.perf_counter(), time.process_time()
        res = compute(lc, log, ["2027-Q1"], incidents=True)
        lap("engine (compute, incidents=True)", t, c)
        t, c = time.perf_counter(), time.process_time()
        extras = review_extras(res)
        lap("review extras (register, breakdowns, heatmap)", t, c)
        t, c = time.perf_counter(), time.process_time()
        inputs = ReviewInputs(cpath.name, lc.sha256, lpath.name, log.sha256 or "", "bench", "2027-Q1")
        doc, attachments = review_document(lc, res, extras, inputs, attachment_stem="review")
        lap("document", t, c)
        t, c = time.perf_counter(), time.process_time()
        pdf = render_pdf(doc)
        lap("PDF render", t, c)
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
        pages = len(PdfReader(io.BytesIO(pdf)).pages)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / "review.pdf").write_bytes(pdf)
            for a in attachments:
                (args.keep / f"review{a.name}").write_bytes(a.data)
    nodes = len(lc.topology.nodes)
    print(f"fleet: {nodes:,} nodes, {len(lc.topology.racks):,} racks; log: {args.incidents:,} incidents "
          f"({len(log.frame):,} rows after hostlist expansion, {len(log.skipped):,} skipped)")
    print(f"  {'stage':<42} {'wall':>7}   {'cpu':>7}   {'peak RSS after':>14}")
    for k, (w, cp, rss) in times.items():
        print(f"  {k:<42} {w:7.2f} s {cp:7.2f} s   {rss:8,.0f} MB")
    print(f"  {'total':<42} {total:7.2f} s {cpu:7.2f} s   {times['PDF render'][2]:8,.0f} MB"
          f"   (targets <= 60 s, < 2 GB)")
    print(f"PDF: {len(pdf) / 1e6:.2f} MB, {pages:,} pages (target <= 20 MB); register rows in the PDF: "
          f"{min(len(extras.incidents), REGISTER_LIMIT):,} of {len(extras.incidents):,}; attachments: "
          + ", ".join(f"review{a.name} {len(a.data) / 1e6:.1f} MB" for a in attachments))
    if cli is not None:
        wall, cpu_s, rss, size = cli
        print(f"slakit review (child process, as a user runs it): {wall:.2f} s wall, {cpu_s:.2f} s CPU, "
              f"peak RSS {rss:,.0f} MB (target < 2 GB); PDF {size:,} bytes")


if __name__ == "__main__":
    main()
