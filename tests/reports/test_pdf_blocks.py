"""Shared report building blocks: long tables, contents/bookmarks, footer, determinism."""

from __future__ import annotations

import io
import re

from pypdf import PdfReader

from calculators.reports import doc as d
from calculators.reports.pdf import render_pdf
from calculators.reports.fmt import spaced_hostlist
from calculators.reports.review import _grouped_units
from calculators.reports.text import render_markdown
from calculators.support_records import ChronicUnit


def _document(n_rows: int) -> d.Document:
    rows = tuple((f"node-{i:05d}", f"{i * 3.25:,.2f}", "rack") for i in range(n_rows))
    blocks = (d.Heading("1. Short section", 1), d.Para("Text before the long list."),
              d.Heading("1.1 Sub", 2), d.Para("More."),
              d.Heading("Appendix A. Long list", 1),
              d.Table(("Node", "Credit", "Scope"), rows, align=("l", "r", "l"), font_size=7))
    return d.Document(title="Blocks", subtitle=None, footer="doc-id · sha 1234 · slakit test", blocks=blocks)


def test_long_one_line_table_keeps_every_row_in_order_once():
    data = render_pdf(_document(3000))
    reader = PdfReader(io.BytesIO(data))
    text = re.sub(r"\s+", " ", " ".join(p.extract_text() for p in reader.pages))
    tokens = [t for t in text.split() if t.startswith("node-")]
    assert tokens == [f"node-{i:05d}" for i in range(3000)]
    assert text.count("Node Credit Scope") >= len(reader.pages) - 4       # header repeated on every page
    assert 20 <= len(reader.pages) <= 60
    assert render_pdf(_document(3000)) == data


def test_outline_and_contents_point_at_the_right_pages():
    data = render_pdf(_document(500))
    reader = PdfReader(io.BytesIO(data))
    pages = [p.extract_text() for p in reader.pages]

    def walk(items):
        for it in items:
            if isinstance(it, list):
                yield from walk(it)
            else:
                yield it

    seen, numbers = [], []
    for item in walk(reader.outline):
        n = reader.get_destination_page_number(item)
        assert item.title in pages[n], (item.title, n)
        seen.append(item.title)
        numbers.append(n + 1)
    assert seen == ["1. Short section", "1.1 Sub", "Appendix A. Long list"]
    # the contents page lists the same page numbers (dot leaders, then the number)
    assert [int(x) for x in re.findall(r"\.\s+(\d+)\s*$", pages[1], flags=re.M)] == numbers


def test_footer_on_every_page():
    data = render_pdf(_document(400))
    reader = PdfReader(io.BytesIO(data))
    n = len(reader.pages)
    for i, p in enumerate(reader.pages, start=1):
        t = p.extract_text()
        assert "doc-id · sha 1234 · slakit test" in t and f"Page {i} of {n}" in t


def test_text_formats_keep_every_row():
    md = render_markdown(_document(50))
    assert md.count("| node-") == 50 and "| Node | Credit | Scope |" in md


def test_hostlists_wrap_between_names_only():
    assert spaced_hostlist("a[01-03,05],b07,c[1-2]") == "a[01-03,05], b07, c[1-2]"
    trig = [ChronicUnit(scope="node", id=f"r1-n{i:02d}", months_below_target=("2027-01", "2027-02"))
            for i in range(1, 6)]
    trig.append(ChronicUnit(scope="rack", id="r2", months_below_target=("2027-02", "2027-03")))
    assert _grouped_units(tuple(trig), per_row=3) == [
        ("node", "2027-01, 2027-02", "3", "r1-n[01-03]"),
        ("node", "2027-01, 2027-02", "2", "r1-n[04-05]"),
        ("rack", "2027-02, 2027-03", "1", "r2"),
    ]
