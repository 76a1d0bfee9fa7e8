"""`Result.support` and `Result.termination` are frozen typed records: the engine builds them,
the JSON document carries every field (read back here into equal records), `--history`
reads a written document back to the same chronic-failure judgement, and every renderer
(table, CSV, review) takes hand-built records."""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from calculators.cli import render_table
from calculators.engine import compute
from calculators.history import chronic_with_history, history_from_result, load_history_files, with_history
from calculators.incidents import load_incidents
from calculators.reports.review import ReviewInputs, review_document
from calculators.reports.review_model import review_extras
from calculators.reports.text import render_markdown
from calculators.settle import csv_rows
from calculators.support_records import (
    AcceptanceDelay,
    ChronicTrigger,
    ChronicUnit,
    SupportFigure,
    SupportFigures,
    Termination,
)
from slaschema.loader import load_contract

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"


@pytest.fixture(scope="module")
def example():
    lc = load_contract(str(CONTRACT))
    return lc, load_incidents(str(LOG), lc)


# --- the document read back into records (independent of calculators.result_json) -----------

def _utc(text: str) -> datetime:
    assert text.endswith("Z")
    return datetime.fromisoformat(text[:-1]).replace(tzinfo=timezone.utc)


def _day(text: str | None) -> date | None:
    return None if text is None else date.fromisoformat(text)


def _figure(group: str, d: dict) -> SupportFigure:
    f = SupportFigure(group=group, target_seconds=d["target_seconds"], count=d["count"], measured=d["measured"],
                      breaches=d["breaches"], p50_seconds=d["p50_seconds"], p95_seconds=d["p95_seconds"],
                      max_seconds=d["max_seconds"], breach_ids=tuple(d["breach_ids"]), open=d["open"])
    assert d["met"] == f.met
    return f


def support_from_json(d: dict) -> SupportFigures | None:
    if d == {}:
        return None
    return SupportFigures(start=_utc(d["from"]), end=_utc(d["to"]), as_of=_utc(d["as_of"]), incidents=d["incidents"],
                          planned_excluded=d["planned_excluded"], detection=_figure("all", d["detection"]),
                          response=tuple(_figure(k, v) for k, v in d["response"].items()),
                          restore=tuple(_figure(k, v) for k, v in d["restore"].items()),
                          basis=d["basis"], percentile_method=d["percentile_method"])


def _units(items: list | None) -> tuple[ChronicUnit, ...] | None:
    if items is None:
        return None
    return tuple(ChronicUnit(scope=u["scope"], id=u["id"], months_below_target=tuple(u["months_below_target"]))
                 for u in items)


def termination_from_json(d: dict) -> Termination | None:
    if d == {}:
        return None
    ch = d["chronic"]
    chronic = None
    if ch is not None:
        chronic = ChronicTrigger(
            months_below_target=ch["months_below_target"], within_months=ch["within_months"],
            months_considered=tuple(ch["months_considered"]), window_complete=ch["window_complete"], note=ch["note"],
            triggered=_units(ch["triggered"]),
            months_missing=tuple(ch["months_missing"]) if "months_missing" in ch else None,
            history_months=tuple(ch["history_months"]) if "history_months" in ch else None,
            near=_units(ch.get("near")))
        assert ch["termination_right"] is chronic.termination_right
    a = d.get("acceptance_delay")
    delay = None
    if a is not None:
        delay = AcceptanceDelay(
            deadline=_day(a["deadline"]), accepted_on=_day(a["accepted_on"]), days_late=a["days_late"],
            credit_per_day_pct=None if a["credit_per_day_pct"] is None else Decimal(a["credit_per_day_pct"]),
            monthly_fee=Decimal(a["monthly_fee"]), credit=Decimal(a["credit"]), currency=a["currency"],
            termination_right=a["termination_right"], termination_right_from=_day(a["termination_right_from"]),
            monthly_fee_month=a["monthly_fee_month"])
    return Termination(chronic=chronic, acceptance_delay=delay)


# --- the records ---------------------------------------------------------------------------

def test_the_records_are_frozen_slotted_and_built_by_keyword():
    unit = ChronicUnit(scope="node", id="n1", months_below_target=("2027-01",))
    with pytest.raises(TypeError):
        ChronicUnit("node", "n1", ("2027-01",))                  # positional arguments are refused
    with pytest.raises(dataclasses.FrozenInstanceError):
        unit.id = "n2"
    for cls in (SupportFigure, SupportFigures, ChronicUnit, ChronicTrigger, AcceptanceDelay, Termination):
        assert dataclasses.fields(cls) and all(f.kw_only for f in dataclasses.fields(cls))
        assert "__slots__" in cls.__dict__ and cls.__dataclass_params__.frozen
    assert not hasattr(unit, "__dict__")


