"""The lint rule set: a buyer's review of a contract before it is signed.

Each rule is registered with its id, severity, checklist topic, title, why it matters and a
fix as a YAML snippet. Ids are stable (tests, `lint.disable` entries and other people's files
refer to them); they are grouped by tens per topic. Thresholds that come from the
ClusterMAX 3.0 buyer checklist (SemiAnalysis, 2026) say so in the rule text.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from slaschema.checks import AREAS, KNOWN_CHECKS
from slaschema.lint.base import Hit, rule
from slaschema.loader import LoadedContract
from slaschema.models import SCOPES
from slaschema.types import format_duration, format_percent, format_threshold, human_duration

NVL72 = ("gb200-nvl72", "gb300-nvl72")
PLANNED_WORDS = ("maint", "patch", "upgrade", "planned")
HOURS_PER_MONTH = Decimal("730")          # 8,760 h / 12: an average month, for sizing rules only

# Thresholds, named so the rule text and the tests use the same numbers.
MAX_DETECTION = timedelta(minutes=2)      # ClusterMAX 3.0: unhealthy nodes detected within 2 minutes
MIN_BURN_IN = timedelta(hours=8)          # ClusterMAX 3.0: burn-in of at least 8 h at handover
MIN_CAP = Decimal(10)                     # credit cap below 10 % of the fee never bites
MIN_CLAIM_WINDOW = timedelta(days=30)
REVIEW_LEAD = timedelta(days=14)          # a review is held within two weeks after its period
REVIEW_WAIT = {"monthly": timedelta(0), "quarterly": timedelta(days=61)}   # month end -> period end, longest
REVIEW_MONTHS = {"monthly": 1, "quarterly": 3}   # months_after needed to be open at the review
QUARTER_OR_MONTH = {"monthly": "month", "quarterly": "quarter"}
MAX_MIN_OUTAGE = timedelta(minutes=10)
MIN_NOTICE = timedelta(hours=24)
MAX_TIER_GAP = Decimal(5)                 # percentage points between consecutive tier thresholds
MIN_DEEPEST_CREDIT = Decimal(25)
MAX_SEV1_RESPONSE = timedelta(hours=1)
MAX_NVL72_RACK_K = 3                      # 16-of-18-tray jobs stop when 3 trays are down
MAX_MINIMUM_SHARE = Decimal("0.01")       # minimum credit above 1 % of the monthly fee
MAX_CHRONIC_MONTHS = 3
MAX_CHRONIC_WINDOW = 12
GPU_COMPUTE_CHECKS = ("gpu.gemm", "gpu.dcgm", "gpu.burn")


def _pct(d: Decimal) -> str:
    return format_percent(d)


def _dur(td: timedelta) -> str:
    return format_duration(td)


def _is_nvl72(lc: LoadedContract) -> bool:
    return lc.model.topology.architecture in NVL72


def _planned(name: str) -> bool:
    return any(w in name for w in PLANNED_WORDS)


def monthly_fee(lc: LoadedContract) -> Decimal:
    """The whole contract's fee for an average month (730 h)."""
    return lc.model.pricing.fee(gpus=lc.topology.gpu_count, nodes=len(lc.topology.nodes), hours=HOURS_PER_MONTH)


# --- downtime: node / rack / cluster / site -----------------------------------------------

@rule("SLA001", "error", "downtime", "NVL72 topology without a rack rule",
      why="""
In an NVL72 rack the 72 GPUs share one NVLink domain: a failed compute tray, NVLink switch
tray or the backplane stops the jobs of the whole rack while most nodes still answer pings.
Without `downtime.rack` such an outage counts only for the trays that are down, so the
buyer loses a rack and is credited for a node.""",
      fix="""
downtime:
  rack:
    down_when_nodes_down: 3      # NVL72 jobs commonly use 16 of 18 trays
    nodes_follow_rack: true      # while the rack is down, every tray in it counts as down""")
def _nvl72_rack_rule(lc: LoadedContract) -> list[Hit]:
    if _is_nvl72(lc) and lc.model.downtime.rack is None:
        return [Hit(("downtime",), f"architecture is {lc.model.topology.architecture} but `downtime` has "
                    "no `rack:` rule", lc.model.topology.architecture)]
    return []


@rule("SLA002", "warning", "downtime", "NVL72 rack outage carries no rack service level",
      why="""
For NVL72 the rack is the unit a buyer schedules on. A rack-level target with its own
credits pays for a rack outage in proportion to what was lost; node credits alone pay
little when a few trays take the whole NVLink domain down.""",
      fix="""
service_levels:
  rack:
    target: 99.0%
    pro_rata: {multiplier: 2}""")
def _nvl72_rack_sl(lc: LoadedContract) -> list[Hit]:
    if _is_nvl72(lc) and lc.model.service_levels.rack is None:
        return [Hit(("service_levels",), "no `service_levels.rack` for an NVL72 topology")]
    return []


