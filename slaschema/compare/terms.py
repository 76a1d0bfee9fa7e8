"""Side-by-side terms of competing offers, each row marking the best offer for the buyer.

A row is data: section, term, a getter that reads a comparable value from a contract, a
formatter, and the rule that decides which value is best for the buyer (written out in the
row's `rule` text, which every output shows). Missing terms are handled per row: a missing
detection target is the worst value, a missing credit cap the best.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any, Literal

from slaschema.checks import AREAS, KNOWN_CHECKS
from slaschema.loader import LoadedContract
from slaschema.models import SCOPES, ServiceLevel, claim_window_min_seconds
from slaschema.types import format_duration, format_percent

HOURS_PER_MONTH = Decimal(730)   # 8,760 h / 12, to put per-node-month prices on a GPU-hour basis
Better = Literal["lower", "higher", "yes", "no", None]


def machine(v: Any) -> Any:
    """A row value for JSON: numbers as numbers (decimals exactly when integral), tuples as
    lists, text and booleans as they are, a missing term as null."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, timedelta):
        return int(v.total_seconds())
    if isinstance(v, (tuple, list)):
        return [machine(x) for x in v]
    if isinstance(v, dict):
        return {k: machine(x) for k, x in v.items()}
    return str(v)


@dataclass(frozen=True, kw_only=True)
class Row:
    """One row of a comparison: the offers' values as printed (`values`) and for machines
    (`data`), the best offers for the buyer and the rule that decides them."""

    section: str
    term: str
    values: tuple[str, ...]    # display text per offer
    best: tuple[int, ...]      # indices of the best offer(s); empty when the row is informational
    rule: str                  # how `best` is decided
    data: tuple[Any, ...] = ()  # the values for machines (numbers, booleans, null); see `machine`
    unit: str | None = None     # unit of numeric `data`: seconds, percent, count, or a currency

    def to_json(self) -> dict[str, Any]:
        data = list(self.data) if self.data else [machine(v) for v in self.values]
        return {"section": self.section, "term": self.term, "values": data, "display": list(self.values),
                "unit": self.unit, "best": list(self.best), "rule": self.rule}


@dataclass(frozen=True)
class Spec:
    section: str
    term: str
    get: Callable[[LoadedContract], Any]
    fmt: Callable[[Any], str]
    better: Better
    missing: Literal["worst", "best"] = "worst"
    rule: str = ""
    unit: str | None = None
    data: Callable[[Any], Any] = machine


def _measure_rank(lc: LoadedContract) -> int:
    """Revision 1.1 `downtime.measure`: 0 whole buckets (full), 1 exact seconds, 2 any part (any)."""
    ms = lc.model.downtime.measure
    return 1 if ms is None else (0 if ms.counts_when == "full" else 2)


def _rule_text(s: Spec) -> str:
    if s.rule:
        return s.rule
    base = {"lower": "lower is better", "higher": "higher is better", "yes": "yes is better", "no": "no is better",
            None: "for information"}[s.better]
    if s.better is not None:
        base += "; none is " + ("best" if s.missing == "best" else "worst")
    return base


def best_of(values: list[Any], better: Better, missing: str) -> tuple[int, ...]:
    """Indices of the best values (ties share the mark); none when all are equal."""
    if better is None or len(values) < 2:
        return ()
    if better == "yes":
        # None: the term does not apply to the offer (e.g. no such exclusion), as good as yes
        key = [1 if (v or v is None) else 0 for v in values]
        top = max(key)
    elif better == "no":
        key = [0 if v else 1 for v in values]
        top = max(key)
    else:
        present = [v for v in values if v is not None]
        if not present:
            return ()
        sign = 1 if better == "higher" else -1
        inf_ = 1 if missing == "best" else -1
        key = [(inf_, 0) if v is None else (0, sign * v) for v in values]
        key = [(k[0], k[1]) for k in key]
        top = max(key)
    idx = tuple(i for i, k in enumerate(key) if k == top)
    return () if len(idx) == len(values) else idx


# --- value getters -------------------------------------------------------------------------

def price_per_gpu_hour(lc: LoadedContract) -> Decimal:
    p = lc.model.pricing
    if p.per_gpu_hour is not None:
        return p.per_gpu_hour
    assert p.per_node_month is not None
    gpus_per_node = Decimal(lc.topology.gpu_count) / len(lc.topology.nodes)
    return p.per_node_month / (gpus_per_node * HOURS_PER_MONTH)