def test_engine_builds_the_records_and_the_document_carries_every_field(example):
    lc, log = example
    res = compute(lc, log, ["2027-Q1"], accepted_on=date(2027, 2, 20))
    s, t = res.support, res.termination
    assert isinstance(s, SupportFigures) and isinstance(t, Termination)
    assert s.start == datetime(2027, 1, 1, 6, tzinfo=timezone.utc) and s.as_of.tzinfo is not None
    assert s.incidents == log.frame["id"].nunique() and s.detection.breaches > 0
    assert s.restore_for("node").open == 1 and s.response_for("sev9") is None
    assert [f.group for f in s.restore] == ["node", "rack", "cluster", "site"][:len(s.restore)]
    assert t.chronic.months_considered == ("2027-01", "2027-02", "2027-03") and t.chronic.with_history is False
    acc = t.acceptance_delay
    assert (acc.deadline, acc.days_late, acc.credit_per_day_pct) == (date(2027, 1, 15), 36, Decimal("1"))
    assert acc.credit == (acc.monthly_fee * 36 / 100).quantize(Decimal("0.01")) and acc.monthly_fee_month == "2027-01"
    doc = json.loads(res.dumps_utf8())
    assert support_from_json(doc["support"]) == s
    assert termination_from_json(doc["termination"]) == t


def test_without_support_or_acceptance_the_document_says_so(example):
    lc, log = example
    res = compute(lc, log, ["2027-02"], support=False)
    assert res.support is None and res.termination.acceptance_delay is None
    doc = json.loads(res.dumps_utf8())
    assert doc["support"] == {} and list(doc["termination"]) == ["chronic"]
    assert termination_from_json(doc["termination"]) == res.termination
    blank = dataclasses.replace(res, termination=None)
    assert json.loads(blank.dumps_utf8())["termination"] == {}


def test_history_round_trip_build_json_read(example, tmp_path):
    """A month's result written as JSON and read back by --history judges the chronic-failure
    trigger as the month computed in the same run does; the judgement itself round-trips."""
    lc, log = example
    jan = compute(lc, log, ["2027-01"], support=False)
    below = history_from_result(jan)["2027-01"]
    assert below                                          # some unit was below target in January
    path = tmp_path / "2027-01.json"
    path.write_bytes(jan.dumps_utf8())
    months, source = load_history_files([str(path)], lc.id)
    assert months == {"2027-01": below} and source == {"2027-01": str(path)}
    march = compute(lc, log, ["2027-03"])
    from_file = with_history(lc, march, months)
    assert from_file.termination.chronic == chronic_with_history(lc, march, history_from_result(jan))
    ch = from_file.termination.chronic
    assert ch.with_history and ch.history_months == ("2027-01",) and "2027-02" in ch.months_missing
    assert ch.window_complete is False and "--history" in ch.note
    assert from_file.support == march.support                  # only the chronic trigger is replaced
    doc = json.loads(from_file.dumps_utf8())
    assert termination_from_json(doc["termination"]) == from_file.termination
    assert support_from_json(doc["support"]) == from_file.support


# --- the renderers take hand-built records ---------------------------------------------------

def _hand_built(res):
    fig = dict(count=4, measured=3, p50_seconds=60, p95_seconds=900, max_seconds=900)
    support = SupportFigures(
        start=datetime(2027, 1, 1, 6, tzinfo=timezone.utc), end=datetime(2027, 4, 1, 5, tzinfo=timezone.utc),
        as_of=datetime(2027, 4, 1, 5, tzinfo=timezone.utc), incidents=9, planned_excluded=2,
        detection=SupportFigure(group="all", target_seconds=120, breaches=2, breach_ids=("HX-1", "HX-2"), **fig),
        response=(SupportFigure(group="sev1", target_seconds=None, breaches=None, **fig),),
        restore=(SupportFigure(group="node", target_seconds=3600, breaches=0, open=2, **fig),))
    nodes = tuple(ChronicUnit(scope="node", id=f"r9-n{i:02d}", months_below_target=("2027-01", "2027-02", "2027-03"))
                  for i in range(1, 5))
    racks = tuple(ChronicUnit(scope="rack", id=f"r{i}", months_below_target=("2027-02", "2027-03"))
                  for i in (7, 8, 9))
    chronic = ChronicTrigger(months_below_target=2, within_months=4, months_considered=("2027-01", "2027-02", "2027-03"),
                             months_missing=("2026-12",), history_months=(), window_complete=False,
                             note="2026-12 not known", triggered=nodes + racks,
                             near=(ChronicUnit(scope="node", id="r5-n01", months_below_target=("2027-03",)),))
    delay = AcceptanceDelay(deadline=date(2027, 1, 15), accepted_on=date(2027, 1, 18), days_late=3,
                            credit_per_day_pct=Decimal("0.5"), monthly_fee=Decimal("700.00"), credit=Decimal("10.50"),
                            currency="USD", termination_right=False, termination_right_from=None,
                            monthly_fee_month="2027-01")
    return dataclasses.replace(res, support=support, termination=Termination(chronic=chronic, acceptance_delay=delay))