@rule("SLA003", "warning", "downtime", "No node-level service level",
      why="""
The node is where single failures land (a GPU, HBM, a NIC). Without a node target the
provider owes nothing for a node that is down for days as long as the larger scopes hold.""",
      fix="""
service_levels:
  node:
    target: 99.0%
    credits:
      - {below: 99.0%, credit: 10%}
      - {below: 95.0%, credit: 25%}
      - {below: 90.0%, credit: 100%}""")
def _node_sl(lc: LoadedContract) -> list[Hit]:
    sl = lc.model.service_levels
    if sl.node is None and not (_is_nvl72(lc) and sl.rack is not None):
        scopes = ", ".join(s for s, _ in sl.items()) or "none"
        return [Hit(("service_levels",), f"no `node` scope (scopes with a commitment: {scopes})")]
    return []


@rule("SLA004", "warning", "downtime", "Several racks but no cluster-level downtime",
      why="""
A job that spans racks stops when enough of the cluster is gone, even if each rack on its
own is within its target. A cluster rule (capacity below a share) or a cluster target
makes that visible and payable.""",
      fix="""
downtime:
  cluster:
    down_when_available_below: 90%
service_levels:
  cluster:
    target: 99.5%
    credits:
      - {below: 99.5%, credit: 10%}
      - {below: 99.0%, credit: 25%}""")
def _cluster_rule(lc: LoadedContract) -> list[Hit]:
    c = lc.model
    if c.downtime.cluster is not None or c.service_levels.cluster is not None:
        return []
    topo = lc.topology
    racks_per_cluster = [sum(1 for rc in topo.rack_cluster if rc == i) for i in range(len(topo.clusters))]
    big = [(cid, n) for cid, n in zip(topo.clusters, racks_per_cluster) if n >= 2]
    if big:
        cid, n = big[0]
        return [Hit(("downtime",), f"cluster {cid} has {n} racks but neither `downtime.cluster` nor "
                    "`service_levels.cluster` is set", cid)]
    return []


@rule("SLA005", "warning", "downtime", "Degraded performance never counted",
      why="""
A node with one GPU lost, throttled or with a failed NIC cannot run its share of a
synchronous job; the whole job slows to the straggler. With `degraded: ignore` such time
is not downtime at all.""",
      fix="""
downtime:
  degraded: proportional   # or `down` when a partial node is useless to the workload""")
def _degraded(lc: LoadedContract) -> list[Hit]:
    if lc.model.downtime.degraded == "ignore":
        return [Hit(("downtime", "degraded"), "degraded incidents are ignored", "ignore")]
    return []


@rule("SLA006", "warning", "downtime", "Minimum outage longer than 10 minutes",
      why="""
Outages shorter than `min_outage` are dropped. A long threshold hides repeated short
failures (flapping links, Xid resets) that each kill a training job and cost a checkpoint
restart.""",
      fix="""
downtime:
  min_outage: 5m""")
def _min_outage(lc: LoadedContract) -> list[Hit]:
    mo = lc.model.downtime.min_outage
    if mo > MAX_MIN_OUTAGE:
        return [Hit(("downtime", "min_outage"), f"outages under {_dur(mo)} do not count", _dur(mo))]
    return []


@rule("SLA007", "warning", "downtime", "NVL72 rack counts as up with too many trays down",
      why="""
NVL72 jobs are commonly laid out on 16 of the 18 compute trays. With 3 or more trays
down the rack can no longer run them, so a rack rule that waits for more trays counts
an unusable rack as up.""",
      fix="""
downtime:
  rack:
    down_when_nodes_down: 3""")
def _nvl72_k(lc: LoadedContract) -> list[Hit]:
    rr = lc.model.downtime.rack
    if _is_nvl72(lc) and rr is not None and rr.down_when_nodes_down > MAX_NVL72_RACK_K:
        return [Hit(("downtime", "rack", "down_when_nodes_down"),
                    f"a rack is down only with {rr.down_when_nodes_down} or more trays down",
                    rr.down_when_nodes_down)]
    return []


@rule("SLA008", "warning", "downtime", "Rack or cluster rule without any effect on credits",
      why="""
A rack or cluster rule only changes money when that scope has a service level or its
nodes follow it. Otherwise the rule defines downtime that nobody is paid for.""",
      fix="""
downtime:
  rack:
    down_when_nodes_down: 3
    nodes_follow_rack: true     # or add service_levels.rack""")
def _rule_without_effect(lc: LoadedContract) -> list[Hit]:
    c = lc.model
    out: list[Hit] = []
    if c.downtime.rack is not None and not c.downtime.rack.nodes_follow_rack and c.service_levels.rack is None:
        out.append(Hit(("downtime", "rack"), "rack rule set, but `nodes_follow_rack` is false and there is "
                       "no `service_levels.rack`"))
    # a site is down while all of its clusters are down, so with a site service level the
    # cluster rule moves money through the site even when nodes do not follow their cluster
    if (c.downtime.cluster is not None and not c.downtime.cluster.nodes_follow_cluster
            and c.service_levels.cluster is None and c.service_levels.site is None):
        out.append(Hit(("downtime", "cluster"), "cluster rule set, but `nodes_follow_cluster` is false and "
                       "there is neither `service_levels.cluster` nor `service_levels.site` (a site is down "
                       "when all its clusters are)"))
    return out


