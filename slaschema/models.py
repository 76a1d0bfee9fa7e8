"""Pydantic v2 models for the whole contract format (v1).

Field names follow `contract-format.md` exactly; every model forbids unknown keys so a
typo such as `min_outgae` is an error with a suggestion, not a silently ignored line.
Checks that need more than one field live in `slaschema.semantics`.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from datetime import date as _Date
from decimal import Decimal
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator
from pydantic_core import PydanticCustomError

from slaschema.types import DateOrInstant, Duration, Money, Percent, Threshold, TimeZoneName

Scope = Literal["node", "rack", "cluster", "site"]
SCOPES: tuple[str, ...] = get_args(Scope)          # smallest first
Architecture = Literal["hgx-8gpu", "gb200-nvl72", "gb300-nvl72", "mi355x-8gpu", "custom"]
DEFAULT_GPUS_PER_NODE = {"hgx-8gpu": 8, "gb200-nvl72": 4, "gb300-nvl72": 4, "mi355x-8gpu": 8}
BUILTIN_EXCLUSIONS = ("maintenance", "security_patch", "customer_caused", "force_majeure")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_LANG = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-[A-Za-z0-9]{5,8})*")


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
    language: str | None = Field(default=None, description="BCP 47 tag of the language the names and texts are "
                                                            "written in, e.g. zh-CN, ja, pl, cs, de, ru")

    _v_id = field_validator("id")(classmethod(lambda cls, v: _check_id(v)))

    @field_validator("language")
    @classmethod
    def _language(cls, v: str | None) -> str | None:
        if v is not None and not _LANG.fullmatch(v):
            raise PydanticCustomError("language_invalid",
                                      "language is a BCP 47 tag such as en, de, pl, zh-CN or pt-BR")
        return v

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

class ServiceWindow(Strict):
    """Revision 1.1: when a rack or node is in service, `[from, to)`; a date is midnight in the
    contract's zone; no `from`: since always, no `to`: for good."""

    from_: DateOrInstant | None = Field(default=None, alias="from",
                                        description="First instant in service (a date: local midnight)")
    to: DateOrInstant | None = Field(default=None,
                                     description="First instant no longer in service (a date: local midnight; "
                                                 "that day is not included)")

    @model_validator(mode="after")
    def _some(self) -> ServiceWindow:
        if self.from_ is None and self.to is None:
            raise PydanticCustomError("service_window_empty", "`in_service` needs `from`, `to` or both")
        return self


class NodeEntry(Strict):
    """Revision 1.1: a node listed with its own service window (`name` may be a hostlist)."""

    name: str = Field(description="Node name or Slurm hostlist expression")
    in_service: ServiceWindow | None = None


def _kind(v: Any) -> str:
    """The union member a value (input or model) belongs to, by its shape."""
    if isinstance(v, (dict, BaseModel)):
        return "dict"
    return "list" if isinstance(v, (list, tuple)) else "str"


# one error per wrong entry (not one per union member): the shape of the value picks the member
NodeItem = Annotated[Union[Annotated[str, Tag("str")], Annotated[NodeEntry, Tag("dict")]], Discriminator(_kind)]
NodeList = Annotated[Union[Annotated[str, Tag("str")], Annotated[list[NodeItem], Tag("list")]],
                     Discriminator(_kind)]


class Rack(Strict):
    id: str
    nodes: NodeList = Field(
        description="Slurm hostlist expression, or a list of names/expressions or {name, in_service} entries")
    gpus_per_node: int | None = Field(default=None, ge=1, le=64)
    in_service: ServiceWindow | None = Field(default=None, description="Revision 1.1: applies to every node "
                                                                       "of the rack without one of its own")

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

    def fee_terms(self, *, gpus, nodes, month_seconds):
        """The node fee rule, the one place the pricing basis is decided: `(count, rate, per)`
        such that `count` units in service for `seconds` of a month of `month_seconds` cost
        `count x rate x seconds / per`:

        - per GPU-hour: `count` = gpus, `rate` = per_gpu_hour, `per` = 3600 (seconds in an hour);
        - per node-month: `count` = nodes, `rate` = per_node_month, `per` = month_seconds (a node
          in service the whole month costs the month's rate, whatever the month's length).

        `gpus` and `nodes` may be ints or numpy arrays (one entry per unit), `month_seconds` a
        number; nothing is computed here, so each caller keeps its own exact arithmetic: `fee`
        in Decimal, `calculators.credits.fee_fraction` as integer fractions over arrays of units."""
        if self.per_gpu_hour is not None:
            return gpus, self.per_gpu_hour, 3600
        assert self.per_node_month is not None
        return nodes, self.per_node_month, month_seconds

    def fee(self, *, gpus: int, nodes: int, hours: Decimal | int) -> Decimal:
        """The fee of `nodes` nodes holding `gpus` GPUs for a whole month of `hours` (> 0):
        GPUs x per_gpu_hour x hours, or nodes x per_node_month (the rule of `fee_terms`)."""
        seconds = hours * 3600
        count, rate, per = self.fee_terms(gpus=gpus, nodes=nodes, month_seconds=seconds)
        return rate * count * (Decimal(seconds) / per)      # seconds / per: the hours, or 1


