"""The SLA schedule: every clause's numbers come from the contract; builds are byte-stable."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from click.testing import CliRunner

from calculators.reports.pdf import render_pdf
from calculators.reports.schedule import schedule_document
from calculators.reports.text import render_html, render_markdown
from slakit.cli import main
from slaschema.loader import load_contract, load_contract_text
from tests.reports.conftest import EXAMPLE, TEMPLATES, pdf_pages, pdf_text


@pytest.fixture(scope="module")
def doc(example_contract):
    return schedule_document(example_contract, "9.9.9")


@pytest.fixture(scope="module")
def pdf(doc):
    return render_pdf(doc)


@pytest.fixture(scope="module")
def text(pdf):
    return pdf_text(pdf)


def test_pdf_is_byte_identical_across_builds(example_contract, pdf):
    again = render_pdf(schedule_document(example_contract, "9.9.9"))
    assert again == pdf


def test_source_date_epoch_sets_the_creation_date(example_contract, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1800000000")
    data = render_pdf(schedule_document(example_contract, "9.9.9"))
    assert b"D:20270115" in data          # 1800000000 = 2027-01-15 08:00 UTC
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    # without it: the contract's own date (here the start of the term), never 2000-01-01
    data = render_pdf(schedule_document(example_contract, "9.9.9"))
    assert b"D:20270101" in data and b"D:20000101" not in data


def test_identity_on_every_page(example_contract, pdf):
    from io import BytesIO

    from pypdf import PdfReader

    reader = PdfReader(BytesIO(pdf))
    n = len(reader.pages)
    assert 4 <= n <= 12
    for i, page in enumerate(reader.pages, start=1):
        t = page.extract_text()
        assert example_contract.sha256 in t
        assert "slakit 9.9.9" in t
        assert f"Page {i} of {n}" in t


def test_identity_on_every_page_with_a_long_contract_id():
    """Clause 11 tells the parties to compare the SHA-256 at the foot of every page: a long
    contract id is shortened there, never the SHA-256 or the version after it."""
    from io import BytesIO

    from pypdf import PdfReader

    long_id = "zaklad-obliczen-lodz-spzoo-beijing-yunsuan-keji-gb200-nvl72-gold-2027-2028"
    lc = load_contract_text(EXAMPLE.read_text().replace("id: example-gb200-2027", f"id: {long_id}", 1),
                            "long-id.yaml", EXAMPLE.parent)
    assert lc.id == long_id
    reader = PdfReader(BytesIO(render_pdf(schedule_document(lc, "0.1.0"))))
    for page in reader.pages:
        t = page.extract_text()
        assert f"· contract SHA-256 {lc.sha256} · slakit 0.1.0" in t
        assert "zaklad-obliczen-lodz-spzoo" in t and "…" in t


@pytest.mark.parametrize("zone, says", [
    ("America/Chicago", "begin and end at local midnight in America/Chicago, so a month with a daylight-saving "
                        "change can be an hour shorter or longer."),
    ("UTC", "begin and end at midnight UTC."),
    ("Asia/Shanghai", "begin and end at local midnight in Asia/Shanghai, which has no daylight-saving change."),
])
def test_months_are_said_to_change_length_only_in_a_zone_with_daylight_saving(zone, says):
    """A UTC contract's schedule said its months begin 'at local midnight in UTC, so a month with
    a daylight-saving change can be an hour shorter or longer': UTC has no such change."""
    raw = EXAMPLE.read_text().replace("timezone: America/Chicago", f"timezone: {zone}", 1)
    lc = load_contract_text(raw, "zone.yaml", EXAMPLE.parent)
    assert lc.model.contract.timezone == zone
    t = pdf_text(render_pdf(schedule_document(lc, "1")))
    assert "All times are compared in UTC; calendar months, which are the measurement periods, " + says in t
    assert ("daylight-saving change can be an hour" in t) == (zone == "America/Chicago")


def test_topology_definitions(text):
    assert "72 nodes with 288 GPUs" in text
    assert "r01-n[01-18], r02-n[01-18], r03-n[01-18], r04-n[01-18]" in text
    assert "4 racks of 18 nodes each" in text
    assert "c1 (4 racks, 72 nodes, site dfw1)" in text


def test_rack_rule_in_words_with_worked_example(text):
    assert "at least 3 of 18 nodes are down" in text
    assert "rule 3 of 18" in text
    # 40 minutes of a 30-day month: 1 - 2400/2592000 = 99.9074%
    assert "99.9074%" in text
    assert "every node in it counts as down" in text
    # cluster rule: fewer than 90% of 72 up <=> 8 nodes down
    assert "c1: 8 of 72 nodes down" in text


def test_min_outage_and_degraded(text):
    assert "shorter than 5 minutes does not count" in text
    assert "10 x 1/4 = 2.50 hours" in text


