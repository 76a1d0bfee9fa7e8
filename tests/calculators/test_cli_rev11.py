"""`slakit credits` and `slakit explain` on a contract using revision 1.1 fields.

The fixture (tests/fixtures/rev11-contract.yaml) has node n4 in service from 2027-02-15, the
clock started at the customer's report, 1-minute `full` buckets, hours not charged (1 h,
over 6 min), a rack pro-rata credit only below target and a strict minimum.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from click.testing import CliRunner

from slakit.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CONTRACT, LOG = str(FIX / "rev11-contract.yaml"), str(FIX / "rev11-incidents.csv")


def _run(*args):
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    return r.output


def test_credits_json_revision_1_1_fields():
    doc = json.loads(_run("credits", CONTRACT, LOG, "--period", "2027-02", "--format", "json"))
    p = doc["periods"][0]
    keys = list(p)
    assert keys.index("not_charged_total") == keys.index("credit_total") + 1
    assert keys.index("remedy_total") == keys.index("credit_total") + 2
    assert p["minimum_rule"] == "more_than"
    # n1: A1 counts from its report 10:45:10 (full minutes from 10:46) and A5 (rack) 75 minutes
    units = {(u["scope"], u["id"]): u for u in p["units"]}
    n1 = units[("node", "n1")]
    assert n1["downtime_seconds"] == (194 + 75) * 60
    assert n1["service_seconds"] == 28 * 86400
    n4 = units[("node", "n4")]
    assert n4["service_seconds"] == 14 * 86400 and n4["fee"] == "5376.00"
    assert "outside_service" in n4["flags"] and n4["incidents"] == ["A3"]
    assert "not_reported" in units[("node", "n2")]["flags"]
    rack = units[("rack", "r1")]
    assert rack["met"] is True and rack["credit"] == "0.00"          # pro rata only below target
    nodes = {n["id"]: n for n in p["nodes"]}
    # hours not charged: n1 hours 10-13 on 02-03 (A1 from 10:45:10: 10h has 14m50s) and 10-12 on 02-12 -> 6 h
    assert nodes["n1"]["not_charged"] == "96.00"
    assert nodes["n4"]["not_charged"] == "48.00"                    # hours 0, 1, 2 on 02-20
    total_nc = sum(int(n["not_charged"].replace(".", "")) for n in p["nodes"])
    assert p["not_charged_total"] == f"{total_nc // 100}.{total_nc % 100:02d}"
    credit = int(p["credit_total"].replace(".", ""))
    assert int(p["remedy_total"].replace(".", "")) == credit + total_nc
    assert doc["quarters"] == []          # one month of a quarter: no quarter total
    q3 = json.loads(_run("credits", CONTRACT, LOG, "--quarter", "2027-Q1", "--format", "json"))
    (q,) = q3["quarters"]
    months = q3["periods"]
    nc = sum(int(m["not_charged_total"].replace(".", "")) for m in months)
    assert int(q["not_charged_total"].replace(".", "")) == nc
    assert int(q["remedy_total"].replace(".", "")) == sum(int(m["remedy_total"].replace(".", "")) for m in months)


def test_credits_csv_and_table_show_the_new_figures():
    rows = list(csv.DictReader(io.StringIO(_run("credits", CONTRACT, LOG, "--period", "2027-02", "--format", "csv"))))
    assert {"service_seconds", "charged_fee", "not_charged"} <= set(rows[0])
    n4 = next(r for r in rows if r["id"] == "n4" and r["row"] == "unit")
    assert n4["service_seconds"] == str(14 * 86400) and n4["charged_fee"] == "5328.00"
    node = next(r for r in rows if r["id"] == "n4" and r["row"] == "node")
    assert node["not_charged"] == "48.00" and node["service_seconds"] == str(14 * 86400)
    total = next(r for r in rows if r["row"] == "total")
    assert total["not_charged"] == f"{sum(float(r['not_charged'] or 0) for r in rows if r['row'] == 'node'):.2f}"
    table = _run("credits", CONTRACT, LOG, "--period", "2027-02")
    assert "not charged" in table and "remedy" in table and "service s" in table


def test_explain_shows_service_clock_buckets_and_hours_not_charged():
    doc = json.loads(_run("explain", CONTRACT, LOG, "--unit", "n4", "--period", "2027-02", "--format", "json"))
    assert doc["service"] == {"service_seconds": 14 * 86400, "month_seconds": 28 * 86400,
                              "window": {"from": "2027-02-15", "to": None}}
    clock = {c["id"]: c for c in doc["clock"]}
    assert clock["A2"]["clock_starts"] == "2027-02-10T00:10:00Z"
    steps = {s["step"].split(":")[0].split(" (")[0]: s["intervals"] for s in doc["steps"]}
    assert steps["service time in the month"][0]["start"] == "2027-02-15T06:00:00Z"
    buckets = next(s for s in doc["steps"] if s["step"].startswith("1-minute clock buckets"))
    assert sum(i["seconds"] for i in buckets["intervals"]) == 150 * 60
    nc = next(s for s in doc["steps"] if s["step"].startswith("hours not charged"))
    assert [(i["start"], i["end"]) for i in nc["intervals"]] == [("2027-02-20T00:00:00Z", "2027-02-20T03:00:00Z")]
    parts = {(p["id"], p["part"]) for p in doc["incidents"]}
    assert ("A2", "counts nowhere") in parts and ("A3", "counted") in parts
    assert doc["availability"]["service_seconds"] == 14 * 86400
    assert doc["money"]["period"]["remedy_total"]
    text = _run("explain", CONTRACT, LOG, "--unit", "n4", "--period", "2027-02")
    assert "Service time: window from 2027-02-15, no end" in text
    n1 = _run("explain", CONTRACT, LOG, "--unit", "n1", "--period", "2027-02")
    assert "no window of its own (always in service)" in n1
    assert "counted from 2027-02-10T00:10:00Z" in text
    assert "hours not charged" in text and "remedy" in text


def test_explain_unit_out_of_service_all_month():
    text = _run("explain", CONTRACT, LOG, "--unit", "n4", "--period", "2027-01")
    assert "Not in service this month" in text
    doc = json.loads(_run("credits", CONTRACT, LOG, "--period", "2027-01", "--format", "json"))
    assert "n4" not in [n["id"] for n in doc["periods"][0]["nodes"]]
