"""The targets' unit positions the loader looks up while it checks a log are handed to the
engine (`LoadedColumns.unit_positions`), which then does not look them up again: they must be
the positions the engine's own lookup gives, row for row, and are offered only for the
topology object the log was checked against and where no hostlist row was repeated."""

from __future__ import annotations

import numpy as np
import pytest

from calculators import engine
from calculators.incidents import IncidentLog, load_incidents
from calculators.log_columns import columns_of
from slaschema.loader import load_contract

from .conftest import EXAMPLE_CONTRACT, EXAMPLE_LOG

HEADER = "id,scope,target,start,end,impact,gpus_affected,category\n"


def _scope(log) -> np.ndarray:
    codes, uniques = log.coded("scope")
    return np.append(engine.UnitIds(engine.SCOPES).get_indexer(uniques.astype(str)), -1).astype(np.int64)[codes]


def _both(log, lc) -> tuple[np.ndarray, np.ndarray]:
    tree = engine.Tree(lc.topology)
    scope = _scope(log)
    return engine._targets(log, scope, tree, lc.topology), engine._targets(log, scope, tree)


def test_the_example_log(lc):
    log = load_incidents(EXAMPLE_LOG, lc)
    assert columns_of(log).unit_positions(lc.topology) is not None
    handed, looked_up = _both(log, lc)
    assert handed.tolist() == looked_up.tolist()
    assert (handed >= 0).all()


def test_every_scope_blank_cells_and_skipped_rows(write, lc):
    topo = lc.topology
    node, rack, cluster, site = topo.nodes[0], topo.racks[-1], topo.clusters[0], topo.sites[0]
    rows = [f"A{k},{scope},{target},2027-01-0{k % 9 + 1}T00:00:00Z,2027-01-0{k % 9 + 1}T03:00:00Z,,,\n"
            for k, (scope, target) in enumerate([("node", node), ("rack", rack), ("cluster", cluster),
                                                  ("site", site), ("node", f"  {topo.nodes[-1]} "),
                                                  ("node", "no-such-node"), ("rack", node), ("node", node)])]
    log = load_incidents(write("log.csv", HEADER + "".join(rows)), lc, skip_bad_rows=True)
    assert len(log.columns) == 6                        # the unknown node and the node named as a rack skipped
    handed, looked_up = _both(log, lc)
    assert handed.tolist() == looked_up.tolist()
    assert handed.tolist() == [0, len(topo.racks) - 1, 0, 0, len(topo.nodes) - 1, 0]


def test_only_for_the_topology_checked_against(lc):
    log = load_incidents(EXAMPLE_LOG, lc)
    other = load_contract(EXAMPLE_CONTRACT)              # an equal contract, another object
    assert columns_of(log).unit_positions(other.topology) is None
    handed, looked_up = _both(log, other)                # the engine looks them up itself
    assert handed.tolist() == looked_up.tolist()
    with pytest.raises(ValueError):
        columns_of(log).unit_positions(lc.topology)[0] = 5       # read-only: the log's own array


def test_hostlist_rows_repeated(write, lc):
    topo = lc.topology
    first = topo.nodes[0]
    prefix = first.rsplit("-n", 1)[0]
    rows = [f"H1,node,{prefix}-n[01-03],2027-01-02T00:00:00Z,2027-01-02T03:00:00Z,,,\n",
            f"H2,node,{first},2027-01-03T00:00:00Z,2027-01-03T03:00:00Z,,,\n"]
    log = load_incidents(write("log.csv", HEADER + "".join(rows)), lc)
    assert len(log.columns) == 4
    assert columns_of(log).unit_positions(lc.topology) is not None
    handed, looked_up = _both(log, lc)
    assert handed.tolist() == looked_up.tolist() == [0, 1, 2, 0]


def test_a_log_made_by_hand_has_none(lc):
    log = IncidentLog.from_records([{"id": "X", "scope": "node", "target": lc.topology.nodes[1],
                                     "start": "2027-01-02T00:00:00Z", "end": "2027-01-02T01:00:00Z"}], lc.topology)
    handed, looked_up = _both(log, lc)
    assert handed.tolist() == looked_up.tolist() == [1]


def test_hostlists_among_skipped_rows(write, lc):
    from .test_columns_match_frame import HEADER as FULL_HEADER
    from .test_columns_match_frame import _row

    rows = [_row(k) for k in range(200)]
    rows[7] = rows[7].replace("2027-", "20x7-", 1)      # a bad hostlist row
    rows[10] = rows[10].replace(",02,", ",x,")           # a bad gpus_affected
    log = load_incidents(write("log.csv", FULL_HEADER + "".join(rows)), lc, skip_bad_rows=True)
    assert len(log.skipped) == 2 and len(log.columns) > 200
    handed, looked_up = _both(log, lc)
    assert columns_of(log).unit_positions(lc.topology) is not None
    assert handed.tolist() == looked_up.tolist()