# --- exclusions -------------------------------------------------------------------------

@rule("SLA009", "warning", "downtime", "Downtime counted only in whole clock buckets",
      why="""
With `measure: {counts_when: full}` only clock buckets in which the unit is down from the
first to the last second count: an outage loses the partial buckets at both of its ends
(up to two buckets less one second each time), and an outage shorter than two buckets can
count as nothing. Many short outages are then largely free for the provider.""",
      fix="""
downtime:
  measure: {bucket: 1m, counts_when: any}   # or remove `measure` to count exact seconds""")
def _measure_full(lc: LoadedContract) -> list[Hit]:
    ms = lc.model.downtime.measure
    if ms is not None and ms.counts_when == "full":
        lost = 2 * int(ms.bucket.total_seconds()) - 2
        return [Hit(("downtime", "measure", "counts_when"),
                    f"only whole {_dur(ms.bucket)} buckets of downtime count: each outage can lose up to "
                    f"{human_duration(timedelta(seconds=lost))}", "full")]
    return []


@rule("SLA010", "error", "exclusions", "Planned-work exclusion without notice",
      why="""
Maintenance and patching are excluded from downtime because the buyer can plan around
them. Without a notice period the provider can label any outage as maintenance after
the fact.""",
      fix="""
exclusions:
  maintenance:
    notice: 72h
    max_per_month: 8h""")
def _planned_notice(lc: LoadedContract) -> list[Hit]:
    return [Hit(("exclusions", name), f"`{name}` is excluded without a `notice` period", name,
                fix=f"exclusions:\n  {name}:\n    notice: {'24h' if 'patch' in name else '72h'}")
            for name, ex in lc.model.exclusions.items() if _planned(name) and ex.notice is None]


@rule("SLA011", "error", "exclusions", "Planned-work exclusion without a monthly cap",
      why="""
Without `max_per_month`, announced maintenance can take a node away for any number of
hours a month and none of it is downtime.""",
      fix="""
exclusions:
  maintenance:
    notice: 72h
    max_per_month: 8h
  security_patch:
    notice: 24h
    max_per_month: 4h""")
def _planned_cap(lc: LoadedContract) -> list[Hit]:
    return [Hit(("exclusions", name), f"`{name}` has no `max_per_month`", name,
                fix=f"exclusions:\n  {name}:\n    max_per_month: {'4h' if 'patch' in name else '8h'}")
            for name, ex in lc.model.exclusions.items() if _planned(name) and ex.max_per_month is None]


@rule("SLA012", "warning", "exclusions", "Force majeure undefined",
      why="""
An undefined force majeure clause is read as broadly as the provider's lawyers like:
a grid dip that the site's UPS should ride through, or a supplier's delay.""",
      fix="""
exclusions:
  force_majeure:
    definition: Natural disaster, war or terrorism, or utility failure beyond the site's backup capacity.""")
def _force_majeure(lc: LoadedContract) -> list[Hit]:
    ex = lc.model.exclusions.get("force_majeure")
    if ex is not None and not (ex.definition or "").strip():
        return [Hit(("exclusions", "force_majeure"), "`force_majeure` is excluded without a `definition`")]
    return []


@rule("SLA013", "warning", "exclusions", "Exclusion without a definition",
      why="""
Every excluded category is time the provider does not pay for. A category named but not
defined (what counts as `customer_caused`?) is decided case by case by the provider.""",
      fix="""
exclusions:
  customer_caused:
    definition: Faults caused by the customer's workloads, changes or instructions.""")
def _definitions(lc: LoadedContract) -> list[Hit]:
    return [Hit(("exclusions", name), f"`{name}` has no `definition`", name,
                fix=f"exclusions:\n  {name}:\n    definition: <what the category covers, in words>")
            for name, ex in lc.model.exclusions.items()
            if name != "force_majeure" and not (ex.definition or "").strip()]


@rule("SLA014", "warning", "exclusions", "Notice for planned work shorter than 24 hours",
      why="""
A notice period must let the buyer checkpoint and reschedule a multi-day training run;
a few hours is not enough in practice.""",
      fix="""
exclusions:
  maintenance:
    notice: 72h""")
def _short_notice(lc: LoadedContract) -> list[Hit]:
    return [Hit(("exclusions", name, "notice"), f"`{name}` needs only {_dur(ex.notice)} notice",
                _dur(ex.notice), fix=f"exclusions:\n  {name}:\n    notice: 72h")
            for name, ex in lc.model.exclusions.items()
            if _planned(name) and ex.notice is not None and ex.notice < MIN_NOTICE]


@rule("SLA015", "info", "exclusions", "Excluded time can exceed the downtime the target allows",
      why="""
If the monthly caps on planned work add up to more than the downtime a target allows,
a unit can be unavailable for more than twice its budget without any credit.""",
      fix="""
exclusions:
  maintenance:
    max_per_month: 4h
  security_patch:
    max_per_month: 2h""")
