"""Step 4 with the units above a node kept whole (`calculators.engine.NodeLift`) against
step 4 on every node's pieces, the pushed-down ones included (`Trace.node_down`, built from
`Trace.counted` on first use): the same down time, the same pieces inside it."""

from __future__ import annotations

from hypothesis import given

from calculators.engine import DOWN, NODE, RACK
from calculators.intervals import concat, merge
from tests.calculators.test_engine_vs_reference import fixed, run_traced, scenarios


def _pieces_inside(tr, tree):
    """(node, start, end, frame row, flags) of the counted pieces inside each node's down time,
    by step 4 on every node's pieces."""
    p, k = tr.counted[NODE], tr.node_inside
    return set(zip(p.iv.unit[k].tolist(), p.iv.start[k].tolist(), p.iv.end[k].tolist(), p.row[k].tolist(),
                   p.flags[k].tolist()))


def _lifted_inside(tr, tree):
    u, s, e, r, f = tr.lift.attribution
    got = set(zip(u.tolist(), s.tolist(), e.tolist(), r.tolist(), f.tolist()))
    ptr, kids = tree.children(RACK, NODE)
    ru, rs, re_, rr, rf = tr.lift.parent_attribution()
    for rack, a, b, row, fl in zip(ru.tolist(), rs.tolist(), re_.tolist(), rr.tolist(), rf.tolist()):
        for node in kids[ptr[rack]:ptr[rack + 1]].tolist():
            got.add((node, a, b, row, fl))
    return got


@fixed(300)
@given(scenarios(max_incidents=16))
def test_lifted_step_4_is_step_4_on_every_node(scenario):
    _, _, _, tr, tree = run_traced(scenario)
    assert tr.lift is not None and tr.views[NODE] is None
    lift = tr.lift
    # the node's down time is its rest plus its rack's long blocks, which never overlap
    spread = tree.spread(lift.long_blocks, RACK, NODE)
    both = concat(lift.rest, spread)
    want = tr.node_down
    got = merge(both)
    for field in ("unit", "start", "end"):
        assert getattr(got, field).tolist() == getattr(want, field).tolist()
    assert int((both.end - both.start).sum()) == int((want.end - want.start).sum())
    # the same pieces inside it (down pieces only; degraded ones are not merged)
    assert _lifted_inside(tr, tree) == _pieces_inside(tr, tree)
    assert all(int(g) == DOWN for g in tr.counted[NODE].ga[tr.node_inside])


def test_a_node_outage_touching_a_short_rack_outage_is_one_outage():
    """min_outage 300 s: a 200 s rack outage and a 200 s node outage that touch it, before
    or after, are one 400 s outage of that node (and a 200 s one of the rack's other node)."""
    from calculators.periods import parse_periods
    from tests.calculators.test_engine_vs_reference import H, assert_same, run_both

    spec = {"zone": "UTC", "gpus": 4, "sites": {"s": {"c": {"r": ["a", "b"]}}}, "price": "1.00",
            "min_outage": 300, "degraded": "ignore", "rack": None, "cluster": None, "exclusions": {},
            "levels": {"node": ("tiers", "99.9", [("99.9", "10")])}, "stacking": "max", "cap": None,
            "minimum": "0"}
    p = parse_periods(["2027-02"], "UTC")
    t0 = p[0].start + 86400
    t1 = t0 + 10 * H
    incidents = [{"id": "R1", "scope": "rack", "target": "r", "start": t0, "end": t0 + 200},
                 {"id": "N1", "scope": "node", "target": "a", "start": t0 + 200, "end": t0 + 400},
                 {"id": "R2", "scope": "rack", "target": "r", "start": t1, "end": t1 + 200},
                 {"id": "N2", "scope": "node", "target": "a", "start": t1 - 200, "end": t1}]
    result, ref = run_both(spec, incidents, p, None)
    assert_same(result, ref)
    a = result.unit("2027-02", "node", "a")
    assert a["downtime_seconds"] == 800
    assert a["incidents"] == ["R1", "N1", "R2", "N2"]
    assert result.unit("2027-02", "node", "b")["downtime_seconds"] == 0
