"""Small builders shared by the calculator tests."""

from __future__ import annotations

from calculators.incidents import IncidentLog
from slaschema.loader import load_contract_text

EXAMPLE_CONTRACT = """
slakit: 1
contract: {id: worked-examples, provider: P, customer: C, timezone: UTC, currency: USD}
topology:
  architecture: custom
  gpus_per_node: 8
  sites: [{id: s1, clusters: [{id: c1, racks: [{id: r1, nodes: "n[1-4]"}]}]}]
pricing: {per_gpu_hour: 2.00}
downtime: {min_outage: 5m}
exclusions:
  maintenance: {notice: 72h, max_per_month: 4h}
service_levels:
  node:
    credits:
      - {below: 99.5%, credit: 10%}
      - {below: 99%, credit: 25%}
"""


def contract(text: str = EXAMPLE_CONTRACT):
    return load_contract_text(text)


def log(lc, records: list[dict]) -> IncidentLog:
    return IncidentLog.from_records(records, lc.topology)


def inc(id_: str, target: str, start: str, end: str | None, scope: str = "node", **kw) -> dict:
    d = {"id": id_, "scope": scope, "target": target, "start": start}
    if end is not None:
        d["end"] = end
    d.update(kw)
    return d