@pytest.fixture(scope="module")
def hand(example):
    lc, log = example
    res = compute(lc, log, ["2027-Q1"], incidents=True)
    return lc, log, res, _hand_built(res)


def test_table_and_csv_take_the_records(hand):
    _, _, _, res = hand
    text = render_table(res)
    assert "termination right for r9-n01, r9-n02, r9-n03, r9-n04, r7, r8, r9" in " ".join(text.split())
    assert "one month below target away from the termination right: r5-n01" in text
    assert "  (2026-12 not known)" in text
    assert "Acceptance: 3 day(s) late (deadline 2027-01-15), credit 10.50 USD; termination right: no" in text
    (row,) = [r for r in csv_rows(res) if r["row"] == "acceptance_delay"]
    assert (row["period"], row["fee"], row["credit"], row["settled_credit"], row["flags"]) == \
        ("2027-01", "700.00", "10.50", "10.50", "days_late=3")
    # no credit for the delay: no row
    on_time = dataclasses.replace(res.termination.acceptance_delay, days_late=0, credit=Decimal("0.00"))
    res2 = dataclasses.replace(res, termination=dataclasses.replace(res.termination, acceptance_delay=on_time))
    assert not [r for r in csv_rows(res2) if r["row"] == "acceptance_delay"]


def test_review_takes_the_records(hand):
    lc, log, computed, res = hand
    inputs = ReviewInputs(CONTRACT.name, lc.sha256, LOG.name, log.sha256, "1", "2027-Q1")
    doc, _ = review_document(lc, res, review_extras(computed), inputs)
    md = " ".join(render_markdown(doc).split())
    assert "Termination right reached for 7 units (node: 4, rack: 3), each below target in 2 of 4 months" in md
    assert "Appendix A. Units with a chronic-failure termination right" in md
    assert "r9-n[01-04]" in md and "r[7-9]" in md
    assert "Near the chronic-failure right (one more month below target would reach it): node r5-n01." in md
    assert "Chronic-failure window: 4 months to 2027-03 (2 below target give the right); no earlier months " \
           "given; not known: 2026-12." in md
    assert ("Acceptance delay: deadline 2027-01-15, accepted on 2027-01-18, days late 3, credit per day pct 0.5, "
            "monthly fee 700.00, credit 10.50, currency USD, termination right False, termination right from None, "
            "monthly fee month 2027-01.") in md
    assert "9 incidents started in the period; 2 planned incidents with notice left out" in md
    assert "Restore node (2 open)" in md and "Response sev1" in md
    assert "Detection: HX-1, HX-2" in md
    doc = json.loads(res.dumps_utf8())
    assert support_from_json(doc["support"]) == res.support
    assert termination_from_json(doc["termination"]) == res.termination


def test_chronic_units_are_the_records_the_keyword_constructor_makes():
    """`chronic_units` sets each record's slots itself (the engine's 12,783 triggered nodes):
    the records equal, hash and print as `ChronicUnit(...)`'s, and the class still has just
    the three fields it sets (a field added later would be left unset: this fails first)."""
    from dataclasses import fields

    from calculators.support_records import ChronicUnit, chronic_units

    assert [f.name for f in fields(ChronicUnit)] == ["scope", "id", "months_below_target"]
    assert not hasattr(ChronicUnit, "__post_init__")
    ids = ["n1", "n2", "r-01"]
    months = [("2027-01", "2027-02"), ("2027-02",), ()]
    got = chronic_units("node", iter(ids), iter(months))
    want = [ChronicUnit(scope="node", id=i, months_below_target=m) for i, m in zip(ids, months)]
    assert got == want and [hash(x) for x in got] == [hash(x) for x in want]
    assert [repr(x) for x in got] == [repr(x) for x in want]
    assert chronic_units("rack", [], []) == []
