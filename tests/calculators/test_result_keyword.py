"""The credits `Result` and every record in it are frozen dataclasses built by keyword only:
a positional construction raises TypeError, so one cannot come back unnoticed (fields added
or reordered would otherwise shift silently into each other's places). `dataclasses.replace`
keeps working on them, and `figures`/`claims` hold their own record types."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path

import pytest

from calculators import claims, incident_figures, result, result_records, support_records
from calculators.engine import compute
from calculators.incidents import load_incidents
from slaschema.loader import load_contract

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"

RECORDS = (
    result.ScopeMonth, result.NodeMonth, result.PeriodResult, result.Result,
    result_records.UnitMonth, result_records.NodeCredit, result_records.MonthTotals, result_records.QuarterTotals,
    support_records.SupportFigure, support_records.SupportFigures, support_records.ChronicUnit,
    support_records.ChronicTrigger, support_records.AcceptanceDelay, support_records.Termination,
    claims.ClaimDeadline, claims.ClaimSummary, incident_figures.IncidentFigures, incident_figures.RackDays,
)


@pytest.fixture(scope="module")
def res():
    lc = load_contract(str(CONTRACT))
    return compute(lc, load_incidents(str(LOG), lc), ["2027-Q1"], incidents=True)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_record_is_frozen_and_keyword_only(cls):
    assert dataclasses.is_dataclass(cls)
    assert cls.__dataclass_params__.frozen
    params = list(inspect.signature(cls).parameters.values())
    assert params, cls
    positional = [p.name for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert positional == [], f"{cls.__name__} takes {positional} by position"


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_positional_construction_raises(cls):
    required = [f for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING]
    with pytest.raises(TypeError, match="positional"):
        cls(*(None for _ in required))


def test_engine_result_records_built_by_keyword(res):
    """The engine's records, rebuilt field by field by keyword, are equal to what it made
    (every field has its name's value, none shifted), and `replace` works on each level."""
    pr = res.periods[0]
    sm = pr.scopes["node"]
    for record in (res, pr, pr.nodes, sm, res.claims, res.figures, res.figures.rack_days, res.claims.months[0]):
        values = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
        rebuilt = type(record)(**values)
        for name, value in values.items():
            assert getattr(rebuilt, name) is value
    assert sm.scope == "node" and sm.ids[0] == "r01-n01" and sm.fee_den > 0 and sm.month_seconds == pr.period.seconds
    assert pr.nodes.ids == sm.ids
    assert pr.fee_total_cents == 69638400 and pr.credit_total_cents <= pr.credit_uncapped_cents
    assert res.contract == "example-gb200-2027" and res.currency == "USD" and res.timezone == "America/Chicago"
    assert res.incidents_file == str(LOG) and len(res.contract_sha256) == 64 and len(res.incidents_sha256) == 64
    assert res.open_incidents == ("INC-27064",)
    slim = dataclasses.replace(res, figures=None, claims=None)
    assert slim.figures is None and slim.claims is None and slim.periods is res.periods
    capped = dataclasses.replace(pr, cap_applied=True)
    assert capped.cap_applied and capped.scopes is pr.scopes
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.currency = "EUR"  # type: ignore[misc]


def test_figures_and_claims_have_their_types(res):
    hints = typing.get_type_hints(result.Result, vars(result) | {
        "IncidentFigures": incident_figures.IncidentFigures, "ClaimSummary": claims.ClaimSummary})
    assert hints["figures"] == incident_figures.IncidentFigures | None
    assert hints["claims"] == claims.ClaimSummary | None
    assert isinstance(res.figures, incident_figures.IncidentFigures)
    assert isinstance(res.claims, claims.ClaimSummary)
    assert [m.period for m in res.claims.months] == ["2027-01", "2027-02", "2027-03"]
