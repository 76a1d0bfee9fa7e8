import pytest

from calculators.goodput.sacct import parse_sacct
from slaschema.errors import InputError
from tests.goodput._data import contract, sacct

NODES = ("gpu-01", "gpu-02", "gpu-03", "gpu-04")
GPUS = (8, 8, 8, 8)


def test_runs_gpus_steps_and_requeues():
    text = sacct(
        "7|COMPLETED|0:0|gpu-[01-02]|2|billing=16,cpu=16,gres/gpu=16,node=2|2027-01-01T10:00:00|2027-01-01T12:00:00|02:00:00|None|",
        "7.batch|COMPLETED|0:0|gpu-01|1|cpu=8,gres/gpu=8,mem=0|2027-01-01T10:00:00|2027-01-01T12:00:00|02:00:00||",
        "8|NODE_FAIL|1:0|gpu-03|1|billing=8,cpu=8,node=1|2027-01-01T09:00:00|2027-01-01T10:00:00|01:00:00|None|",
        "8|COMPLETED|0:0|gpu-04|1|billing=8,cpu=8,node=1|2027-01-01T11:00:00|2027-01-01T11:30:00|00:30:00|None|",
        "9|RUNNING|0:0|gpu-04|1|cpu=4,gres/gpu:h100=4,node=1|2027-01-01T11:00:00|Unknown|00:10:00|None|a|b",
        "10|PENDING|0:0|None assigned|1|billing=8,cpu=8,node=1|Unknown|Unknown|00:00:00|Priority|",
        "11|CANCELLED by 0|0:0|gpu-01|1|cpu=1,gres/gpu=2,node=1|2027-01-01T11:00:00|2027-01-01T11:00:30|00:00:30|None|",
    )
    r = parse_sacct(text, NODES, GPUS, "UTC")
    assert list(r.job_id) == ["7", "8", "8", "9", "11"]          # step and never-started rows left out
    assert list(r.gpus) == [16, 8, 8, 4, 2]                      # gres/gpu, whole node, typed gres
    assert list(r.gpus_from_tres) == [True, False, False, True, True]
    assert list(r.requeues) == [0, 0, 1, 0, 0]
    assert list(r.state) == ["COMPLETED", "NODE_FAIL", "COMPLETED", "RUNNING", "CANCELLED"]
    assert r.start[0] == 1798797600                              # 2027-01-01T10:00:00Z
    assert r.running[3] and r.end[3] == r.start[3] + 600         # still running: Start + Elapsed
    assert list(r.nodes_of(0)) == [0, 1] and list(r.nodes_of(2)) == [3]
    assert r.comment[3] == "a|b"                                 # a | inside the last column is kept
    assert r.rows_read == 6


def test_local_zone_times():
    text = sacct("1|COMPLETED|0:0|gpu-01|1|cpu=1,node=1|2027-07-01T10:00:00|2027-07-01T11:00:00|01:00:00|None|")
    r = parse_sacct(text, NODES, GPUS, "America/Chicago")
    assert r.start[0] == 1814454000                              # 15:00Z (CDT is UTC-5)


def test_all_problems_at_once():
    text = sacct(
        "1|COMPLETED|0:0|gpu-09|1|cpu=1,node=1|2027-01-01T10:00:00|2027-01-01T11:00:00|01:00:00|None|",
        "2|COMPLETED|0:0|gpu-01|1|cpu=1,node=1|01/01/27 10:00|2027-01-01T11:00:00|01:00:00|None|",
        "3|COMPLETED|0:0|gpu-01|1|cpu=1,node=1|2027-01-01T10:00:00|2027-01-01T09:00:00|01:00:00|None|",
        "4|COMPLETED",
    )
    with pytest.raises(InputError) as e:
        parse_sacct(text, NODES, GPUS, "UTC", file="jobs.txt")
    got = {(p.code, p.row) for p in e.value.problems}
    assert got == {("sacct_unknown_node", 1), ("sacct_time_invalid", 2), ("sacct_end_before_start", 3),
                   ("sacct_short_row", 4)}
    unknown = next(p for p in e.value.problems if p.code == "sacct_unknown_node")
    assert unknown.file == "jobs.txt" and unknown.column == "NodeList" and unknown.value == "gpu-09" and unknown.fix
    # skipping keeps the good rows out of the figures and lists what was left out
    r = parse_sacct(text, NODES, GPUS, "UTC", skip_bad_rows=True)
    assert len(r) == 0 and len({p.row for p in r.skipped}) == 4


def test_missing_columns_named():
    with pytest.raises(InputError) as e:
        parse_sacct("JobID|State|NodeList\n1|COMPLETED|gpu-01\n", NODES, GPUS, "UTC")
    assert sorted(p.message for p in e.value.problems) == sorted(
        f"the sacct output has no {c} column" for c in ("AllocTRES", "Start", "End"))
    assert all(p.code == "sacct_missing_column" for p in e.value.problems)


def test_contract_gpus_per_node(tmp_path):
    lc = contract(tmp_path)
    r = parse_sacct(sacct("1|COMPLETED|0:0|gpu-[02-03]|2|cpu=2,node=2|2027-01-01T10:00:00|2027-01-01T11:00:00|x||"),
                    lc.topology.nodes, lc.topology.node_gpus, "UTC")
    assert list(r.gpus) == [16]


def test_problems_in_well_formed_lines():
    # every line has all fields (the byte-level reader); bad cells are still each reported
    text = sacct(
        "1|COMPLETED|0:0|gpu-01|1|cpu=1,node=1|2027-02-30T10:00:00|2027-03-01T11:00:00|01:00:00|None|",
        "2|COMPLETED|0:0|gpu-01|1|cpu=1,node=1|2027-01-01T10:00:00|2027-01-01T09:00:00|01:00:00|None|",
        "3|RUNNING|0:0|gpu-01|1|cpu=1,node=1|2027-01-01T10:00:00|Unknown|00:01:40|None|ckpt",
        "4|COMPLETED|0:0|gpu-01|1|cpu=1,node=1|2027-01-01T10:00:00|later|00:01:40|None|",
    )
    with pytest.raises(InputError) as e:
        parse_sacct(text, NODES, GPUS, "UTC", file="jobs.txt")
    assert {(p.code, p.row, p.column, p.value) for p in e.value.problems} == {
        ("sacct_time_invalid", 1, "Start", "2027-02-30T10:00:00"),
        ("sacct_end_before_start", 2, "End", "2027-01-01T09:00:00"),
        ("sacct_time_invalid", 4, "End", "later")}
    r = parse_sacct(text, NODES, GPUS, "UTC", skip_bad_rows=True)
    assert list(r.job_id) == ["3"] and r.end[0] == r.start[0] + 100 and r.comment[0] == "ckpt"
