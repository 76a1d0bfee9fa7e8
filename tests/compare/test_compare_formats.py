"""The comparison is one document rendered three ways (PDF, Markdown, HTML): every row, the
best marks and the simulated rows in each; the PDF read back with pypdf."""

from __future__ import annotations

import io
import re

import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from calculators.reports.compare import comparison, compare_document, render_html, render_markdown, render_pdf
from calculators.reports import doc as d
from slakit.cli import main
from tests.compare.test_compare import EXAMPLE, offer_b, variant, variant_text


@pytest.fixture(scope="module")
def cmp_doc():
    from calculators.simulate.models import builtin
    from calculators.simulate.run import simulate
    from slaschema.loader import load_contract

    offers = [load_contract(EXAMPLE), variant(offer_b)]
    sims = [simulate(lc, builtin("llama3"), months=1, runs=4, seed=3).summary() for lc in offers]
    return comparison(offers, sims)


def test_one_document_carries_every_row_and_best_mark(cmp_doc):
    document = compare_document(cmp_doc)
    tables = [b for b in document.blocks if isinstance(b, d.Table)]
    sections = [b.text for b in document.blocks if isinstance(b, d.Heading)]
    assert sections == list(dict.fromkeys(r.section for r in cmp_doc.rows))
    assert sum(len(t.rows) for t in tables) == len(cmp_doc.rows)
    assert sum(len(t.marks) for t in tables) == sum(cmp_doc.best_counts)
    assert document.landscape and not document.toc and not document.cover_page


def test_pdf_shows_best_marks_and_simulated_rows(cmp_doc):
    data = render_pdf(cmp_doc)
    reader = PdfReader(io.BytesIO(data))
    text = " ".join(" ".join(p.extract_text().split()) for p in reader.pages)
    assert text.startswith("Offer comparison")
    assert "Simulated" in text and "value returned (credits / value of lost GPU-hours)" in text
    assert "Best-offer marks: " + ", ".join(f"{chr(65 + i)} {n}" for i, n in enumerate(cmp_doc.best_counts)) in text
    assert re.search(r"Page 1 of \d+", text) and "sha256 " + cmp_doc.offers[1].sha256[:12] in text
    assert data == render_pdf(cmp_doc)                     # byte-identical for the same document
    # the best cells are drawn on green (0.835 0.941 0.835: #d5f0d5) behind their text
    content = b"".join(p.get_contents().get_data() for p in reader.pages)
    assert content.count(b".835294 .941176 .835294 rg") >= sum(cmp_doc.best_counts)


def test_markdown_and_html_mark_the_best_offer(cmp_doc):
    md, html = render_markdown(cmp_doc), render_html(cmp_doc)
    assert "| price per GPU-hour | 3.2500 | **3.0822** ✓ |" in md
    assert "## Simulated" in md and "**Best-offer marks: A" in md
    assert '<td class="l best">3.0822 ✓</td>' in html and "<h2" in html and "Simulated" in html
    assert html.count(" best\">") == sum(cmp_doc.best_counts)


def test_cli_writes_html(tmp_path):
    b = tmp_path / "b.yaml"
    b.write_text(variant_text(offer_b))
    out = tmp_path / "cmp.html"
    r = CliRunner().invoke(main, ["compare", str(EXAMPLE), str(b), "--runs", "0", "-o", str(out)])
    assert r.exit_code == 0, r.output
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<title>Offer comparison</title>" in html
    assert "Simulated" not in html and "3.0822 ✓" in html


def test_the_simulations_inside_a_comparison_are_as_before(cmp_doc):
    """The comparison (`slakit-compare/2`) starts with its format; the simulation summaries it
    holds do not repeat `slakit-simulate/1` (their members are what they were)."""
    doc = cmp_doc.to_json()
    assert next(iter(doc)) == "format" and doc["format"] == "slakit-compare/2"
    assert len(doc["simulations"]) == 2
    for s in doc["simulations"]:
        assert "format" not in s and next(iter(s)) == "contract" and {"credits", "fee_total", "seed"} <= set(s)
