"""`load_incidents_without_contract`: the loader with no topology makes every check but those
that need the contract, with the same codes, rows and columns as `load_incidents`."""

from __future__ import annotations

import pandas as pd
import pytest

from calculators.incidents import load_incidents, load_incidents_without_contract
from slaschema import hostlist
from slaschema.errors import InputError

from .conftest import EXAMPLE_LOG

HEADER = "id,scope,target,start,end,impact,gpus_affected,category,severity\n"


def _problems(path, lc=None) -> list[tuple[str, int | None, str | None, object]]:
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc) if lc is not None else load_incidents_without_contract(path)
    return [(p.code, p.row, p.column, p.value) for p in ei.value.problems if p.severity == "error"]


def test_a_log_the_topology_accepts_reads_to_the_same_frame(lc):
    with_contract = load_incidents(EXAMPLE_LOG, lc)
    alone = load_incidents_without_contract(EXAMPLE_LOG)
    pd.testing.assert_frame_equal(alone.frame, with_contract.frame)
    assert alone.sha256 == with_contract.sha256 and alone.file == str(EXAMPLE_LOG)


def test_row_problems_are_the_same_but_for_the_contracts_checks(write, lc):
    path = write("log.csv", HEADER + "".join([
        "A,node,r01-n01,2027-01-05T03:00:00,,down,,,\n",
        "A,node,r01-n02,2027-01-05T03:00:00Z,,down,,,\n",
        "C,node,r01-n03,2027-01-05T03:00:00Z,,down,0,,\n",
        "D,node,r01-n04,2027-01-05T03:00:00Z,,degraded,9,,\n",     # more GPUs than the node has
        "E,node,zz-01,2027-01-05T03:00:00Z,,down,,,\n",            # not in the topology
        "F,node,r01-n05,2027-01-05T03:00:00Z,,degraded,,,\n",      # degraded: proportional needs the count
        "G,node,r01-n[03-01],2027-01-05T03:00:00Z,,down,,,\n",     # not a hostlist
    ]))
    under = _problems(path, lc)
    assert [p[:3] for p in under] == [
        ("timestamp_naive", 1, "start"), ("duplicate_id", 2, "id"), ("gpus_affected_range", 3, "gpus_affected"),
        ("gpus_affected_range", 4, "gpus_affected"), ("unknown_target", 5, "target"),
        ("missing_value", 6, "gpus_affected"), ("unknown_target", 7, "target")]
    contract_only = {(4, "gpus_affected"), (5, "target"), (6, "gpus_affected")}
    assert _problems(path) == [p for p in under if (p[1], p[2]) not in contract_only]


def test_hostlists_are_expanded_and_the_rows_share_one_node_budget(write):
    log = load_incidents_without_contract(write("log.csv", HEADER + "A,node,x[01-03],2027-01-05T03:00:00Z,,,,,\n"
                                                "B,node,\"x01,x01\",2027-01-05T04:00:00Z,,,,,\n"
                                                "C,rack,r[1-2],2027-01-05T03:00:00Z,,,,,\n"))
    assert list(zip(log.frame["id"], log.frame["target"], log.frame["row"])) == [
        ("A", "x01", 1), ("A", "x02", 1), ("A", "x03", 1), ("B", "x01", 2), ("C", "r[1-2]", 3)]
    rows = "".join(f"I{i},node,n[1-6],2027-01-05T03:00:00Z,,,,,\n" for i in range(2))
    hostlist.set_max_nodes(10)
    try:
        (p,) = _problems(write("big.csv", HEADER + rows))
        assert load_incidents_without_contract(write("fits.csv", HEADER + rows[:rows.index("\n") + 1])).frame.shape[0] == 6
    finally:
        hostlist.set_max_nodes(None)
    assert p == ("hostlist_too_large", None, "target", 12)
