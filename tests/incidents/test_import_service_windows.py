"""`slakit import lanl --service-windows`: the inventory carries each node's service window
(contract format revision 1.1) from the table's `node prod` / `node decom` months."""

from __future__ import annotations

from click.testing import CliRunner

from calculators.engine import compute
from calculators.importers.lanl import convert_lanl, service_window
from calculators.incidents import load_incidents
from slakit.cli import main
from slaschema.loader import load_contract
from tests.incidents.test_importers import LANL, MINIMAL_CONTRACT, lanl_row
from tests.incidents.test_importers import HEADER


def test_month_level_dates_become_windows():
    assert service_window("5-Jun", "current") == ("2005-06-01", "")
    assert service_window("3-Sep", "5-Dec") == ("2003-09-01", "2006-01-01")     # through the decommission month
    assert service_window("98-Feb", "") == ("1998-02-01", "")
    assert service_window("", "") == ("", "")
    assert service_window("June 2005", "n/a") == ("", "")                       # other forms: no bound


def test_inventory_columns_and_contract(tmp_path):
    text = ",".join(HEADER) + "\n" + lanl_row() + "\n" + lanl_row(nodenum="8", **{"node prod": "5-Sep"}) + "\n"
    res = convert_lanl(text, service_windows=True)
    inv = res.inventory.set_index("node")
    assert inv.loc["s2-n07", "in_service_from"] == "2005-06-01"
    assert inv.loc["s2-n08", "in_service_from"] == "2005-09-01"
    assert inv.loc["s2-n00", "in_service_from"] == ""              # never failed: no date in the table
    assert list(convert_lanl(text).inventory.columns) == ["node", "rack", "cluster", "site", "gpus"]


def test_cli_inventory_loads_and_computes_over_service_time(tmp_path):
    inv = tmp_path / "inventory.csv"
    log = tmp_path / "incidents.csv"
    r = CliRunner().invoke(main, ["import", "lanl", str(LANL), "-o", str(log), "--inventory-out", str(inv),
                                  "--service-windows"])
    assert r.exit_code == 0, r.output
    assert inv.read_text().splitlines()[0] == "node,rack,cluster,site,gpus,in_service_from,in_service_to"
    (tmp_path / "c.yaml").write_text(MINIMAL_CONTRACT)
    lc = load_contract(tmp_path / "c.yaml")
    assert lc.topology.node_service is not None
    res = compute(lc, load_incidents(log, lc), ["2005-06"], support=False)
    p = res.to_json()["periods"][0]
    # every node of the sample is in production by June 2005 (2003-09 or 2005-06): the whole month
    ids = {n["id"] for n in p["nodes"]}
    assert "s2-n00" in ids
    assert all(n["service_seconds"] == 30 * 86400 for n in p["nodes"])
