"""`explain` returns frozen records built by keyword (`calculators.explain_records`): their
fields for known units of the example and of the revision 1.1 fixture, and the one
serializer, `Explanation.to_json()`, and the text renderer writing the kept documents
(tests/fixtures/golden) byte for byte."""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime, timezone
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from calculators.cli import render_explanation
from calculators.explain import explain
from calculators.explain_records import (ClockStart, Explanation, IncidentPart, Interval, NodeMoney,
                                         NodeShare, ServiceTime, ServiceWindow, Step, Tier, exact_text)
from calculators.incidents import load_incidents
from calculators.result_records import UnitMonth
from slakit.cli import main
from slaschema.loader import load_contract

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
EXAMPLE = ("examples/gb200-contract.yaml", "examples/gb200-incidents-2027Q1.csv")
REV11 = ("tests/fixtures/rev11-contract.yaml", "tests/fixtures/rev11-incidents.csv")


def utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def example():
    lc = load_contract(ROOT / EXAMPLE[0])
    return lc, load_incidents(ROOT / EXAMPLE[1], lc)


@pytest.fixture(scope="module")
def rev11():
    lc = load_contract(ROOT / REV11[0])
    return lc, load_incidents(ROOT / REV11[1], lc)


def _kept(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


def _json(doc: Explanation) -> str:
    return json.dumps(doc.to_json(), indent=2, ensure_ascii=False) + "\n"


def test_a_degraded_node_of_the_example(example):
    doc = explain(*example, "r01-n10", "2027-01")
    assert (doc.contract, doc.unit, doc.scope, doc.period, doc.zone) == \
        ("example-gb200-2027", "r01-n10", "node", "2027-01", "America/Chicago")
    assert doc.parents == {"rack": "r01", "cluster": "c1", "site": "dfw1"}
    assert (doc.start, doc.end, doc.as_of) == (utc(2027, 1, 1, 6), utc(2027, 2, 1, 6), utc(2027, 2, 1, 6))
    assert (doc.month_seconds, doc.hours) == (2678400, Decimal(744))
    assert doc.incidents[0] == IncidentPart(
        id="INC-27004", row=4, scope="node", target="r01-n10", category="unplanned", impact="degraded",
        part="counted", start=utc(2027, 1, 9, 4), end=utc(2027, 1, 10, 20, 30), seconds=145800, gpus_lost=1,
        flags=())
    assert [(p.id, p.part, p.gpus_lost) for p in doc.incidents[1:]] == [("CHG-27014", "excluded", None)]
    degraded = next(s for s in doc.steps if s.text.startswith("degraded (proportional)"))
    assert degraded == Step(text="degraded (proportional): GPUs lost while not down", intervals=(
        Interval(start=utc(2027, 1, 9, 4), end=utc(2027, 1, 10, 20, 30), seconds=145800, gpus_lost=1),))
    assert doc.steps[-1] == Step(text="down intervals (final)", intervals=())
    a = doc.availability
    assert isinstance(a.unit, UnitMonth)
    assert (a.unit.downtime_seconds, a.lost_gpu_seconds, a.unit.excluded_seconds) == (36450, 145800, 14400)
    assert a.exact_pct == 100 - Fraction(36450 * 100, 2678400)          # exact, in percent
    assert (a.unit.availability, a.unit.target, a.unit.met) == (Decimal("98.6391"), Decimal(99), False)
    assert a.formula == "1 - 36450 / 2678400" and a.pro_rata is None
    assert a.tiers == (Tier(below=Decimal("99.0"), credit=Decimal(10), applies=True),
                       Tier(below=Decimal("95.0"), credit=Decimal(25), applies=False),
                       Tier(below=Decimal("90.0"), credit=Decimal(100), applies=False))
    assert (a.unit.credit_pct, a.unit.fee, a.unit.credit) == (Decimal(10), Decimal("9672.00"), Decimal("967.20"))
    assert not doc.not_in_service and doc.clock is None and doc.service is None
    (node,) = doc.money.nodes
    assert node == NodeMoney(
        node="r01-n10", fee_exact=Fraction(9672), fee=Decimal("9672.00"),
        shares=(NodeShare(scope="node", unit="r01-n10", share=Fraction(1, 10)),
                NodeShare(scope="rack", unit="r01", share=Fraction(0)),
                NodeShare(scope="cluster", unit="c1", share=Fraction(1, 10))),
        basis="node", stacked_share=Fraction(1, 10), credit_exact=Fraction(9672, 10), credit_rounded=Decimal("967.20"),
        after_cap_and_minimum=Decimal("967.20"), after_cap_exact=Fraction(96720, 100))
    m = doc.money
    assert (m.currency, m.stacking, m.node_fee_formula, m.nodes_not_listed) == \
        ("USD", "max", "4 GPUs x 3.25 per GPU-hour x 744 h", 0)
    assert (m.month.fee_total, m.month.credit_uncapped, m.month.cap_amount, m.month.minimum, m.month.credit_total) == \
        (Decimal("696384.00"), Decimal("69638.40"), Decimal("348192.00"), Decimal("1.00"), Decimal("69638.40"))
    assert (m.month.claim_due, m.month.claim_status) == (utc(2027, 3, 3, 6), "open")
    with pytest.raises(dataclasses.FrozenInstanceError):
        doc.unit = "r01-n11"                                    # type: ignore[misc]
    with pytest.raises(TypeError):
        Tier(Decimal(99), Decimal(10), True)                    # type: ignore[misc]  keyword only


def test_a_rack_lists_its_nodes_and_the_pro_rata_arithmetic(example):
    doc = explain(*example, "r03", "2027-01")
    assert doc.scope == "rack" and doc.parents == {"cluster": "c1", "site": "dfw1"}
    final = doc.steps[-1]
    assert sum(iv.in_month_seconds for iv in final.intervals) == doc.availability.unit.downtime_seconds
    assert doc.availability.pro_rata.multiplier == Decimal(2) and doc.availability.pro_rata.only_below_target is None
    assert len(doc.money.nodes) == 18 and doc.money.month.credit_total == Decimal("69638.40")


def test_revision_11_parts(rev11):
    doc = explain(*rev11, "n4", "2027-02")
    assert doc.service == ServiceTime(service_seconds=14 * 86400, month_seconds=28 * 86400,
                                      window=ServiceWindow(starts=date(2027, 2, 15), ends=None))
    assert doc.clock[0] == ClockStart(id="A2", fault_start=utc(2027, 2, 10), reported_at=utc(2027, 2, 10, 0, 10),
                                      clock_starts=utc(2027, 2, 10, 0, 10), note="counts from the report")
    assert doc.steps[0].intervals == (Interval(start=utc(2027, 2, 15, 6), end=utc(2027, 3, 1, 6), seconds=14 * 86400),)
    assert {(p.id, p.part) for p in doc.incidents} == {("A3", "counted"), ("A2", "counts nowhere"),
                                                       ("A5", "counts nowhere")}
    u = doc.availability.unit
    assert (u.service_seconds, u.fee, u.charged_fee, u.credit) == \
        (1209600, Decimal("5376.00"), Decimal("5328.00"), Decimal("532.80"))
    assert exact_text(doc.availability.exact_pct, 8) == "99.25595238…"
    (node,) = doc.money.nodes
    assert (node.service_seconds, node.service_hours, node.not_charged_exact, node.not_charged,
            node.charged_fee_exact) == (1209600, Fraction(336), Fraction(48), Decimal("48.00"), Fraction(5328))
    month = doc.money.month
    assert (month.minimum_rule, month.not_charged_total, month.remedy_total) == \
        ("more_than", Decimal("208.00"), Decimal("1806.40"))
    assert (month.claim_due, month.claim_status) == (None, "open")
    out = explain(*rev11, "n4", "2027-01")
    assert out.not_in_service and out.availability is None


@pytest.mark.parametrize("source, unit, month, as_of, name", [
    (EXAMPLE, "r01-n07", "2027-02", utc(2027, 3, 25), "explain-example-r01-n07-2027-02"),
    (EXAMPLE, "r01-n10", "2027-01", None, "explain-example-r01-n10-2027-01"),
    (REV11, "n4", "2027-02", None, "explain-rev11-n4-2027-02"),
])
def test_to_json_and_the_text_are_the_kept_documents(source, unit, month, as_of, name):
    lc = load_contract(ROOT / source[0])
    doc = explain(lc, load_incidents(ROOT / source[1], lc), unit, month, as_of)
    assert _json(doc) == _kept(name + ".json")
    assert render_explanation(doc) == _kept(name + ".txt")


def test_the_command_writes_the_kept_documents(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = CliRunner().invoke(main, ["explain", *EXAMPLE, "--unit", "r03", "--month", "2027-01", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert r.stdout == _kept("explain-example-r03-2027-01.json")
    r = CliRunner().invoke(main, ["explain", *REV11, "--unit", "n4", "--month", "2027-02"])
    assert r.exit_code == 0, r.output
    assert r.stdout == _kept("explain-rev11-n4-2027-02.txt")


def test_a_long_explanation_shows_its_parts_in_aligned_columns(example, monkeypatch):
    """Past BOXED_LINES lines (parts and intervals) the parts are aligned columns and the
    intervals written as they are (Rich's table took 70 s for 50,000 parts): the same cells,
    the same interval lines, ids as the terminal shows them (no markup escapes, controls
    neutralised), and every line after the table the boxed text has."""
    from rich.cells import cell_len

    import calculators.cli as cli

    doc = explain(*example, "r01-n10", "2027-01")
    odd = dataclasses.replace(doc.incidents[0], id="[bold]INC\x1b[2J-1", category="节点")
    doc = dataclasses.replace(doc, incidents=(odd, *doc.incidents[1:]))
    boxed = render_explanation(doc)
    monkeypatch.setattr(cli, "BOXED_LINES", 1)
    long = render_explanation(doc)
    lines = long.splitlines()
    at = lines.index(f"1. Incident parts on this unit (own and inherited): {len(doc.incidents):,} parts")
    header, rule, *rows = lines[at + 1:at + 3 + len(doc.incidents)]
    assert header.split() == ["id", "row", "scope/target", "category", "impact", "part", "start", "end",
                              "seconds", "flags"]
    assert set(rule.replace(" ", "")) == {"-"}
    starts = [k for k, ch in enumerate(rule) if ch == "-" and (k == 0 or rule[k - 1] == " ")]
    for part, row in zip(doc.incidents, rows):
        assert row.startswith(part.id if part is not odd else "[bold]INC")
        start = part.start.strftime("%Y-%m-%dT%H:%M:%SZ")         # in its column, as the terminal shows it
        assert cell_len(row[:row.index(start)]) == starts[6]
    assert "\x1b" not in long and "\\[bold]" not in long and "节点" in rows[0]
    # the step lines, the intervals and the arithmetic are the boxed text's
    tail = boxed[boxed.index("\n2. "):]
    assert long.endswith(tail)


def test_ids_are_shown_as_written_in_both_forms_and_long_ones_cut_in_the_aligned(example, monkeypatch):
    """An id is shown as the log writes it (controls neutralised): no emoji for `:thumbs_up:`,
    no doubled backslash at its end, markup literal, in the boxed table and in the aligned
    columns; a cell wider than ALIGNED_WIDTH is cut there with an ellipsis (one id of 10,000
    characters padded every line of a 20,000-part table to its width: 204 MB of text)."""
    import calculators.cli as cli

    doc = explain(*example, "r01-n10", "2027-01")
    ids = ["a\\", ":thumbs_up: ok", "[red]r[/red]\\", "L" + "x" * 10_000]
    parts = tuple(dataclasses.replace(doc.incidents[k % len(doc.incidents)], id=v) for k, v in enumerate(ids))
    doc = dataclasses.replace(doc, incidents=parts)
    boxed = render_explanation(dataclasses.replace(doc, incidents=parts[:3]))
    assert "│ a\\ " in boxed and "│ :thumbs_up: ok" in boxed and "│ [red]r[/red]\\ " in boxed
    assert "\\\\" not in boxed and "👍" not in boxed
    monkeypatch.setattr(cli, "BOXED_LINES", 1)
    long = render_explanation(doc)
    assert "\na\\ " in long and "\n:thumbs_up: ok " in long and "\n[red]r[/red]\\ " in long
    cut = "L" + "x" * (cli.ALIGNED_WIDTH - 2) + "…"
    assert f"\n{cut} " in long and "x" * cli.ALIGNED_WIDTH not in long
    assert max(len(line) for line in long.splitlines()) < 300
