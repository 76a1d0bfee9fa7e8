"""Each unit-month's incident ids and flags against a brute-force reading of their definition.

The engine matches a node's incidents with its own down time only (the rack's and cluster's
parts of its down time bring the rack's and cluster's ids), finds them through the merge
that made the node's outages, and takes flags from the flagged pieces alone. Here the
definition is applied directly, one piece and one interval at a time, against the nodes'
fully built final down time (`Trace.node_final`):

- a unit's ids are those of its candidate pieces (`_candidate_parts`: its own and pushed-down
  pieces and, for racks, clusters and sites, those of the nodes and units under it) that
  overlap its final down time inside the month, plus, for nodes, the surviving degraded
  pieces in the month and, when nodes follow their rack or cluster, that unit's ids;
- its flags are those of the same pieces, of its own counted and excluded pieces in the
  month, and, when nodes follow, of the pieces behind the rack's or cluster's ids.

Ids are listed in the order of the log.
"""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given

from calculators.engine import NODE, SCOPES, Pieces, _candidate_parts, run
from calculators.incidents import IncidentLog
from calculators.intervals import concat, merge
from slaschema.loader import load_contract_text
from tests.calculators.test_engine_vs_reference import contract_yaml, fixed, records, run_traced, scenarios

RACK, CLUSTER = 1, 2


def overlaps(a0, a1, b0, b1) -> bool:
    return max(a0, b0) < min(a1, b1)


def brute(lc, log, tr, tree, period):
    ps, pe = period.start - tr.base, period.end - tr.base
    id_of = log.frame["id"].tolist()
    first = {}
    for i, x in enumerate(id_of):
        first.setdefault(x, i)
    dt = lc.model.downtime
    follows = {RACK: bool(dt.rack and dt.rack.nodes_follow_rack),
               CLUSTER: bool(dt.cluster and dt.cluster.nodes_follow_cluster)}
    ids: dict[tuple[int, int], set] = defaultdict(set)
    att_flags: dict[tuple[int, int], int] = defaultdict(int)
    own_flags: dict[tuple[int, int], int] = defaultdict(int)
    for c in range(4):
        final = defaultdict(list)
        f = tr.final(c)
        for u, s, e in zip(f.unit.tolist(), f.start.tolist(), f.end.tolist()):
            final[u].append((s, e))
        cand = Pieces.cat(*_candidate_parts(tr, tree, c))
        for u, s, e, r, fl in zip(cand.iv.unit.tolist(), cand.iv.start.tolist(), cand.iv.end.tolist(),
                                  cand.row.tolist(), cand.flags.tolist()):
            if any(overlaps(s, e, fs, fe) and overlaps(max(s, fs), min(e, fe), ps, pe) for fs, fe in final[u]):
                ids[(c, u)].add(id_of[r])
                att_flags[(c, u)] |= fl
        if c == NODE:
            d = tr.degraded
            for u, s, e, r, fl in zip(d.iv.unit.tolist(), d.iv.start.tolist(), d.iv.end.tolist(), d.row.tolist(),
                                      d.flags.tolist()):
                if overlaps(s, e, ps, pe):
                    ids[(c, u)].add(id_of[r])
                    att_flags[(c, u)] |= fl
        for p in (tr.counted[c], tr.excluded[c]):
            for u, s, e, fl in zip(p.iv.unit.tolist(), p.iv.start.tolist(), p.iv.end.tolist(), p.flags.tolist()):
                if overlaps(s, e, ps, pe):
                    own_flags[(c, u)] |= fl
    out = {}
    for c in range(4):
        for u in range(tree.size[c]):
            got_ids = set(ids[(c, u)])
            flags = att_flags[(c, u)] | own_flags[(c, u)]
            if c == NODE:
                for parent in (RACK, CLUSTER):
                    if follows[parent]:
                        pu = int(tree.owner(NODE, parent)[u])
                        got_ids |= ids[(parent, pu)]
                        flags |= att_flags[(parent, pu)]
            out[(SCOPES[c], tree.names[c][u])] = (sorted(got_ids, key=first.__getitem__), flags)
    return out


@fixed(250)
@given(scenarios(max_incidents=14))
def test_ids_and_flags_match_their_definition(scenario):
    lc, log, result, tr, tree = run_traced(scenario)
    # the nodes' final down time rebuilt from its layers is the union it stands for
    dt = lc.model.downtime
    parts = [tr.node_down]
    if dt.rack and dt.rack.nodes_follow_rack:
        parts.append(tree.spread(tr.rack_down, RACK, NODE))
    if dt.cluster and dt.cluster.nodes_follow_cluster:
        parts.append(tree.spread(tr.cluster_down, CLUSTER, NODE))
    want_final = merge(concat(*parts))
    for field in ("unit", "start", "end"):
        assert getattr(tr.node_final, field).tolist() == getattr(want_final, field).tolist()
    for pr in result.periods:
        want = brute(lc, log, tr, tree, pr.period)
        for scope, sm in pr.scopes.items():
            rows = sm.rows()
            for i, uid in enumerate(sm.ids):
                ids, flags = want[(scope, uid)]
                assert rows[i]["incidents"] == ids, (pr.period.label, scope, uid)
                assert int(sm.flags[i]) == flags, (pr.period.label, scope, uid)


@fixed(120)
@given(scenarios(max_incidents=14))
def test_a_few_units_ids_are_the_full_lists(scenario):
    """`IdIndex.id_lists` (a table's shown rows) works out a few units' ids without sorting
    every unit's: they are the ids the full lists give, followed ids included."""
    spec, incidents, periods, as_of = scenario
    lc = load_contract_text(contract_yaml(spec))
    log = IncidentLog.from_records(records(incidents), lc.topology)
    full = run(lc, log, periods, as_of, support=False)[0]
    few = run(lc, log, periods, as_of, support=False)[0]
    for pf, pp in zip(full.periods, few.periods):
        for scope, sm in pp.scopes.items():
            want = [tuple(x) for x in pf.scopes[scope].incidents.lists()]
            n = len(sm.ids)
            some = sm.incidents.id_lists(range(0, n, 2))
            every = sm.incidents.id_lists(range(n))
            assert sm.incidents._pairs is None            # no unit's pairs were sorted out
            assert [tuple(every[i]) for i in range(n)] == want, (pp.period.label, scope)
            assert all(tuple(some[i]) == want[i] for i in range(0, n, 2)), (pp.period.label, scope)


def test_id_codes_of_rows_are_the_rows_only_where_every_id_is_distinct():
    """`IdCodes.of_rows` (the id codes of frame rows, for the id lists) hands the rows back
    as they are where each row's code is its own position, and gathers the codes otherwise
    (a frame with a repeated id: the engine is also run on logs made by hand)."""
    from types import SimpleNamespace

    import numpy as np
    import pandas as pd

    from calculators.engine import IdCodes

    rows = np.array([2, 0, 1, 2], dtype=np.int64)
    distinct = IdCodes(SimpleNamespace(frame=pd.DataFrame({"id": ["a", "b", "c"]})))
    assert distinct.of_rows(rows).tolist() == [2, 0, 1, 2]
    assert distinct.of_rows(rows.astype(np.int32)).dtype == np.int64
    repeated = IdCodes(SimpleNamespace(frame=pd.DataFrame({"id": ["a", "b", "a"]})))
    assert repeated.of_rows(rows).tolist() == [0, 0, 1, 0]