def _caps_vs_target(lc: LoadedContract) -> list[Hit]:
    caps = [ex.max_per_month for name, ex in lc.model.exclusions.items()
            if _planned(name) and ex.max_per_month is not None]
    levels = lc.model.service_levels.items()
    if not caps or not levels:
        return []
    total = sum(caps, timedelta(0))
    strictest_scope, sl = max(levels, key=lambda x: x[1].effective_target)
    allowed_h = (Decimal(100) - sl.effective_target) / 100 * HOURS_PER_MONTH
    total_h = Decimal(int(total.total_seconds())) / 3600
    if total_h > allowed_h:
        return [Hit(("exclusions",), f"planned-work caps add up to {_dur(total)} a month; the {strictest_scope} "
                    f"target {_pct(sl.effective_target)} allows {allowed_h:.1f} h of downtime", _dur(total))]
    return []


# --- credits ----------------------------------------------------------------------------

@rule("SLA020", "error", "credits", "Credit cap below 10 %",
      why="""
A cap is the most the provider can ever owe in a month. Below 10 % of the fee the SLA is
cheaper for the provider to breach than to meet.""",
      fix="""
credits:
  cap: 50%""")
def _cap(lc: LoadedContract) -> list[Hit]:
    cap = lc.model.credits.cap
    if cap is not None and cap < MIN_CAP:
        return [Hit(("credits", "cap"), f"credits are capped at {_pct(cap)} of the month's fee", _pct(cap))]
    return []


@rule("SLA021", "error", "credits", "Claim window under 30 days",
      why="""
A buyer learns of most outages from the monthly report. A claim window shorter than a
month lets credits lapse before the review that finds them.""",
      fix="""
credits:
  claim_window: 60d""")
def _claim_window(lc: LoadedContract) -> list[Hit]:
    cw = lc.model.credits.claim_window
    if isinstance(cw, timedelta) and cw < MIN_CLAIM_WINDOW:
        return [Hit(("credits", "claim_window"), f"credits must be claimed within {_dur(cw)}", _dur(cw))]
    return []


@rule("SLA022", "warning", "credits", "Minimum credit above 1 % of the monthly fee",
      why="""
A month's credit below `minimum` is not issued. A high minimum silently swallows every
small breach.""",
      fix="""
credits:
  minimum: 0""")
def _minimum(lc: LoadedContract) -> list[Hit]:
    m = lc.model.credits.minimum_amount
    fee = monthly_fee(lc)
    if fee > 0 and m > fee * MAX_MINIMUM_SHARE:
        return [Hit(("credits", "minimum"), f"minimum credit {m} is {m / fee * 100:.1f}% of a monthly fee of "
                    f"about {fee:.2f}", str(m))]
    return []


@rule("SLA023", "error", "credits", "Pro-rata multiplier below 1",
      why="""
With a multiplier below 1 the buyer is refunded less than the fee for the very hours it
could not use.""",
      fix="""
service_levels:
  rack:
    pro_rata: {multiplier: 2}""")
def _multiplier(lc: LoadedContract) -> list[Hit]:
    return [Hit(("service_levels", scope, "pro_rata", "multiplier"),
                f"{scope} credits pay {sl.pro_rata.multiplier}x the fee of the lost hours", str(sl.pro_rata.multiplier),
                fix=f"service_levels:\n  {scope}:\n    pro_rata: {{multiplier: 2}}")
            for scope, sl in lc.model.service_levels.items()
            if sl.pro_rata is not None and sl.pro_rata.multiplier < 1]


@rule("SLA024", "warning", "credits", "Credit tiers with gaps",
      why="""
Between two tier thresholds the credit does not grow however much worse availability
gets. A step wider than 5 percentage points (e.g. from 99 % straight to 90 %) leaves whole
days of downtime without extra credit.""",
      fix="""
credits:
  - {below: 99.0%, credit: 10%}
  - {below: 97.0%, credit: 25%}
  - {below: 95.0%, credit: 50%}
  - {below: 90.0%, credit: 100%}""")
def _tier_gaps(lc: LoadedContract) -> list[Hit]:
    out: list[Hit] = []
    for scope, sl in lc.model.service_levels.items():
        for i in range(1, len(sl.credits or [])):
            a, b = sl.credits[i - 1].below, sl.credits[i].below
            if a - b > MAX_TIER_GAP:
                out.append(Hit(("service_levels", scope, "credits", i, "below"),
                               f"{scope} tiers jump from {_pct(a)} to {_pct(b)} ({_pct(a - b)[:-1]} points)", _pct(b)))
    return out


@rule("SLA025", "error", "credits", "First tier below the target",
      why="""
When the first tier starts below the target, a unit that misses its target by a little
earns nothing: the target is a promise without a remedy in that band.""",
      fix="""
service_levels:
  node:
    target: 99.0%
    credits:
      - {below: 99.0%, credit: 10%}   # first tier starts at the target""")
