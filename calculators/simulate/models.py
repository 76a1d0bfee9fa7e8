"""Failure models: how often each cause strikes, where, and how long repair takes.

A model is a list of causes. Each cause has a rate per 1,000 unit-days (unit = GPU, node or
rack; optionally a hazard that changes with fleet age), a repair-time distribution
(log-normal given by its median and 90th percentile), an impact (`down` or `degraded`) and
the source of every number. Built-in models read their rates from package data built by
`scripts/build-failure-data` from the published tables; a model can also be a YAML file
(format in `calculators/simulate/README.md`).

Built-in models
- `llama3` (default): per-GPU interruption rates by root cause from Llama 3's 54-day
  pre-training snapshot on 16,384 H100 (arXiv:2407.21783 sec 3.3.4 Table 5).
- `titan`: GPU hardware failures (double-bit errors, off the bus) with the age-dependent
  hazard measured on ORNL Titan's K20X fleet (Ostrouchov et al., SC'20), new fleet.
- `titan-wearout`: the same hazard for a fleet in its third year (Titan's wear-out phase).
All three add rack-level events for NVL72 architectures.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from slaschema.errors import InputError, Problem
from slaschema.types import Duration

Unit = Literal["gpu", "node", "rack"]
NVL72 = ("gb200-nvl72", "gb300-nvl72")
Z90 = 1.2815515655446004  # standard normal 90th percentile
BUILTIN = ("llama3", "titan", "titan-wearout")
DEFAULT_MODEL = "llama3"


@dataclass(frozen=True)
class Repair:
    """Log-normal repair time from fault start to capacity back."""

    median_s: int
    p90_s: int
    source: str

    @property
    def mu(self) -> float:
        return math.log(self.median_s)

    @property
    def sigma(self) -> float:
        return math.log(self.p90_s / self.median_s) / Z90 if self.p90_s > self.median_s else 0.0

    @property
    def mean_s(self) -> float:
        return math.exp(self.mu + self.sigma ** 2 / 2)


@dataclass(frozen=True)
class HazardStep:
    """Rate per 1,000 unit-days while the fleet's age is in [from_years, to_years)."""

    from_years: float
    to_years: float | None
    rate: float


@dataclass(frozen=True)
class Cause:
    name: str
    unit: Unit
    hazard: tuple[HazardStep, ...]
    repair: Repair
    source: str
    impact: Literal["down", "degraded"] = "down"
    gpus_affected: int | None = None
    category: str = "unplanned"
    notice_s: int | None = None
    architectures: tuple[str, ...] | None = None

    def rate_at(self, age_years: float) -> float:
        for h in self.hazard:
            if h.from_years <= age_years and (h.to_years is None or age_years < h.to_years):
                return h.rate
        return self.hazard[-1].rate if self.hazard else 0.0

    def applies_to(self, architecture: str) -> bool:
        return self.architectures is None or architecture in self.architectures


@dataclass(frozen=True)
class FailureModel:
    name: str
    description: str
    causes: tuple[Cause, ...]
    fleet_age_years: float = 0.0
    notes: tuple[str, ...] = field(default=())
    source: str | None = None             # the YAML file it was read from (None: built in)

    def for_architecture(self, architecture: str) -> tuple[Cause, ...]:
        return tuple(c for c in self.causes if c.applies_to(architecture))

    def rate_per_1000_gpu_days(self, architecture: str, gpus_per_node: float, nodes_per_rack: float,
                               age_years: float | None = None) -> float:
        """Expected incidents per 1,000 GPU-days of this model on a given shape of fleet."""
        age = self.fleet_age_years if age_years is None else age_years
        total = 0.0
        for c in self.for_architecture(architecture):
            r = c.rate_at(age)
            total += {"gpu": r, "node": r / gpus_per_node, "rack": r / (gpus_per_node * nodes_per_rack)}[c.unit]
        return total

    def describe(self) -> dict:
        return {"name": self.name, "description": self.description, "fleet_age_years": self.fleet_age_years,
                "notes": list(self.notes),
                "causes": [{"name": c.name, "unit": c.unit, "impact": c.impact, "category": c.category,
                            "hazard": [{"from_years": h.from_years, "to_years": h.to_years,
                                        "rate_per_1000_unit_days": h.rate} for h in c.hazard],
                            "repair_median_h": round(c.repair.median_s / 3600, 3),
                            "repair_p90_h": round(c.repair.p90_s / 3600, 3),
                            "repair_source": c.repair.source, "source": c.source,
                            "architectures": list(c.architectures) if c.architectures else None}
                           for c in self.causes]}


