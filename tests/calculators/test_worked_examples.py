"""The worked examples of sla-semantics.md section 7, figure by figure."""

from __future__ import annotations

from calculators.engine import compute
from tests.calculators.helpers import contract, inc, log


def _run(records, periods=("2027-02",)):
    lc = contract()
    return compute(lc, log(lc, records), list(periods))


def test_example_a_overlapping_incidents_make_one_outage():
    r = _run([inc("A1", "n1", "2027-02-03T10:00:00Z", "2027-02-03T12:00:00Z"),
              inc("A2", "n1", "2027-02-03T11:30:00Z", "2027-02-03T13:00:00Z")])
    u = r.unit("2027-02", "node", "n1")
    assert u["downtime_seconds"] == 180 * 60
    assert u["availability_pct"] == "99.5535"          # spec 7 A: truncated, not rounded
    assert u["met"] is True and u["credit"] == "0.00"
    assert u["incidents"] == ["A1", "A2"]
    p = r.to_json()["periods"][0]
    assert p["credit_total"] == "0.00"
    assert p["fee_total"] == "43008.00"
    assert r.node("2027-02", "n1")["fee"] == "10752.00"


def test_example_b_tier_and_min_outage():
    r = _run([inc("B1", "n2", "2027-02-10T00:00:00Z", "2027-02-10T04:01:00Z"),
              inc("B2", "n3", "2027-02-10T00:00:00Z", "2027-02-10T00:04:00Z")])
    n2 = r.unit("2027-02", "node", "n2")
    assert n2["downtime_seconds"] == 241 * 60
    assert n2["availability_pct"] == "99.4022"
    assert n2["credit_pct"] == "10" and n2["credit"] == "1075.20"
    n3 = r.unit("2027-02", "node", "n3")
    assert n3["downtime_seconds"] == 0 and n3["availability_pct"] == "100.0000"
    assert n3["incidents"] == []
    assert r.node("2027-02", "n2") == {"id": "n2", "fee": "10752.00", "credit": "1075.20", "basis": "node"}
    assert r.to_json()["periods"][0]["credit_total"] == "1075.20"


def test_example_c_maintenance_cap_exceeded():
    r = _run([inc("C1", "n4", "2027-02-20T08:00:00Z", "2027-02-20T14:00:00Z", category="maintenance",
                  notice_at="2027-02-16T08:00:00Z")])
    u = r.unit("2027-02", "node", "n4")
    assert u["downtime_seconds"] == 2 * 3600
    assert u["excluded_seconds"] == 4 * 3600
    assert u["availability_pct"] == "99.7023"
    assert u["credit"] == "0.00"
    assert u["flags"] == ["exclusion_cap_exceeded"]


def test_example_c_late_notice_counts_in_full():
    r = _run([inc("C1", "n4", "2027-02-20T08:00:00Z", "2027-02-20T14:00:00Z", category="maintenance",
                  notice_at="2027-02-19T08:00:00Z")])
    u = r.unit("2027-02", "node", "n4")
    assert u["downtime_seconds"] == 6 * 3600
    assert u["excluded_seconds"] == 0
    assert u["availability_pct"] == "99.1071"
    assert u["credit_pct"] == "10" and u["credit"] == "1075.20"
    assert u["flags"] == ["notice_not_met"]


def test_example_d_exactly_at_threshold_is_not_below():
    # 2027-04 has 30 days = 43,200 minutes; 432 minutes down is exactly 99.0%
    r = _run([inc("D1", "n1", "2027-04-05T00:00:00Z", "2027-04-05T07:12:00Z")], periods=("2027-04",))
    u = r.unit("2027-04", "node", "n1")
    assert u["downtime_seconds"] == 432 * 60
    assert u["availability_pct"] == "99.0000"
    assert u["credit_pct"] == "10"           # below 99.5%, not below 99.0%
    assert u["credit"] == "1152.00"          # 8 x 2.00 x 720 h = 11,520.00 -> 10%
    # one second more is below 99.0%
    r2 = _run([inc("D1", "n1", "2027-04-05T00:00:00Z", "2027-04-05T07:12:01Z")], periods=("2027-04",))
    assert r2.unit("2027-04", "node", "n1")["credit_pct"] == "25"


def test_a_unit_just_below_a_threshold_never_displays_as_the_threshold():
    # 99.5% of 2,419,200 s allows 12,096 s; one second more is 99.49995...% -> shown 99.4999%
    r = _run([inc("T1", "n1", "2027-02-03T00:00:00Z", "2027-02-03T03:21:37Z")])
    u = r.unit("2027-02", "node", "n1")
    assert u["downtime_seconds"] == 12097
    assert u["availability_pct"] == "99.4999" and u["credit_pct"] == "10"
