"""Monte Carlo over a contract: generated logs -> the real engine -> distributions.

Each run's incidents become an `IncidentLog` (`IncidentLog.from_records`, epoch-second fast
path) and go through `calculators.engine.compute`, the same code that computes real
credits, so every rule of the contract (exclusions, min_outage, rack and cluster rules,
degraded handling, tiers, pro rata, stacking, cap, minimum) applies exactly as it would to
a real log. The chronic-failure trigger is the engine's own, evaluated at the end of every
month of the horizon (a termination right that arises in month 7 of 12 counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

from calculators.periods import Period, parse_month, shift_label
from calculators.simulate.generate import SimLogs, generate, lost_gpu_hours
from calculators.simulate.models import FailureModel
from slaschema.loader import LoadedContract
from slaschema.models import SCOPES

CENT = Decimal("0.01")
FORMAT = "slakit-simulate/1"            # the first field of `simulate --format json` (the summary's document)


@dataclass(frozen=True)
class RunFigures:
    """Per-run arrays (one entry per run) — what every statistic and chart is made from."""

    credits_cents: np.ndarray                 # total credit over the horizon
    credits_month_cents: np.ndarray           # [run, month]
    fee_cents: int                            # total fee over the horizon
    availability: dict[str, np.ndarray]       # scope -> mean availability % over unit-months
    worst_availability: dict[str, np.ndarray] # scope -> lowest unit-month availability %
    below_target: dict[str, np.ndarray]       # scope -> share of unit-months below target
    chronic: dict[str, np.ndarray]            # scope -> bool, a chronic trigger fired
    incidents: np.ndarray                     # incidents per run
    lost_gpu_hours: np.ndarray


@dataclass(frozen=True)
class SimResult:
    contract: str
    file: str
    currency: str
    model: FailureModel
    seed: int
    runs: int
    periods: tuple[Period, ...]
    gpus: int
    price_per_gpu_hour: Decimal
    figures: RunFigures

    @property
    def gpu_days(self) -> float:
        return self.gpus * (self.periods[-1].end - self.periods[0].start) / 86400

    def summary(self) -> SimSummary:
        """The distributions over the runs as a typed record (what the table and the JSON show)."""
        f = self.figures
        price = float(self.price_per_gpu_hour)
        value_lost = f.lost_gpu_hours * price
        credits = f.credits_cents / 100.0
        ratio_of_means = float(credits.mean() / value_lost.mean()) if value_lost.mean() > 0 else None
        per_run = np.divide(credits, value_lost, out=np.zeros_like(credits), where=value_lost > 0)
        chronic_any = np.zeros(self.runs, dtype=bool)
        for v in f.chronic.values():
            chronic_any |= v
        return SimSummary(
            contract=self.contract, file=self.file, currency=self.currency, model_name=self.model.name,
            model_description=self.model.description, seed=self.seed, runs=self.runs, months=len(self.periods),
            first_period=self.periods[0].label, last_period=self.periods[-1].label, gpus=self.gpus,
            incidents_mean_per_run=round(float(f.incidents.mean()), 3),
            incidents_per_1000_gpu_days=round(float(f.incidents.mean()) / self.gpu_days * 1000, 4),
            fee_total=_money(f.fee_cents / 100.0),
            credits=CreditSpread(
                mean=_money(credits.mean()), p50=_money(np.percentile(credits, 50)),
                p95=_money(np.percentile(credits, 95)), max=_money(credits.max()),
                mean_pct_of_fee=round(float(credits.mean() / (f.fee_cents / 100.0) * 100), 4) if f.fee_cents else 0.0,
                probability_any=round(float((f.credits_cents > 0).mean()), 4),
                mean_per_month=tuple(_money(x) for x in (f.credits_month_cents.mean(axis=0) / 100.0))),
            availability={s: ScopeAvailability(
                mean=_pct(a.mean()), p5=_pct(np.percentile(a, 5)), p50=_pct(np.percentile(a, 50)),
                p95=_pct(np.percentile(a, 95)), worst_unit_month_p50=_pct(np.percentile(f.worst_availability[s], 50)),
                unit_months_below_target_pct=round(float(f.below_target[s].mean() * 100), 4))
                for s, a in f.availability.items()},
            chronic={s: round(float(v.mean()), 4) for s, v in f.chronic.items()},
            chronic_any=round(float(chronic_any.mean()), 4),
            acceptance="not modelled (the failure model has no handover delays)",
            lost_gpu_hours_mean=round(float(f.lost_gpu_hours.mean()), 2),
            lost_gpu_hours_p50=round(float(np.percentile(f.lost_gpu_hours, 50)), 2),
            lost_gpu_hours_p95=round(float(np.percentile(f.lost_gpu_hours, 95)), 2),
            price_per_gpu_hour=self.price_per_gpu_hour, value_lost_mean=_money(value_lost.mean()),
            value_returned_ratio_of_means=None if ratio_of_means is None else round(ratio_of_means, 4),
            value_returned_p50=round(float(np.percentile(per_run, 50)), 4),
            value_returned_p95=round(float(np.percentile(per_run, 95)), 4))

    def to_json(self) -> dict[str, Any]:
        return self.summary().to_json()


@dataclass(frozen=True, kw_only=True)
class CreditSpread:
    """Credits over the horizon, distribution over runs (money in the contract's currency)."""

    mean: Decimal
    p50: Decimal
    p95: Decimal
    max: Decimal
    mean_pct_of_fee: float
    probability_any: float
    mean_per_month: tuple[Decimal, ...]


@dataclass(frozen=True, kw_only=True)
class ScopeAvailability:
    """A scope's availability (mean over unit-months; percent, truncated to four decimals) over runs."""

    mean: Decimal
    p5: Decimal
    p50: Decimal
    p95: Decimal
    worst_unit_month_p50: Decimal
    unit_months_below_target_pct: float


@dataclass(frozen=True, kw_only=True)
class SimSummary:
    """What `slakit simulate` reports: `SimResult.summary()`; `to_json()` is its document."""

    contract: str
    file: str
    currency: str
    model_name: str
    model_description: str
    seed: int
    runs: int
    months: int
    first_period: str
    last_period: str
    gpus: int
    incidents_mean_per_run: float
    incidents_per_1000_gpu_days: float
    fee_total: Decimal
    credits: CreditSpread
    availability: dict[str, ScopeAvailability]
    chronic: dict[str, float]               # scope -> share of runs with a chronic-failure exit
    chronic_any: float
    acceptance: str
    lost_gpu_hours_mean: float
    lost_gpu_hours_p50: float
    lost_gpu_hours_p95: float
    price_per_gpu_hour: Decimal
    value_lost_mean: Decimal
    value_returned_ratio_of_means: float | None
    value_returned_p50: float
    value_returned_p95: float

    def to_json(self) -> dict[str, Any]:
        c = self.credits
        return {
            "contract": self.contract,
            "file": self.file,
            "currency": self.currency,
            "model": {"name": self.model_name, "description": self.model_description},
            "seed": self.seed,
            "runs": self.runs,
            "months": self.months,
            "periods": [self.first_period, self.last_period],
            "gpus": self.gpus,
            "incidents": {"mean_per_run": self.incidents_mean_per_run,
                          "per_1000_gpu_days": self.incidents_per_1000_gpu_days},
            "fee_total": str(self.fee_total),
            "credits": {"mean": str(c.mean), "p50": str(c.p50), "p95": str(c.p95), "max": str(c.max),
                        "mean_pct_of_fee": c.mean_pct_of_fee, "probability_any": c.probability_any,
                        "mean_per_month": [str(x) for x in c.mean_per_month]},
            "availability": {s: {"mean": str(a.mean), "p5": str(a.p5), "p50": str(a.p50), "p95": str(a.p95),
                                 "worst_unit_month_p50": str(a.worst_unit_month_p50),
                                 "unit_months_below_target_pct": a.unit_months_below_target_pct}
                             for s, a in self.availability.items()},
            "termination": {"chronic": dict(self.chronic), "chronic_any": self.chronic_any,
                            "acceptance": self.acceptance},
            "lost_gpu_hours": {"mean": self.lost_gpu_hours_mean, "p50": self.lost_gpu_hours_p50,
                               "p95": self.lost_gpu_hours_p95},
            "value_lost": {"price_per_gpu_hour": str(self.price_per_gpu_hour), "mean": str(self.value_lost_mean)},
            "value_returned": {"ratio_of_means": self.value_returned_ratio_of_means, "p50": self.value_returned_p50,
                               "p95": self.value_returned_p95},
        }


def _money(x: float) -> Decimal:
    return Decimal(repr(float(x))).quantize(CENT, ROUND_HALF_UP)


def _pct(x: float) -> Decimal:
    """An availability in percent, truncated to four decimals (spec 8.8), never rounded up."""
    return Decimal(repr(float(x))).quantize(Decimal("0.0001"), ROUND_DOWN)


def horizon(lc: LoadedContract, months: int, start: str | None = None) -> list[Period]:
    """`months` calendar months from `start` (YYYY-MM) or the contract's effective date."""
    zone = lc.model.contract.timezone
    if start is not None:
        y, m = (int(x) for x in start.split("-"))
    elif lc.model.contract.effective is not None:
        y, m = lc.model.contract.effective.from_.year, lc.model.contract.effective.from_.month
    else:
        raise ValueError("the contract has no effective date; name the first month with --start YYYY-MM")
    first = f"{y:04d}-{m:02d}"
    return [parse_month(shift_label(first, k), zone) for k in range(months)]


def run_records(logs: SimLogs, topo, r: int, lo: int, hi: int) -> list[dict[str, Any]]:
    """The incidents of run `r` (rows lo:hi of the run-sorted logs) as log records."""
    out = []
    names = (topo.nodes, topo.racks)
    for i in range(lo, hi):
        c = logs.causes[int(logs.cause[i])]
        scope = int(logs.scope[i])
        rec: dict[str, Any] = {"id": f"sim-{r}-{i - lo}", "scope": ("node", "rack")[scope],
                               "target": names[scope][int(logs.unit[i])], "start": int(logs.start[i]),
                               "end": int(logs.end[i]), "impact": c.impact, "category": c.category,
                               "cause": c.name}
        if c.gpus_affected is not None:
            rec["gpus_affected"] = c.gpus_affected
        if c.notice_s is not None:
            rec["notice_at"] = int(logs.start[i]) - c.notice_s
        out.append(rec)
    return out


def _evaluate(lc: LoadedContract, logs: SimLogs, periods: list[Period], on_run=None) -> RunFigures:
    from calculators.engine import Tree, _chronic, compute
    from calculators.incidents import IncidentLog

    topo = lc.topology
    tree = Tree(topo)
    runs = logs.runs
    n_months = len(periods)
    credits_month = np.zeros((runs, n_months), dtype=np.int64)
    avail: dict[str, np.ndarray] = {}
    worst: dict[str, np.ndarray] = {}
    below: dict[str, np.ndarray] = {}
    chronic: dict[str, np.ndarray] = {}
    fee_cents = 0
    bounds = np.searchsorted(logs.run, np.arange(runs + 1))
    proportional = lc.model.downtime.degraded == "proportional"
    for r in range(runs):
        recs = run_records(logs, topo, r, int(bounds[r]), int(bounds[r + 1]))
        log = IncidentLog.from_records(recs, topo, gpus_required=proportional)
        res = compute(lc, log, periods, support=False)
        for k, p in enumerate(res.periods):
            credits_month[r, k] = p.credit_total_cents
        if r == 0:
            fee_cents = sum(p.fee_total_cents for p in res.periods)
        for scope in SCOPES:
            months = [p.scopes[scope] for p in res.periods if scope in p.scopes]
            if not months:
                continue
            if scope not in avail:
                avail[scope] = np.zeros(runs)
                worst[scope] = np.zeros(runs)
                below[scope] = np.zeros(runs)
                chronic[scope] = np.zeros(runs, dtype=bool)
            a = np.concatenate([sm.avail_e4.astype(np.float64) for sm in months]) / 1e4
            avail[scope][r] = a.mean()
            worst[scope][r] = a.min()
            below[scope][r] = 1.0 - np.concatenate([np.asarray(sm.met, dtype=bool) for sm in months]).mean()
        if lc.model.termination.chronic is not None:
            fired: set[str] = set()
            for k in range(1, n_months + 1):
                t = _chronic(lc, list(res.periods[:k]), tree)
                fired.update(x.scope for x in t.triggered)
            for scope in fired:
                chronic[scope][r] = True
        if on_run is not None:
            on_run()
    return RunFigures(credits_month.sum(axis=1), credits_month, fee_cents, avail, worst, below, chronic,
                      logs.counts_per_run(), lost_gpu_hours(logs, topo))


def simulate(lc: LoadedContract, model: FailureModel, *, months: int = 12, runs: int = 1000, seed: int = 0,
             start: str | None = None, on_run=None) -> SimResult:
    """Run the Monte Carlo; deterministic for a given contract, model, horizon and seed.
    `on_run()` is called after each run (progress)."""
    from slaschema.compare.terms import price_per_gpu_hour

    if runs < 1 or months < 1:
        raise ValueError("runs and months must be at least 1")
    periods = horizon(lc, months, start)
    rng = np.random.default_rng(seed)
    logs = generate(lc.topology, model, periods[0].start, periods[-1].end, runs, rng)
    figures = _evaluate(lc, logs, periods, on_run)
    return SimResult(lc.id, lc.file, lc.model.contract.currency, model, seed, runs, tuple(periods),
                     lc.topology.gpu_count, price_per_gpu_hour(lc), figures)
