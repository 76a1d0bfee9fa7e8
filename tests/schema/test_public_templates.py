"""Templates of published SLAs (templates/contracts/public/): valid, sourced, and computing what
their clauses say on small incident logs."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest

from calculators.engine import compute
from calculators.incidents import IncidentLog
from slaschema.loader import dump_contract, load_contract, load_contract_text
from slaschema.schema import contract_schema
from slaschema.strict_yaml import read_yaml
from tests.schema.test_rev11_format import _plain

PUBLIC = Path(__file__).resolve().parents[2] / "templates" / "contracts" / "public"
FILES = sorted(PUBLIC.glob("*.yaml"))
EXPECTED = {"aws-ec2-instance", "aws-ec2-region", "gce-single-instance", "gce-multi-zone", "azure-vm-single",
            "azure-vm-zones", "nvl72-shape-a", "nvl72-shape-b", "nvl72-shape-c"}


def test_every_published_sla_is_there():
    assert {p.stem for p in FILES} == EXPECTED


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_valid_sourced_and_round_trips(path):
    text = path.read_text(encoding="utf-8")
    assert re.search(r"^# Source: https?://\S+", text, re.M), "a Source URL in a comment"
    assert re.search(r"read 2026-\d\d-\d\d", text), "the date the source was read"
    assert re.search(r"^# description: .+", text, re.M)
    lc = load_contract(path)
    again = load_contract_text(dump_contract(lc.model))
    assert again.model == lc.model
    jsonschema.validate(_plain(read_yaml(text.encode(), str(path)).data), contract_schema())


def _run(name: str, records: list[dict], period: str = "2027-02"):
    lc = load_contract(PUBLIC / f"{name}.yaml")
    return compute(lc, IncidentLog.from_records(records, lc.topology), [period], support=False)


def _inc(i, target, start, end, scope="node"):
    return {"id": i, "scope": scope, "target": target, "start": start, "end": end}


def test_ec2_region_needs_more_than_one_az_down_and_issues_only_above_one_dollar():
    one_az = [_inc(f"a{k}", f"az-a-i0{k}", "2027-02-10T00:00:00Z", "2027-02-10T02:00:00Z") for k in range(1, 5)]
    r = _run("aws-ec2-region", one_az)
    assert r.unit("2027-02", "site", "region")["downtime_seconds"] == 0
    both = one_az + [_inc(f"b{k}", f"az-b-i0{k}", "2027-02-10T00:00:30Z", "2027-02-10T00:10:00Z")
                     for k in range(1, 5)]
    r = _run("aws-ec2-region", both)
    site = r.unit("2027-02", "site", "region")
    assert site["downtime_seconds"] == 10 * 60           # 00:00:30-00:10:00, any part of a minute counts
    assert site["credit_pct"] == "10"
    assert r.period("2027-02").minimum_strict


def test_ec2_instance_hours_below_95_percent_are_not_charged():
    r = _run("aws-ec2-instance", [_inc("x", "i01", "2027-02-10T10:58:00Z", "2027-02-10T12:02:00Z")])
    p = r.to_json()["periods"][0]
    # hour 10: 2 min (charged), hour 11: 60 min, hour 12: 2 min (charged): one hour of 8 GPUs x 4.00
    assert {n["id"]: n["not_charged"] for n in p["nodes"]}["i01"] == "32.00"
    assert p["remedy_total"] == "32.00"
    jan = _run("aws-ec2-instance", [], "2027-01")
    i04 = next(n for n in jan.to_json()["periods"][0]["nodes"] if n["id"] == "i04")
    assert i04["service_seconds"] == 17 * 86400          # launched 2027-01-15


def test_gce_partial_minutes_do_not_count():
    r = _run("gce-single-instance", [_inc("g", "vm01", "2027-02-10T08:00:30Z", "2027-02-10T08:50:50Z")])
    u = r.unit("2027-02", "node", "vm01")
    assert u["downtime_seconds"] == 49 * 60               # 08:01-08:50
    assert u["credit_pct"] == "10"                        # below 99.9% (43.2 min in February)


def test_nvl72_shapes_pay_differently_for_three_trays_down():
    rec = [_inc(f"t{k}", f"r01-n0{k}", "2027-02-10T00:00:00Z", "2027-02-10T10:00:00Z") for k in (1, 2, 3)]
    a, b, c = (_run(f"nvl72-shape-{s}", rec).period("2027-02").credit_total_cents for s in "abc")
    assert a < b                 # A: three trays' credits; B: the whole rack follows
    b1 = _run("nvl72-shape-b", rec[:2]).unit("2027-02", "rack", "r01")
    c1 = _run("nvl72-shape-c", rec[:1]).unit("2027-02", "rack", "r01")
    assert b1["downtime_seconds"] == 0                    # two trays down: 16 of 18 still up
    assert c1["downtime_seconds"] == 10 * 3600            # one tray down takes the whole rack down
    assert c == 0                # C: the rack is down 10 h (98.5%), its 95% target is met
