"""`slakit credits` and `slakit explain` end to end on small files."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

from click.testing import CliRunner

from slakit.cli import main
from tests.calculators.helpers import EXAMPLE_CONTRACT

LOG = """id,scope,target,start,end,category,notice_at
B1,node,n2,2027-02-10T00:00:00Z,2027-02-10T04:01:00Z,,
B2,node,n3,2027-02-10T00:00:00Z,2027-02-10T00:04:00Z,,
C1,node,n4,2027-02-20T08:00:00Z,2027-02-20T14:00:00Z,maintenance,2027-02-19T08:00:00Z
O1,node,n1,2027-03-31T20:00:00Z,,,
"""

BAD = LOG + """X1,node,n9,2027-02-01T00:00:00Z,2027-02-01T01:00:00Z,,
X2,node,n1,2027-02-01T02:00:00Z,2027-02-01T01:00:00Z,,
"""

UNIT_KEYS = {"scope", "id", "downtime_seconds", "excluded_seconds", "availability_pct", "target_pct", "met",
             "credit_pct", "credit", "incidents", "flags"}


def files(tmp_path, log=LOG):
    c = tmp_path / "c.yaml"
    c.write_text(EXAMPLE_CONTRACT)
    i = tmp_path / "incidents.csv"
    i.write_text(log)
    return str(c), str(i)


def test_credits_json_has_the_stable_shape(tmp_path):
    c, i = files(tmp_path)
    r = CliRunner().invoke(main, ["credits", c, i, "--quarter", "2027-Q1", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert {"contract", "currency", "as_of", "skipped_rows", "periods", "support", "termination"} <= set(doc)
    assert doc["as_of"] == "2027-04-01T00:00:00Z"
    assert doc["open_incidents"] == ["O1"]
    assert [p["period"] for p in doc["periods"]] == ["2027-01", "2027-02", "2027-03"]
    feb = doc["periods"][1]
    assert {"period", "fee_total", "credit_uncapped", "credit_total", "cap_applied", "units", "nodes"} <= set(feb)
    assert all(UNIT_KEYS <= set(u) for u in feb["units"])
    assert len(feb["units"]) == 4 and len(feb["nodes"]) == 4           # every node listed
    n2 = next(u for u in feb["units"] if u["id"] == "n2")
    assert n2["credit"] == "1075.20" and isinstance(n2["credit"], str)
    n4 = next(u for u in feb["units"] if u["id"] == "n4")
    assert n4["flags"] == ["notice_not_met"] and n4["credit"] == "1075.20"
    assert feb["credit_total"] == "2150.40"
    mar = doc["periods"][2]
    n1 = next(u for u in mar["units"] if u["id"] == "n1")
    assert n1["flags"] == ["open_incident"] and n1["downtime_seconds"] == 4 * 3600


def test_credits_as_of_ends_open_incidents(tmp_path):
    c, i = files(tmp_path)
    r = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-03", "--as-of", "2027-03-31T21:00:00Z",
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    n1 = next(u for u in json.loads(r.stdout)["periods"][0]["units"] if u["id"] == "n1")
    assert n1["downtime_seconds"] == 3600


def test_credits_csv_one_row_per_unit_month(tmp_path):
    c, i = files(tmp_path)
    r = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-02", "--period", "2027-03", "--format", "csv"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    units = [row for row in rows if row["row"] == "unit"]
    assert len(units) == 8
    assert {row["period"] for row in units} == {"2027-02", "2027-03"}
    n2 = next(row for row in units if row["id"] == "n2" and row["period"] == "2027-02")
    assert n2["credit"] == "1075.20" and n2["settled_credit"] == ""
    assert n2["downtime_seconds"] == "14460" and n2["downtime_hours"] == "4.0167"
    # one node row per node and month, one total per month; the settled column sums to the amount owed
    assert sum(1 for row in rows if row["row"] == "node") == 8
    totals = {row["period"]: row for row in rows if row["row"] == "total"}
    assert set(totals) == {"2027-02", "2027-03"} and totals["2027-02"]["credit_owed"] == "2150.40"
    for period, total in totals.items():
        settled = sum(Decimal(row["settled_credit"]) for row in rows if row["period"] == period and row["settled_credit"])
        assert settled == Decimal(total["credit_owed"])


CAPPED = EXAMPLE_CONTRACT + "credits: {cap: 3%, minimum: 0}\n"


def test_credits_csv_settles_the_cap_per_node(tmp_path):
    c, i = files(tmp_path)
    (tmp_path / "c.yaml").write_text(CAPPED)
    r = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-02", "--format", "csv"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    total = next(row for row in rows if row["row"] == "total")
    # 2 x 1,075.20 before the cap; 3% of 43,008.00 = 1,290.24 owed
    assert (total["credit"], total["credit_owed"], total["flags"]) == ("2150.40", "1290.24", "cap_applied")
    nodes = {row["id"]: row for row in rows if row["row"] == "node"}
    assert nodes["n2"]["credit"] == "1075.20" and nodes["n2"]["settled_credit"] == "645.12"
    assert sum(Decimal(row["settled_credit"]) for row in rows if row["settled_credit"]) == Decimal("1290.24")
    doc = json.loads(CliRunner().invoke(main, ["credits", c, i, "--period", "2027-02", "--format", "json"]).stdout)
    n2 = next(u for u in doc["periods"][0]["units"] if u["id"] == "n2")
    assert (n2["credit_before_cap"], n2["credit_after_cap_and_minimum"]) == ("1075.20", "645.12")
    node = next(n for n in doc["periods"][0]["nodes"] if n["id"] == "n2")
    assert (node["credit_before_cap"], node["credit_after_cap_and_minimum"]) == ("1075.20", "645.12")


def test_months_of_a_quarter_with_a_gap_give_no_quarter_sum(tmp_path):
    c, i = files(tmp_path)
    r = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-04", "--period", "2027-06", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["quarters"] == []
    r = CliRunner().invoke(main, ["credits", c, i, "--quarter", "2027-Q1", "--format", "json"])
    assert [q["quarter"] for q in json.loads(r.stdout)["quarters"]] == ["2027-Q1"]
    table = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-04", "--period", "2027-06"]).stdout
    assert "2027-Q2" not in table


def test_bad_rows_stop_the_computation_and_are_all_printed(tmp_path):
    c, i = files(tmp_path, BAD)
    r = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-02"])
    assert r.exit_code == 1
    assert "row 5" in r.output and "row 6" in r.output


def test_skip_bad_rows_lists_them_in_the_output(tmp_path):
    c, i = files(tmp_path, BAD)
    r = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-02", "--skip-bad-rows", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert sorted({p["row"] for p in doc["skipped_rows"]}) == [5, 6]
    assert doc["periods"][0]["credit_total"] == "2150.40"


def test_skip_bad_rows_says_them_on_stderr_where_the_output_has_no_place_for_them(tmp_path):
    """A CSV of figures and an explanation list no skipped rows: stderr then names each one;
    the table and the JSON list them themselves (and stderr does not repeat them)."""
    c, i = files(tmp_path, BAD)
    for args in (["credits", c, i, "--period", "2027-02", "--format", "csv"],
                 ["explain", c, i, "--period", "2027-02", "--unit", "n2"],
                 ["explain", c, i, "--period", "2027-02", "--unit", "n2", "--format", "json"]):
        r = CliRunner().invoke(main, args + ["--skip-bad-rows"])
        assert r.exit_code == 0, r.output
        lines = r.stderr.splitlines()
        assert lines[0].startswith("warning: 2 row(s) of ") and "skipped (--skip-bad-rows) and not counted" in lines[0]
        assert [x.split(",")[0].rsplit(" ", 1)[-1] for x in lines[1:3]] == ["5", "6"]
        assert "[unknown_target]" in r.stderr and "[end_before_start]" in r.stderr
    for fmt in ("table", "json"):
        r = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-02", "--skip-bad-rows", "--format", fmt])
        assert r.exit_code == 0 and "skipped (--skip-bad-rows)" not in r.stderr


def test_skipped_rows_on_stderr_stop_after_fifty(tmp_path):
    rows = "".join(f"Y{i},node,n9,2027-02-01T00:00:00Z,2027-02-01T01:00:00Z,,\n" for i in range(120))
    c, i = files(tmp_path, LOG + rows)
    r = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-02", "--format", "csv", "--skip-bad-rows"])
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert lines[0].startswith("warning: 120 row(s) of ") and len(lines) == 1 + 50 + 1
    assert lines[-1] == "  ... and 70 more"


def test_table_and_output_file(tmp_path):
    c, i = files(tmp_path)
    out = tmp_path / "credits.txt"
    r = CliRunner().invoke(main, ["credits", c, i, "--period", "2027-02", "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "2150.40" in text and "n2" in text


def test_usage_errors(tmp_path):
    c, i = files(tmp_path)
    assert CliRunner().invoke(main, ["credits", c, i]).exit_code == 2
    assert CliRunner().invoke(main, ["credits", c, i, "--period", "2027-13"]).exit_code == 2
    assert CliRunner().invoke(main, ["credits", c, i, "--quarter", "2027-Q5"]).exit_code == 2
    assert CliRunner().invoke(main, ["credits", c, i, "--period", "2027-02", "--as-of", "2027-03-01T00:00"]).exit_code == 2


def test_explain_prints_the_arithmetic(tmp_path):
    c, i = files(tmp_path)
    r = CliRunner().invoke(main, ["explain", c, i, "--unit", "n4", "--period", "2027-02"])
    assert r.exit_code == 0, r.output
    assert "C1" in r.output and "notice_not_met" in r.output
    assert "1 - 21600 / 2419200" in r.output
    assert "1075.20" in r.output
    r = CliRunner().invoke(main, ["explain", c, i, "--unit", "n3", "--period", "2027-02", "--format", "json"])
    doc = json.loads(r.stdout)
    dropped = next(s for s in doc["steps"] if s["step"].startswith("dropped by min_outage"))
    assert dropped["intervals"][0]["seconds"] == 240
    assert doc["availability"]["downtime_seconds"] == 0
    r = CliRunner().invoke(main, ["explain", c, i, "--unit", "nope", "--period", "2027-02"])
    assert r.exit_code == 1


def test_column_wise_rows_equal_single_rows(tmp_path):
    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    lc = load_contract(repo / "examples" / "gb200-contract.yaml")
    log = load_incidents(repo / "examples" / "gb200-incidents-2027Q1.csv", lc)
    result = compute(lc, log, ["2027-Q1"])
    for p in result.periods:
        for sm in p.scopes.values():
            assert sm.rows() == [sm.row(i) for i in range(len(sm.ids))]
        assert p.nodes.rows() == [p.nodes.row(i) for i in range(len(p.nodes.ids))]


def test_explain_a_rack_of_the_example():
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    args = ["explain", str(repo / "examples" / "gb200-contract.yaml"),
            str(repo / "examples" / "gb200-incidents-2027Q1.csv"), "--unit", "r03", "--period", "2027-01",
            "--format", "json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["scope"] == "rack" and doc["parents"] == {"cluster": "c1", "site": "dfw1"}
    final = doc["steps"][-1]
    assert final["step"] == "down intervals (final)"
    assert sum(iv["in_month_seconds"] for iv in final["intervals"]) == doc["availability"]["downtime_seconds"]
    assert doc["availability"]["pro_rata"] is not None
    assert len(doc["money"]["nodes"]) == 18
    assert doc["money"]["period"]["credit_total"] == "69638.40"


def test_explain_shows_the_settled_node_credit_after_the_cap(tmp_path):
    c, i = files(tmp_path)
    (tmp_path / "c.yaml").write_text(CAPPED)
    r = CliRunner().invoke(main, ["explain", c, i, "--unit", "n2", "--period", "2027-02", "--format", "json"])
    assert r.exit_code == 0, r.output
    node = json.loads(r.stdout)["money"]["nodes"][0]
    assert (node["credit_rounded"], node["after_cap_and_minimum"], node["after_cap_share_exact"]) == \
        ("1075.20", "645.12", "645.12")


def test_credits_csv_adds_the_acceptance_delay_credit_to_what_is_owed():
    from tests.reports.conftest import EXAMPLE, ROOT

    log = ROOT / "examples" / "gb200-incidents-2027Q1.csv"
    r = CliRunner().invoke(main, ["credits", str(EXAMPLE), str(log), "--period", "2027-01", "--accepted-on",
                                  "2027-01-20", "--format", "csv"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    (acc,) = [row for row in rows if row["row"] == "acceptance_delay"]
    total = next(row for row in rows if row["row"] == "total")
    assert acc["flags"] == "days_late=5" and Decimal(acc["settled_credit"]) > 0
    settled = sum(Decimal(row["settled_credit"]) for row in rows if row["settled_credit"])
    assert settled == Decimal(total["credit_owed"]) + Decimal(acc["credit_owed"])
