"""Synthetic GB200 fleet and incident logs for benchmarks (credits, reports).

    make_fleet_contract(tmpdir) -> Path      # 700 NVL72 racks, 12,600 nodes, 50,400 GPUs,
                                             # 7 clusters, 2 sites; rack and cluster rules on
    make_incidents_csv(path, n, seed) -> Path   # n incidents over 2027-Q1, deterministic per seed

The log mixes what a real fleet reports: mostly single-node faults (some degraded with
`gpus_affected`), rack and a few cluster and site incidents, planned maintenance with and
without enough notice, security patches, customer-caused faults, a few still open, and the
support timeline columns.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

RACKS = 700
NODES_PER_RACK = 18
CLUSTERS = 7
SITES = ("dfw1", "ord1")
CLUSTER_SITE = (0, 0, 0, 0, 1, 1, 1)
QUARTER = "2027-Q1"
Q_START = np.datetime64("2027-01-01T06:00:00")     # America/Chicago midnight, in UTC
Q_END = np.datetime64("2027-04-01T05:00:00")

CONTRACT = """\
slakit: 1
contract:
  id: synthetic-gb200-fleet
  provider: Example Neocloud Inc.
  customer: Example AI Lab
  timezone: America/Chicago
  currency: USD
topology:
  architecture: gb200-nvl72
  gpu_model: GB200
  gpus_per_node: 4
  sites:
{sites}
pricing:
  per_gpu_hour: 3.25
downtime:
  min_outage: 5m
  degraded: proportional
  rack: {{down_when_nodes_down: 3, nodes_follow_rack: true}}
  cluster: {{down_when_available_below: 90%, nodes_follow_cluster: false}}
exclusions:
  maintenance: {{notice: 72h, max_per_month: 8h}}
  security_patch: {{notice: 24h, max_per_month: 4h}}
  customer_caused: {{}}
  force_majeure: {{}}
service_levels:
  node:
    target: 99.0%
    credits:
      - {{below: 99.0%, credit: 10%}}
      - {{below: 95.0%, credit: 25%}}
      - {{below: 90.0%, credit: 100%}}
  rack:
    target: 95.0%
    pro_rata: {{multiplier: 2}}
  cluster:
    target: 99.5%
    credits:
      - {{below: 99.5%, credit: 10%}}
      - {{below: 99.0%, credit: 25%}}
credits: {{stacking: max, cap: 50%, minimum: 1.00}}
support:
  detection: 2m
  response: {{sev1: 15m, sev2: 1h, sev3: 4h, sev4: 1d}}
  restore: {{node: 1h, rack: 24h}}
termination:
  chronic: {{months_below_target: 3, within_months: 6}}
"""


def rack_name(i: int) -> str:
    return f"c{i // 100 + 1}-r{i % 100 + 1:03d}"


def node_names() -> list[str]:
    return [f"{rack_name(r)}-n{n:02d}" for r in range(RACKS) for n in range(1, NODES_PER_RACK + 1)]


def make_fleet_contract(tmpdir: str | Path) -> Path:
    """Write the fleet contract into `tmpdir`; returns its path."""
    lines = []
    for s, site in enumerate(SITES):
        lines.append(f"    - id: {site}")
        lines.append("      clusters:")
        for c in range(CLUSTERS):
            if CLUSTER_SITE[c] != s:
                continue
            lines.append(f"        - id: c{c + 1}")
            lines.append("          racks:")
            for r in range(c * 100, (c + 1) * 100):
                lines.append(f"            - {{id: {rack_name(r)}, nodes: \"{rack_name(r)}-n[01-{NODES_PER_RACK}]\"}}")
    path = Path(tmpdir) / "fleet-contract.yaml"
    path.write_text(CONTRACT.format(sites="\n".join(lines)), encoding="utf-8")
    return path


def _iso(seconds: np.ndarray) -> np.ndarray:
    return np.char.add(np.datetime_as_string(seconds.astype("datetime64[s]"), unit="s"), "Z")


def make_incidents(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Columns of a synthetic incident log (strings, empty = missing)."""
    rng = np.random.default_rng(seed)
    q0 = int(Q_START.astype("datetime64[s]").astype(np.int64))
    q1 = int(Q_END.astype("datetime64[s]").astype(np.int64))
    nodes = np.array(node_names(), dtype=object)
    racks = np.array([rack_name(r) for r in range(RACKS)], dtype=object)
    clusters = np.array([f"c{c + 1}" for c in range(CLUSTERS)], dtype=object)
    sites = np.array(SITES, dtype=object)

    u = rng.random(n)
    scope = np.where(u < 0.98, "node", np.where(u < 0.9995, "rack", np.where(u < 0.99995, "cluster", "site")))
    target = np.empty(n, dtype=object)
    for name, units in (("node", nodes), ("rack", racks), ("cluster", clusters), ("site", sites)):
        m = scope == name
        target[m] = units[rng.integers(0, len(units), int(m.sum()))]
    start = rng.integers(q0 - 2 * 86400, q1, n)
    # log-normal durations: median ~20 minutes, long tail to days; larger scopes shorter
    dur = np.exp(rng.normal(np.log(1200), 1.3, n)).astype(np.int64) + 1
    dur = np.where(scope == "node", dur, np.minimum(dur, 4 * 3600))
    end = start + dur
    open_ = rng.random(n) < 0.001
    degraded = (scope == "node") & (rng.random(n) < 0.1)
    gpus = np.where(degraded, rng.integers(1, 5, n), 0)
    c = rng.random(n)
    category = np.where(c < 0.85, "unplanned", np.where(c < 0.95, "maintenance",
                        np.where(c < 0.98, "security_patch", "customer_caused")))
    planned = (category == "maintenance") | (category == "security_patch")
    notice_lead = np.where(rng.random(n) < 0.8, 96 * 3600, 12 * 3600)
    sev = np.array(["sev1", "sev2", "sev3", "sev4"], dtype=object)[rng.integers(0, 4, n)]
    detected = start + rng.integers(10, 300, n)
    responded = detected + rng.integers(60, 7200, n)

    def opt(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
        out = np.full(n, "", dtype=object)
        out[mask] = values[mask]
        return out

    return {
        "id": np.char.add("INC-", np.arange(1, n + 1).astype(str)).astype(object),
        "scope": scope.astype(object),
        "target": target,
        "start": _iso(start).astype(object),
        "end": opt(~open_, _iso(end).astype(object)),
        "impact": np.where(degraded, "degraded", "down").astype(object),
        "gpus_affected": opt(degraded, gpus.astype(str).astype(object)),
        "category": category.astype(object),
        "notice_at": opt(planned, _iso(start - notice_lead).astype(object)),
        "severity": sev,
        "detected_at": _iso(detected).astype(object),
        "responded_at": _iso(responded).astype(object),
    }


def make_incidents_csv(path: str | Path, n: int, seed: int = 0) -> Path:
    """Write `n` synthetic incidents as CSV (header row); returns the path."""
    import pandas as pd

    path = Path(path)
    pd.DataFrame(make_incidents(n, seed)).to_csv(path, index=False)
    return path