# --- repair-time assumptions --------------------------------------------------------------
# arXiv:2407.21783 gives rates, not repair times. These distributions are stated assumptions
# (log-normal, median and 90th percentile) with the reasoning written next to them; override
# them with a YAML model when a provider's own repair statistics are known.
H = 3600
REPAIR = {
    "gpu_hw": Repair(6 * H, 48 * H, "assumption: GPU/baseboard or compute-tray swap by on-site staff within a "
                                    "shift (median 6 h); 10% wait for parts/RMA beyond 2 days"),
    "software": Repair(30 * 60, 2 * H, "assumption: node reboot and health check after a software fault or NCCL "
                                       "watchdog (median 30 min, p90 2 h)"),
    "network": Repair(4 * H, 24 * H, "assumption: cable/optic or NIC replacement (median 4 h); switch RMA tail "
                                     "(p90 24 h)"),
    "host_hw": Repair(8 * H, 72 * H, "assumption: host part (PSU, SSD, DIMM, CPU, board) replacement "
                                     "(median 8 h); parts tail p90 3 days"),
    "host_maint": Repair(2 * H, 8 * H, "assumption: unplanned host maintenance (reimage, firmware) median 2 h, "
                                       "p90 8 h"),
    "rack": Repair(30 * H, 96 * H, "SemiAnalysis ClusterMAX 2.0: a fresh GB200 backplane or rack takes 9 hours "
                                   "to several days to provision; log-normal median 30 h, p90 4 days "
                                   "(p10 about 9 h)"),
}

ROOT_CAUSE_CLASS = {
    "Faulty GPU": "gpu_hw", "GPU HBM3 Memory": "gpu_hw", "GPU SRAM Memory": "gpu_hw",
    "GPU System Processor": "gpu_hw", "Silent Data Corruption": "gpu_hw",
    "GPU Thermal Interface + Sensor": "gpu_hw",
    "Software Bug": "software", "NCCL Watchdog Timeouts": "software", "Dependency": "software",
    "Network Switch/Cable": "network", "NIC": "network",
    "Host Maintenance": "host_maint",
    "SSD": "host_hw", "Power Supply": "host_hw", "Server Chassis": "host_hw", "IO Expansion Board": "host_hw",
    "CPU": "host_hw", "System Memory": "host_hw",
}
# A thermal-interface or sensor fault throttles one GPU rather than stopping the node.
DEGRADED_CAUSES = {"GPU Thermal Interface + Sensor": 1}

# Rack-level NVL72 events (NVLink switch tray, backplane/cable cartridge, CDU or power shelf).
RACK_EVENTS_PER_RACK_YEAR = 1.0
RACK_CAUSE = Cause(
    name="NVL72 rack (NVLink switch tray, backplane, cooling or power shelf)", unit="rack",
    hazard=(HazardStep(0.0, None, RACK_EVENTS_PER_RACK_YEAR / 365.0 * 1000),),
    repair=REPAIR["rack"],
    source="assumption: 1 rack-level event per NVL72 rack per year (2.74 per 1,000 rack-days); no published "
           "NVL72 fleet rate; ClusterMAX reports backplane and NVLink tray issues as the common GB200 rack fault",
    architectures=NVL72)


def _data(name: str) -> list[dict[str, str]]:
    text = resources.files("calculators.simulate").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


def slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text.lower()).strip("_").replace("__", "_")


def llama3_causes() -> tuple[Cause, ...]:
    out = []
    for r in _data("llama3_interruptions.csv"):
        rc = r["root_cause"]
        src = (f"{r['source']}: {r['interruptions']} interruptions in {r['days']} days on {r['gpus']} H100 "
               f"= {float(r['rate_per_1000_gpu_days']):.4f} per 1,000 GPU-days")
        out.append(Cause(name=slug(rc), unit="gpu", hazard=(HazardStep(0.0, None, float(r["rate_per_1000_gpu_days"])),),
                         repair=REPAIR[ROOT_CAUSE_CLASS[rc]], source=src,
                         impact="degraded" if rc in DEGRADED_CAUSES else "down",
                         gpus_affected=DEGRADED_CAUSES.get(rc)))
    return tuple(out)


def titan_cause() -> Cause:
    steps = []
    rows = _data("titan_gpu_hazard.csv")
    for i, r in enumerate(rows):
        last = i == len(rows) - 1
        steps.append(HazardStep(float(r["age_from_years"]), None if last else float(r["age_to_years"]),
                                float(r["hazard_per_1000_gpu_days"])))
    src = rows[0]["source"] + "; hazard per 1,000 GPU-days by age year: " + ", ".join(
        f"{r['age_from_years']}-{r['age_to_years']} y: {float(r['hazard_per_1000_gpu_days']):.4f}" for r in rows)
    return Cause(name="gpu_failure_dbe_or_off_the_bus", unit="gpu", hazard=tuple(steps), repair=REPAIR["gpu_hw"],
                 source=src)


def builtin(name: str) -> FailureModel:
    if name == "llama3":
        return FailureModel("llama3", "Per-GPU interruption rates by root cause, Llama 3 pre-training "
                            "(arXiv:2407.21783 Table 5), plus NVL72 rack events",
                            llama3_causes() + (RACK_CAUSE,),
                            notes=("rates: 419 unexpected interruptions in 54 days on 16,384 H100 "
                                   "(0.47 per 1,000 GPU-days)",
                                   "each GPU interruption takes its node down (a training job stops), except "
                                   "thermal-interface faults, which degrade one GPU"))
    if name in ("titan", "titan-wearout"):
        age = 2.0 if name == "titan-wearout" else 0.0
        return FailureModel(name, "GPU hardware failures with the age-dependent hazard of ORNL Titan "
                            f"(K20X, SC'20), fleet age {age:g} years at the start, plus NVL72 rack events",
                            (titan_cause(), RACK_CAUSE), fleet_age_years=age,
                            notes=("Titan measured 2012-era K20X GPUs; its years 2-5 show a wear-out wave "
                                   "(a resistor defect), so `titan-wearout` is a stress case",))
    raise KeyError(name)


