"""Time and size of `slakit review` for a 12,600-node fleet and up to 1,000,000 incidents.

    .venv/bin/python benchmarks/bench_review.py [--incidents 1000000] [--seed 1] [--keep DIR]

Prints, per stage, the seconds taken (load contract, load log, engine, review extras,
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
        times: dict[str, float] = {}
        t0 = time.perf_counter()
        lc = load_contract(cpath)
        times["load contract"] = time.perf_counter() - t0
        t = time.perf_counter()
        log = load_incidents(lpath, lc, skip_bad_rows=True)
        times["load incident log"] = time.perf_counter() - t
        t = time.perf_counter()
        result = compute(lc, log, ["2027-Q1"]).to_json()
        times["engine (compute + to_json)"] = time.perf_counter() - t
        t = time.perf_counter()
        extras = review_extras(lc, log, result)
        times["review extras (trace, register, heatmap)"] = time.perf_counter() - t
        t = time.perf_counter()
        inputs = ReviewInputs(cpath.name, lc.sha256, lpath.name, log.sha256 or "", "bench", "2027-Q1")
        doc, attachments = review_document(lc, result, extras, inputs, attachment_stem="review")
        times["document"] = time.perf_counter() - t
        t = time.perf_counter()
        pdf = render_pdf(doc)
        times["PDF render"] = time.perf_counter() - t
        total = time.perf_counter() - t0
        pages = len(PdfReader(io.BytesIO(pdf)).pages)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / "review.pdf").write_bytes(pdf)
            for a in attachments:
                (args.keep / f"review{a.name}").write_bytes(a.data)
    nodes = len(lc.topology.nodes)
    print(f"fleet: {nodes:,} nodes, {len(lc.topology.racks):,} racks; log: {args.incidents:,} incidents "
          f"({len(log.frame):,} rows after hostlist expansion, {len(log.skipped):,} skipped)")
    for k, v in times.items():
        print(f"  {k:<42} {v:7.2f} s")
    print(f"  {'total':<42} {total:7.2f} s   (target <= 60 s)")
    print(f"PDF: {len(pdf) / 1e6:.2f} MB, {pages:,} pages (target <= 20 MB); register rows in the PDF: "
          f"{min(len(extras["incidents"]), REGISTER_LIMIT):,} of {len(extras['incidents']):,}; attachments: "
          + ", ".join(f"review{a.name} {len(a.data) / 1e6:.1f} MB" for a in attachments))


if __name__ == "__main__":
    main()
