"""Checks across fields that a single field validator cannot make.

They run after the structure is valid and return every problem with its field path,
so the loader can attach the YAML line and column.
"""

from __future__ import annotations

from slaschema.checks import KNOWN_CHECKS
from slaschema.models import Contract
from slaschema.topology import ResolvedTopology
from slaschema.types import format_percent

Path = tuple[str | int, ...]


class Finding:
    __slots__ = ("code", "path", "message", "value", "fix")

    def __init__(self, code: str, path: Path, message: str, value=None, fix: str | None = None) -> None:
        self.code, self.path, self.message, self.value, self.fix = code, path, message, value, fix


def check_contract(c: Contract, topo: ResolvedTopology | None) -> list[Finding]:
    out: list[Finding] = []
    eff = c.contract.effective
    if eff and eff.to is not None and eff.to <= eff.from_:
        out.append(Finding("effective_order", ("contract", "effective", "to"),
                           "the end date must be after the start date", str(eff.to),
                           f"use a date after {eff.from_}"))
    for scope, sl in c.service_levels.items():
        base: Path = ("service_levels", scope)
        if sl.credits:
            for i in range(1, len(sl.credits)):
                prev, cur = sl.credits[i - 1], sl.credits[i]
                if cur.below >= prev.below:
                    out.append(Finding("tier_order", base + ("credits", i, "below"),
                                       f"tiers must decrease: each `below` lower than the previous "
                                       f"({format_percent(prev.below)})", format_percent(cur.below),
                                       "list tiers from the highest availability threshold to the lowest"))
                if cur.credit < prev.credit:
                    out.append(Finding("tier_credit_order", base + ("credits", i, "credit"),
                                       f"a lower availability tier cannot pay less credit than the one above "
                                       f"({format_percent(prev.credit)})", format_percent(cur.credit),
                                       "credits grow as availability falls"))
            if sl.target is not None and sl.target < sl.credits[0].below:
                out.append(Finding("target_inconsistent", base + ("target",),
                                   f"target is below the first tier ({format_percent(sl.credits[0].below)}), "
                                   "so a unit meeting its target would still earn credit",
                                   format_percent(sl.target),
                                   f"set target to {format_percent(sl.credits[0].below)} or higher"))
    if c.downtime.measure is not None and c.downtime.degraded == "proportional":
        out.append(Finding("measure_with_proportional", ("downtime", "measure"),
                           "`measure` (clock buckets) cannot be combined with `degraded: proportional`",
                           None, "use degraded: down or ignore, or remove `measure`"))
    out += _check_revisions(c)
    ex = c.exclusions
    if "unplanned" in ex:
        out.append(Finding("exclusion_reserved", ("exclusions", "unplanned"),
                           "`unplanned` is the category that always counts; it cannot be excluded",
                           "unplanned", "remove it"))
    if topo is not None:
        sizes = topo.nodes_per_rack()
        rr = c.downtime.rack
        if rr is not None and sizes and rr.down_when_nodes_down > min(sizes):
            smallest = topo.racks[sizes.index(min(sizes))]
            out.append(Finding("rack_rule_k", ("downtime", "rack", "down_when_nodes_down"),
                               f"k is larger than the smallest rack ({smallest}: {min(sizes)} nodes), "
                               "so that rack could never be down by this rule", rr.down_when_nodes_down,
                               f"use a value from 1 to {min(sizes)}"))
        if c.service_levels.rack is not None and not topo.racks:
            out.append(Finding("scope_without_units", ("service_levels", "rack"),
                               "a rack service level needs racks in the topology"))
    seen: dict[str, int] = {}
    for i, crit in enumerate(c.acceptance.criteria):
        p: Path = ("acceptance", "criteria", i)
        if crit.id in seen:
            out.append(Finding("duplicate_criterion", p + ("id",), f"criterion id repeats entry {seen[crit.id]}",
                               crit.id, "give every criterion a unique id"))
        seen.setdefault(crit.id, i)
        if crit.check not in KNOWN_CHECKS:
            import difflib
            close = difflib.get_close_matches(crit.check, KNOWN_CHECKS, n=1)
            out.append(Finding("unknown_check", p + ("check",), "unknown check name", crit.check,
                               f"did you mean {close[0]!r}?" if close else
                               "one of: " + ", ".join(sorted(KNOWN_CHECKS))))
            continue
        metrics = KNOWN_CHECKS[crit.check][1]
        if crit.check == "custom.command":
            # Its metrics are the ones the criterion defines by regex under params.metrics.
            named = (crit.params or {}).get("metrics")
            metrics = tuple(named) if isinstance(named, dict) else ()
        bounded = any(x is not None for x in (crit.min, crit.max, crit.warn_below, crit.warn_above))
        if crit.metric is not None and crit.metric not in metrics:
            out.append(Finding("unknown_metric", p + ("metric",), f"{crit.check} has no metric {crit.metric!r}",
                               crit.metric, "one of: " + (", ".join(metrics) or "(none: use expect)")))
        if bounded and crit.metric is None and len(metrics) != 1:
            out.append(Finding("metric_missing", p, "a bound (min/max/warn_below) needs a `metric`",
                               None, "add metric: " + (metrics[0] if metrics else "...")))
        if crit.min is not None and crit.max is not None and _num(crit.min) > _num(crit.max):
            out.append(Finding("bounds_order", p + ("min",), "min is larger than max", str(crit.min)))
        if crit.warn_below is not None and crit.min is not None and _num(crit.warn_below) < _num(crit.min):
            out.append(Finding("bounds_order", p + ("warn_below",),
                               "warn_below must be at or above min (it warns before failing)", str(crit.warn_below)))
    out.extend(performance_findings(c))
    return out