def test_exclusions_with_notice_and_caps(text):
    assert "3 days before the start" in text          # maintenance notice 72h
    assert "1 day before the start" in text           # security_patch 24h
    assert "Planned upgrades and physical maintenance announced in writing." in text
    assert "8 hours is excluded and 2 hours counts as downtime" in text


def test_service_level_tables(text):
    # node tiers and the downtime allowed in a 30-day month before each tier
    for needle in ("below 99% 10%", "below 95% 25%", "below 90% 100%", "7h 12m", "1d 12h", "3d"):
        assert needle in text, needle
    # node fee in a 30-day month: 4 GPUs x 3.25 x 720 = 9,360.00; 10% = 936.00
    assert "USD 9,360.00" in text and "USD 936.00" in text
    # rack pro rata x2: 40 h x 168,480 / 720 x 2 = 18,720.00
    assert "USD 18,720.00" in text
    assert "below 99.5% 10%" in text and "below 99% 25%" in text


def test_credit_terms_and_support(text):
    assert "at most 50% of that month's total fee (USD 336,960.00 in a 30-day month)" in text
    assert "below USD 1.00 gives no credit" in text
    # the window as computed (exact hours from the month's end): the claim for 2027-02 is due 2027-03-31 01:00 CDT,
    # 30 x 24 hours after 2027-03-01 00:00 CST, not at midnight 30 calendar days later
    assert "within 30 days (counted as 30 x 24 hours) after the end of that month" in text
    assert "a credit against a future invoice" in text
    assert "within 2 minutes of its start" in text
    assert "Severity 1 15 minutes" in text and "Severity 4 1 day" in text
    assert "4 spare nodes" in text and "within 1 hour" in text


def test_acceptance_and_termination(text):
    assert "2027-01-15" in text
    assert "8 hours with at most 0 Xid events" in text
    assert "gemm-bf16" in text and ">= 1800 TFLOPS; warn below 2000" in text
    # thresholds in their units: bytes for the file system and NVLink, bits for Ethernet (not 'read_gbps')
    assert ">= 20 GB/s" in text and ">= 700 GB/s" in text and ">= 1 Gb/s" in text
    assert not re.search(r"[<>]= [\d.]+ (read_gbps|busbw_gbps|throughput_gbps|tflops_bf16)", text)
    assert "NVIDIA GB200 dense BF16" in text
    assert "USD 6,739.20 per day" in text                      # 1% of 673,920.00
    assert "within 30 days after the deadline" in text
    assert "in 3 of any 6 consecutive months" in text
    assert "every quarter" in text


def test_markdown_and_html_come_from_the_same_clauses(doc, text):
    md = render_markdown(doc)
    html = render_html(doc)
    for needle in ("at least 3 of 18 nodes are down", "99.9074%", "USD 18,720.00", "c1: 8 of 72 nodes down"):
        assert needle in md and needle in html and needle in text
    assert "| below 99% | 10% |" in md


def test_numbers_follow_the_contract():
    """Change the contract: the schedule changes with it (nothing is hand-written)."""
    raw = EXAMPLE.read_text().replace("down_when_nodes_down: 3", "down_when_nodes_down: 5") \
        .replace("min_outage: 5m", "min_outage: 10m").replace("per_gpu_hour: 3.25", "per_gpu_hour: 2.00")
    lc = load_contract_text(raw, "changed.yaml", EXAMPLE.parent)
    md = render_markdown(schedule_document(lc, "1"))
    assert "at least 5 of 18 nodes are down" in md
    assert "shorter than 10 minutes" in md
    assert "USD 5,760.00" in md          # 4 x 2.00 x 720
    assert "3 of 18" not in md


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.stem)
def test_every_template_renders(path):
    lc = load_contract(path)
    data = render_pdf(schedule_document(lc, "1"))
    assert 3 <= pdf_pages(data) <= 14
    t = pdf_text(data)
    assert lc.id in t
    for scope, level in lc.model.service_levels.items():
        assert f"{scope.capitalize()} availability" in t


def test_cli_writes_pdf_and_markdown(tmp_path):
    r = CliRunner().invoke(main, ["draft", str(EXAMPLE), "-o", str(tmp_path / "s.pdf")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "s.pdf").read_bytes().startswith(b"%PDF")
    r = CliRunner().invoke(main, ["draft", str(EXAMPLE), "-o", str(tmp_path / "s.md")])
    assert r.exit_code == 0
    assert (tmp_path / "s.md").read_text().startswith("# GB200 NVL72")


def test_cli_bad_contract_exits_1(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("min_outage: 5m", "min_outage: 5"))
    r = CliRunner().invoke(main, ["draft", str(bad), "-o", str(tmp_path / "s.pdf")])
    assert r.exit_code == 1
    assert "duration_unit_missing" in r.output
    assert not (tmp_path / "s.pdf").exists()


def test_decimal_money_not_float(example_contract):
    from calculators.reports.fmt import money

    assert money(Decimal("0.005")) == "0.01"
    assert money("1234567.891", "USD") == "USD 1,234,567.89"