class RackRule(Strict):
    down_when_nodes_down: int = Field(ge=1, description="Rack is down while at least this many nodes are down")
    nodes_follow_rack: bool = False


class ClusterRule(Strict):
    down_when_available_below: Percent
    nodes_follow_cluster: bool = False


BUCKETS = (60, 300, 600, 900, 1800, 3600)          # revision 1.1: allowed clock buckets, seconds


def _check_bucket(v: timedelta) -> timedelta:
    s = int(v.total_seconds())
    if s <= 0 or 86400 % s != 0:
        raise PydanticCustomError("bucket_not_dividing_day",
                                  "a clock bucket must divide a day so buckets line up with local midnight; "
                                  "use 1m, 5m, 10m, 15m, 30m or 1h")
    if s not in BUCKETS:
        raise PydanticCustomError("bucket_unsupported", "use one of 1m, 5m, 10m, 15m, 30m or 1h")
    return v


class Measure(Strict):
    """Revision 1.1: downtime measured in clock buckets (sla-semantics 8.3)."""

    bucket: Duration = Field(description="1m | 5m | 10m | 15m | 30m | 1h, from local midnight")
    counts_when: Literal["full", "any"] = Field(description="full: a bucket counts when down for all of it; "
                                                           "any: when down for any of it")

    _v_bucket = field_validator("bucket")(classmethod(lambda cls, v: _check_bucket(v)))


class Downtime(Strict):
    min_outage: Duration = timedelta(0)
    degraded: Literal["ignore", "down", "proportional"] = "ignore"
    rack: RackRule | None = None
    cluster: ClusterRule | None = None
    counts_from: Literal["fault", "report"] = Field(
        default="fault", description="Revision 1.1: report = an incident's clock starts at its reported_at")
    measure: Measure | None = Field(default=None, description="Revision 1.1: downtime counted in clock buckets; "
                                                              "not with degraded: proportional")


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
    only_below_target: bool = Field(default=False, description="Revision 1.1: no pro-rata credit for a unit "
                                                               "whose availability is not below its target")


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


class MinimumMoreThan(Strict):
    """Revision 1.1: a month's credit is issued only if it is greater than this amount."""

    more_than: Money


class NotCharged(Strict):
    """Revision 1.1: clock buckets in which a node is down longer than `when_down_over` are not billed."""

    per: Duration = Field(description="1m | 5m | 10m | 15m | 30m | 1h, from local midnight")
    when_down_over: Duration = Field(description="Not charged when the node's downtime in the bucket is "
                                                 "strictly greater than this")

    _v_per = field_validator("per")(classmethod(lambda cls, v: _check_bucket(v)))

    @model_validator(mode="after")
    def _threshold(self) -> NotCharged:
        if self.when_down_over >= self.per:
            raise PydanticCustomError(
                "not_charged_threshold",
                "`when_down_over` must be shorter than `per`: downtime in a bucket can never exceed the bucket")
        return self