def performance_findings(c: Contract) -> list[Finding]:
    """A performance level names a criterion of the contract and a metric it measures."""
    out: list[Finding] = []
    by_id = {crit.id: crit for crit in c.acceptance.criteria}
    seen: set[str] = set()
    for i, level in enumerate(c.performance):
        p: Path = ("performance", i)
        if level.id in seen:
            out.append(Finding("duplicate_performance", p + ("id",), "performance level id repeats", level.id,
                               "give every performance level a unique id"))
        seen.add(level.id)
        crit = by_id.get(level.criterion)
        if crit is None:
            out.append(Finding("unknown_criterion", p + ("criterion",), "no acceptance criterion of that id",
                               level.criterion, "one of: " + (", ".join(by_id) or "(no criteria)")))
            continue
        if (level.metric or crit.metric) is None:
            out.append(Finding("metric_missing", p + ("metric",), "the level needs the metric it judges",
                               None, "add metric: (the criterion names none)"))
    return out


def _num(v) -> float:
    from slaschema.types import threshold_value
    return threshold_value(v) or 0.0


def _check_revisions(c: Contract) -> list[Finding]:
    """Amendment history in order, labels unique, the signature not older than the terms."""
    out: list[Finding] = []
    revs = c.revisions
    seen: dict[str, int] = {}
    for i, r in enumerate(revs):
        if r.revision in seen:
            out.append(Finding("revision_duplicate", ("revisions", i, "revision"),
                               f"revision {r.revision} is already listed (entry {seen[r.revision] + 1})", r.revision,
                               "give every amendment its own label"))
        seen.setdefault(r.revision, i)
        if i and r.date < revs[i - 1].date:
            out.append(Finding("revision_order", ("revisions", i, "date"),
                               f"revisions are listed oldest first; {r.date} is before the previous entry's "
                               f"{revs[i - 1].date}", str(r.date), "list the amendments in the order they were agreed"))
    signed = c.agreement.signed if c.agreement else None
    if signed is not None and revs and revs[-1].date > signed:
        out.append(Finding("signed_before_revision", ("agreement", "signed"),
                           f"the current revision {revs[-1].revision} of {revs[-1].date} is later than the "
                           f"signature date: the amended terms are not signed", str(signed),
                           f"set `signed` to the date the parties signed revision {revs[-1].revision} "
                           "(on or after its date), or remove it while the amendment is a draft"))
    return out