def credit_at(sl: ServiceLevel | None, availability: Decimal) -> Decimal | None:
    """Credit share (percent of the unit's fee) for a month at this availability."""
    if sl is None:
        return None
    if sl.credits:
        hits = [t.credit for t in sl.credits if availability < t.below]
        return max(hits) if hits else Decimal(0)
    assert sl.pro_rata is not None
    share = (Decimal(100) - availability) * sl.pro_rata.multiplier
    return min(share, Decimal(100))


def _sl(scope: str) -> Callable[[LoadedContract], ServiceLevel | None]:
    return lambda lc: getattr(lc.model.service_levels, scope)


def _schedule(sl: ServiceLevel | None) -> str:
    if sl is None:
        return "—"
    if sl.credits:
        return ", ".join(f"<{format_percent(t.below)}: {format_percent(t.credit)}" for t in sl.credits)
    assert sl.pro_rata is not None
    return f"pro rata x{sl.pro_rata.multiplier}"


def _td(v: timedelta | None) -> str:
    return "—" if v is None else format_duration(v)


class _WindowSeconds(int):
    """A claim window's shortest length in seconds (compared as a number), with its own words."""
    text: str = ""


def _claim_window(cw) -> int | None:
    seconds = claim_window_min_seconds(cw)
    if seconds is None:
        return None
    v = _WindowSeconds(seconds)
    v.text = (format_duration(cw) if isinstance(cw, timedelta)
              else f"end of month +{cw.months_after} (at least {seconds // 86400}d)")
    return v


def _sec(v: timedelta | None) -> int | None:
    return None if v is None else int(v.total_seconds())


def _pct(v: Decimal | None) -> str:
    return "—" if v is None else format_percent(v)


def _yes(v: Any) -> str:
    return "yes" if v else "no"


def _areas(lc: LoadedContract) -> int:
    return len({KNOWN_CHECKS[c.check][0] for c in lc.model.acceptance.criteria if c.check in KNOWN_CHECKS})


def _degraded_rank(lc: LoadedContract) -> int:
    return {"ignore": 0, "proportional": 1, "down": 2}[lc.model.downtime.degraded]


def _exclusion_names(offers: list[LoadedContract]) -> list[str]:
    names: list[str] = []
    for lc in offers:
        for n in lc.model.exclusions:
            if n not in names:
                names.append(n)
    return names


def _excl(name: str, attr: str) -> Callable[[LoadedContract], Any]:
    def get(lc: LoadedContract) -> Any:
        ex = lc.model.exclusions.get(name)
        if ex is None:
            return "absent"
        return getattr(ex, attr)

    return get


