from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slaschema import hostlist
from slaschema.errors import InputError
from slaschema.loader import load_contract_text
from slaschema.topology import parse_inventory
from tests.schema.conftest import BASE


@pytest.mark.parametrize("expr,expected", [
    ("r01-n[01-03]", ["r01-n01", "r01-n02", "r01-n03"]),
    ("gpu-[001-002,010]", ["gpu-001", "gpu-002", "gpu-010"]),
    ("a[1-2]-b[1-2]", ["a1-b1", "a1-b2", "a2-b1", "a2-b2"]),
    ("x,y[1-2],z", ["x", "y1", "y2", "z"]),
    ("n[8-11]", ["n8", "n9", "n10", "n11"]),
    ("single", ["single"]),
])
def test_expand(expr, expected):
    assert hostlist.expand(expr) == expected


@pytest.mark.parametrize("expr,code", [
    ("n[1-3", "hostlist_syntax"), ("n1-3]", "hostlist_syntax"), ("n[3-1]", "hostlist_range_reversed"),
    ("n[a-b]", "hostlist_syntax"), ("a,,b", "hostlist_syntax"), ("bad name", "hostlist_syntax"),
    ("n[1-99999999]", "hostlist_too_large"),
])
def test_expand_errors(expr, code):
    with pytest.raises(hostlist.HostlistError) as exc:
        hostlist.expand(expr)
    assert exc.value.code == code


@pytest.mark.parametrize("names,expr", [
    (hostlist.expand("r01-n[01-18],r02-n[01-18]"), "r01-n[01-18],r02-n[01-18]"),
    (hostlist.expand("gpu-[001-004,010]"), "gpu-[001-004,010]"),
    (["a", "b1", "b2", "b10"], "a,b[1-2,10]"),
    (["n1"], "n1"),
])
def test_compress(names, expr):
    assert hostlist.compress(names) == expr


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 300), min_size=1, max_size=40, unique=True).map(sorted),
       st.sampled_from(["gpu-", "r01-n", "node"]), st.integers(0, 4))
def test_compress_expand_round_trip(nums, prefix, width):
    names = [f"{prefix}{str(n).zfill(width)}" for n in nums]
    assert hostlist.expand(hostlist.compress(names)) == names


def test_resolved_map():
    lc = load_contract_text(BASE, "ok.yaml")
    t = lc.topology
    assert t.nodes[:2] == ("n1", "n2")
    assert t.parent("node", "n6") == {"rack": "r2", "cluster": "c1", "site": "s1"}
    assert t.nodes_of("rack", "r1") == ["n1", "n2", "n3", "n4"]
    assert t.node_gpus == (8,) * 8
    assert t.nodes_per_rack() == [4, 4]


def test_inventory_topology(tmp_path: Path):
    (tmp_path / "inv.csv").write_text("node,rack,cluster,site,gpus\na1,ra,c1,s1,8\na2,ra,c1,s1,4\nb1,rb,c2,s1,\n")
    text = BASE.replace(BASE[BASE.index("  sites:"):BASE.index("pricing:")], "  inventory: inv.csv\n")
    text = text.replace("down_when_nodes_down: 2", "down_when_nodes_down: 1")
    lc = load_contract_text(text, str(tmp_path / "c.yaml"), tmp_path)
    assert lc.topology.counts() == {"sites": 1, "clusters": 2, "racks": 2, "nodes": 3, "gpus": 20}


def test_inventory_errors():
    topo, problems = parse_inventory("node,rack,cluster,site,gpus\na9,ra,c1,s1,99\n,ra,c1,s1,\na1,ra,c1,s1,8\n"
                                     "x,ra,c2,s1,8\na1,ra,c1,s1,8\n", "inv.csv", 8)
    assert topo is None
    got = {(p.code, p.row, p.column) for p in problems}
    assert ("inventory_value", 1, "gpus") in got
    assert ("inventory_value", 2, "node") in got
    assert ("inventory_parent", 4, "cluster") in got
    assert any(p.code == "duplicate_unit" for p in problems)


@pytest.mark.parametrize("row,column", [
    ("\u202ea1,ra,c1,s1,8", "node"),          # a right-to-left override: shows as another name
    ("a\u200b1,ra,c1,s1,8", "node"),          # zero-width space: looks like a1
    ("a 1,ra,c1,s1,8", "node"),
    ("a1,r a,c1,s1,8", "rack"),
    ("a1,ra,-c1,s1,8", "cluster"),
    ("a1,ra,c1,s\x001,8", "site"),
])
def test_inventory_ids_follow_the_contracts_id_rules(row, column):
    # the contract's own racks and hostlists refuse such ids (id_invalid, hostlist_syntax); an
    # inventory, which the other party may write, took them as they were
    topo, problems = parse_inventory(f"node,rack,cluster,site,gpus\n{row}\n", "inv.csv", 8)
    assert topo is None
    assert [(p.code, p.row, p.column) for p in problems] == [("id_invalid", 1, column)], problems
    assert problems[0].value == row.split(",")[("node", "rack", "cluster", "site").index(column)]


def test_inventory_row_with_more_cells_than_the_header():
    # the extra cells were dropped silently (csv.DictReader keeps them under None)
    topo, problems = parse_inventory("node,rack,cluster,site,gpus\na1,ra,c1,s1,8,x\na2,ra,c1,s1,8\n", "inv.csv", 8)
    assert topo is None
    assert [(p.code, p.row) for p in problems] == [("inventory_syntax", 1)]
    assert "6 cells" in problems[0].message and problems[0].fix


def test_inventory_missing_file(tmp_path: Path):
    text = BASE.replace(BASE[BASE.index("  sites:"):BASE.index("pricing:")], "  inventory: nope.csv\n")
    with pytest.raises(InputError) as exc:
        load_contract_text(text, "c.yaml", tmp_path)
    assert "inventory_missing" in exc.value.codes


def test_example_inventory_matches_hostlist_topology():
    from slaschema.loader import load_contract
    repo = Path(__file__).resolve().parents[2]
    a = load_contract(repo / "examples" / "gb200-contract.yaml").topology
    b = load_contract(repo / "examples" / "gb200-contract-inventory.yaml").topology
    assert a == b
    assert a.counts() == {"sites": 1, "clusters": 1, "racks": 4, "nodes": 72, "gpus": 288}
