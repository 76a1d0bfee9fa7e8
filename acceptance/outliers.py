"""Fleet outliers: nodes (and GPUs) far from their peers, even when above the contract's floor.

A node that passes `min: 700` at 705 GB/s while its 71 peers measure 880 GB/s is a node to
look at before handover: it is the straggler that slows every job it joins. For each numeric
performance metric a criterion measured on at least `min_nodes` nodes (and for per-GPU
figures, on at least `min_nodes` GPUs across the fleet) slakit computes the median and the
median absolute deviation (MAD) and flags a value whose robust z-score

    z = 0.6745 * (x - median) / MAD

is at least `robust_z` (default 3.5, the Iglewicz-Hoaglin cut-off) in the *bad* direction and
that is at least `min_deviation` (default 5 %) worse than the median (for figures that are
percentages already, such as `straggler_pct`, 5 percentage points). When more than half
the values are equal (MAD = 0) the mean absolute deviation stands in (z = (x - median) /
(1.253314 * MeanAD)); when every value is equal nothing is an outlier.

The bad direction comes from the metric: bandwidth, throughput, IOPS and TFLOPS are better
high; latencies, durations, temperatures and percentages are better low; a custom metric is
better high when the criterion sets a lower bound (`min`, `warn_below`) and low when it sets
an upper one. Counts (Xid events, failed tests, symbol errors) are judged by the contract
alone and never as outliers.

A flag is a `warn` verdict with reason `fleet_outlier` and the figures in its details; it
never turns a fail into a pass, and it does not block acceptance on its own (warn is
accepted), but it is listed on every output.

Contract settings (all optional): `acceptance.outliers: {robust_z: 3.5, min_deviation: 5%,
min_nodes: 5, enabled: true}`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from acceptance.judge import Bounds, verdict
from acceptance.results import Status, Verdict

HIGHER_IS_BETTER = ("_gbps", "_mbps", "_iops", "tflops", "gflops", "busbw", "algbw", "throughput", "bandwidth")
LOWER_IS_BETTER_SUFFIX = ("_ms", "_us", "_s", "_c", "_pct")
LOWER_IS_BETTER = ("latency", "temp")
COUNTS = {"xid_events", "failed_tests", "symbol_errors", "retransmits", "unexpected_keys",
          "vulnerable_components", "gpu_count", "exit_code", "wrong_total", "matches"}


@dataclass(frozen=True)
class OutlierRule:
    robust_z: float = 3.5
    min_deviation_pct: float = 5.0
    min_nodes: int = 5
    enabled: bool = True

    @classmethod
    def of(cls, settings: Any) -> OutlierRule:
        if settings is None:
            return cls()
        return cls(robust_z=float(settings.robust_z), min_deviation_pct=float(settings.min_deviation),
                   min_nodes=int(settings.min_nodes), enabled=bool(settings.enabled))


@dataclass(frozen=True)
class Outlier:
    key: str               # node, or node/gpuN
    value: float
    median: float
    spread: float          # MAD (or 1.253314 x MeanAD when MAD is 0)
    z: float
    deviation_pct: float   # how much worse than the median, in % of it


def better_high(metric: str, bounds: Bounds | None = None) -> bool | None:
    """True: higher is better; False: lower is better; None: not a performance figure."""
    name = metric.lower()
    if name in COUNTS:
        return None
    if any(t in name for t in HIGHER_IS_BETTER):
        return True
    if name.endswith(LOWER_IS_BETTER_SUFFIX) or any(t in name for t in LOWER_IS_BETTER):
        return False
    if bounds is not None:
        if bounds.min is not None or bounds.warn_below is not None:
            return True
        if bounds.max is not None or bounds.warn_above is not None:
            return False
    return None


def robust_outliers(values: Mapping[str, float], rule: OutlierRule, higher_better: bool,
                    points: bool = False) -> list[Outlier]:
    """The keys whose value is far from the others on the bad side. Pure.

    `points`: the values are percentages already (straggler %, throttle %), so the deviation
    is measured in percentage points, not in % of a median that may be near zero."""
    clean = {k: float(v) for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
             and math.isfinite(float(v))}
    if len(clean) < max(3, rule.min_nodes):
        return []
    xs = list(clean.values())
    med = statistics.median(xs)
    mad = statistics.median(abs(x - med) for x in xs)
    if mad > 0:
        spread, scale = mad, 0.6745
    else:
        mean_ad = statistics.fmean(abs(x - med) for x in xs)
        if mean_ad == 0:
            return []
        spread, scale = 1.253314 * mean_ad, 1.0
    out = []
    for key, x in clean.items():
        z = scale * (x - med) / spread
        worse = -z if higher_better else z
        gap = (med - x) if higher_better else (x - med)
        if points:
            dev = gap
        elif med == 0:
            continue
        else:
            dev = gap / abs(med) * 100.0
        if worse >= rule.robust_z and dev >= rule.min_deviation_pct:
            out.append(Outlier(key, x, med, spread, abs(z), dev))
    return sorted(out, key=lambda o: o.key)


def _per_gpu(metrics: Mapping[str, Any]) -> dict[str, dict[int | str, float]]:
    """{field: {gpu index: value}} from a metrics map's `gpus` list of per-GPU records."""
    out: dict[str, dict[int | str, float]] = {}
    for i, g in enumerate(metrics.get("gpus") or []):
        if not isinstance(g, Mapping):
            continue
        idx = g.get("index", i)
        for field, v in g.items():
            if field == "index" or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            out.setdefault(field, {})[idx] = float(v)
    return out