def specs(offers: list[LoadedContract]) -> list[Spec]:
    out: list[Spec] = [
        Spec("Offer", "provider", lambda lc: lc.model.contract.provider, str, None),
        Spec("Offer", "GPUs (nodes)", lambda lc: (lc.topology.gpu_count, len(lc.topology.nodes)),
             lambda v: f"{v[0]} ({v[1]})", None, data=lambda v: {"gpus": v[0], "nodes": v[1]}),
        Spec("Offer", "architecture", lambda lc: lc.model.topology.architecture, str, None),
        Spec("Price", "price per GPU-hour", price_per_gpu_hour, lambda v: f"{v:.4f}", "lower",
             rule="lower is better; per_node_month / (GPUs per node x 730 h)", unit="currency per GPU-hour",
             data=lambda v: float(v)),
    ]
    for scope in SCOPES:
        if not any(getattr(lc.model.service_levels, scope) for lc in offers):
            continue
        out += [
            Spec("Service levels", f"{scope} target", lambda lc, s=scope: (getattr(lc.model.service_levels, s)
                                                                          .effective_target
                                                                          if getattr(lc.model.service_levels, s)
                                                                          else None),
                 _pct, "higher", unit="percent"),
            Spec("Service levels", f"{scope} credits", lambda lc, s=scope: _schedule(_sl(s)(lc)), str, None),
            Spec("Service levels", f"{scope} credit at 98% availability",
                 lambda lc, s=scope: credit_at(_sl(s)(lc), Decimal(98)), _pct, "higher", unit="percent"),
            Spec("Service levels", f"{scope} credit at 95% availability",
                 lambda lc, s=scope: credit_at(_sl(s)(lc), Decimal(95)), _pct, "higher", unit="percent"),
        ]
    out += [
        Spec("Downtime", "min_outage", lambda lc: _sec(lc.model.downtime.min_outage),
             lambda v: format_duration(timedelta(seconds=v)), "lower", unit="seconds"),
        Spec("Downtime", "degraded time", _degraded_rank, lambda v: ("ignored", "proportional", "down")[v], "higher",
             rule="down > proportional > ignored", data=lambda v: ("ignore", "proportional", "down")[v]),
        Spec("Downtime", "rack down with k nodes down",
             lambda lc: lc.model.downtime.rack.down_when_nodes_down if lc.model.downtime.rack else None,
             lambda v: "—" if v is None else str(v), "lower", unit="nodes"),
        Spec("Downtime", "nodes follow rack",
             lambda lc: bool(lc.model.downtime.rack and lc.model.downtime.rack.nodes_follow_rack), _yes, "yes"),
        Spec("Downtime", "cluster down below",
             lambda lc: lc.model.downtime.cluster.down_when_available_below if lc.model.downtime.cluster else None,
             _pct, "higher", unit="percent"),
        Spec("Downtime", "clock starts at the fault", lambda lc: lc.model.downtime.counts_from == "fault",
             lambda v: "fault" if v else "customer's report", "yes", rule="from the fault is better"),
        Spec("Downtime", "measured in", _measure_rank, lambda v: ("whole buckets", "exact seconds",
                                                                  "any part of a bucket")[v], "higher",
             rule="any part of a bucket > exact seconds > whole buckets"),
    ]
    for name in _exclusion_names(offers):
        out += [
            Spec("Exclusions", f"{name}: excluded", lambda lc, n=name: n in lc.model.exclusions, _yes, "no",
                 rule="not excluded is better: the time counts as downtime"),
            Spec("Exclusions", f"{name}: notice", lambda lc, n=name: _notice_value(lc, n),
                 lambda v: "not excluded" if v == "absent" else _td(None if v is None else timedelta(seconds=v)),
                 "higher", rule="longer notice is better; not excluded is best, no notice worst", unit="seconds",
                 data=lambda v: None if v == "absent" else v),
            Spec("Exclusions", f"{name}: monthly cap", lambda lc, n=name: _cap_value(lc, n),
                 lambda v: "not excluded" if v == -1 else ("no cap" if v is None
                                                          else format_duration(timedelta(seconds=v))),
                 "lower", rule="smaller cap is better; not excluded is best, no cap worst", unit="seconds",
                 data=lambda v: None if v == -1 else v),
            Spec("Exclusions", f"{name}: defined", lambda lc, n=name: _defined_value(lc, n),
                 lambda v: "not excluded" if v is None else _yes(v), "yes",
                 rule="a written definition (or no exclusion) is better"),
        ]
    out += [
        Spec("Credits", "cap (share of fee)", lambda lc: lc.model.credits.cap, lambda v: "no cap" if v is None
             else format_percent(v), "higher", missing="best", unit="percent"),
        Spec("Credits", "minimum credit", lambda lc: lc.model.credits.minimum_amount, str, "lower"),
        Spec("Credits", "minimum credit itself issued", lambda lc: not lc.model.credits.minimum_strict, _yes, "yes",
             rule="yes (a plain minimum) is better than `more_than`"),
        Spec("Credits", "pro rata paid for every downtime hour",
             lambda lc: not any(sl.pro_rata is not None and sl.pro_rata.only_below_target
                                for _, sl in lc.model.service_levels.items()), _yes, "yes",
             rule="yes is better than only below target"),
        Spec("Credits", "hours not charged",
             lambda lc: lc.model.credits.not_charged is not None, _yes, "yes", rule="yes is better"),
        Spec("Credits", "claim window", lambda lc: _claim_window(lc.model.credits.claim_window),
             lambda v: "none" if v is None else getattr(v, "text", None) or format_duration(timedelta(seconds=v)),
             "higher", missing="best", unit="seconds",
             rule="longer is better; {months_after: N} counts as its shortest case (59d for N = 2)"),
        Spec("Credits", "stacking across scopes", lambda lc: lc.model.credits.stacking == "sum",
             lambda v: "sum" if v else "max", "yes", rule="sum is better than max"),
        Spec("Support", "detection", lambda lc: _sec(lc.model.support.detection),
             lambda v: _td(None if v is None else timedelta(seconds=v)), "lower", unit="seconds"),
    ]
    for sev in ("sev1", "sev2", "sev3", "sev4"):
        out.append(Spec("Support", f"{sev} response",
                        lambda lc, s=sev: _sec(getattr(lc.model.support.response, s) if lc.model.support.response
                                               else None),
                        lambda v: _td(None if v is None else timedelta(seconds=v)), "lower", unit="seconds"))
    for scope in SCOPES:
        if any(lc.model.support.restore and getattr(lc.model.support.restore, scope) for lc in offers):
            out.append(Spec("Support", f"{scope} restore",
                            lambda lc, s=scope: _sec(getattr(lc.model.support.restore, s)
                                                     if lc.model.support.restore else None),
                            lambda v: _td(None if v is None else timedelta(seconds=v)), "lower", unit="seconds"))
    out += [
        Spec("Support", "hot spares per 100 nodes",
             lambda lc: (Decimal(lc.model.support.hot_spares.nodes * 100) / len(lc.topology.nodes)
                         if lc.model.support.hot_spares else Decimal(0)),
             lambda v: f"{v:.1f}", "higher"),
        Spec("Support", "log and telemetry export", lambda lc: lc.model.support.log_export, _yes, "yes"),
        Spec("Support", "customer monitoring", lambda lc: lc.model.support.customer_monitoring, _yes, "yes"),
        Spec("Acceptance", "deadline", lambda lc: lc.model.acceptance.deadline,
             lambda v: "none" if v is None else str(v), None),
        Spec("Acceptance", "burn-in", lambda lc: _sec(lc.model.acceptance.burn_in.duration)
             if lc.model.acceptance.burn_in else None,
             lambda v: _td(None if v is None else timedelta(seconds=v)), "higher", unit="seconds"),
        Spec("Acceptance", "areas tested (of 5)", _areas, str, "higher",
             rule=f"more of {', '.join(AREAS)} is better"),
        Spec("Acceptance", "criteria", lambda lc: len(lc.model.acceptance.criteria), str, None),
        Spec("Acceptance", "credit per day late",
             lambda lc: lc.model.acceptance.remedies.credit_per_day_late if lc.model.acceptance.remedies else None,
             _pct, "higher"),
        Spec("Acceptance", "termination right after",
             lambda lc: _sec(lc.model.acceptance.remedies.termination_right_after)
             if lc.model.acceptance.remedies else None,
             lambda v: _td(None if v is None else timedelta(seconds=v)), "lower", unit="seconds"),
        Spec("Exit", "chronic-failure exit",
             lambda lc: (Decimal(lc.model.termination.chronic.months_below_target)
                         / lc.model.termination.chronic.within_months) if lc.model.termination.chronic else None,
             lambda v: "none" if v is None else f"{v:.2f} of months", "lower",
             rule="fewer bad months per window is better; none is worst"),
        Spec("Exit", "chronic trigger", lambda lc: (f"{lc.model.termination.chronic.months_below_target} bad months "
                                                    f"in {lc.model.termination.chronic.within_months}"
                                                    if lc.model.termination.chronic else "none"), str, None),
        Spec("Exit", "termination notice", lambda lc: _sec(lc.model.termination.notice),
             lambda v: _td(None if v is None else timedelta(seconds=v)), "lower", missing="best",
             unit="seconds"),
        Spec("Exit", "exit assistance", lambda lc: _sec(lc.model.termination.exit_assistance),
             lambda v: _td(None if v is None else timedelta(seconds=v)), "higher", unit="seconds"),
    ]
    return out