def _first_tier(lc: LoadedContract) -> list[Hit]:
    return [Hit(("service_levels", scope, "credits", 0, "below"),
                f"{scope} target is {_pct(sl.target)} but the first tier starts below {_pct(sl.credits[0].below)}",
                _pct(sl.credits[0].below),
                fix=f"service_levels:\n  {scope}:\n    credits:\n      - {{below: {_pct(sl.target)}, "
                    f"credit: {_pct(sl.credits[0].credit)}}}   # first tier starts at the target")
            for scope, sl in lc.model.service_levels.items()
            if sl.credits and sl.target is not None and sl.target > sl.credits[0].below]


@rule("SLA026", "warning", "credits", "Deepest tier pays less than 25 %",
      why="""
The lowest tier is what a disastrous month pays. If a unit that is down for a week
earns a small credit, the SLA does not move the provider to fix it.""",
      fix="""
credits:
  - {below: 99.0%, credit: 10%}
  - {below: 95.0%, credit: 25%}
  - {below: 90.0%, credit: 100%}""")
def _deepest(lc: LoadedContract) -> list[Hit]:
    out = []
    for scope, sl in lc.model.service_levels.items():
        if sl.credits:
            top = max(t.credit for t in sl.credits)
            if top < MIN_DEEPEST_CREDIT:
                out.append(Hit(("service_levels", scope, "credits", len(sl.credits) - 1, "credit"),
                               f"the most a {scope} can earn is {_pct(top)}", _pct(top)))
    return out


# --- support ----------------------------------------------------------------------------

@rule("SLA027", "warning", "credits", "Pro-rata credit only below the target",
      why="""
With `pro_rata.only_below_target: true` a unit earns nothing for all the downtime the target
allows (for 99.5% about 3.6 hours a month); one second more and every hour is paid. The
credit jumps at the target instead of growing with the downtime.""",
      fix="""
service_levels:
  rack:
    target: 99.5%
    pro_rata: {multiplier: 2}          # pays for every hour of downtime""")
def _only_below_target(lc: LoadedContract) -> list[Hit]:
    out = []
    for scope, sl in lc.model.service_levels.items():
        if sl.pro_rata is not None and sl.pro_rata.only_below_target:
            allow = timedelta(seconds=int((100 - sl.effective_target) * 30 * 86400 / 100))
            out.append(Hit(("service_levels", scope, "pro_rata", "only_below_target"),
                           f"{scope} downtime up to {_dur(allow)} in a 30-day month earns no pro-rata credit", True))
    return out


@rule("SLA028", "warning", "credits", "Credit issued only if more than the minimum",
      why="""
`minimum: {more_than: X}` issues nothing when the month's credit is X or less, so a credit of
exactly X is lost too, unlike a plain `minimum: X`. Together with a cap and tiers this
decides whether small breaches are ever paid.""",
      fix="""
credits:
  minimum: 0""")
def _minimum_more_than(lc: LoadedContract) -> list[Hit]:
    cp = lc.model.credits
    if cp.minimum_strict and cp.minimum_amount > 0:
        return [Hit(("credits", "minimum", "more_than"),
                    f"a month's credit of {cp.minimum_amount} or less is not issued", str(cp.minimum_amount))]
    return []


@rule("SLA029", "warning", "credits", "Claims lapse before the review",
      why="""
The review (`review.cadence`) is where most credits are found. With a quarterly review the
first month of a quarter is reviewed two months after it ended (61 days in the longest case)
plus the time the review takes; a claim window shorter than that lets its claim lapse
before anyone sees it (30d: January's claim is due on 2 or 3 March, the Q1 review comes in
April). The rule allows the review 14 days after the period (REVIEW_LEAD). Claim each month
from `slakit credits` / `slakit claim` as it closes, or give the claims time to reach the
review.""",
      fix="""
credits:
  claim_window: {months_after: 3}   # or a duration of at least 75d for a quarterly review""")
def _claims_lapse_before_review(lc: LoadedContract) -> list[Hit]:
    cw = lc.model.credits.claim_window
    cadence = lc.model.review.cadence
    if cw is None:
        return []
    if isinstance(cw, timedelta):
        if cw < MIN_CLAIM_WINDOW:
            return []                      # SLA021 already reports it
        need = REVIEW_WAIT[cadence] + REVIEW_LEAD
        if cw >= need:
            return []
        return [Hit(("credits", "claim_window"),
                    f"review is {cadence}: a month is reviewed up to {need.days} days after it ends "
                    f"({REVIEW_WAIT[cadence].days} days to the end of the {QUARTER_OR_MONTH[cadence]} + "
                    f"{REVIEW_LEAD.days} days for the review), but its claim lapses {_dur(cw)} after it ends",
                    _dur(cw))]
    months = int(cw.months_after)
    if months >= REVIEW_MONTHS[cadence]:
        return []
    return [Hit(("credits", "claim_window"),
                f"review is {cadence}: the first month of a {QUARTER_OR_MONTH[cadence]} is reviewed after the "
                f"{QUARTER_OR_MONTH[cadence]} ends, but its claim lapses at the end of the {months} calendar "
                f"month(s) after it", f"months_after: {months}")]


