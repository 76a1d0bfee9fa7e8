"""Resource bombs: each is refused with a code in under 2 s (start-up excluded) and 300 MB."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contracts import small_contract
from tests.hostile.conftest import assert_coded_failure, cli, measured, startup_seconds

LIMIT_S = 2.0
LIMIT_MB = 300.0

HUGE = "n[" + ",".join(["0-999999"] * 400) + "]"          # 400 M names in 3.6 KB


def _assert_bounded(argv: list[str], code: str) -> None:
    proc, seconds, mb = measured(argv)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-2000:]
    assert "Traceback" not in out, out[-2000:]
    assert f"[{code}]" in out or f'"code": "{code}"' in out, out[-2000:]
    assert seconds - startup_seconds() < LIMIT_S, seconds
    assert mb < LIMIT_MB, mb


def test_hostlist_bomb_in_a_contract(tmp_path):
    c = tmp_path / "c.yaml"
    c.write_text(small_contract("t", {"r1": HUGE}), encoding="utf-8")
    assert len(c.read_bytes()) < 8000
    _assert_bounded(["validate", str(c)], "hostlist_too_large")


def test_one_budget_for_the_whole_topology(tmp_path):
    """Eight racks of a million nodes each: every rack alone fits, the topology does not."""
    racks = {f"r{i}": f"r{i}-n[0000000-0999999]" for i in range(8)}
    c = tmp_path / "c.yaml"
    c.write_text(small_contract("t", racks), encoding="utf-8")
    _assert_bounded(["validate", str(c)], "hostlist_too_large")


def test_node_budget_flag_raises_and_lowers_the_limit(tmp_path):
    c = tmp_path / "c.yaml"
    c.write_text(small_contract("t", {"r1": "n[1-300]", "r2": "m[1-300]"}), encoding="utf-8")
    assert cli("validate", c).exit_code == 0
    r = cli("--max-nodes", "500", "validate", c)
    assert_coded_failure(r, "hostlist_too_large")
    assert "--max-nodes" in r.output


def test_count_does_not_expand():
    from slaschema import hostlist

    assert hostlist.count(HUGE) == 400_000_000
    assert hostlist.count("a[1-2]-b[01-03],x") == 7
    with pytest.raises(hostlist.HostlistError) as exc:
        hostlist.expand(HUGE)
    assert exc.value.code == "hostlist_too_large" and len(exc.value.expr) < 300
    budget = hostlist.Budget(limit=10)
    assert len(budget.expand("n[1-6]")) == 6
    with pytest.raises(hostlist.HostlistError):
        budget.expand("m[1-5]")
    assert hostlist.expand("gpu-[001-003,010]") == ["gpu-001", "gpu-002", "gpu-003", "gpu-010"]


INCIDENT_HEADER = "id,scope,target,start,end,impact,category\n"


def test_hostlist_bomb_in_an_incident_log(tmp_path):
    c = tmp_path / "c.yaml"
    c.write_text(small_contract("t", {"r1": "n[1-4]"}), encoding="utf-8")
    log = tmp_path / "log.csv"
    log.write_text(INCIDENT_HEADER + f'I1,node,"{HUGE}",2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,unplanned\n',
                   encoding="utf-8")
    _assert_bounded(["credits", str(c), str(log), "--period", "2027-01"], "unknown_target")


def test_many_rows_each_naming_the_whole_topology(tmp_path):
    """Each row's hostlist fits the topology, their sum does not: 20,000 rows naming the 72
    nodes of the example (1.4 million names from 1.5 MB of log) are refused before any is
    expanded; with the budget raised they are read."""
    repo = Path(__file__).resolve().parents[2]
    contract = repo / "examples" / "gb200-contract.yaml"
    log = tmp_path / "log.csv"
    log.write_text(INCIDENT_HEADER + "".join(
        f'X{i},node,"r[01-04]-n[01-18]",2027-01-{1 + i % 28:02d}T{i % 24:02d}:00:00Z,'
        f"2027-01-{1 + i % 28:02d}T{i % 24:02d}:05:00Z,down,unplanned\n" for i in range(20_000)), encoding="utf-8")
    _assert_bounded(["credits", str(contract), str(log), "--month", "2027-01"], "hostlist_too_large")
    r = cli("credits", contract, log, "--month", "2027-01")
    assert "1,440,000 nodes together, more than the node budget of 1,000,000" in r.output
    assert "r[01-04]-n[01-18] (72 nodes) in 20,000 row(s)" in r.output and "--max-nodes" in r.output
    small = tmp_path / "small.csv"
    small.write_text("".join(log.read_text(encoding="utf-8").splitlines(keepends=True)[:101]), encoding="utf-8")
    assert cli("--max-nodes", "7200", "credits", contract, small, "--month", "2027-01").exit_code == 0
    assert_coded_failure(cli("--max-nodes", "7199", "credits", contract, small, "--month", "2027-01"),
                         "hostlist_too_large")


def test_hostlist_bomb_in_a_reconcile_input(tmp_path):
    ours = tmp_path / "ours.csv"
    ours.write_text(INCIDENT_HEADER + "I1,node,n1,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,unplanned\n",
                    encoding="utf-8")
    theirs = tmp_path / "theirs.csv"
    rows = "".join(f'I{i},node,"n[0-999999]",2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,unplanned\n'
                   for i in range(20))            # each row fits the budget, the input does not
    theirs.write_text(INCIDENT_HEADER + rows, encoding="utf-8")
    _assert_bounded(["reconcile", str(ours), str(theirs)], "hostlist_too_large")


def _laughs() -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_yaml_billion_laughs(tmp_path):
    c = tmp_path / "c.yaml"
    c.write_text(small_contract("t", {"r1": "n[1-4]"}) + _laughs().replace("a0:", "x0:", 1), encoding="utf-8")
    _assert_bounded(["validate", str(c)], "yaml_too_complex")


def test_yaml_deep_paths(tmp_path):
    """Deep nesting with many leaves: every leaf's path is as long as the nesting."""
    depth = 3000
    body = "".join("{a: " for _ in range(depth)) + "{" + ", ".join(f"k{i}: 1" for i in range(300_000)) + "}" + "}" * depth
    c = tmp_path / "c.yaml"
    c.write_text(small_contract("t", {"r1": "n[1-4]"}) + f"x: {body}\n", encoding="utf-8")
    assert c.stat().st_size > 3_000_000
    _assert_bounded(["validate", str(c)], "yaml_too_complex")


def test_yaml_many_values(tmp_path):
    c = tmp_path / "c.yaml"
    c.write_text(small_contract("t", {"r1": "n[1-4]"}) + "x: [" + ",".join(["1"] * 2_000_000) + "]\n",
                 encoding="utf-8")
    _assert_bounded(["validate", str(c)], "yaml_too_complex")


LANL = Path(__file__).resolve().parents[1] / "fixtures" / "lanl" / "lanl_sample.csv"


def test_lanl_import_with_a_hundred_billion_nodes(tmp_path):
    lines = LANL.read_text(encoding="utf-8").splitlines()
    cells = lines[1].split(",")
    cells[2] = "1e11"
    f = tmp_path / "lanl.csv"
    f.write_text(lines[0] + "\n" + ",".join(cells) + "\n", encoding="utf-8")
    _assert_bounded(["import", "lanl", str(f), "-o", str(tmp_path / "out.csv"),
                     "--inventory-out", str(tmp_path / "inv.csv")], "nodes_too_large")
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "inv.csv").exists()