def _defined_value(lc: LoadedContract, name: str) -> bool | None:
    """Whether the exclusion has a written definition; None when the offer has no such exclusion."""
    ex = lc.model.exclusions.get(name)
    return None if ex is None else bool((ex.definition or "").strip())


def _notice_value(lc: LoadedContract, name: str) -> Any:
    ex = lc.model.exclusions.get(name)
    if ex is None:
        return "absent"
    return _sec(ex.notice)


def _cap_value(lc: LoadedContract, name: str) -> Any:
    ex = lc.model.exclusions.get(name)
    if ex is None:
        return -1
    return _sec(ex.max_per_month)


def _comparable(spec: Spec, raw: list[Any]) -> tuple[list[Any], Better, str]:
    """Map the exclusion sentinels onto the row's ordering."""
    if spec.term.endswith(": notice"):
        big = 10**12
        return [big if v == "absent" else v for v in raw], spec.better, "worst"
    if spec.term.endswith(": monthly cap"):
        return [None if v is None else (-1 if v == -1 else v) for v in raw], spec.better, "worst"
    return raw, spec.better, spec.missing


def term_rows(offers: list[LoadedContract]) -> list[Row]:
    rows = []
    for s in specs(offers):
        raw = [s.get(lc) for lc in offers]
        vals, better, missing = _comparable(s, raw)
        rows.append(Row(section=s.section, term=s.term, values=tuple(s.fmt(v) for v in raw),
                        best=best_of(vals, better, missing), rule=_rule_text(s),
                        data=tuple(machine(s.data(v)) for v in raw), unit=s.unit))
    return rows