@rule("SLA030", "error", "support", "Detection target missing or above 2 minutes",
      why="""
ClusterMAX 3.0 expects unhealthy nodes to be detected and drained within 2 minutes.
Every minute a faulty node stays in the pool can crash or silently slow a job; a target
nobody measures is not a commitment.""",
      fix="""
support:
  detection: 2m""")
def _detection(lc: LoadedContract) -> list[Hit]:
    d = lc.model.support.detection
    if d is None:
        return [Hit(("support",), "no `support.detection` target")]
    if d > MAX_DETECTION:
        return [Hit(("support", "detection"), f"detection target is {_dur(d)}", _dur(d))]
    return []


@rule("SLA031", "error", "support", "No restore target and no hot spares",
      why="""
Detection without repair is half a promise. A restore time per scope, or a pool of hot
spares swapped within a stated time, is what bounds how long capacity is missing.""",
      fix="""
support:
  restore: {node: 4h, rack: 24h}
  hot_spares: {nodes: 2, swap_within: 1h}""")
def _restore(lc: LoadedContract) -> list[Hit]:
    s = lc.model.support
    has_restore = s.restore is not None and any(getattr(s.restore, k) is not None
                                                for k in SCOPES)
    has_spares = s.hot_spares is not None and s.hot_spares.nodes > 0
    if not has_restore and not has_spares:
        return [Hit(("support",), "neither `support.restore` nor `support.hot_spares` is set")]
    return []


@rule("SLA032", "warning", "support", "Sev1 response missing or slower than 1 hour",
      why="""
A sev1 (cluster or many nodes down) costs the buyer the whole reservation by the hour; a
response target for it is the minimum support commitment.""",
      fix="""
support:
  response: {sev1: 15m, sev2: 1h, sev3: 4h, sev4: 1d}""")
def _sev1(lc: LoadedContract) -> list[Hit]:
    r = lc.model.support.response
    if r is None or r.sev1 is None:
        return [Hit(("support",), "no `support.response.sev1` target")]
    if r.sev1 > MAX_SEV1_RESPONSE:
        return [Hit(("support", "response", "sev1"), f"sev1 response target is {_dur(r.sev1)}", _dur(r.sev1))]
    return []


@rule("SLA033", "error", "support", "No right to export logs and telemetry",
      why="""
Credits are computed from the incident log. Without the right to export logs and
telemetry the buyer cannot measure availability independently and must accept the
provider's own account of its outages.""",
      fix="""
support:
  log_export: true""")
def _log_export(lc: LoadedContract) -> list[Hit]:
    if not lc.model.support.log_export:
        return [Hit(("support",), "`support.log_export` is false")]
    return []


@rule("SLA034", "warning", "support", "Customer may not run its own availability monitor",
      why="""
A buyer-side monitor (health checks, job failure counts) is the independent measurement
that settles disputes about when an outage began and ended.""",
      fix="""
support:
  customer_monitoring: true""")
def _monitoring(lc: LoadedContract) -> list[Hit]:
    if not lc.model.support.customer_monitoring:
        return [Hit(("support",), "`support.customer_monitoring` is false")]
    return []


@rule("SLA035", "warning", "support", "Hot spares without a swap time",
      why="""
Spare nodes only shorten outages if the contract says how fast they are swapped in.""",
      fix="""
support:
  hot_spares: {nodes: 2, swap_within: 1h}""")
def _swap(lc: LoadedContract) -> list[Hit]:
    hs = lc.model.support.hot_spares
    if hs is not None and hs.nodes > 0 and hs.swap_within is None:
        return [Hit(("support", "hot_spares"), f"{hs.nodes} hot spare node(s) with no `swap_within`", hs.nodes)]
    return []


@rule("SLA036", "info", "support", "Scope with a service level but no restore target",
      why="""
A restore target per scope tells both sides how long a rack or cluster repair may take
(GB200 backplane or rack replacements take 9 hours to several days per ClusterMAX); a
scope with credits but no restore time leaves that open.""",
      fix="""
support:
  restore: {node: 4h, rack: 24h}""")
def _restore_per_scope(lc: LoadedContract) -> list[Hit]:
    r = lc.model.support.restore
    return [Hit(("support",), f"`{scope}` has a service level but no `support.restore.{scope}`", scope)
            for scope, _ in lc.model.service_levels.items() if r is None or getattr(r, scope) is None]


# --- acceptance -------------------------------------------------------------------------

@rule("SLA037", "warning", "support", "Downtime clock starts at the customer's report",
      why="""
With `downtime.counts_from: report` an outage counts only from the moment the customer
reports it, and an outage nobody reports counts not at all: the provider's own detection
(and the buyer's nights and weekends) stop mattering, and the buyer must watch the fleet
to be credited.""",
      fix="""
downtime:
  counts_from: fault""")
