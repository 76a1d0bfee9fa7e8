"""Rules one by one on hand-computed cases (sla-semantics.md sections 2-6)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from calculators.engine import compute
from calculators.support_records import ChronicUnit
from tests.calculators.helpers import contract, inc, log

HEAD = """
slakit: 1
contract: {id: rules, provider: P, customer: C, timezone: UTC, currency: USD}
pricing: {per_gpu_hour: 2.00}
"""


def topo(racks: dict[str, str], clusters: dict[str, list[str]] | None = None, sites=None) -> str:
    clusters = clusters or {"c1": list(racks)}
    sites = sites or {"s1": list(clusters)}
    out = "topology:\n  architecture: custom\n  gpus_per_node: 8\n  sites:\n"
    for s, cls in sites.items():
        out += f"    - id: {s}\n      clusters:\n"
        for c in cls:
            out += f"        - id: {c}\n          racks:\n"
            for r in clusters[c]:
                out += f'            - {{id: {r}, nodes: "{racks[r]}"}}\n'
    return out


NODE_TIERS = """
service_levels:
  node:
    credits:
      - {below: 99.5%, credit: 10%}
      - {below: 99%, credit: 25%}
"""


def t(day: int, hour: int, minute: int = 0) -> str:
    return f"2027-02-{day:02d}T{hour:02d}:{minute:02d}:00Z"


def run(text, records, periods=("2027-02",), **kw):
    lc = contract(text)
    return compute(lc, log(lc, records), list(periods), **kw)


def test_cluster_rule_is_an_exact_integer_test():
    # 10 nodes, down when fewer than 90% are up: 1 node down leaves exactly 90% (not below)
    text = HEAD + topo({"r1": "n[1-5]", "r2": "m[1-5]"}) + """
downtime:
  cluster: {down_when_available_below: 90%, nodes_follow_cluster: true}
service_levels:
  cluster:
    credits: [{below: 99.9%, credit: 10%}]
  node:
    credits: [{below: 99.9%, credit: 5%}]
"""
    r = run(text, [inc("a", "n1", t(3, 10), t(3, 12))])
    assert r.unit("2027-02", "cluster", "c1")["downtime_seconds"] == 0
    assert r.unit("2027-02", "node", "m5")["downtime_seconds"] == 0
    r = run(text, [inc("a", "n1", t(3, 10), t(3, 12)), inc("b", "m2", t(3, 11), t(3, 13))])
    c = r.unit("2027-02", "cluster", "c1")
    assert c["downtime_seconds"] == 3600 and c["incidents"] == ["a", "b"]
    m5 = r.unit("2027-02", "node", "m5")                 # follows the cluster
    assert m5["downtime_seconds"] == 3600 and m5["incidents"] == ["a", "b"]


def test_rack_rule_counts_nodes_after_min_outage_and_nodes_follow():
    text = HEAD + topo({"r1": "n[1-4]"}) + """
downtime:
  min_outage: 5m
  rack: {down_when_nodes_down: 2, nodes_follow_rack: true}
""" + NODE_TIERS
    # n2's 4-minute blip is dropped before the rack rule counts it
    r = run(text, [inc("a", "n1", t(3, 10), t(3, 12)), inc("b", "n2", t(3, 11), t(3, 11, 4))])
    assert r.unit("2027-02", "node", "n3")["downtime_seconds"] == 0
    r = run(text, [inc("a", "n1", t(3, 10), t(3, 12)), inc("b", "n2", t(3, 11), t(3, 11, 10))])
    assert r.unit("2027-02", "node", "n3")["downtime_seconds"] == 600
    assert r.unit("2027-02", "node", "n2")["downtime_seconds"] == 600


def test_site_down_only_while_all_its_clusters_are_down():
    text = HEAD + topo({"r1": "n[1-2]", "r2": "m[1-2]"}, {"c1": ["r1"], "c2": ["r2"]}, {"s1": ["c1", "c2"]}) + """
