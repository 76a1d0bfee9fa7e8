"""Time and size of `slakit review` for a 12,600-node fleet and up to 1,000,000 incidents.

    .venv/bin/python benchmarks/bench_review.py [--incidents 1000000] [--seed 1] [--keep DIR]

Prints, per stage, the seconds taken (load contract, load log, engine with per-incident
figures, review extras,
document, PDF render) and the PDF's size and page count. Targets: <= 60 s end to end,
<= 20 MB.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.synthetic import make_fleet_contract, make_incidents_csv  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, default=None, help="write review.pdf (and attachments) here")
    args = ap.parse_args()

    from pypdf import PdfReader

    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from calculators.reports.pdf import render_pdf
    from calculators.reports.review import REGISTER_LIMIT, ReviewInputs, review_document
    from calculators.reports.review_model import review_extras
    from slaschema.loader import load_contract

    with tempfile.TemporaryDirectory() as tmp:
        cpath = make_fleet_contract(tmp)
        lpath = make_incidents_csv(Path(tmp) / "incidents.csv", args.incidents, args.seed)
        times: dict[str, tuple[float, float]] = {}
        t0, c0 = time.perf_counter(), time.process_time()

        def lap(name: str, t: float, c: float) -> None:
            times[name] = (time.perf_counter() - t, time.process_time() - c)

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
    print(f"  {'stage':<42} {'wall':>7}   {'cpu':>7}")
    for k, (w, cp) in times.items():
        print(f"  {k:<42} {w:7.2f} s {cp:7.2f} s")
    print(f"  {'total':<42} {total:7.2f} s {cpu:7.2f} s   (target <= 60 s)")
    print(f"PDF: {len(pdf) / 1e6:.2f} MB, {pages:,} pages (target <= 20 MB); register rows in the PDF: "
          f"{min(len(extras.incidents), REGISTER_LIMIT):,} of {len(extras.incidents):,}; attachments: "
          + ", ".join(f"review{a.name} {len(a.data) / 1e6:.1f} MB" for a in attachments))


if __name__ == "__main__":
    main()