# --- YAML models --------------------------------------------------------------------------

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Step(_Strict):
    from_years: float = Field(ge=0)
    to_years: float | None = None
    rate_per_1000_unit_days: float = Field(ge=0)


class _RepairSpec(_Strict):
    median: Duration
    p90: Duration
    source: str

    @model_validator(mode="after")
    def _order(self) -> _RepairSpec:
        if self.median <= timedelta(0) or self.p90 < self.median:
            raise ValueError("repair needs 0 < median <= p90")
        return self


class _CauseSpec(_Strict):
    name: str
    unit: Unit
    rate_per_1000_unit_days: float | None = Field(default=None, ge=0)
    hazard: list[_Step] | None = None
    repair: _RepairSpec
    source: str
    impact: Literal["down", "degraded"] = "down"
    gpus_affected: int | None = Field(default=None, ge=1)
    category: str = "unplanned"
    notice: Duration | None = None
    architectures: list[str] | None = None

    @model_validator(mode="after")
    def _rate(self) -> _CauseSpec:
        if (self.rate_per_1000_unit_days is None) == (self.hazard is None):
            raise ValueError("a cause has exactly one of `rate_per_1000_unit_days` or `hazard`")
        if self.impact == "degraded" and self.gpus_affected is None:
            raise ValueError("a degraded cause needs `gpus_affected`")
        return self


class _ModelSpec(_Strict):
    name: str
    description: str = ""
    fleet_age_years: float = Field(default=0.0, ge=0)
    include_builtin: str | None = Field(default=None, description="start from a built-in model's causes")
    causes: list[_CauseSpec] = Field(default_factory=list)


def from_yaml(path: str | Path) -> FailureModel:
    from slaschema.strict_yaml import read_yaml

    from slaschema.safefiles import check_cli_file

    p = Path(path)
    check_cli_file(p, "failure model")
    if not p.is_file():
        raise InputError([Problem("file_not_found", "no such failure model", file=str(path), fix="check the path")])
    doc = read_yaml(p.read_bytes(), str(path),
                    empty_fix="start from a built-in model: slakit simulate CONTRACT --show-model "
                              "(or examples/failure-model.yaml)")
    try:
        spec = _ModelSpec.model_validate(doc.data)
    except ValidationError as err:
        problems = []
        for e in err.errors(include_url=False):
            loc = tuple(e["loc"])
            line, col = doc.locate(loc)
            problems.append(Problem("failure_model_invalid", e["msg"], file=str(path), line=line, col=col,
                                    path=".".join(str(x) for x in loc) or "(document)"))
        raise InputError(problems) from None
    causes: list[Cause] = []
    if spec.include_builtin:
        if spec.include_builtin not in BUILTIN:
            raise InputError([Problem("failure_model_invalid", f"unknown built-in model {spec.include_builtin!r}",
                                      file=str(path), path="include_builtin", value=spec.include_builtin,
                                      fix=f"use one of {', '.join(BUILTIN)}")])
        causes.extend(builtin(spec.include_builtin).causes)
    for c in spec.causes:
        steps = (tuple(HazardStep(s.from_years, s.to_years, s.rate_per_1000_unit_days) for s in c.hazard)
                 if c.hazard else (HazardStep(0.0, None, float(c.rate_per_1000_unit_days or 0.0)),))
        causes.append(Cause(
            name=c.name, unit=c.unit, hazard=steps,
            repair=Repair(int(c.repair.median.total_seconds()), int(c.repair.p90.total_seconds()), c.repair.source),
            source=c.source, impact=c.impact, gpus_affected=c.gpus_affected, category=c.category,
            notice_s=int(c.notice.total_seconds()) if c.notice is not None else None,
            architectures=tuple(c.architectures) if c.architectures else None))
    if not causes:
        raise InputError([Problem("failure_model_invalid", "the model has no causes", file=str(path),
                                  path="causes", fix="list at least one cause or set include_builtin")])
    return FailureModel(spec.name, spec.description, tuple(causes), spec.fleet_age_years, source=str(path))


def load_model(name_or_file: str | None) -> FailureModel:
    """A built-in model by name, or a YAML model file."""
    name = name_or_file or DEFAULT_MODEL
    if name in BUILTIN:
        return builtin(name)
    if name.endswith((".yaml", ".yml")) or Path(name).exists():
        return from_yaml(name)
    raise InputError([Problem("failure_model_unknown", f"unknown failure model {name!r}", file="--failure-model",
                              value=name,
                              fix=f"use one of {', '.join(BUILTIN)} or a YAML file")])