def fleet_outlier_verdicts(criterion_id: str, metrics_by_node: Mapping[str, Mapping[str, Any] | None],
                           rule: OutlierRule, *, judged: str | None = None,
                           bounds: Bounds | None = None, known: Sequence[str] = ()) -> list[Verdict]:
    """`warn: fleet_outlier` verdicts over every performance metric of one criterion. Pure."""
    if not rule.enabled:
        return []
    nodes = {n: m for n, m in metrics_by_node.items() if isinstance(m, Mapping) and not m.get("skip_reason")
             and not m.get("error_reason") and not n.startswith("_")}
    if len(nodes) < 2:
        return []
    names = {judged} if judged else set()
    names |= set(known)
    out: list[Verdict] = []
    # The judged metric first: it is the one a reader of the summary row expects.
    for name in sorted((n for n in names if n), key=lambda n: (n != judged, n)):
        hb = better_high(name, bounds if name == judged else None)
        if hb is None:
            continue
        values = {n: m.get(name) for n, m in nodes.items()}
        for o in robust_outliers(values, rule, hb, points=name.endswith("_pct")):
            out.append(_flag(criterion_id, o.key, name, o, rule, hb))
    # Per GPU, pooled over the fleet: a slow GPU among 8 x N.
    pooled: dict[str, dict[str, float]] = {}
    for node, m in nodes.items():
        for field, per in _per_gpu(m).items():
            for idx, v in per.items():
                pooled.setdefault(field, {})[f"{node}/gpu{idx}"] = v
    for field, values in sorted(pooled.items()):
        hb = better_high(field)
        if hb is None:
            continue
        for o in robust_outliers(values, rule, hb, points=field.endswith("_pct")):
            node, _, gpu = o.key.partition("/")
            out.append(_flag(criterion_id, node, field, o, rule, hb, gpu=gpu))
    return out


def _flag(cid: str, node: str, metric: str, o: Outlier, rule: OutlierRule, hb: bool, gpu: str = "") -> Verdict:
    where = f"{gpu} " if gpu else ""
    side = "below" if hb else "above"
    unit = " points" if metric.endswith("_pct") else "%"
    return verdict(
        cid, node, Status.WARN, "fleet_outlier",
        measured=f"{where}{metric} {o.value:.6g} (fleet median {o.median:.6g})",
        expected=f"within {rule.min_deviation_pct:g}{unit} and robust z {rule.robust_z:g} of the fleet median",
        remediation=f"{where}{metric} is {o.deviation_pct:.1f}{unit} {side} the fleet median: check this node's "
                    "clocks, thermals, PCIe/NVLink/IB links and firmware before handover",
        details={"metric": metric, "gpu": gpu or None, "value": o.value, "median": o.median, "spread": o.spread,
                 "robust_z": round(o.z, 3), "deviation_pct": round(o.deviation_pct, 3)},
    )
