"""The credit difference of two incident logs under one contract (`slakit reconcile CONTRACT ...`)."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from calculators.credit_difference import compare_logs, credit_difference, months_covered
from calculators.engine import compute
from tests.calculators.helpers import contract, inc, log

AS_OF = datetime(2027, 4, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def lc():
    return contract()


def _logs(lc):
    ours = log(lc, [inc("o1", "n1", "2027-02-10T00:00:00Z", "2027-02-10T05:00:00Z"),     # 5 h: 99.26% -> 10%
                    inc("o2", "n2", "2027-02-12T00:00:00Z", "2027-02-12T10:00:00Z")])    # 10 h: 98.51% -> 25%
    theirs = log(lc, [inc("T1", "n1", "2027-02-10T00:00:00Z", "2027-02-10T02:00:00Z"),   # 2 h: 99.70% -> none
                      inc("T2", "n2", "2027-02-12T00:00:00Z", "2027-02-12T10:00:00Z"),
                      inc("T3", "n3", "2027-03-05T00:00:00Z", "2027-03-05T08:00:00Z")])  # 8 h of 744: 25%
    return ours, theirs


def test_per_month_and_node_ours_minus_theirs(lc):
    ours, theirs = _logs(lc)
    diff = credit_difference(compute(lc, ours, ["2027-02", "2027-03"], as_of=AS_OF, support=False),
                             compute(lc, theirs, ["2027-02", "2027-03"], as_of=AS_OF, support=False))
    feb, mar = diff.periods
    # fee per node: 8 GPUs x 2.00 x 672 h = 10,752.00 (February), x 744 h = 11,904.00 (March)
    assert (feb.period, feb.ours, feb.theirs, feb.difference) == (
        "2027-02", Decimal("3763.20"), Decimal("2688.00"), Decimal("1075.20"))
    assert [(n.node, n.ours, n.theirs, n.difference) for n in feb.nodes] == [
        ("n1", Decimal("1075.20"), Decimal("0.00"), Decimal("1075.20"))]         # n2 is the same on both sides
    assert (mar.ours, mar.theirs, mar.difference) == (Decimal("0.00"), Decimal("2976.00"), Decimal("-2976.00"))
    assert [n.node for n in mar.nodes] == ["n3"]
    assert diff.difference == Decimal("-1900.80") and diff.currency == "USD"
    assert diff.to_json() == {
        "available": True, "currency": "USD", "difference": "-1900.80",
        "months": [
            {"period": "2027-02", "ours": "3763.20", "theirs": "2688.00", "difference": "1075.20",
             "nodes": [{"node": "n1", "ours": "1075.20", "theirs": "0.00", "difference": "1075.20"}]},
            {"period": "2027-03", "ours": "0.00", "theirs": "2976.00", "difference": "-2976.00",
             "nodes": [{"node": "n3", "ours": "0.00", "theirs": "2976.00", "difference": "-2976.00"}]},
        ]}
    with pytest.raises(dataclasses.FrozenInstanceError):
        diff.currency = "EUR"


def test_identical_logs_make_no_difference(lc):
    ours, _ = _logs(lc)
    r = compute(lc, ours, ["2027-02"], as_of=AS_OF, support=False)
    diff = credit_difference(r, r)
    assert diff.difference == 0 and [p.nodes for p in diff.periods] == [()]


def test_results_over_other_months_are_refused(lc):
    ours, theirs = _logs(lc)
    with pytest.raises(ValueError, match="different months"):
        credit_difference(compute(lc, ours, ["2027-02"], as_of=AS_OF, support=False),
                          compute(lc, theirs, ["2027-03"], as_of=AS_OF, support=False))


def test_the_months_default_to_those_the_logs_cover(lc):
    ours, theirs = _logs(lc)
    first = datetime(2027, 2, 10, tzinfo=timezone.utc)
    assert months_covered(first, AS_OF, "UTC") == ["2027-02", "2027-03"]        # as_of at April's start: half-open
    assert months_covered(first, datetime(2027, 4, 1, 0, 0, 1, tzinfo=timezone.utc), "UTC")[-1] == "2027-04"
    assert months_covered(AS_OF, AS_OF, "UTC") == ["2027-04"]                   # at least the first month
    by_default = compare_logs(lc, ours, theirs, (), as_of=AS_OF, first=first)
    assert [p.period for p in by_default.periods] == ["2027-02", "2027-03"]
    assert compare_logs(lc, ours, theirs, ("2027-Q1",), as_of=AS_OF) == dataclasses.replace(
        by_default, periods=(credit_difference(
            compute(lc, ours, ["2027-01"], as_of=AS_OF, support=False),
            compute(lc, theirs, ["2027-01"], as_of=AS_OF, support=False)).periods[0], *by_default.periods))