service_levels:
  site:
    credits: [{below: 99.9%, credit: 10%}]
"""
    r = run(text, [inc("a", "c1", t(3, 10), t(3, 14), scope="cluster"),
                   inc("b", "c2", t(3, 13), t(3, 16), scope="cluster")])
    s = r.unit("2027-02", "site", "s1")
    assert s["downtime_seconds"] == 3600 and s["incidents"] == ["a", "b"]
    # 1 - 3600/2419200 = 99.8512% < 99.9% -> 10% of the site fee (4 nodes x 10,752.00)
    assert s["availability_pct"] == "99.8511"          # truncated for display (spec 8.8)
    assert s["credit_pct"] == "10" and s["credit"] == "4300.80"
    assert r.node("2027-02", "m1") == {"id": "m1", "fee": "10752.00", "credit": "1075.20", "basis": "site"}


def test_proportional_degraded_time_takes_the_largest_active_loss():
    text = HEAD + topo({"r1": "n[1-2]"}) + """
downtime: {degraded: proportional}
""" + NODE_TIERS
    r = run(text, [inc("d1", "n1", t(3, 8), t(3, 12), impact="degraded", gpus_affected=2),
                   inc("d2", "n1", t(3, 9), t(3, 10), impact="degraded", gpus_affected=4),
                   inc("x", "n1", t(3, 11), t(3, 11, 30))])
    u = r.unit("2027-02", "node", "n1")
    # 08-09: 2 GPUs, 09-10: 4 GPUs, 10-11: 2, 11:00-11:30 down (8), 11:30-12: 2 -> 10.5 h x ... in GPU-hours:
    # 2 + 4 + 2 + 4 + 1 = 13 GPU-hours = 46,800 GPU-seconds = 5,850 s of a whole node
    assert u["lost_gpu_seconds"] == 46800
    assert u["downtime_seconds"] == 5850
    assert u["incidents"] == ["d1", "d2", "x"]


def test_pro_rata_rack_spread_over_nodes_and_stacking():
    text = HEAD + topo({"r1": "n[1-4]"}) + """
service_levels:
  node:
    credits: [{below: 99.5%, credit: 10%}]
  rack:
    target: 99.9%
    pro_rata: {multiplier: 2}
credits: {stacking: sum}
"""
    r = run(text, [inc("r", "r1", t(3, 0), t(3, 6), scope="rack")])
    rack = r.unit("2027-02", "rack", "r1")
    assert rack["fee"] == "43008.00" and rack["credit"] == "768.00"      # 6/672 x 43,008 x 2
    # each node: rack share 192.00 plus its own tier (6 h = 99.1071% < 99.5%: 10% = 1,075.20)
    assert r.node("2027-02", "n1") == {"id": "n1", "fee": "10752.00", "credit": "1267.20", "basis": "node+rack"}
    assert r.period("2027-02").credit_total_cents == 4 * 126720


def test_sum_stacking_never_exceeds_the_node_fee():
    text = HEAD + topo({"r1": "n[1-2]"}) + """
service_levels:
  node:
    credits: [{below: 99.5%, credit: 100%}]
  rack:
    credits: [{below: 99.5%, credit: 50%}]
