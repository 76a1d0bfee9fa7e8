"""Contract format revision 1.1: every new field, valid and invalid, with its error code and place."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest

from slaschema.errors import InputError
from slaschema.loader import dump_contract, load_contract, load_contract_text
from slaschema.schema import contract_schema
from slaschema.strict_yaml import read_yaml
from slaschema.summary import summary
from slaschema.topology import parse_inventory

BASE = """\
slakit: 1
contract: {id: t, provider: P, customer: C, timezone: America/Chicago, currency: USD}
topology:
  architecture: custom
  gpus_per_node: 8
  sites:
  - id: s1
    clusters:
    - id: c1
      racks:
      - {id: r1, nodes: "n[1-4]", in_service: {from: 2027-02-15}}
      - id: r2
        nodes:
          - m1
          - {name: "m[2-3]", in_service: {from: 2027-01-01, to: "2027-03-10T12:00:00-06:00"}}
pricing: {per_gpu_hour: 2.00}
downtime: {min_outage: 5m, counts_from: report, measure: {bucket: 1m, counts_when: full}}
service_levels:
  node:
    credits:
      - {below: 99.5%, credit: 10%}
  rack:
    target: 99%
    pro_rata: {multiplier: 2, only_below_target: true}
credits:
  minimum: {more_than: 1.00}
  not_charged: {per: 1h, when_down_over: 6m}
