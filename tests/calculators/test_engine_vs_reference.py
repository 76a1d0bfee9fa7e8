"""The engine against the plain reference (tests/calculators/reference.py) on random scenarios.

Random small topologies, overlapping, touching and nested incidents of every scope and
category, open incidents, times clustered around month boundaries, contracts with and
without rack/cluster rules, every degraded mode, tiers and pro rata, both stackings, cap
and minimum, in UTC and in zones with daylight saving around the March/October/November
changes.

CI runs a fixed (derandomized) sample; for a deeper search run, for example,
`SLAKIT_DEEP_TESTS=1 .venv/bin/python -m pytest tests/calculators/test_engine_vs_reference.py`
(5,000 random scenarios of up to 40 incidents).
"""

from __future__ import annotations

import json
import os
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators.engine import compute
from calculators.incidents import IncidentLog
from calculators.periods import parse_periods
from slaschema.loader import load_contract_text
from tests.calculators.reference import reference

ZONES = ["UTC", "America/Chicago", "Europe/Berlin"]
MONTH_PAIRS = [("2027-02", "2027-03"), ("2027-03", "2027-04"), ("2027-10", "2027-11"), ("2027-11", "2027-12")]
CATEGORIES = ["unplanned", "maintenance", "security_patch", "customer_caused", "mystery"]
H = 3600


def contract_yaml(spec: dict) -> str:
    sites = [{"id": s, "clusters": [{"id": c, "racks": [{"id": r, "nodes": nodes} for r, nodes in racks.items()]}
                                    for c, racks in clusters.items()]} for s, clusters in spec["sites"].items()]
    downtime: dict = {"min_outage": f"{spec['min_outage']}s", "degraded": spec["degraded"]}
    if spec["rack"]:
        downtime["rack"] = {"down_when_nodes_down": spec["rack"][0], "nodes_follow_rack": spec["rack"][1]}
    if spec["cluster"]:
        downtime["cluster"] = {"down_when_available_below": f"{spec['cluster'][0]}%",
                               "nodes_follow_cluster": spec["cluster"][1]}
    exclusions = {}
    for name, (notice, cap) in spec["exclusions"].items():
        e = {}
        if notice is not None:
            e["notice"] = f"{notice}s"
        if cap is not None:
            e["max_per_month"] = f"{cap}s"
        exclusions[name] = e
    levels = {}
    for scope, (kind, target, detail, *_) in spec["levels"].items():
        if kind == "tiers":
            levels[scope] = {"target": f"{target}%",
                             "credits": [{"below": f"{b}%", "credit": f"{c}%"} for b, c in detail]}
        else:
            levels[scope] = {"target": f"{target}%", "pro_rata": {"multiplier": detail}}
    credits = {"stacking": spec["stacking"], "minimum": spec["minimum"]}
    if spec["cap"] is not None:
        credits["cap"] = f"{spec['cap']}%"
    doc = {
        "slakit": 1,
        "contract": {"id": "prop", "provider": "P", "customer": "C", "timezone": spec["zone"], "currency": "USD"},
        "topology": {"architecture": "custom", "gpus_per_node": spec["gpus"], "sites": sites},
        "pricing": {"per_gpu_hour": spec["price"]},
        "downtime": downtime,
        "exclusions": exclusions,
        "service_levels": levels,
        "credits": credits,
    }
    return json.dumps(doc)


@st.composite
def topologies(draw):
    sites = {}
    k = 0
    for s in range(draw(st.integers(1, 2))):
        clusters = {}
        for c in range(draw(st.integers(1, 2))):
            racks = {}
            for r in range(draw(st.integers(1, 2))):
                racks[f"s{s}c{c}r{r}"] = [f"s{s}c{c}r{r}n{i}" for i in range(draw(st.integers(1, 4)))]
                k += 1
            clusters[f"s{s}c{c}"] = racks
        sites[f"s{s}"] = clusters
    return sites


TIER_SETS = [[("99.9", "10"), ("99.5", "25"), ("99", "50")], [("99.5", "10")], [("99.95", "5"), ("98", "100")]]


