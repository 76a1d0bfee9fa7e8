"""The HTML review draws the same charts as the PDF, as SVG, checked in a real headless
Chromium: a screenshot of the charts has the bars' and the heatmap's colours where the same
page without the SVG has none."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from calculators.engine import compute
from calculators.incidents import load_incidents
from calculators.reports import doc as d
from calculators.reports.review import ReviewInputs, review_document
from calculators.reports.review_model import review_extras
from calculators.reports.svg import SERIES
from calculators.reports.text import render_html
from tests.reports.conftest import EXAMPLE, ROOT

LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"
CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)


@pytest.fixture(scope="module")
def review(example_contract):
    lc = example_contract
    log = load_incidents(LOG, lc)
    res = compute(lc, log, ["2027-Q1"], incidents=True)
    inputs = ReviewInputs(EXAMPLE.name, lc.sha256, LOG.name, log.sha256, "9.9.9", "2027-Q1")
    return review_document(lc, res, review_extras(res), inputs)[0]


def charts_of(document: d.Document) -> list:
    return [b for b in document.blocks if isinstance(b, (d.BarChart, d.Heatmap))]


def test_every_pdf_chart_is_an_svg_in_the_html(review):
    charts = charts_of(review)
    assert any(isinstance(c, d.BarChart) for c in charts) and any(isinstance(c, d.Heatmap) for c in charts)
    html = render_html(review)
    assert html.count("<svg ") == len(charts)
    for c in charts:
        assert f"<title>{c.title}</title>" in html.replace("&#x27;", "'")
    assert html.count('fill="#2f80ed"') > 10          # the first series' bars


def screenshot(html: str, tmp_path, name: str, height: int):
    from PIL import Image

    page = tmp_path / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    png = tmp_path / f"{name}.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}", f"--window-size=1000,{height}",
                    f"--screenshot={png}", page.as_uri()], check=True, capture_output=True, timeout=120)
    return Image.open(png).convert("RGB")


def near(c: tuple[int, int, int], ref: tuple[int, int, int], tol: int = 24) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(c, ref))


def pixel_counts(img) -> tuple[int, int]:
    blue = tuple(int(SERIES[0][i:i + 2], 16) for i in (1, 3, 5))
    bars = heat = 0
    for n, (r, g, b) in (img.getcolors(maxcolors=1 << 24) or []):
        rgb = (r, g, b)
        if near(rgb, blue):
            bars += n
        elif r > 150 and g < 150 and b < 120 and r - g > 60:      # the heatmap's reds
            heat += n
    return bars, heat


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian package chromium; scripts/setup)")
def test_chromium_draws_the_charts(review, tmp_path):
    charts = charts_of(review)
    only = d.Document(title="charts", subtitle=None, footer="", blocks=tuple(charts), toc=False)
    html = render_html(only)
    drawn = screenshot(html, tmp_path, "charts", 2600)
    bars, heat = pixel_counts(drawn)
    assert bars > 3000, f"bars not drawn: {bars} blue pixels"
    assert heat > 300, f"heatmap not drawn: {heat} red pixels"
    # the same page without its SVG has neither colour: the pixels are the charts
    import re

    bare = re.sub(r"<svg .*?</svg>", "", html, flags=re.S)
    assert pixel_counts(screenshot(bare, tmp_path, "bare", 2600)) == (0, 0)