class ClaimMonthsAfter(Strict):
    """`claim_window: {months_after: N}`: due at the end of the N-th calendar month after the
    measured month (local midnight in the contract's zone)."""
    months_after: int = Field(ge=1, le=120, description="Calendar months after the measured month; the claim is due at the "
                                          "end of the last of them")

    @field_validator("months_after", mode="before")
    @classmethod
    def _whole(cls, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 120:
            raise PydanticCustomError(
                "claim_months_invalid",
                "months_after is a whole number of calendar months from 1 to 120, e.g. {months_after: 2}")
        return v


def _claim_window_kind(v: Any) -> str:
    return "dict" if isinstance(v, (dict, ClaimMonthsAfter)) else "str"


# a duration from the end of the month, or a number of calendar months after it; the union
# tags are names the loader already drops from error locations
ClaimWindow = Annotated[
    Union[Annotated[ClaimMonthsAfter, Tag("dict")], Annotated[Duration, Tag("str")]],
    Discriminator(_claim_window_kind),
]


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def claim_window_min_seconds(cw: ClaimMonthsAfter | timedelta | None) -> int | None:
    """The shortest time from a month's end to its claim deadline: the duration itself, or for
    `{months_after: N}` the N shortest consecutive calendar months (February of a common year
    included), e.g. 59 days for N = 2. For lint and comparison only; deadlines come from
    `calculators.claims`."""
    if cw is None:
        return None
    if isinstance(cw, timedelta):
        return int(cw.total_seconds())
    n = cw.months_after
    days = min(sum(_MONTH_DAYS[(start + k) % 12] for k in range(n)) for start in range(12))
    return days * 86400


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def describe_claim_window(cw: ClaimMonthsAfter | timedelta) -> str:
    """`30d after the end of the month` / `by the end of the 2nd calendar month after the month`."""
    if isinstance(cw, timedelta):
        from slaschema.types import human_duration

        return f"{human_duration(cw)} after the end of the month"
    if cw.months_after == 1:
        return "by the end of the calendar month after the month"
    return f"by the end of the {_ordinal(cw.months_after)} calendar month after the month"


class ClaimInstructions(Strict):
    """How a claim is filed: where it goes and the evidence the provider asks for."""
    send_to: str = Field(description="Address claims are sent to (e-mail, portal URL or postal address)")
    evidence: list[str] = Field(default_factory=list, description="Evidence the provider requires with a claim")

    @field_validator("send_to")
    @classmethod
    def _send_to(cls, v: str) -> str:
        if not v.strip():
            raise PydanticCustomError("empty_value", "must not be empty: name where claims are sent")
        return v

    @field_validator("evidence")
    @classmethod
    def _evidence(cls, v: list[str]) -> list[str]:
        seen: set[str] = set()
        for item in v:
            if not item.strip():
                raise PydanticCustomError("empty_value", "an evidence item must not be empty")
            if item.strip().lower() in seen:
                raise PydanticCustomError("claim_evidence_duplicate", "evidence item '{item}' is listed twice",
                                          {"item": item})
            seen.add(item.strip().lower())
        return v


class CreditPolicy(Strict):
    stacking: Literal["max", "sum"] = "max"
    cap: Percent | None = Field(default=None, description="Share of the month's total fee")
    minimum: Annotated[Union[Annotated[MinimumMoreThan, Tag("dict")], Annotated[Money, Tag("str")]],
                       Discriminator(_kind)] = Field(default=Decimal(0), description=(
        "A month's credit below this amount is not issued; {more_than: X} (revision 1.1): issued only above X"))
    claim_window: ClaimWindow | None = Field(default=None, description="Claims are due this long after the "
                                             "month's end, or at the end of `{months_after: N}` calendar months")
    claim: ClaimInstructions | None = Field(default=None, description="Where claims go and the evidence they need")
    form: Literal["future_invoice", "same_invoice", "refund"] = "future_invoice"
    not_charged: NotCharged | None = Field(default=None, description="Revision 1.1: hours not billed")

    @property
    def minimum_amount(self) -> Decimal:
        m = self.minimum
        return m.more_than if isinstance(m, MinimumMoreThan) else m

    @property
    def minimum_strict(self) -> bool:
        """True for `{more_than: X}` (X itself is not issued), False for a plain amount."""
        return isinstance(self.minimum, MinimumMoreThan)

    @field_validator("claim_window")
    @classmethod
    def _claim_window_positive(cls, v: Any) -> Any:
        if isinstance(v, timedelta) and v <= timedelta(0):
            raise PydanticCustomError("claim_window_zero",
                                      "a claim window of 0s is due the moment the month ends; give a positive "
                                      "duration such as 30d, or {months_after: 1}")
        return v


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
        if not v.is_finite() or abs(v.adjusted()) > 300:
            return float(v)       # 1e999999999 would take forever as an int; the check's params refuse it
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, dict):
        return {k: _plain_values(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain_values(x) for x in v]
    return v


class Outliers(Strict):
    """Fleet outlier flags (acceptance.outliers): robust z-score against the fleet median."""

    enabled: bool = True
    robust_z: Decimal = Field(default=Decimal("3.5"), gt=0, le=100,
                              description="Robust z-score (0.6745 x deviation / MAD) from which a value is flagged")
    min_deviation: Percent = Field(default=Decimal("5"), description="And at least this much worse than the median")
    min_nodes: int = Field(default=5, ge=3, le=1_000_000, description="Fewest nodes (or GPUs) compared")


class Acceptance(Strict):
    deadline: date | None = None
    remedies: Remedies | None = None
    burn_in: BurnIn | None = None
    outliers: Outliers | None = None
    criteria: list[Criterion] = Field(default_factory=list)


# --- performance service level ----------------------------------------------------------

class PerformanceLevel(ServiceLevel):
    """A performance SLA: share of time each node performs at or above `floor` of the
    published value of an acceptance criterion's metric (measured by periodic re-checks)."""

    id: str
    criterion: str = Field(description="Acceptance criterion whose metric is re-checked")
    metric: str | None = Field(default=None, description="Metric judged; default: the criterion's metric")
    published: Decimal = Field(gt=0, description="Published value of the metric (higher is better)")
    floor: Percent = Field(description="A node is below the level under this share of the published value")
    source: str | None = Field(default=None, description="Where the published value comes from")

    _v_id = field_validator("id")(classmethod(lambda cls, v: _check_id(v)))

    @property
    def floor_value(self) -> Decimal:
        return self.published * self.floor / Decimal(100)


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

# --- agreement and amendment history (the schedule as an attachment) ------------------

def _nonempty_text(v: str) -> str:
    if not v.strip():
        raise PydanticCustomError("empty_value", "must not be empty")
    return v


class Signatory(Strict):
    name: str = Field(description="Person signing for the party")
    title: str = Field(description="Their position, e.g. Chief Executive Officer")

    _v_text = field_validator("name", "title")(classmethod(lambda cls, v: _nonempty_text(v)))


class Signatories(Strict):
    provider: Signatory | None = None
    customer: Signatory | None = None


class Agreement(Strict):
    """How the schedule attaches to the parties' agreement."""

    master: str | None = Field(default=None, description="The master agreement the schedule belongs to, e.g. "
                                                          "'Master Services Agreement MSA-2026-114 of 2026-11-02'")
    precedence: list[str] | None = Field(default=None, min_length=2,
                                         description="Documents in order of precedence, highest first; the entry "
                                                     "`schedule` stands for this schedule and appears once")
    signed: date | None = Field(default=None, description="Date both parties signed these terms; without it the "
                                                          "schedule is a draft and marked DRAFT")
    signatories: Signatories | None = None

    @field_validator("master")
    @classmethod
    def _master(cls, v: str | None) -> str | None:
        return None if v is None else _nonempty_text(v)

    @field_validator("precedence")
    @classmethod
    def _precedence(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return v
        for item in v:
            _nonempty_text(item)
        seen = [x.strip().lower() for x in v]
        dup = sorted({x for x in seen if seen.count(x) > 1})
        if dup:
            raise PydanticCustomError("precedence_duplicate", "each document appears once; repeated: {dup}",
                                      {"dup": ", ".join(dup)})
        if seen.count("schedule") != 1:
            raise PydanticCustomError("precedence_no_schedule",
                                      "name this schedule in the list as `schedule`, at its rank")
        return v


class Revision(Strict):
    """One entry of the amendment history (oldest first)."""

    revision: str = Field(description="Label of the revision, e.g. 1.0, 1.1 or A")
    date: _Date = Field(description="Date the revision was agreed")
    summary: str = Field(description="What changed, in a sentence")

    _v_text = field_validator("revision", "summary")(classmethod(lambda cls, v: _nonempty_text(v)))


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
    performance: list[PerformanceLevel] = Field(default_factory=list,
                                                description="Performance service levels (periodic re-checks)")
    review: Review = Review()
    termination: Termination = Termination()
    access: Access | None = None
    lint: LintSettings | None = Field(default=None, description="`slakit lint` settings for this file")
    agreement: Agreement | None = Field(default=None, description="Master agreement, order of precedence, "
                                                                  "signature date and signatories")
    revisions: list[Revision] = Field(default_factory=list, description="Amendment history, oldest first; the "
                                                                        "last entry is the current revision")

    @field_validator("exclusions", mode="before")
    @classmethod
    def _empty_exclusions(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: ({} if x is None else x) for k, x in v.items()}
        return v

    def dump(self) -> dict[str, Any]:
        """Plain data (strings for durations, percentages and money), ready for YAML."""
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)
