"""Pydantic v2 models for the whole contract format (v1).

Field names follow `contract-format.md` exactly; every model forbids unknown keys so a
typo such as `min_outgae` is an error with a suggestion, not a silently ignored line.
Checks that need more than one field live in `slaschema.semantics`.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from slaschema.types import Duration, Money, Percent, Threshold, TimeZoneName

Scope = Literal["node", "rack", "cluster", "site"]
SCOPES: tuple[str, ...] = ("node", "rack", "cluster", "site")
Architecture = Literal["hgx-8gpu", "gb200-nvl72", "gb300-nvl72", "mi355x-8gpu", "custom"]
DEFAULT_GPUS_PER_NODE = {"hgx-8gpu": 8, "gb200-nvl72": 4, "gb300-nvl72": 4, "mi355x-8gpu": 8}
BUILTIN_EXCLUSIONS = ("maintenance", "security_patch", "customer_caused", "force_majeure")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _check_id(value: str) -> str:
    if not _ID.match(value):
        raise PydanticCustomError(
            "id_invalid", "ids use letters, digits, '.', '_' and '-' and start with a letter or digit"
        )
    return value


# --- contract -------------------------------------------------------------------------

class Effective(Strict):
    from_: date = Field(alias="from", description="First day the terms apply")
    to: date | None = Field(default=None, description="Last day the terms apply (inclusive)")


class ContractInfo(Strict):
    id: str = Field(description="Stable identifier, used in reports and file names")
    title: str | None = None
    provider: str
    customer: str
    effective: Effective | None = None
    timezone: TimeZoneName = Field(description="IANA zone; measurement months are calendar months here")
    currency: str = Field(description="ISO 4217 code, e.g. USD")
    tier: Literal["bronze", "silver", "gold", "platinum", "custom"] | None = None

    _v_id = field_validator("id")(classmethod(lambda cls, v: _check_id(v)))

    @field_validator("currency")
    @classmethod
    def _currency(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Z]{3}", v):
            raise PydanticCustomError("currency_invalid", "currency is a 3-letter ISO 4217 code such as USD")
        return v

    @field_validator("provider", "customer")
    @classmethod
    def _nonempty(cls, v: str) -> str:
        if not v.strip():
            raise PydanticCustomError("empty_value", "must not be empty")
        return v


# --- topology --------------------------------------------------------------------------

class Rack(Strict):
    id: str
    nodes: str | list[str] = Field(description="Slurm hostlist expression, or a list of names/expressions")
    gpus_per_node: int | None = Field(default=None, ge=1, le=64)

    _v_id = field_validator("id")(classmethod(lambda cls, v: _check_id(v)))


class Cluster(Strict):
    id: str
    racks: list[Rack] = Field(min_length=1)
    _v_id = field_validator("id")(classmethod(lambda cls, v: _check_id(v)))


class Site(Strict):
    id: str
    clusters: list[Cluster] = Field(min_length=1)
    _v_id = field_validator("id")(classmethod(lambda cls, v: _check_id(v)))


class Topology(Strict):
    architecture: Architecture
    gpu_model: str | None = None
    gpus_per_node: int | None = Field(default=None, ge=1, le=64,
                                      description="Default for every node; architecture default otherwise")
    sites: list[Site] | None = Field(default=None, min_length=1)
    inventory: str | None = Field(default=None, description="CSV with columns node,rack,cluster,site[,gpus]")

    @model_validator(mode="after")
    def _one_source(self) -> Topology:
        if (self.sites is None) == (self.inventory is None):
            raise PydanticCustomError(
                "topology_source", "topology needs exactly one of `sites:` or `inventory:`"
            )
        if self.architecture == "custom" and self.gpus_per_node is None:
            raise PydanticCustomError(
                "gpus_per_node_missing", "architecture `custom` needs `gpus_per_node`"
            )
        return self

    @property
    def default_gpus(self) -> int:
        return self.gpus_per_node or DEFAULT_GPUS_PER_NODE.get(self.architecture, 8)


# --- pricing and downtime --------------------------------------------------------------

class Pricing(Strict):
    per_gpu_hour: Money | None = None
    per_node_month: Money | None = None

    @model_validator(mode="after")
    def _one_basis(self) -> Pricing:
        if (self.per_gpu_hour is None) == (self.per_node_month is None):
            raise PydanticCustomError(
                "pricing_basis", "pricing needs exactly one of `per_gpu_hour` or `per_node_month`"
            )
        return self

    def fee(self, *, gpus: int, nodes: int, hours: Decimal | int) -> Decimal:
        """The fee of `nodes` nodes holding `gpus` GPUs for a month of `hours`: GPUs x
        per_gpu_hour x hours, or nodes x per_node_month (whatever the month's length). The
        one place the pricing basis is decided; `calculators.credits.fee_fraction` is the
        same rule as exact fractions over arrays of units."""
        if self.per_gpu_hour is not None:
            return self.per_gpu_hour * gpus * hours
        assert self.per_node_month is not None
        return self.per_node_month * nodes


class RackRule(Strict):
    down_when_nodes_down: int = Field(ge=1, description="Rack is down while at least this many nodes are down")
    nodes_follow_rack: bool = False


class ClusterRule(Strict):
    down_when_available_below: Percent
    nodes_follow_cluster: bool = False


class Downtime(Strict):
    min_outage: Duration = timedelta(0)
    degraded: Literal["ignore", "down", "proportional"] = "ignore"
    rack: RackRule | None = None
    cluster: ClusterRule | None = None


class Exclusion(Strict):
    notice: Duration | None = Field(default=None, description="Notice needed before the start")
    max_per_month: Duration | None = Field(default=None, description="Cap per (scope, target) and month")
    definition: str | None = Field(default=None, description="What the category covers, in words")


# --- service levels and credits --------------------------------------------------------

class Tier(Strict):
    below: Percent
    credit: Percent


class ProRata(Strict):
    multiplier: Decimal = Field(gt=0)


class ServiceLevel(Strict):
    target: Percent | None = None
    credits: list[Tier] | None = Field(default=None, min_length=1)
    pro_rata: ProRata | None = None

    @model_validator(mode="after")
    def _basis(self) -> ServiceLevel:
        if (self.credits is None) == (self.pro_rata is None):
            raise PydanticCustomError(
                "credit_basis", "a scope has exactly one of `credits` (tiers) or `pro_rata`"
            )
        if self.pro_rata is not None and self.target is None:
            raise PydanticCustomError("target_missing", "a `pro_rata` scope needs a `target`")
        return self

    @property
    def effective_target(self) -> Decimal:
        if self.target is not None:
            return self.target
        assert self.credits is not None
        return self.credits[0].below


class ServiceLevels(Strict):
    node: ServiceLevel | None = None
    rack: ServiceLevel | None = None
    cluster: ServiceLevel | None = None
    site: ServiceLevel | None = None

    def items(self) -> list[tuple[str, ServiceLevel]]:
        return [(s, getattr(self, s)) for s in SCOPES if getattr(self, s) is not None]


class CreditPolicy(Strict):
    stacking: Literal["max", "sum"] = "max"
    cap: Percent | None = Field(default=None, description="Share of the month's total fee")
    minimum: Money = Decimal(0)
    claim_window: Duration | None = None
    form: Literal["future_invoice", "same_invoice", "refund"] = "future_invoice"


# --- support -------------------------------------------------------------------------

class ResponseTargets(Strict):
    sev1: Duration | None = None
    sev2: Duration | None = None
    sev3: Duration | None = None
    sev4: Duration | None = None


class RestoreTargets(Strict):
    node: Duration | None = None
    rack: Duration | None = None
    cluster: Duration | None = None
    site: Duration | None = None


class HotSpares(Strict):
    nodes: int = Field(ge=0, description="Spare nodes kept ready for swaps")
    swap_within: Duration | None = None


class Support(Strict):
    detection: Duration | None = Field(default=None, description="Fault start -> detected_at")
    response: ResponseTargets | None = None
    restore: RestoreTargets | None = None
    hot_spares: HotSpares | None = None
    log_export: bool = Field(default=False, description="Customer may export logs and telemetry")
    customer_monitoring: bool = Field(default=False, description="Customer may run its own availability monitor")


# --- acceptance ----------------------------------------------------------------------

class Remedies(Strict):
    credit_per_day_late: Percent | None = None
    termination_right_after: Duration | None = None


class BurnIn(Strict):
    duration: Duration
    max_xid_events: int = Field(default=0, ge=0)
    max_throttle_pct: Percent | None = None


class Criterion(Strict):
    id: str
    check: str
    metric: str | None = None
    min: Threshold | None = None
    max: Threshold | None = None
    warn_below: Threshold | None = None
    warn_above: Threshold | None = None
    expect: dict[str, Any] | None = None
    params: dict[str, Any] | None = None
    severity: Literal["critical", "major", "minor"] = "major"
    source: str | None = Field(default=None, description="Where the threshold comes from")
    description: str | None = None

    _v_id = field_validator("id")(classmethod(lambda cls, v: _check_id(v)))

    @field_validator("expect", "params", mode="before")
    @classmethod
    def _plain(cls, v: Any) -> Any:
        return _plain_values(v)


def _plain_values(v: Any) -> Any:
    """Decimals from the YAML reader become int/float inside free-form maps."""
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, dict):
        return {k: _plain_values(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain_values(x) for x in v]
    return v


class Acceptance(Strict):
    deadline: date | None = None
    remedies: Remedies | None = None
    burn_in: BurnIn | None = None
    criteria: list[Criterion] = Field(default_factory=list)


# --- review, termination, access -------------------------------------------------------

class Review(Strict):
    cadence: Literal["monthly", "quarterly"] = "monthly"


class Chronic(Strict):
    months_below_target: int = Field(ge=1)
    within_months: int = Field(ge=1)

    @model_validator(mode="after")
    def _order(self) -> Chronic:
        if self.within_months < self.months_below_target:
            raise PydanticCustomError(
                "chronic_window", "`within_months` must be at least `months_below_target`"
            )
        return self


class Termination(Strict):
    chronic: Chronic | None = None
    notice: Duration | None = None
    exit_assistance: Duration | None = None


class Access(Strict):
    provider_staff_keys: list[str] = Field(default_factory=list)
    customer_keys: list[str] = Field(default_factory=list)
    allowed_ports: list[int] = Field(default_factory=list)
    bmc_address: str | None = None


# --- lint settings ---------------------------------------------------------------------

class LintDisable(Strict):
    rule: str = Field(description="Lint rule id, e.g. SLA012")
    reason: str | None = Field(default=None, description="Why the rule does not apply (required by `slakit lint`)")


class LintSettings(Strict):
    disable: list[LintDisable] = Field(default_factory=list, description="Rules switched off for this file")


# --- the contract ------------------------------------------------------------------------

class Contract(Strict):
    slakit: Literal[1] = Field(description="Format version")
    contract: ContractInfo
    topology: Topology
    pricing: Pricing
    downtime: Downtime = Downtime()
    exclusions: dict[str, Exclusion] = Field(default_factory=dict)
    service_levels: ServiceLevels
    credits: CreditPolicy = CreditPolicy()
    support: Support = Support()
    acceptance: Acceptance = Acceptance()
    review: Review = Review()
    termination: Termination = Termination()
    access: Access | None = None
    lint: LintSettings | None = Field(default=None, description="`slakit lint` settings for this file")

    @field_validator("exclusions", mode="before")
    @classmethod
    def _empty_exclusions(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: ({} if x is None else x) for k, x in v.items()}
        return v

    def dump(self) -> dict[str, Any]:
        """Plain data (strings for durations, percentages and money), ready for YAML."""
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)
