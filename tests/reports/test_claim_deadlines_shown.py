"""Claim deadlines wherever a month's credit is shown: credits JSON and table, and the review."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from decimal import Decimal

import pytest

from tests.reports.conftest import EXAMPLE, ROOT

LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"
AS_OF = "2027-04-03T00:00:00Z"


def _slakit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "slakit", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def credits_json():
    out = _slakit("credits", str(EXAMPLE), str(LOG), "--quarter", "2027-Q1", "--as-of", AS_OF, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_credits_json_claim_fields(credits_json):
    claims = {p["period"]: p["claim"] for p in credits_json["periods"]}
    assert claims == {"2027-01": {"due": "2027-03-03T06:00:00Z", "status": "expired"},
                      "2027-02": {"due": "2027-03-31T06:00:00Z", "status": "expired"},
                      "2027-03": {"due": "2027-05-01T05:00:00Z", "status": "open"}}
    march = next(p for p in credits_json["periods"] if p["period"] == "2027-03")
    assert credits_json["claimable_total"] == march["credit_total"]
    assert credits_json["claims_as_of"] == AS_OF


def test_credits_table_shows_due_dates_and_claimable(credits_json):
    out = _slakit("credits", str(EXAMPLE), str(LOG), "--quarter", "2027-Q1", "--as-of", AS_OF)
    assert out.returncode == 0, out.stderr
    assert re.search(r"2027-01 .*2027-03-03 00:00 CST │ expired", out.stdout)
    assert re.search(r"2027-03 .*2027-05-01 00:00 CDT │ open", out.stdout)
    text = " ".join(out.stdout.split())
    assert f"claimable as of {AS_OF}: {credits_json['claimable_total']} USD" in text
    assert "lapsed, not claimable: 2027-01, 2027-02" in text


@pytest.fixture(scope="module")
def review(tmp_path_factory):
    d = tmp_path_factory.mktemp("review")
    out = _slakit("review", str(EXAMPLE), str(LOG), "--quarter", "2027-Q1", "--as-of", AS_OF,
                  "-o", str(d / "r.pdf"), "--json-out", str(d / "r.json"))
    assert out.returncode == 0, out.stderr
    return (d / "r.pdf").read_bytes(), json.loads((d / "r.json").read_text())


def _first_content_page(pdf: bytes) -> str:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    for page in reader.pages:
        text = page.extract_text() or ""
        if "1. Executive summary" in text and "Contents" not in text:
            return re.sub(r"\s+", " ", text)
    raise AssertionError("no executive summary page")


def test_review_first_page_says_what_can_still_be_claimed(review):
    pdf, result = review
    page = _first_content_page(pdf)
    claimable = Decimal(result["claimable_total"])
    assert f"Claimable as of 2027-04-02 19:00 CDT: USD {claimable:,.2f}" in page
    assert "2027-03 (4,115.80) before 2027-05-01 00:00 CDT" in page
    lapsed = sum(Decimal(p["credit_total"]) for p in result["periods"] if p["claim"]["status"] == "expired")
    assert f"USD {lapsed:,.2f} can no longer be claimed" in page
    assert "2027-02 (due before 2027-03-31 01:00 CDT)" in page
    assert "due within" not in page
    for row in ("2027-01 69,638.40 2027-03-03 00:00 CST expired: not claimable",
                "2027-03 4,115.80 2027-05-01 00:00 CDT open 28 days 5 h left"):
        assert row in page, page


def test_review_without_claim_window_says_no_deadline(tmp_path):
    text = EXAMPLE.read_text().replace("  claim_window: 30d\n", "")
    assert "claim_window" not in text
    c = tmp_path / "c.yaml"
    c.write_text(text)
    (tmp_path / "gb200-inventory.csv").write_bytes((ROOT / "examples" / "gb200-inventory.csv").read_bytes())
    out = _slakit("review", str(c), str(LOG), "--month", "2027-02", "--as-of", AS_OF, "-o", str(tmp_path / "r.md"))
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "r.md").read_text()
    assert "the contract sets no claim window, so no month's claim lapses" in md
    assert "| 2027-02 | 2,052.21 | no deadline | open |" in md


def test_review_credit_statement_names_each_months_claim(review):
    pdf, _ = review
    from tests.reports.conftest import pdf_text

    text = pdf_text(pdf)
    assert ("Claim for 2027-01: due before 2027-03-03 00:00 CST; expired: not claimable as of 2027-04-02 19:00 CDT "
            "(lapsed 30 days 18 h ago).") in text
    assert "Claim for 2027-03: due before 2027-05-01 00:00 CDT; open as of 2027-04-02 19:00 CDT (28 days 5 h left)." \
        in text


def test_review_cover_page_names_the_claimable_amount(review):
    from pypdf import PdfReader

    pdf, result = review
    cover = re.sub(r"\s+", " ", PdfReader(io.BytesIO(pdf)).pages[0].extract_text() or "")
    assert (f"Claimable USD {Decimal(result['claimable_total']):,.2f} as of 2027-04-02 19:00 CDT: 2027-03 before "
            "2027-05-01 00:00 CDT. Lapsed: USD 71,690.61 (2027-01, 2027-02)") in cover
