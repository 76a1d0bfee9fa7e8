"""Per-incident figures of an engine run (compute(..., incidents=True)), on hand-computed cases."""

from __future__ import annotations

import json

from calculators.engine import compute
from tests.calculators.helpers import EXAMPLE_CONTRACT, contract, inc, log
from tests.calculators.test_rules import HEAD, t, topo

RACK_RULE = HEAD + topo({"r1": "n[1-4]", "r2": "m[1-4]"}) + """
downtime:
  min_outage: 5m
  rack: {down_when_nodes_down: 2, nodes_follow_rack: true}
exclusions:
  maintenance: {notice: 72h, max_per_month: 4h}
service_levels:
  node:
    credits: [{below: 99.5%, credit: 10%}]
"""


def _figures(text, records, periods=("2027-02",)):
    lc = contract(text)
    return compute(lc, log(lc, records), list(periods), incidents=True)


def test_counted_downtime_and_excluded_per_incident():
    recs = [inc("short", "n1", t(3, 10), t(3, 10, 3)),                       # 3 min: counted, not downtime
            inc("long", "n2", t(3, 10), t(3, 12)),
            inc("mx", "n3", t(10, 0), t(10, 6), category="maintenance", notice_at=t(1, 0)),   # 4h excluded, 2h over cap
            inc("late", "n4", t(20, 0), t(20, 1), category="maintenance"),  # no notice: counted
            inc("multi", "n[1-2]", t(25, 0), t(25, 1))]
    r = _figures(EXAMPLE_CONTRACT, recs)
    f = r.incidents.set_index("id")
    assert (f.loc["short", "counted_seconds"], f.loc["short", "downtime_seconds"]) == (180, 0)
    assert (f.loc["long", "counted_seconds"], f.loc["long", "downtime_seconds"]) == (7200, 7200)
    assert (f.loc["mx", "counted_seconds"], f.loc["mx", "excluded_seconds"], f.loc["mx", "flags"]) == (7200, 14400, 2)
    assert f.loc["late", "flags"] == 1 and f.loc["late", "downtime_seconds"] == 3600
    assert (f.loc["multi", "units"], f.loc["multi", "target"], f.loc["multi", "counted_seconds"]) == (2, "n[1-2]", 7200)
    assert list(r.incidents["id"]) == ["long", "short", "mx", "late", "multi"]     # by start, then id
    cats = r.figures.by_category["2027-02"]
    assert cats.loc["unplanned"].tolist() == [180 + 7200 + 7200, 7200 + 7200, 0]
    assert cats.loc["maintenance"].tolist() == [7200 + 3600, 7200 + 3600, 14400]
    # the node figures of the same run agree with the incident figures
    assert r.unit("2027-02", "node", "n3")["downtime_seconds"] == 7200
    assert r.unit("2027-02", "node", "n3")["excluded_seconds"] == 14400


def test_rack_rule_time_is_in_the_rack_day_view_not_in_the_incident():
    recs = [inc("a", "n1", t(3, 10), t(3, 14)), inc("b", "n2", t(3, 12), t(3, 16))]
    r = _figures(RACK_RULE, recs)
    f = r.incidents.set_index("id")
    assert f.loc["a", "downtime_seconds"] == 4 * 3600 and f.loc["b", "downtime_seconds"] == 4 * 3600
    rd = r.figures.rack_days
    day = rd.days.index("2027-02-03")
    # r1 down 12:00-14:00 (2 of 4 nodes), all 4 nodes follow: 4 x 2h + n1 10-12 + n2 14-16
    assert rd.seconds[rd.racks.index("r1"), day] == 4 * 7200 + 7200 + 7200
    assert rd.seconds.sum() == rd.seconds[rd.racks.index("r1"), day]
    assert len(rd.days) == 28


def test_rack_incident_costs_its_nodes_in_the_breakdown():
    r = _figures(RACK_RULE, [inc("r", "r2", t(5, 0), t(5, 1), scope="rack", cause="PDU trip")])
    assert r.incidents.loc[0, "counted_seconds"] == 3600
    assert r.figures.by_cause["2027-02"].loc["PDU trip"].tolist() == [4 * 3600, 4 * 3600, 0]


def test_months_split_and_json_only_when_asked():
    recs = [inc("x", "n1", "2027-01-31T23:00:00Z", "2027-02-01T02:00:00Z", cause=" ")]
    r = _figures(EXAMPLE_CONTRACT, recs, periods=("2027-01", "2027-02"))
    assert r.incidents.loc[0, "counted_seconds"] == 3 * 3600
    assert r.figures.by_cause["2027-01"].loc["(no cause given)", "counted"] == 3600
    assert r.figures.by_cause["2027-02"].loc["(no cause given)", "counted"] == 2 * 3600
    plain = r.to_json()
    assert "incidents" not in plain and "downtime_by_category" not in plain["periods"][0]
    full = json.loads(json.dumps(r.to_json(include_incidents=True)))
    assert full["incidents"] == [{"id": "x", "scope": "node", "target": "n1", "units": 1, "category": "unplanned",
                                  "impact": "down", "severity": "", "cause": "", "ticket": "", "counted_seconds": 10800,
                                  "downtime_seconds": 10800, "excluded_seconds": 0,
                                  "start": "2027-01-31T23:00:00Z", "end": "2027-02-01T02:00:00Z", "flags": []}]
    assert full["periods"][1]["downtime_by_category"] == [
        {"key": "unplanned", "counted_node_seconds": 7200, "downtime_node_seconds": 7200, "excluded_node_seconds": 0}]
    assert full["rack_day_downtime"]["racks"] == ["r1"] and len(full["rack_day_downtime"]["days"]) == 59
    assert {k: v for k, v in full.items() if k not in ("incidents", "rack_day_downtime", "periods")} == \
        {k: v for k, v in json.loads(json.dumps(plain)).items() if k != "periods"}


def test_open_incident_and_empty_log():
    r = _figures(EXAMPLE_CONTRACT, [inc("o", "n1", t(27, 0), None)])
    row = r.incidents.iloc[0]
    assert row["end"] == -1 and row["flags"] == 8 and row["counted_seconds"] == 2 * 86400
    empty = _figures(EXAMPLE_CONTRACT, [])
    assert len(empty.incidents) == 0 and empty.figures.rack_days.seconds.sum() == 0
    assert empty.to_json(include_incidents=True)["incidents"] == []
