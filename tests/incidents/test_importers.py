"""`slakit import lanl` and `slakit import csv` on fixtures; their output loads against a contract."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from calculators.importers.lanl import HEADER, convert_lanl
from calculators.importers.tickets import convert_tickets, load_map, parse_map
from calculators.incidents import load_incidents
from slakit.cli import main
from slaschema.errors import InputError
from slaschema.loader import load_contract

from .conftest import FIXTURES, REPO

LANL = FIXTURES / "lanl" / "lanl_sample.csv"
EXPORT = FIXTURES / "tickets" / "servicedesk_export.csv"
MAP = REPO / "examples" / "ticket-map.yaml"

MINIMAL_CONTRACT = """\
slakit: 1
contract: {id: lanl-replay, provider: P, customer: C, timezone: America/Denver, currency: USD}
topology: {architecture: custom, gpus_per_node: 1, inventory: inventory.csv}
pricing: {per_node_month: 100}
service_levels:
  node: {credits: [{below: 99%, credit: 10%}]}
"""


def lanl_row(**kw) -> str:
    base = dict(zip(HEADER, ["2", "cluster", "49", "6152", "128", "7", "7", "5-Apr", "5-Jun", "current", "part", "80",
                             "1", "1", "0", "compute", "6/22/2005 3:12", "6/22/2005 9:47", "395", "", "Memory Dimm",
                             "", "", "", "", "No"]))
    base.update(kw)
    return ",".join(base[h] for h in HEADER)


# --- LANL --------------------------------------------------------------------------------

def test_lanl_fixture_converts():
    res = convert_lanl(LANL.read_text(), file=str(LANL))
    f = res.incidents.set_index("id")
    assert len(f) == 13 and res.problems == []
    assert f.loc["lanl-1", ["target", "start", "end", "cause"]].tolist() == [
        "s2-n00", "2005-06-21T16:54:00Z", "2005-06-21T17:00:00Z", "Hardware: Graphics Accel Hdwr"]
    # no Prob Fixed: end = start + Down Time (240 minutes)
    assert f.loc["lanl-6", ["start", "end"]].tolist() == ["2005-08-02T20:21:00Z", "2005-08-03T00:21:00Z"]
    # Same Event is noted; a cause column holding its own name is not repeated
    assert f.loc["lanl-5", "cause"] == "Undetermined; same event as the previous failure"
    # spring-forward gap: 02:30 does not exist and moves to 03:00 MDT
    assert f.loc["lanl-11", "start"] == "2005-04-03T09:00:00Z"
    # repeated fall-back hour: first (daylight) occurrence; 03:10 is MST
    assert f.loc["lanl-8", ["start", "end"]].tolist() == ["2005-10-30T07:30:00Z", "2005-10-30T10:10:00Z"]
    assert set(f["scope"]) == {"node"} and set(f["category"]) == {"unplanned"} and set(f["impact"]) == {"down"}


def test_lanl_inventory_lists_every_node():
    res = convert_lanl(LANL.read_text(), nodes_per_rack=32, gpus_per_node=4, site="los-alamos")
    inv = res.inventory
    assert list(inv.columns) == ["node", "rack", "cluster", "site", "gpus"]
    assert len(inv) == 49 + 16
    s2 = inv[inv.cluster == "s2"]
    assert s2.node.iloc[0] == "s2-n00" and s2.node.iloc[-1] == "s2-n48"
    assert s2.groupby("rack").size().to_dict() == {"s2-r0": 32, "s2-r1": 17}
    assert set(inv.site) == {"los-alamos"} and set(inv.gpus) == {4}


def test_lanl_other_zone():
    res = convert_lanl(LANL.read_text(), tz="UTC")
    assert res.incidents.set_index("id").loc["lanl-1", "start"] == "2005-06-21T10:54:00Z"


def test_lanl_output_loads_against_a_contract_on_its_inventory(tmp_path):
    res = convert_lanl(LANL.read_text())
    res.inventory.to_csv(tmp_path / "inventory.csv", index=False)
    res.incidents.to_csv(tmp_path / "incidents.csv", index=False)
    (tmp_path / "contract.yaml").write_text(MINIMAL_CONTRACT)
    lc = load_contract(tmp_path / "contract.yaml")
    log = load_incidents(tmp_path / "incidents.csv", lc)
    assert len(log.frame) == 13 and log.frame["end"].notna().all()


def test_lanl_bad_rows_all_reported():
    text = "\n".join([",".join(HEADER), lanl_row(),
                      lanl_row(**{"Prob Started": "22/6/2005 3:12"}),
                      lanl_row(nodenum="x"),
                      lanl_row(**{"Prob Fixed": "6/21/2005 9:47"}),
                      lanl_row(**{"Down Time": "-5", "Prob Fixed": ""})]) + "\n"
    with pytest.raises(InputError) as ei:
        convert_lanl(text, file="t.csv")
    assert [(p.code, p.row, p.column) for p in ei.value.problems] == [
        ("timestamp_invalid", 2, "Prob Started"), ("nodenum_invalid", 3, "nodenum"),
        ("end_before_start", 4, "Prob Fixed"), ("down_time_invalid", 5, "Down Time")]
    res = convert_lanl(text, skip_bad_rows=True)
    assert res.incidents["id"].tolist() == ["lanl-1"] and [p.row for p in res.skipped] == [2, 3, 4, 5]


def test_lanl_missing_columns():
    with pytest.raises(InputError) as ei:
        convert_lanl("System,nodes\n2,49\n")
    assert [(p.code, p.column) for p in ei.value.problems] == [("missing_column", "nodenum"),
                                                                ("missing_column", "Prob Started")]


def test_cli_import_lanl(tmp_path):
    out, inv = tmp_path / "incidents.csv", tmp_path / "inventory.csv"
    r = CliRunner().invoke(main, ["import", "lanl", str(LANL), "-o", str(out), "--inventory-out", str(inv),
                                  "--assume-tz", "America/Denver", "--nodes-per-rack", "16"])
    assert r.exit_code == 0, r.output
    assert len(pd.read_csv(out)) == 13
    assert pd.read_csv(inv)["rack"].nunique() == 4 + 1


def test_cli_import_lanl_bad_rows_exit_1(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(HEADER) + "\n" + lanl_row(**{"Prob Started": "soon"}) + "\n")
    r = CliRunner().invoke(main, ["import", "lanl", str(bad), "-o", str(tmp_path / "o.csv")])
    assert r.exit_code == 1 and "[timestamp_invalid]" in r.output
    assert not (tmp_path / "o.csv").exists()


def test_cli_import_lanl_unknown_zone(tmp_path):
    r = CliRunner().invoke(main, ["import", "lanl", str(LANL), "--assume-tz", "Mars/Olympus"])
    assert r.exit_code == 2


# --- ticket exports -----------------------------------------------------------------------

def test_ticket_export_converts_with_the_example_map(lc):
    res = convert_tickets(EXPORT.read_text(), load_map(MAP), file=str(EXPORT))
    f = res.incidents.set_index("id")
    assert len(f) == 5
    r = f.loc["INC0010231"]
    assert (r.scope, r.target, r.severity, r.category, r.start, r.end, r.ticket) == (
        "node", "r01-n07", "sev2", "unplanned", "2027-01-04T15:12:00Z", "2027-01-04T17:02:00Z", "INC0010231")
    chg = f.loc["CHG0003310"]
    assert (chg.scope, chg.category, chg.notice_at) == ("cluster", "maintenance", "2027-02-01T16:00:00Z")
    assert f.loc["INC0010302", "scope"] == "node" and f.loc["INC0010377", "end"] == ""
    assert f.loc["INC0010377", "start"] == "2027-04-01T04:50:00Z"   # 03-31 23:50 CDT


def test_ticket_output_loads_against_the_example_contract(lc, tmp_path):
    out = tmp_path / "incidents.csv"
    r = CliRunner().invoke(main, ["import", "csv", str(EXPORT), "--map", str(MAP), "-o", str(out)])
    assert r.exit_code == 0, r.output
    log = load_incidents(out, lc)
    assert log.frame["id"].nunique() == 5 and len(log.frame) == 6   # r03-n[04-05] is two rows


def test_ticket_map_problems_have_lines():
    text = ("columns:\n  id: Number\n  target: CI\n  stat: Opened\nconstants:\n  scope: node\n"
            "time:\n  timezone: Mars/Base\n  fmt: x\nextra: 1\n")
    with pytest.raises(InputError) as ei:
        parse_map(text, "m.yaml")
    got = [(p.code, p.line, p.path) for p in ei.value.problems]
    assert ("map_invalid", 4, "columns.stat") in got
    assert ("map_invalid", 10, "extra") in got
    assert ("map_invalid", 9, "time.fmt") in got
    assert ("map_invalid", 8, "time.timezone") in got
    assert any(p.path == "columns" and "'start'" in p.message for p in ei.value.problems)


def test_ticket_rows_problems():
    cmap = parse_map("columns: {id: Num, scope: Lvl, target: Tgt, start: St, end: En, severity: Pri}\n"
                     "values: {severity: {P1: sev1}}\nunmapped: error\n")
    text = ("Num,Lvl,Tgt,St,En,Pri\n"
            "1,node,r01-n01,2027-02-03T10:00:00Z,,P1\n"
            "2,node,r01-n01,2027-02-03T10:00:00,,P1\n"            # no zone in the map
            "3,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T09:00:00Z,P1\n"
            "4,node,r01-n01,2027-02-03T10:00:00Z,,P7\n"
            ",node,r01-n01,garbage,,P1\n")
    with pytest.raises(InputError) as ei:
        convert_tickets(text, cmap)
    assert [(p.code, p.row, p.column) for p in ei.value.problems] == [
        ("timestamp_naive", 2, "St"), ("end_before_start", 3, "En"), ("unmapped_value", 4, "Pri"),
        ("missing_value", 5, "Num"), ("timestamp_invalid", 5, "St")]
    res = convert_tickets(text, cmap, skip_bad_rows=True)
    assert res.incidents["id"].tolist() == ["1"] and res.incidents["severity"].tolist() == ["sev1"]


def test_ticket_map_column_not_in_export():
    cmap = parse_map("columns: {id: Num, scope: Lvl, target: Tgt, start: Opened}\n")
    with pytest.raises(InputError) as ei:
        convert_tickets("Num,Lvl,Tgt,St\n1,node,r01-n01,2027-02-03T10:00:00Z\n", cmap)
    assert [(p.code, p.column) for p in ei.value.problems] == [("column_not_found", "Opened")]


def test_ticket_iso_times_with_offsets_need_no_zone():
    cmap = parse_map("columns: {id: Num, target: Tgt, start: St}\nconstants: {scope: rack}\n")
    res = convert_tickets("Num,Tgt,St\n1,r01,2027-02-03T04:00:00-06:00\n", cmap)
    assert res.incidents.iloc[0].tolist()[:4] == ["1", "rack", "r01", "2027-02-03T10:00:00Z"]


def test_cli_import_csv_bad_map(tmp_path):
    m = tmp_path / "m.yaml"
    m.write_text("columns: {id: Num}\n")
    r = CliRunner().invoke(main, ["import", "csv", str(EXPORT), "--map", str(m)])
    assert r.exit_code == 1 and "[map_invalid]" in r.output