def _counts_from_report(lc: LoadedContract) -> list[Hit]:
    if lc.model.downtime.counts_from == "report":
        return [Hit(("downtime", "counts_from"), "downtime counts only from the customer's report", "report")]
    return []


@rule("SLA040", "error", "acceptance", "No acceptance deadline",
      why="""
Without a deadline a late handover costs the provider nothing, and the buyer's plans
(and often its own customers) wait.""",
      fix="""
acceptance:
  deadline: 2027-01-15""")
def _deadline(lc: LoadedContract) -> list[Hit]:
    if lc.model.acceptance.deadline is None:
        return [Hit(("acceptance",), "no `acceptance.deadline`")]
    return []


@rule("SLA041", "warning", "acceptance", "No credit when acceptance is late",
      why="""
A per-day credit for a late handover compensates the buyer for reserved but unusable
capacity and makes the deadline matter before termination is on the table.""",
      fix="""
acceptance:
  remedies: {credit_per_day_late: 1%, termination_right_after: 30d}""")
def _late_credit(lc: LoadedContract) -> list[Hit]:
    r = lc.model.acceptance.remedies
    if r is None or r.credit_per_day_late is None:
        return [Hit(("acceptance",), "no `acceptance.remedies.credit_per_day_late`")]
    return []


@rule("SLA042", "error", "acceptance", "No termination right when acceptance is missed",
      why="""
If the cluster never passes acceptance the buyer must be able to walk away; without
that right it pays for (or waits on) hardware that does not work.""",
      fix="""
acceptance:
  remedies: {credit_per_day_late: 1%, termination_right_after: 30d}""")
def _late_termination(lc: LoadedContract) -> list[Hit]:
    r = lc.model.acceptance.remedies
    if r is None or r.termination_right_after is None:
        return [Hit(("acceptance",), "no `acceptance.remedies.termination_right_after`")]
    return []


@rule("SLA043", "error", "acceptance", "Burn-in missing or under 8 hours",
      why="""
GPU hardware fails early (bad HBM, loose cables, thermal paste). ClusterMAX 3.0 expects a
burn-in of at least 8 hours under load before handover so infant failures land on the
provider, not in the buyer's first training run.""",
      fix="""
acceptance:
  burn_in: {duration: 8h, max_xid_events: 0, max_throttle_pct: 1%}""")
def _burn_in(lc: LoadedContract) -> list[Hit]:
    b = lc.model.acceptance.burn_in
    if b is None:
        return [Hit(("acceptance",), "no `acceptance.burn_in`")]
    if b.duration < MIN_BURN_IN:
        return [Hit(("acceptance", "burn_in", "duration"), f"burn-in lasts {_dur(b.duration)}", _dur(b.duration))]
    return []


@rule("SLA044", "warning", "acceptance", "Acceptance criteria miss GPU, network, storage or software",
      why="""
A cluster is only usable when compute, the fabric, storage and the software stack all
work; a handover test that skips one of them passes a cluster that cannot train.""",
      fix="""
acceptance:
  criteria:
    - {id: gemm-bf16, check: gpu.gemm, metric: tflops_bf16, min: 1800}
    - {id: nccl-all-reduce, check: network.nccl, metric: busbw_gbps, min: 700}
    - {id: shared-fs-read, check: storage.fio, metric: read_gbps, min: 20}
    - {id: driver-stack, check: software.versions, expect: {driver: ">=570"}}""")
def _areas(lc: LoadedContract) -> list[Hit]:
    crit = lc.model.acceptance.criteria
    if not crit:
        return []
    covered = {KNOWN_CHECKS[c.check][0] for c in crit if c.check in KNOWN_CHECKS}
    if not any(c.check in GPU_COMPUTE_CHECKS for c in crit):
        covered.discard("gpu")                  # an inventory alone does not test compute
    missing = [a for a in AREAS if a != "security" and a not in covered]
    if missing:
        names = ["gpu compute (gpu.gemm, gpu.dcgm or gpu.burn)" if m == "gpu" else m for m in missing]
        return [Hit(("acceptance", "criteria"), f"no criteria for {', '.join(names)}", missing)]
    return []


@rule("SLA045", "error", "acceptance", "No acceptance criteria",
      why="""
Without criteria, acceptance is whatever the provider declares; the deadline and
remedies have nothing to measure against.""",
      fix="""
acceptance:
  criteria:
    - {id: gpu-inventory, check: gpu.inventory, expect: {gpus_per_node: 8}}
    - {id: dcgm-diag, check: gpu.dcgm, params: {level: 3}, expect: {overall: pass}}""")
def _no_criteria(lc: LoadedContract) -> list[Hit]:
    if not lc.model.acceptance.criteria:
        return [Hit(("acceptance",), "`acceptance.criteria` is empty")]
    return []