@st.composite
def specs(draw):
    levels = {}
    for scope in ("node", "rack", "cluster", "site"):
        kind = draw(st.sampled_from([None, "tiers", "pro_rata"] if scope != "node" else ["tiers", "pro_rata"]))
        if kind == "tiers":
            tiers = draw(st.sampled_from(TIER_SETS))
            levels[scope] = ("tiers", tiers[0][0], tiers)
        elif kind == "pro_rata":
            levels[scope] = ("pro_rata", draw(st.sampled_from(["99.9", "99.5"])), draw(st.sampled_from(["1", "2.5", "30"])))
    sites = draw(topologies())
    smallest = min(len(nodes) for s in sites.values() for c in s.values() for nodes in c.values())
    return {
        "zone": draw(st.sampled_from(ZONES)),
        "gpus": draw(st.sampled_from([4, 8])),
        "sites": sites,
        "price": draw(st.sampled_from(["2.00", "3.25", "1.2345"])),
        "min_outage": draw(st.sampled_from([0, 300])),
        "degraded": draw(st.sampled_from(["ignore", "down", "proportional"])),
        "rack": draw(st.one_of(st.none(), st.tuples(st.integers(1, smallest), st.booleans()))),
        "cluster": draw(st.one_of(st.none(), st.tuples(st.sampled_from(["50", "75", "90", "99.5"]), st.booleans()))),
        "exclusions": {"maintenance": (draw(st.sampled_from([None, 72 * H])), draw(st.sampled_from([None, H, 4 * H]))),
                       "security_patch": (24 * H, 2 * H),
                       "customer_caused": (None, None)},
        "levels": levels,
        "stacking": draw(st.sampled_from(["max", "sum"])),
        "cap": draw(st.sampled_from([None, "10", "50"])),
        "minimum": draw(st.sampled_from(["0", "1.00", "500"])),
    }


