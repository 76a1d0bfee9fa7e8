"""Claim deadlines (sla-semantics 8.7): due instant, status against as_of, claimable total."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators.claims import DUE_SOON_SECONDS, deadline, due_instant, status_at, summarize
from calculators.periods import month
from slaschema.models import ClaimMonthsAfter


def _t(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def _iso(epoch: int, zone: str = "UTC") -> str:
    return datetime.fromtimestamp(epoch, ZoneInfo(zone)).isoformat()


FEB = month(2027, 2, "UTC")
D30 = timedelta(days=30)
M2 = ClaimMonthsAfter(months_after=2)


def test_worked_example_k_due_instants():
    assert due_instant(FEB, D30) == _t("2027-03-31T00:00:00Z")
    assert due_instant(FEB, M2) == _t("2027-05-01T00:00:00Z")


def test_worked_example_k_statuses():
    assert deadline(FEB, D30, _t("2027-03-26T00:00:00Z")).status == "due_soon"
    assert deadline(FEB, D30, _t("2027-04-01T00:00:00Z")).status == "expired"
    assert deadline(FEB, M2, _t("2027-04-01T00:00:00Z")).status == "open"


def test_status_boundaries_are_exact():
    due = _t("2027-03-31T00:00:00Z")
    assert status_at(due, due - DUE_SOON_SECONDS - 1) == "open"
    assert status_at(due, due - DUE_SOON_SECONDS) == "due_soon"        # 7 days or less
    assert status_at(due, due - 1) == "due_soon"
    assert status_at(due, due) == "expired"                             # once as_of reaches it
    assert status_at(None, due + 10**9) == "open"                      # no window: no deadline


def test_duration_is_exact_seconds_across_spring_forward():
    # Chicago: February ends 2027-03-01 00:00 CST; DST starts 2027-03-14, so 30 x 86,400 s
    # later is 01:00 CDT, an hour off local midnight
    feb = month(2027, 2, "America/Chicago")
    due = due_instant(feb, D30)
    assert due - feb.end == 30 * 86400
    assert _iso(due, "America/Chicago") == "2027-03-31T01:00:00-05:00"


def test_duration_is_exact_seconds_across_fall_back():
    # Berlin: September ends 2027-10-01 00:00 CEST; DST ends 2027-10-31, so 30d later is 23:00 CET
    sep = month(2027, 9, "Europe/Berlin")
    due = due_instant(sep, timedelta(days=31))
    assert _iso(due, "Europe/Berlin") == "2027-10-31T23:00:00+01:00"


def test_months_after_is_local_midnight_across_dst():
    feb = month(2027, 2, "America/Chicago")
    due = due_instant(feb, ClaimMonthsAfter(months_after=1))
    assert _iso(due, "America/Chicago") == "2027-04-01T00:00:00-05:00"
    assert due == _t("2027-04-01T05:00:00Z")
    nov = month(2027, 11, "America/Chicago")         # crosses the year and back to standard time
    assert _iso(due_instant(nov, M2, ), "America/Chicago") == "2028-02-01T00:00:00-06:00"


def test_months_after_from_december_and_long_windows():
    dec = month(2027, 12, "UTC")
    assert due_instant(dec, ClaimMonthsAfter(months_after=1)) == _t("2028-02-01T00:00:00Z")
    assert due_instant(dec, ClaimMonthsAfter(months_after=14)) == _t("2029-03-01T00:00:00Z")


def test_no_window_no_deadline():
    d = deadline(FEB, None, _t("2030-01-01T00:00:00Z"), 500)
    assert d.due is None and d.status == "open" and d.seconds_left is None and d.claimable


def test_claimable_total_leaves_out_expired_months():
    # a quarterly review of 2027-Q1 produced on 2027-04-03 with a 30-day window
    months = [(month(2027, 1, "UTC"), 10_000), (month(2027, 2, "UTC"), 2_500), (month(2027, 3, "UTC"), 700)]
    s = summarize(months, D30, _t("2027-04-03T00:00:00Z"))
    assert [m.status for m in s.months] == ["expired", "expired", "open"]
    assert s.claimable_cents == 700
    assert s.expired_cents == 12_500
    assert s.window == "30d"
    s2 = summarize(months, ClaimMonthsAfter(months_after=3), _t("2027-04-03T00:00:00Z"))
    assert [m.status for m in s2.months] == ["open", "open", "open"]
    assert s2.claimable_cents == 13_200 and s2.window == "months_after: 3"


def test_result_json_carries_claims(tmp_path):
    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    lc = load_contract("examples/gb200-contract.yaml")
    log = load_incidents("examples/gb200-incidents-2027Q1.csv", lc)
    as_of = datetime(2027, 3, 26, 12, tzinfo=timezone.utc)
    doc = compute(lc, log, ["2027-Q1"], as_of=as_of).to_json(include_units=False)
    claims = {p["period"]: p["claim"] for p in doc["periods"]}
    # Chicago months, 30 days of exact seconds after each month's end
    assert claims["2027-01"] == {"due": "2027-03-03T06:00:00Z", "status": "expired"}
    assert claims["2027-02"] == {"due": "2027-03-31T06:00:00Z", "status": "due_soon"}
    assert claims["2027-03"] == {"due": "2027-05-01T05:00:00Z", "status": "open"}
    from decimal import Decimal

    credit = {p["period"]: Decimal(p["credit_total"]) for p in doc["periods"]}
    assert Decimal(doc["claimable_total"]) == credit["2027-02"] + credit["2027-03"]
    assert doc["claims_as_of"] == "2027-03-26T12:00:00Z" and doc["claim_window"] == "30d"


@pytest.mark.parametrize("n", range(1, 13))
def test_months_after_always_lands_on_a_first_of_month(n):
    for m in range(1, 13):
        p = month(2027, m, "Asia/Kolkata")
        local = datetime.fromtimestamp(due_instant(p, ClaimMonthsAfter(months_after=n)), ZoneInfo("Asia/Kolkata"))
        assert (local.day, local.hour, local.minute) == (1, 0, 0)
        assert (local.year * 12 + local.month) - (2027 * 12 + m) == n + 1


def test_explain_names_the_month_claim():
    from calculators.explain import explain
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    lc = load_contract("examples/gb200-contract.yaml")
    log = load_incidents("examples/gb200-incidents-2027Q1.csv", lc)
    doc = explain(lc, log, "r01-n07", "2027-02", datetime(2027, 3, 25, tzinfo=timezone.utc))
    month = doc.money.month
    assert (month.claim_due, month.claim_status) == (datetime(2027, 3, 31, 6, tzinfo=timezone.utc), "due_soon")
    assert doc.to_json()["money"]["period"]["claim"] == {"due": "2027-03-31T06:00:00Z", "status": "due_soon"}


def test_months_after_window_through_the_engine(tmp_path):
    import shutil

    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    text = open("examples/gb200-contract.yaml").read().replace("claim_window: 30d", "claim_window: {months_after: 2}")
    c = tmp_path / "c.yaml"
    c.write_text(text)
    shutil.copy("examples/gb200-inventory.csv", tmp_path)
    lc = load_contract(c)
    log = load_incidents("examples/gb200-incidents-2027Q1.csv", lc)
    doc = compute(lc, log, ["2027-Q1"], as_of=datetime(2027, 4, 3, tzinfo=timezone.utc)).to_json(include_units=False)
    claims = {p["period"]: p["claim"] for p in doc["periods"]}
    # Chicago: local midnight at the end of the 2nd month after (CST in February, CDT from March)
    assert claims == {"2027-01": {"due": "2027-04-01T05:00:00Z", "status": "expired"},
                      "2027-02": {"due": "2027-05-01T05:00:00Z", "status": "open"},
                      "2027-03": {"due": "2027-06-01T05:00:00Z", "status": "open"}}
    assert doc["claim_window"] == "months_after: 2"


ZONES = ("UTC", "America/Chicago", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata")


@settings(max_examples=200, deadline=None)
@given(zone=st.sampled_from(ZONES), year=st.integers(2026, 2030), mon=st.integers(1, 12),
       window=st.one_of(st.integers(1, 400 * 86400).map(lambda s: timedelta(seconds=s)),
                        st.integers(1, 24).map(lambda n: ClaimMonthsAfter(months_after=n))),
       offsets=st.lists(st.integers(-10**8, 10**8), min_size=2, max_size=8))
def test_status_only_moves_forward_and_claimable_never_exceeds_owed(zone, year, mon, window, offsets):
    p = month(year, mon, zone)
    due = due_instant(p, window)
    assert due > p.end
    order = {"open": 0, "due_soon": 1, "expired": 2}
    seen = [order[status_at(due, due + o)] for o in sorted(offsets)]
    assert seen == sorted(seen)
    s = summarize([(p, 1234)], window, due + offsets[0])
    assert s.claimable_cents + s.expired_cents == 1234
    assert (s.claimable_cents == 1234) == (offsets[0] < 0)