@rule("SLA046", "warning", "security", "Acceptance has no security criteria",
      why="""
Outdated drivers, container runtimes or loose access expose the buyer's models and
data; ClusterMAX 3.0 grades security before performance. Handover should prove the
stack meets the minimum secure versions and that access is what was agreed.""",
      fix="""
acceptance:
  criteria:
    - {id: security-versions, check: security.versions}
    - {id: security-access, check: security.access}""")
def _security(lc: LoadedContract) -> list[Hit]:
    if not any(c.check.startswith("security.") for c in lc.model.acceptance.criteria):
        return [Hit(("acceptance",), "no `security.*` criterion")]
    return []


@rule("SLA047", "warning", "security", "No list of who may have access",
      why="""
An `access:` list of provider staff and customer keys is how a buyer proves at handover
that provider access is what was agreed, and how keys left behind are caught.""",
      fix="""
access:
  provider_staff_keys: ["ssh-ed25519 AAAA... oncall@provider"]
  customer_keys: ["ssh-ed25519 AAAA... admin@customer"]""")
def _access(lc: LoadedContract) -> list[Hit]:
    a = lc.model.access
    if a is None:
        return [Hit((), "no `access:` section")]
    if not ({"provider_staff_keys", "customer_keys"} & a.model_fields_set):
        return [Hit(("access",), "`access` lists neither `provider_staff_keys` nor `customer_keys`")]
    return []


@rule("SLA048", "info", "acceptance", "Threshold without a source",
      why="""
A threshold with its source (datasheet, published benchmark) can be defended in a
dispute; an unexplained number invites one.""",
      fix="""
- id: gemm-bf16
  check: gpu.gemm
  metric: tflops_bf16
  min: 1800
  source: "datasheet dense BF16 peak x 72% MFU floor\"""")
def _source(lc: LoadedContract) -> list[Hit]:
    return [Hit(("acceptance", "criteria", i), f"criterion {c.id} has a threshold but no `source`", c.id,
                fix=_source_fix(c))
            for i, c in enumerate(lc.model.acceptance.criteria)
            if (c.min is not None or (c.max is not None and c.max != 0)) and not c.source
            and not c.check.startswith("health.")]


def _source_fix(c: Any) -> str:
    """The flagged criterion with a `source` line to fill in."""
    lines = [f"- id: {c.id}", f"  check: {c.check}"]
    if c.metric:
        lines.append(f"  metric: {c.metric}")
    for bound in ("min", "max"):
        v = getattr(c, bound)
        if v is not None:
            lines.append(f"  {bound}: {format_threshold(v)}")
    lines.append('  source: "<where the threshold comes from: datasheet, published benchmark, measured '
                 'baseline>"')
    return "\n".join(lines)


@rule("SLA049", "info", "support", "Detection target never tested",
      why="""
A detection target is measurable: inject a fault at handover and time how long the
health checks take to drain the node. Without that drill the target is unverified.""",
      fix="""
acceptance:
  criteria:
    - {id: detection-drill, check: health.detection, max: 2m}""")
def _drill(lc: LoadedContract) -> list[Hit]:
    if lc.model.support.detection is not None and not any(
            c.check == "health.detection" for c in lc.model.acceptance.criteria):
        return [Hit(("support", "detection"), "no `health.detection` criterion tests the detection target",
                    _dur(lc.model.support.detection))]
    return []


# --- exit rights ------------------------------------------------------------------------

@rule("SLA050", "error", "exit", "No chronic-failure exit",
      why="""
Credits are capped; a cluster that misses its target month after month must give the
buyer the right to leave. Without `termination.chronic` the buyer is locked in with
credits as the only remedy.""",
      fix="""
termination:
  chronic: {months_below_target: 3, within_months: 6}""")
def _chronic(lc: LoadedContract) -> list[Hit]:
    if lc.model.termination.chronic is None:
        return [Hit(("termination",), "no `termination.chronic`")]
    return []


@rule("SLA051", "warning", "exit", "Chronic-failure exit that hardly ever triggers",
      why="""
An exit that needs more than 3 bad months, or looks back over more than a year, is
reached only after the buyer has lost a large part of the contract term.""",
      fix="""
termination:
  chronic: {months_below_target: 3, within_months: 6}""")
def _chronic_lax(lc: LoadedContract) -> list[Hit]:
    ch = lc.model.termination.chronic
    if ch is not None and (ch.months_below_target > MAX_CHRONIC_MONTHS or ch.within_months > MAX_CHRONIC_WINDOW):
        return [Hit(("termination", "chronic"), f"exit after {ch.months_below_target} bad months within "
                    f"{ch.within_months}", f"{ch.months_below_target}/{ch.within_months}")]
    return []


@rule("SLA052", "info", "exit", "No exit assistance",
      why="""
Leaving a cluster means moving checkpoints and data sets of many terabytes; a period of
continued access after termination makes the exit right usable.""",
      fix="""
termination:
  exit_assistance: 30d""")
def _exit_assistance(lc: LoadedContract) -> list[Hit]:
    if lc.model.termination.exit_assistance is None:
        return [Hit(("termination",), "no `termination.exit_assistance`")]
    return []