"""


def test_all_revision_1_1_fields_load():
    lc = load_contract_text(BASE)
    m = lc.model
    assert m.downtime.counts_from == "report"
    assert m.downtime.measure.bucket == timedelta(minutes=1) and m.downtime.measure.counts_when == "full"
    assert m.service_levels.rack.pro_rata.only_below_target is True
    assert m.credits.minimum_strict and m.credits.minimum_amount == Decimal("1.00")
    assert m.credits.not_charged.per == timedelta(hours=1)
    assert m.credits.not_charged.when_down_over == timedelta(minutes=6)
    w = lc.topology.node_service
    assert lc.topology.nodes == ("n1", "n2", "n3", "n4", "m1", "m2", "m3")
    assert w[0] == (date(2027, 2, 15), None)                       # the rack's window
    assert w[4] == (None, None)                                    # m1: none
    assert w[5][1] == datetime(2027, 3, 10, 18, 0, tzinfo=timezone.utc)


def test_round_trip_and_json_schema():
    lc = load_contract_text(BASE)
    again = load_contract_text(dump_contract(lc.model))
    assert again.model == lc.model and again.topology.node_service == lc.topology.node_service
    data = read_yaml(BASE.encode(), "<t>").data
    jsonschema.validate(_plain(data), contract_schema())


def _plain(x):
    if isinstance(x, Decimal):
        return float(x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def test_revision_1_contract_has_no_service_windows():
    lc = load_contract(Path(__file__).resolve().parents[2] / "examples" / "gb200-contract.yaml")
    assert lc.topology.node_service is None
    assert not lc.model.credits.minimum_strict and lc.model.credits.minimum_amount == Decimal("1.00")


BAD = [
    ("bucket_not_dividing_day", "bucket: 1m", "bucket: 7m", "downtime.measure.bucket"),
    ("bucket_unsupported", "bucket: 1m", "bucket: 2h", "downtime.measure.bucket"),
    ("invalid_choice", "counts_when: full", "counts_when: most", "downtime.measure.counts_when"),
    ("missing_field", "{bucket: 1m, counts_when: full}", "{bucket: 1m}", "downtime.measure.counts_when"),
    ("invalid_choice", "counts_from: report", "counts_from: ticket", "downtime.counts_from"),
    ("measure_with_proportional", "{min_outage: 5m,", "{min_outage: 5m, degraded: proportional,",
     "downtime.measure"),
    ("not_charged_threshold", "when_down_over: 6m", "when_down_over: 1h", "credits.not_charged"),
    ("bucket_not_dividing_day", "per: 1h", "per: 7m", "credits.not_charged.per"),
    ("duration_unit_missing", "when_down_over: 6m", "when_down_over: 6", "credits.not_charged.when_down_over"),
    ("unknown_field", "{more_than: 1.00}", "{more_then: 1.00}", "credits.minimum.more_then"),
    ("money_invalid", "{more_than: 1.00}", "{more_than: one}", "credits.minimum.more_than"),
    ("money_invalid", "{more_than: 1.00}", "USD 1", "credits.minimum"),
    ("invalid_value", "only_below_target: true", "only_below_target: 2",
     "service_levels.rack.pro_rata.only_below_target"),
    ("service_window_order", '{from: 2027-01-01, to: "2027-03-10T12:00:00-06:00"}',
     '{from: 2027-03-11, to: "2027-03-10T12:00:00-06:00"}',
     "topology.sites[0].clusters[0].racks[1].nodes[1].in_service.to"),
    ("service_window_order", "in_service: {from: 2027-02-15}", "in_service: {from: 2027-02-15, to: 2027-02-15}",
     "topology.sites[0].clusters[0].racks[0].in_service.to"),
    ("timestamp_naive", '"2027-03-10T12:00:00-06:00"', '"2027-03-10T12:00:00"',
     "topology.sites[0].clusters[0].racks[1].nodes[1].in_service.to"),
    ("date_invalid", "{from: 2027-02-15}", "{from: 2027-02-30}", "topology.sites[0].clusters[0].racks[0].in_service.from"),
    ("service_window_empty", "{from: 2027-02-15}", "{}", "topology.sites[0].clusters[0].racks[0].in_service"),
    ("unknown_field", "{name: \"m[2-3]\",", "{nmae: \"m[2-3]\",", "topology.sites[0].clusters[0].racks[1].nodes[1].nmae"),
]


@pytest.mark.parametrize("code,old,new,path", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_revision_1_1_field(code, old, new, path):
    assert old in BASE
    with pytest.raises(InputError) as e:
        load_contract_text(BASE.replace(old, new, 1), "c.yaml")
    got = [(p.code, p.path) for p in e.value.problems]
    assert (code, path) in got, got
    p = next(p for p in e.value.problems if p.code == code)
    assert p.line is not None and p.file == "c.yaml"
    assert f"[{code}]" in p.format()


def test_several_revision_1_1_errors_at_once():
    text = BASE.replace("bucket: 1m", "bucket: 7m").replace("when_down_over: 6m", "when_down_over: 2h") \
               .replace("{more_than: 1.00}", "{more_then: 1.00}")
    with pytest.raises(InputError) as e:
        load_contract_text(text)
    assert {"bucket_not_dividing_day", "not_charged_threshold", "unknown_field"} <= set(e.value.codes)


def test_inventory_service_columns():
    text = ("node,rack,cluster,site,gpus,in_service_from,in_service_to\n"
            "a1,ra,c1,s1,8,2027-02-15,\n"
            "a2,ra,c1,s1,8,,2027-03-10T12:00:00-06:00\n"
            "a3,ra,c1,s1,8,,\n")
    topo, problems = parse_inventory(text, "inv.csv", 8, zone="America/Chicago")
    assert problems == []
    assert topo.node_service == ((date(2027, 2, 15), None),
                                 (None, datetime(2027, 3, 10, 18, 0, tzinfo=timezone.utc)), (None, None))
    topo, _ = parse_inventory("node,rack,cluster,site\na1,ra,c1,s1\n", "inv.csv", 8)
    assert topo.node_service is None


def test_inventory_service_column_errors():
    text = ("node,rack,cluster,site,in_service_from,in_service_to\n"
            "a1,ra,c1,s1,2027-02-15,2027-02-01\n"
            "a2,ra,c1,s1,15/02/2027,\n"
            "a3,ra,c1,s1,,2027-03-10T12:00:00\n")
    topo, problems = parse_inventory(text, "inv.csv", 8, zone="UTC")
    assert topo is None
    assert [(p.code, p.row, p.column) for p in problems] == [
        ("service_window_order", 1, "in_service_to"), ("date_invalid", 2, "in_service_from"),
        ("timestamp_naive", 3, "in_service_to")]
    assert all(p.file == "inv.csv" and p.value for p in problems)


def test_inventory_window_order_uses_the_contract_zone():
    # 2027-03-10 (midnight in Chicago = 06:00Z) is after 03:00Z that day, so the window is not empty
    text = "node,rack,cluster,site,in_service_from,in_service_to\na1,ra,c1,s1,2027-03-10T03:00:00Z,2027-03-10\n"
    _, problems = parse_inventory(text, "inv.csv", 8, zone="America/Chicago")
    assert problems == []
    _, problems = parse_inventory(text, "inv.csv", 8, zone="Europe/Berlin")
    assert [p.code for p in problems] == ["service_window_order"]


def test_show_lists_the_new_clauses():
    d = summary(load_contract_text(BASE))
    assert d["downtime"]["counts_from"] == "report"
    assert d["downtime"]["measure"] == {"bucket": "1m", "counts_when": "full"}
    assert d["credits"]["minimum_more_than"] is True
    assert d["credits"]["not_charged"] == {"per": "1h", "when_down_over": "6m"}
    assert {"from": "2027-02-15", "to": None, "nodes": 4} in d["service_windows"]
    rack = next(s for s in d["service_levels"] if s["scope"] == "rack")
    assert rack["pro_rata_only_below_target"] is True