@st.composite
def scenarios(draw, pairs=tuple(MONTH_PAIRS), zones=None, max_incidents=10):
    spec = draw(specs())
    if zones is not None:
        spec["zone"] = draw(st.sampled_from(zones))
    pair = draw(st.sampled_from(pairs))
    periods = parse_periods(list(pair), spec["zone"])
    anchors = [periods[0].start, periods[1].start, periods[1].end, (periods[0].start + periods[0].end) // 2]
    units = {"site": list(spec["sites"]),
             "cluster": [c for s in spec["sites"].values() for c in s],
             "rack": [r for s in spec["sites"].values() for c in s.values() for r in c],
             "node": [n for s in spec["sites"].values() for c in s.values() for r in c.values() for n in r]}
    incidents = []
    for i in range(draw(st.integers(0, max_incidents))):
        scope = draw(st.sampled_from(["node", "node", "node", "rack", "cluster", "site"]))
        start = draw(st.sampled_from(anchors)) + draw(st.integers(-8 * H, 8 * H))
        dur = draw(st.one_of(st.sampled_from([1, 299, 300, 301, H, 4 * H, 4 * H + 1, 10 * H]),
                             st.integers(1, 3 * 86400)))
        open_ = draw(st.integers(0, 9)) == 0
        impact = draw(st.sampled_from(["down", "down", "degraded"]))
        incidents.append({
            "id": f"I{i:02d}",
            "scope": scope,
            "target": draw(st.sampled_from(units[scope])),
            "start": start,
            "end": None if open_ else start + dur,
            "impact": impact,
            "gpus_affected": draw(st.one_of(st.none(), st.integers(1, spec["gpus"]))) if impact == "degraded" else None,
            "category": draw(st.sampled_from(CATEGORIES)),
            "notice_at": draw(st.one_of(st.none(), st.sampled_from([0, 24 * H, 72 * H, 72 * H + 1, 96 * H]).map(
                lambda d, s=start: s - d))),
        })
    as_of = draw(st.one_of(st.none(), st.integers(periods[1].start, periods[1].end)))
    return spec, incidents, periods, as_of


def records(incidents):
    out = []
    for inc in incidents:
        r = {k: v for k, v in inc.items() if v is not None}
        out.append(r)
    return out


def fixed(max_examples: int):
    """The settings of the engine's derandomised property tests."""
    return settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def run_traced(scenario, yaml_of=contract_yaml):
    """The engine on a scenario, with its trace: (contract, log, result, trace, tree)."""
    from calculators.engine import run

    spec, incidents, periods, as_of = scenario
    lc = load_contract_text(yaml_of(spec))
    log = IncidentLog.from_records(records(incidents), lc.topology)
    result, tr, tree = run(lc, log, periods, as_of, support=False)
    return lc, log, result, tr, tree


def run_both(spec, incidents, periods, as_of, with_reference=True, yaml_of=contract_yaml):
    lc = load_contract_text(yaml_of(spec))
    log = IncidentLog.from_records(records(incidents), lc.topology)
    result = compute(lc, log, periods, as_of=as_of, support=False)
    if not with_reference:
        return result, None
    ref = reference(spec, incidents, [(p.label, p.start, p.end) for p in periods],
                    as_of if as_of is not None else periods[-1].end)
    return result, ref


def assert_same(result, ref):
    for pr in result.periods:
        want = ref[pr.period.label]
        for scope, sm in pr.scopes.items():
            for i, uid in enumerate(sm.ids):
                w = want["units"].get((scope, uid))
                if w is None:       # not in service this month (revision 1.1): no unit-month
                    assert sm.service is not None and int(sm.service[i]) == 0, (pr.period.label, scope, uid)
                    continue
                got_loss = Fraction(int(sm.lnum[i]), int(sm.dn[i]))
                assert got_loss == w["loss"], (pr.period.label, scope, uid, got_loss, w["loss"])
                assert int(sm.excluded[i]) == w["excluded"], (pr.period.label, scope, uid)
                assert bool(sm.met[i]) == w["met"], (pr.period.label, scope, uid)
                assert int(sm.credit_cents[i]) == w["credit"], (pr.period.label, scope, uid)
        for i, nid in enumerate(pr.nodes.ids):
            assert int(pr.nodes.credit_cents[i]) == want["node_credit"][nid], (pr.period.label, nid)
        assert pr.credit_uncapped_cents == want["uncapped"]
        assert pr.credit_total_cents == want["total"]
        assert pr.cap_applied == want["cap_applied"]
        assert pr.minimum_applied == want["minimum_applied"]
        assert pr.fee_total_cents == want["fee_total"]


DEEP = os.environ.get("SLAKIT_DEEP_TESTS") == "1"


@settings(max_examples=5000 if DEEP else 600, deadline=None, derandomize=not DEEP, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios(max_incidents=40 if DEEP else 10))
def test_engine_matches_reference(scenario):
    spec, incidents, periods, as_of = scenario
    result, ref = run_both(spec, incidents, periods, as_of)
    assert_same(result, ref)


def test_reference_agrees_on_a_hand_checked_case():
    """Rack rule and nodes_follow_rack: 2 of 3 nodes down makes the rack (and the third node) down."""
    spec = {"zone": "UTC", "gpus": 4, "sites": {"s": {"c": {"r": ["a", "b", "x"]}}}, "price": "1.00",
            "min_outage": 300, "degraded": "ignore", "rack": (2, True), "cluster": None, "exclusions": {},
            "levels": {"node": ("tiers", "99.9", [("99.9", "10")])}, "stacking": "max", "cap": None,
            "minimum": "0"}
    p = parse_periods(["2027-02"], "UTC")
    t0 = p[0].start + 86400
    incidents = [{"id": "1", "scope": "node", "target": "a", "start": t0, "end": t0 + 2 * H},
                 {"id": "2", "scope": "node", "target": "b", "start": t0 + H, "end": t0 + 3 * H}]
    result, ref = run_both(spec, incidents, p, None)
    assert_same(result, ref)
    x = result.unit("2027-02", "node", "x")
    assert x["downtime_seconds"] == H                 # rack down while both a and b are down
    assert x["incidents"] == ["1", "2"]
    assert ref["2027-02"]["units"][("node", "x")]["loss"] == Fraction(H)