credits: {stacking: sum}
"""
    r = run(text, [inc("r", "r1", t(3, 0), t(5, 0), scope="rack")])
    assert r.node("2027-02", "n1")["credit"] == "10752.00"


def test_cap_then_minimum():
    text = HEAD + topo({"r1": "n[1-4]"}) + NODE_TIERS + "credits: {cap: 5%, minimum: 100.00}\n"
    r = run(text, [inc(f"x{i}", f"n{i}", t(3, 0), t(4, 0)) for i in range(1, 5)])
    p = r.to_json()["periods"][0]
    assert p["credit_uncapped"] == "10752.00" and p["cap_amount"] == "2150.40"
    assert p["credit_total"] == "2150.40" and p["cap_applied"] is True
    r = run(HEAD + topo({"r1": "n[1-4]"}) + NODE_TIERS + "credits: {minimum: 2000.00}\n",
            [inc("x", "n1", t(3, 0), t(4, 0))])
    p = r.to_json()["periods"][0]
    assert p["credit_uncapped"] == "2688.00"
    r = run(HEAD + topo({"r1": "n[1-4]"}) + NODE_TIERS + "credits: {minimum: 3000.00}\n",
            [inc("x", "n1", t(3, 0), t(4, 0))])
    p = r.to_json()["periods"][0]
    assert p["credit_total"] == "0.00" and p["minimum_applied"] is True


def test_exclusion_cap_used_in_chronological_order_and_per_month():
    text = HEAD + topo({"r1": "n[1-2]"}) + """
exclusions:
  maintenance: {max_per_month: 4h}
""" + NODE_TIERS
    r = run(text, [inc("m2", "n1", t(10, 0), t(10, 3), category="maintenance"),
                   inc("m1", "n1", t(3, 0), t(3, 3), category="maintenance"),
                   inc("m3", "n1", "2027-02-28T22:00:00Z", "2027-03-01T02:00:00Z", category="maintenance"),
                   inc("w", "n2", t(3, 0), t(3, 1), category="weather")], periods=("2027-02", "2027-03"))
    u = r.unit("2027-02", "node", "n1")
    # m1 fully excluded (3 h), m2: 1 h excluded then 2 h counted; m3's February part (2 h) counted
    assert u["excluded_seconds"] == 4 * 3600 and u["downtime_seconds"] == 4 * 3600
    assert u["incidents"] == ["m2", "m3"] and u["flags"] == ["exclusion_cap_exceeded"]
    march = r.unit("2027-03", "node", "n1")
    assert march["excluded_seconds"] == 2 * 3600 and march["downtime_seconds"] == 0   # new month, new cap
    w = r.unit("2027-02", "node", "n2")
    assert w["downtime_seconds"] == 3600 and w["flags"] == ["unknown_category"]


def test_chronic_failure_and_acceptance_delay():
    text = HEAD + topo({"r1": "n[1-2]"}) + NODE_TIERS + """
termination:
  chronic: {months_below_target: 2, within_months: 3}
acceptance:
  deadline: 2027-01-15
  remedies: {credit_per_day_late: 1%, termination_right_after: 30d}
"""
    recs = [inc("j", "n1", "2027-01-05T00:00:00Z", "2027-01-06T00:00:00Z"),
            inc("m", "n1", "2027-03-05T00:00:00Z", "2027-03-06T00:00:00Z"),
            inc("f", "n2", t(5, 0), t(6, 0))]
    r = run(text, recs, periods=("2027-Q1",), accepted_on=date(2027, 2, 20))
    ch = r.termination.chronic
    assert ch.months_considered == ("2027-01", "2027-02", "2027-03") and ch.window_complete is True
    assert ch.triggered == (ChronicUnit(scope="node", id="n1", months_below_target=("2027-01", "2027-03")),)
    assert ch.termination_right is True
    acc = r.termination.acceptance_delay
    assert acc.days_late == 36 and acc.termination_right is True
    # January fee of both nodes: 2 x 8 x 2.00 x 744 = 23,808.00; 36 days x 1% = 8,570.88
    assert acc.credit == Decimal("8570.88") and acc.monthly_fee == Decimal("23808.00")
    assert acc.monthly_fee_month == "2027-01" and acc.termination_right_from == date(2027, 2, 14)
    r2 = run(text, recs, periods=("2027-02",))
    assert r2.termination.chronic.window_complete is False
    assert r2.termination.chronic.triggered == () and r2.termination.chronic.termination_right is False
    assert r2.termination.acceptance_delay is None
