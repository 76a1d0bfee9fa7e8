"""The SLA review: figures in the PDF equal the engine's result document; builds are byte-stable."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from decimal import Decimal

import pytest
from click.testing import CliRunner

from calculators.engine import compute
from calculators.incidents import load_incidents
from calculators.reports.fmt import money, pct
from calculators.reports.pdf import render_pdf
from calculators.reports.review import ReviewInputs, register_csv, review_document
from calculators.reports.review_model import review_extras
from calculators.reports.text import render_html, render_markdown
from slakit.cli import main
from tests.reports.conftest import EXAMPLE, ROOT, pdf_pages, pdf_text

LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"


@pytest.fixture(scope="module")
def run(example_contract):
    lc = example_contract
    log = load_incidents(LOG, lc)
    res = compute(lc, log, ["2027-Q1"], incidents=True)
    result = res.to_json()
    extras = review_extras(res)
    inputs = ReviewInputs(EXAMPLE.name, lc.sha256, LOG.name, log.sha256, "9.9.9", "2027-Q1")
    doc, attachments = review_document(lc, res, extras, inputs)
    return lc, log, result, extras, doc, attachments, res


@pytest.fixture(scope="module")
def pdf(run):
    return render_pdf(run[4])


@pytest.fixture(scope="module")
def text(pdf):
    return pdf_text(pdf)


def test_byte_identical_and_bounded(run, pdf):
    lc, log, result, extras, _, _, res = run
    again, _ = review_document(lc, res, extras,
                               ReviewInputs(EXAMPLE.name, lc.sha256, LOG.name, log.sha256, "9.9.9", "2027-Q1"))
    assert render_pdf(again) == pdf
    assert 6 <= pdf_pages(pdf) <= 25


def test_cover_names_inputs_and_hashes(run, text):
    lc, log, result, *_ = run
    for needle in (lc.id, "Example Neocloud Inc.", "Example AI Lab", "2027-Q1", EXAMPLE.name, lc.sha256,
                   LOG.name, log.sha256, "slakit 9.9.9", result["as_of"]):
        assert needle in text, needle
    # the instant in the contract's zone, as every other time of the review, then in UTC
    assert f"Figures as of 2027-04-01 00:00 CDT ({result['as_of']})" in " ".join(text.split())


def test_credit_totals_equal_the_result(run, text):
    result = run[2]
    total = sum(Decimal(p["credit_total"]) for p in result["periods"])
    assert f"Credits owed for 2027-01, 2027-02, 2027-03: {money(total, 'USD')}" in text
    for p in result["periods"]:
        assert money(p["credit_total"], "USD") in text
        assert money(p["fee_total"]) in text
        assert money(p["credit_uncapped"]) in text


def test_every_node_with_a_credit_is_listed_with_its_amount(run, pdf):
    from pypdf import PdfReader

    from calculators.reports.review import _basis_code

    result = run[2]
    reader = PdfReader(io.BytesIO(pdf))
    pages = [p.extract_text() for p in reader.pages]
    start = max(i for i, t in enumerate(pages) if ". Node credits" in t)     # not the contents page
    tokens = re.split(r"Appendix [A-H]\. Node credits", " ".join(pages[start:]), maxsplit=1)[1].split()
    months = [p["period"] for p in result["periods"]]
    expected: dict[str, list[list[str]]] = {}
    for k, p in enumerate(result["periods"]):
        for x in p["nodes"]:
            cell = [money(x["credit"]), _basis_code(x["basis"])] if Decimal(x["credit"]) > 0 else ["—"]
            expected.setdefault(x["id"], [None] * len(months))[k] = cell
    listed = 0
    for node, cells in expected.items():
        if all(c == ["—"] for c in cells):
            assert node not in tokens, node
            continue
        i = tokens.index(node) + 1
        for cell in cells:
            assert tokens[i:i + len(cell)] == cell, (node, cells, tokens[i - 1:i + 8])
            i += len(cell)
        listed += 1
    assert listed == len({x["id"] for p in result["periods"] for x in p["nodes"] if Decimal(x["credit"]) > 0})
    assert listed > 0


def test_availability_values_equal_the_result(run, text):
    result = run[2]
    for p in result["periods"]:
        for u in p["units"]:
            if u["scope"] in ("rack", "cluster"):
                assert pct(u["availability_pct"]) in text
    # the worst node of each month is named with its value
    for p in result["periods"]:
        nodes = [u for u in p["units"] if u["scope"] == "node"]
        low = min(nodes, key=lambda u: Decimal(u["availability_pct"]))
        assert f"{pct(low['availability_pct'])} ({low['id']})" in text


def test_register_figures_come_from_the_engine_trace(run):
    reg = {r.id: r for r in run[3].incidents.rows()}
    # maintenance past the 8h monthly cap on r01-n02 (6h used earlier in March): 2h excluded, 2h counted
    assert reg["CHG-27058"].excluded_seconds == 7200
    assert reg["CHG-27058"].counted_seconds == 7200
    assert reg["CHG-27058"].flags == ("exclusion_cap_exceeded",)
    assert reg["CHG-27017"].flags == ("notice_not_met",)
    assert reg["INC-27021"].flags == ("unknown_category",)
    assert reg["INC-27064"].flags == ("open_incident",) and reg["INC-27064"].end == ""
    assert reg["CHG-27040"].units == 6 and reg["CHG-27040"].target == "r04-n[01-06]"
    assert reg["INC-27034"].counted_seconds == 0 and reg["INC-27034"].excluded_seconds == 3 * 3600
    # a 3-minute outage is counted but is not downtime under the 5-minute minimum outage
    assert reg["INC-27006"].counted_seconds == 180 and reg["INC-27006"].downtime_seconds == 0
    assert reg["INC-27001"].downtime_seconds == reg["INC-27001"].counted_seconds == 9900


def test_breakdowns_and_heatmap_add_up(run):
    extras = run[3]
    f = extras.incidents.frame
    node_rows = f[f["scope"] == "node"]
    cats = {x.key: x for x in extras.by_category}
    unplanned = node_rows[node_rows["category"] == "unplanned"]
    # node incidents alone are a lower bound of each category's node-seconds; rack incidents add rack x nodes
    assert cats["unplanned"].counted_node_seconds >= int(unplanned["counted_seconds"].sum())
    for x in extras.by_category:
        assert 0 <= x.downtime_node_seconds <= x.counted_node_seconds
    assert sum(x.counted_node_seconds for x in extras.by_cause) == sum(
        x.counted_node_seconds for x in extras.by_category)
    hm = extras.heatmap
    assert len(hm.days) == 31 + 28 + 31 and all(len(v) == len(hm.days) for v in hm.node_hours)


def test_review_needs_the_per_incident_figures(example_contract):
    lc = example_contract
    res = compute(lc, load_incidents(LOG, lc), ["2027-02"])
    with pytest.raises(ValueError, match="incidents=True"):
        review_extras(res)
    with pytest.raises(ValueError, match="incidents=True"):
        res.to_json(include_incidents=True)


def test_register_rows_in_pdf(run, text):
    for r in run[3].incidents.rows():
        assert r.id in text


def test_degraded_minutes_are_said_to_be_more_than_the_nodes_downtime(run, text):
    """INC-27004 took 1 of r01-n10's 4 GPUs for 2,430 min: the register (and section 3) count the
    whole stretch, the contract (degraded: proportional) 607.5 min of downtime. The page says so."""
    lc, _, result, extras, *_ = run
    assert lc.model.downtime.degraded == "proportional"
    row = next(r for r in extras.incidents.rows() if r.id == "INC-27004")
    assert (row.impact, row.downtime_seconds) == ("degraded", 2430 * 60)
    jan = result["periods"][0]
    unit = next(u for u in jan["units"] if u["scope"] == "node" and u["id"] == "r01-n10")
    assert unit["downtime_seconds"] == 2430 * 60 // 4
    note = ("3 incidents marked (degraded) count here with their whole degraded stretch; in availability the node "
            "accrues only the share of its GPUs lost (downtime.degraded: proportional).")
    assert text.count(note) == 2                           # section 3 and the register
    assert (text.index("3. Downtime by category and cause Incident time") < text.index(note)
            < text.index("4. Fleet view Where") < text.index("7. Incident register Every") < text.rindex(note)
            < text.index("ID Ticket Scope"))


def test_a_month_not_ended_as_of_the_figures_is_said_to_be_not_final(example_contract):
    """A review as of mid-March stated 'Credits owed for 2027-03' and the month claimable with no
    word that the month was still running (slakit claim refuses such a month)."""
    from datetime import datetime, timezone

    lc = example_contract
    log = load_incidents(LOG, lc)
    res = compute(lc, log, ["2027-02", "2027-03"], as_of=datetime(2027, 3, 15, tzinfo=timezone.utc), incidents=True)
    doc, _ = review_document(lc, res, review_extras(res),
                             ReviewInputs(EXAMPLE.name, lc.sha256, LOG.name, log.sha256, "1", "2027-02..2027-03"))
    text = pdf_text(render_pdf(doc))
    said = ("2027-03 had not ended as of 2027-03-14 19:00 CDT: its figures are the month so far, not final. A claim "
            "covers a whole month, so it can be claimed only once it has ended (2027-03 ends 2027-04-01 00:00 CDT).")
    assert said in text
    assert text.index("1. Executive summary Credits owed") < text.index(said) < text.index("Month Fee (USD)")
    assert "2027-02 had not ended" not in text


def test_a_review_of_ended_months_says_nothing_of_the_kind(text):
    assert "had not ended as of" not in text


def test_support_and_flags_in_summary(run, text):
    s = run[2]["support"]
    assert f"{s['incidents']} incidents started in the period" in text
    assert "Notice missing or late (notice_not_met): 3 incidents" in text
    assert "INC-27064" in text


def test_markdown_and_html_carry_the_same_figures(run, text):
    doc, result = run[4], run[2]
    md, html = render_markdown(doc), render_html(doc)
    for p in result["periods"]:
        for needle in (money(p["credit_total"], "USD"), p["period"]):
            assert needle in md and needle in html and needle in text
    assert "| Node | 2027-01 | 2027-02 | 2027-03 | Node | 2027-01 | 2027-02 | 2027-03 |" in md


def test_register_is_cut_with_a_full_csv_attachment(run):
    lc, log, result, extras, _, _, res = run
    inputs = ReviewInputs(EXAMPLE.name, lc.sha256, LOG.name, log.sha256, "1", "2027-Q1")
    doc, attachments = review_document(lc, res, extras, inputs, register_limit=5, attachment_stem="rev")
    t = render_markdown(doc)
    n = len(extras.incidents)
    assert f"the first 5 are printed here and all {n} are in the attached file rev.incidents.csv" in t
    assert [a.name for a in attachments] == [".incidents.csv", ".node-credits.csv"]
    rows = list(csv.DictReader(io.StringIO(attachments[0].data.decode())))
    first = extras.incidents.rows(1)[0]
    assert len(rows) == n and rows[0]["id"] == first.id and rows[0]["start"] == first.start
    chg = next(r for r in rows if r["id"] == "CHG-27058")
    assert (chg["counted_seconds"], chg["excluded_seconds"], chg["flags"]) == ("7200", "7200", "exclusion_cap_exceeded")
    assert attachments[0].data == register_csv(extras)


def test_renderer_needs_no_support_or_termination_figures(run):
    """A result with no support or termination figures still renders."""
    lc, log, result, extras, _, _, res = run
    slim = dataclasses.replace(res, support=None, termination=None)
    inputs = ReviewInputs(EXAMPLE.name, lc.sha256, LOG.name, log.sha256, "1", "2027-Q1")
    doc, _ = review_document(lc, slim, extras, inputs)
    assert "The result carries no support figures." in render_markdown(doc)


def test_cli_review_month_pdf_and_json(tmp_path):
    out = tmp_path / "review.pdf"
    r = CliRunner().invoke(main, ["review", str(EXAMPLE), str(LOG), "--month", "2027-02", "-o", str(out),
                                  "--json-out", str(tmp_path / "result.json")])
    assert r.exit_code == 0, r.output
    result = json.loads((tmp_path / "result.json").read_text())
    t = pdf_text(out.read_bytes())
    assert [p["period"] for p in result["periods"]] == ["2027-02"]
    assert money(result["periods"][0]["credit_total"], "USD") in t
    assert "credits owed USD" in r.output


def test_cli_review_usage_errors(tmp_path):
    base = ["review", str(EXAMPLE), str(LOG), "-o", str(tmp_path / "r.pdf")]
    assert CliRunner().invoke(main, base).exit_code == 2
    assert CliRunner().invoke(main, base + ["--month", "2027-02", "--quarter", "2027-Q1"]).exit_code == 2
    assert CliRunner().invoke(main, base + ["--month", "2027-13"]).exit_code == 2
    assert CliRunner().invoke(main, base + ["--month", "2027-02", "--as-of", "2027-03-01T00:00"]).exit_code == 2


def test_cli_review_bad_log_exits_1(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,scope,target,start\nX1,node,nope-n01,2027-02-01T00:00:00Z\n")
    r = CliRunner().invoke(main, ["review", str(EXAMPLE), str(bad), "--month", "2027-02",
                                  "-o", str(tmp_path / "r.pdf")])
    assert r.exit_code == 1
    assert "unknown_target" in r.output
    assert not (tmp_path / "r.pdf").exists()


def test_contents_and_bookmarks_match_the_pages(pdf):
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    pages = [p.extract_text() for p in reader.pages]

    def walk(items):
        for it in items:
            yield from (walk(it) if isinstance(it, list) else [it])

    numbers = []
    for item in walk(reader.outline):
        n = reader.get_destination_page_number(item)
        assert item.title in pages[n], item.title
        numbers.append(n + 1)
    assert len(numbers) >= 10
    assert [int(x) for x in re.findall(r"\.\s+(\d+)\s*$", pages[1], flags=re.M)] == numbers


def test_long_register_goes_to_an_appendix(run, monkeypatch):
    from calculators.reports import review as rv

    lc, log, result, extras, _, _, res = run
    monkeypatch.setattr(rv, "INLINE_REGISTER", 10)
    inputs = ReviewInputs(EXAMPLE.name, lc.sha256, LOG.name, log.sha256, "1", "2027-Q1")
    doc, attachments = review_document(lc, res, extras, inputs, register_limit=30, attachment_stem="rev")
    md = render_markdown(doc)
    n = len(extras.incidents)
    assert "The 25 with the most counted time are below; the first 30 in order of start are in Appendix A" in md
    assert f"and all {n} are in the attached file rev.incidents.csv" in md
    assert "## Appendix A. Incident register" in md and "## Appendix B. Node credits" in md
    section7 = md.split("## 7. Incident register", 1)[1].split("## Appendix A", 1)[0]
    top = sorted(extras.incidents.rows(), key=lambda r: -r.counted_seconds)[:25]
    assert all(r.id in section7 for r in top)
    appendix = md.split("## Appendix A. Incident register", 1)[1].split("## Appendix B", 1)[0]
    assert [r.id for r in extras.incidents.rows(30)] == re.findall(r"^\| ((?:INC|CHG)-\d+) \|", appendix,
                                                                        flags=re.M)
    assert [a.name for a in attachments][0] == ".incidents.csv"


def test_skipped_rows_are_listed(tmp_path):
    log = tmp_path / "log.csv"
    text = LOG.read_text()
    log.write_text(text + "BAD-1,node,nope-n01,2027-02-01T00:00:00Z,,,,,,,,,,,,\n")
    out = tmp_path / "r.md"
    r = CliRunner().invoke(main, ["review", str(EXAMPLE), str(log), "--month", "2027-02", "-o", str(out),
                                  "--skip-bad-rows"])
    assert r.exit_code == 0, r.output
    md = out.read_text()
    assert "1 row of the incident log could not be read and was skipped (Appendix A)" in md
    assert "## Appendix A. Skipped rows of the incident log" in md
    assert "unknown_target" in md.split("## Appendix A. Skipped rows", 1)[1]


def test_register_shows_the_provider_ticket_and_ids_stay_whole(run, pdf):
    from io import BytesIO

    from pypdf import PdfReader

    rows = run[3].incidents.rows()
    assert rows[0].ticket == "ND-49886"
    lines = {ln.strip() for p in PdfReader(BytesIO(pdf)).pages for ln in (p.extract_text() or "").splitlines()}
    words = {w for ln in lines for w in ln.split()}
    for r in rows:
        assert r.id in words, r.id                         # never cut across two lines
        if r.ticket:
            assert r.ticket in words, r.ticket
    assert b"ND-49886" in run[3].incidents.to_csv()
def test_a_bad_log_is_printed_by_the_one_input_error_handler(tmp_path):
    """review lets the loader's InputError propagate; the `slakit` command prints every
    problem with its code and exits 1, without a traceback and without writing the PDF."""
    log = tmp_path / "bad.csv"
    log.write_text("id,scope,target,start\nA,node,r99-n01,2027-02-03T10:00:00Z\nB,node,r01-n01,soon\n")
    out = tmp_path / "r.pdf"
    got = CliRunner().invoke(main, ["review", str(EXAMPLE), str(log), "--month", "2027-02", "-o", str(out)])
    assert got.exit_code == 1 and not out.exists()
    assert "row 1, column target" in got.output and "[unknown_target]" in got.output
    assert "row 2, column start" in got.output and "[timestamp_invalid]" in got.output
    assert isinstance(got.exception, SystemExit)


def test_every_command_reports_input_errors():
    import click

    def commands(group):
        for cmd in group.commands.values():
            yield cmd
            if isinstance(cmd, click.Group):
                yield from commands(cmd)
    callbacks = [c.callback for c in commands(main.load_all()) if c.callback]
    assert len(callbacks) > 20 and all(getattr(cb, "reports_input_errors", False) for cb in callbacks)
