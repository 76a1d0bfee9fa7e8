"""The claim letter: one letter per claimed month, addressed to `credits.claim.send_to`.

`claim_document(lc, run, inputs)` turns a `calculators.claim_case.ClaimRun` into a
`calculators.reports.doc.Document` (rendered to PDF or Markdown by the shared renderers).
The cover sheet sums up the claim; then one letter per month that is claimed (credit owed,
claim not expired), and a page for the months that are not claimed saying why (the claim
window closed, or no credit is owed).

Clauses are cited as numbered in the SLA schedule (`slakit draft`) of the same contract,
e.g. '§5.1 "Node availability" (service_levels.node)'; the contract field follows in
brackets so the citation also holds for a reader who only has the YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from calculators.reports import doc as d
from calculators.reports.claims_text import STATUS_WORDS, window_words
from calculators.reports.fmt import dec, duration, money, pct, plural, spaced_hostlist

if TYPE_CHECKING:
    from slaschema.loader import LoadedContract

FORM_WORDS = {"future_invoice": "a credit on a future invoice", "same_invoice": "a deduction on the invoice of the "
              "month", "refund": "a refund"}
_HEADING = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(.+)$")
MAX_UNITS_PER_INCIDENT = 4
MAX_NODE_GROUPS = 6          # hostlist groups printed per incident before the list is cut


@dataclass(frozen=True)
class LetterInputs:
    contract_file: str
    tool_version: str
    label: str                          # what was asked for: 2027-02 or 2027-Q1
    package_name: str | None = None     # the evidence package written beside the letter
    package_files: tuple[tuple[str, str], ...] = ()      # (path in package, sha256) of its files
    manifest_sha256: str | None = None
    signed_by: str | None = None        # key fingerprint when the manifest is signed


def schedule_clauses(lc: LoadedContract) -> dict[str, str]:
    """Clause citations from the SLA schedule's numbered headings: keys `downtime`,
    `exclusions`, `service_levels`, `credits`, and each scope (`node`, `rack` ...). A clause
    the schedule does not number is cited by its contract field alone."""
    from calculators.reports.schedule import schedule_document

    found: dict[str, str] = {}
    names = {"What counts as down": "downtime", "Exclusions": "exclusions",
             "Service levels and credits": "service_levels", "How credits are settled": "credits"}
    for b in schedule_document(lc, "").blocks:
        if not isinstance(b, d.Heading):
            continue
        m = _HEADING.match(b.text)
        if not m:
            continue
        num, title = m.groups()
        key = names.get(title)
        if key is None and title.endswith(" availability"):
            key = title[: -len(" availability")].lower()
        if key and key not in found:
            found[key] = f"{num} {title}"
    fields = {"downtime": "downtime", "exclusions": "exclusions", "service_levels": "service_levels",
              "credits": "credits", "node": "service_levels.node", "rack": "service_levels.rack",
              "cluster": "service_levels.cluster", "site": "service_levels.site"}
    out = {}
    for k, f in fields.items():
        if k in found:
            num, title = found[k].split(" ", 1)
            out[k] = f'§{num} "{title}" ({f})'
        else:
            out[k] = f"contract field {f}"
    return out


def _local(epoch: int | None, zone: str, seconds: bool = False) -> str:
    if epoch is None:
        return "open"
    t = datetime.fromtimestamp(epoch, ZoneInfo(zone))
    return t.strftime("%Y-%m-%d %H:%M:%S %Z" if seconds else "%Y-%m-%d %H:%M %Z")


def _nodes_text(nodes: tuple[str, ...], scope: str, target: str) -> str:
    """The affected nodes as a hostlist; a long list (a cluster or site incident) is cut after a
    few groups with the count; the package's incidents/claimed.csv lists every node."""
    from slaschema import hostlist

    if not nodes:
        return "—"
    groups = spaced_hostlist(hostlist.compress(list(nodes))).split(", ")
    count = f" ({len(nodes):,} nodes)" if len(nodes) > 1 else ""
    if len(groups) <= MAX_NODE_GROUPS:
        return ", ".join(groups) + count
    head = f"{scope} {target}: " if scope != "node" else ""
    return head + ", ".join(groups[:MAX_NODE_GROUPS - 1]) + f" and {len(groups) - MAX_NODE_GROUPS + 1:,} more groups" + count


def _units_text(units: tuple[tuple[str, str, str], ...]) -> str:
    shown = [f"{s} {u}: {money(c)}" for s, u, c in units[:MAX_UNITS_PER_INCIDENT]]
    more = len(units) - len(shown)
    return "; ".join(shown) + (f"; {more} more" if more else "")


def _units_sentence(units, clauses: dict[str, str]) -> str:
    """`2 nodes fell below target (§5.1 ...) and 4 racks met it and carry a pro-rata credit for their
    downtime (§5.2 ...)`: what the credit rests on, never more."""
    below: dict[str, int] = {}
    met: dict[str, int] = {}
    for u in units:
        bucket = met if u.met else below
        bucket[u.scope] = bucket.get(u.scope, 0) + 1
    parts = []
    if below:
        parts.append(", ".join(f"{plural(n, s)} ({clauses[s]})" for s, n in below.items())
                     + " fell below target")
    if met:
        many = sum(met.values()) > 1
        parts.append(", ".join(f"{plural(n, s)} ({clauses[s]})" for s, n in met.items())
                     + (" met their target and carry" if many else " met its target and carries")
                     + " a pro-rata credit for " + ("their" if many else "its") + " downtime")
    return " and ".join(parts) if parts else "no unit carries a credit"


def _degraded_words(lc: LoadedContract, m, clauses: dict[str, str]) -> str:
    """The incident table's note on degraded incidents, when the contract counts only the lost
    share of a degraded node: their Counted and Down are the whole degraded stretch, more than
    the downtime they add to the node."""
    if lc.model.downtime.degraded != "proportional" or not any(i.impact == "degraded" for i in m.incidents):
        return ""
    return (" An incident marked (degraded) took only some of its node's GPUs: its Counted and Down are the whole "
            "degraded stretch, of which the node accrues as downtime only the share of its GPUs lost (GPUs "
            f"affected / GPUs of the node; {clauses['downtime']}).")


def _amount_rows(m, cur: str) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(the claim's amounts, last = the amount claimed; the billing adjustment rows, if any)."""
    t = m.totals
    rows = [("Credit of the month before the cap", money(t.credit_uncapped))]
    if t.cap_amount is not None:
        rows.append(("Cap" + (" (applied)" if t.cap_applied else " (not reached)"), money(t.cap_amount)))
    if t.minimum > 0:
        rows.append(("Minimum credit" + (" (not reached: nothing issued)" if t.minimum_applied else ""),
                     money(t.minimum)))
    rows.append((f"Credit owed: the amount claimed ({cur})", money(t.credit_total)))
    billing: list[tuple[str, str]] = []
    if t.not_charged_total is not None:
        billing.append(("Hours not charged (a billing adjustment on the invoice, not part of this claim)",
                        money(t.not_charged_total)))
        billing.append(("Remedy for the month (credit owed + not charged)", money(t.remedy_total)))
    return tuple(rows), tuple(billing)


def _letter(lc: LoadedContract, run, m, clauses: dict[str, str], inputs: LetterInputs) -> list[d.Block]:
    info = lc.model.contract
    cp = lc.model.credits
    cur, zone = run.currency, run.timezone
    claim = cp.claim
    out: list[d.Block] = [d.Heading(f"Claim for {m.period}: {money(m.credit, cur)}", 1)]
    out.append(d.KeyValues((
        ("To", claim.send_to if claim else "the provider (the contract names no claim address: credits.claim)"),
        ("Provider", info.provider),
        ("From", info.customer),
        ("Contract", info.id + (f" — {info.title}" if info.title else "")),
        ("Month claimed", f"{m.period}: {_local(m.start, zone)} to {_local(m.end, zone)}"),
        ("Amount claimed", money(m.credit, cur)),
        ("Claim due before", _local(m.due, zone) + f" ({window_words(cp.claim_window)}, {clauses['credits']})"
         if m.due is not None else "no deadline (the contract sets no claim window)"),
        ("Letter as of", _local(run.as_of, zone) + f" — claim {STATUS_WORDS[m.status]}"),
    )))
    out.append(d.Para(
        f"Under contract {info.id}, {info.customer} claims a service credit of {money(m.credit, cur)} for "
        f"{m.period}, to be given as {FORM_WORDS.get(cp.form, cp.form)} ({clauses['credits']}). In {m.period} "
        f"{_units_sentence(m.units, clauses)} under the service levels ({clauses['service_levels']}); downtime is "
        f"counted as the contract defines it ({clauses['downtime']}; {clauses['exclusions']}).", "body"))
    if any(v.startswith("§") for v in clauses.values()):
        out.append(d.Para(f"Clauses (§) are numbered as in the SLA schedule of contract {info.id} (the document "
                          "`slakit draft` writes from the contract file named below); the contract field each rests "
                          "on follows in brackets.", "note"))
    rows, billing = _amount_rows(m, cur)
    out.append(d.Table(("Amount", cur), rows, align=("l", "r"), widths=(4, 1.2), width_fraction=0.75,
                       total_row=True))
    if billing:
        out.append(d.Table(("Not charged (sla-semantics 8.5)", cur), billing, align=("l", "r"), widths=(4, 1.2),
                           width_fraction=0.75,
                           caption="Hours not charged are taken off the invoice itself; they are shown for "
                                   "completeness and are not claimed here."))
    out.append(d.Heading("Units with a credit", 2))
    out.append(d.Table(("Unit", "Availability", "Target", "Met", "Credit %", f"Unit credit ({cur})", "Clause"),
                       tuple((f"{u.scope} {u.id}", pct(u.availability_pct), f"{dec(u.target_pct).normalize():f}%",
                              "yes" if u.met else "no", f"{dec(u.credit_pct).normalize():f}%", money(u.credit),
                              clauses[u.scope].split(" (")[0]) for u in m.units),
                       align=("l", "r", "r", "l", "r", "r", "l"), widths=(1.3, 1, 0.7, 0.5, 0.7, 1.1, 2.2),
                       font_size=7.5, highlight=tuple(k for k, u in enumerate(m.units) if not u.met),
                       caption="Unit credits before they are spread over nodes; per node the scopes combine as "
                               f"the contract's stacking rule says ({cp.stacking}), then the month's cap and minimum "
                               "give the amount claimed."))
    out.append(d.Heading("Incidents", 2))
    out.append(d.Table(("Incident", "Provider ticket", "Affected nodes", "Start", "End", "Counted", "Down",
                        f"Credited units it counts in ({cur})"),
                       tuple((i.id, i.ticket or "—", _nodes_text(i.nodes, i.scope, i.target)
                              + (" (degraded)" if i.impact == "degraded" else ""), _local(i.start, zone),
                              _local(i.end, zone) if i.end is not None else f"open (to {_local(run.as_of, zone)})",
                              duration(i.counted_seconds), duration(i.downtime_seconds),
                              _units_text(i.credited_units)) for i in m.incidents),
                       align=("l", "l", "l", "l", "l", "r", "r", "l"),
                       widths=(0.9, 0.85, 1.5, 1.05, 1.05, 0.6, 0.6, 2.1), font_size=6.5, nowrap=(0, 1, 5, 6),
                       caption=f"Times in {zone}. Counted: the incident's time in {m.period} after the exclusions, "
                               "summed over the units it names; Down: the part that is downtime after merging and "
                               "the minimum-outage rule. A unit's credit comes from its whole month's downtime, so "
                               "the incidents on one unit share its credit." + _degraded_words(lc, m, clauses)))
    if m.other_incidents:
        out.append(d.Para(f"{plural(len(m.other_incidents), 'other incident')} in {m.period} "
                          f"{'counts' if len(m.other_incidents) == 1 else 'count'} in no unit with a credit "
                          "(their units met target) and are not part of the claim; they are in the evidence "
                          "package with the rest of the month's incident rows.", "note"))
    out.append(d.Heading("Evidence", 2))
    asked = list(claim.evidence) if claim else []
    out.append(d.Para(("The contract asks for: " + "; ".join(asked) + ".") if asked
                      else "The contract names no evidence to send with a claim (credits.claim.evidence).", "body"))
    if inputs.package_name:
        from calculators.claim_package import describe

        items = [f"{path}: {describe(path)} (SHA-256 {digest[:16]}…)" for path, digest in inputs.package_files]
        sig = (f" The manifest is signed (OpenSSH signature, namespace slakit-evidence, key {inputs.signed_by})."
               if inputs.signed_by else " The manifest is not signed.")
        out.append(d.Para(f"Enclosed: the evidence package {inputs.package_name}, manifest SHA-256 "
                          f"{inputs.manifest_sha256}.{sig} It holds:", "body"))
        out.append(d.Bullets(tuple(items)))
        if not any(path.startswith("monitor/") for path, _ in inputs.package_files):
            missing = [e for e in asked if "monitor" in e.lower()]
            if missing:
                out.append(d.Para(f"Not enclosed: {'; '.join(missing)}, which the contract asks for with a claim: "
                                  f"the package holds no monitoring log of {info.customer}'s own.", "warning"))
    out.append(d.Para(f"Figures computed by slakit {inputs.tool_version} from the contract file "
                      f"{inputs.contract_file} (SHA-256 {run.contract_sha256}) and the provider's incident log "
                      f"{run.incidents_file} (SHA-256 {run.incidents_sha256}); either party can recompute them "
                      f"with `slakit credits --period {m.period}`.", "note"))
    return out


def _not_claimed(lc: LoadedContract, run, months, clauses: dict[str, str]) -> list[d.Block]:
    cur, zone = run.currency, run.timezone
    cp = lc.model.credits
    out: list[d.Block] = [d.Heading("Months not claimed", 1)]
    items = []
    for m in months:
        if not m.claimable:
            items.append(f"{m.period}: not claimed. The claim was due before {_local(m.due, zone)} "
                         f"({window_words(cp.claim_window)}, {clauses['credits']}); as of {_local(run.as_of, zone)} "
                         f"the window has closed, so the credit of {money(m.credit, cur)} has lapsed.")
        elif m.totals.minimum_applied:
            items.append(f"{m.period}: nothing to claim. The month's credit is below the contract's minimum of "
                         f"{money(m.totals.minimum, cur)} ({clauses['credits']}), so none is issued.")
        else:
            items.append(f"{m.period}: nothing to claim. Every unit met its target ({clauses['service_levels']}).")
    out.append(d.Bullets(tuple(items)))
    return out


def claim_document(lc: LoadedContract, run, inputs: LetterInputs) -> d.Document:
    info = lc.model.contract
    cp = lc.model.credits
    clauses = schedule_clauses(lc)
    cur, zone = run.currency, run.timezone
    claimed = run.claimed
    blocks: list[d.Block] = []
    for k, m in enumerate(claimed):
        if k:
            blocks.append(d.PageBreak())
        blocks += _letter(lc, run, m, clauses, inputs)
    rest = [m for m in run.months if not m.to_claim]
    if rest:
        if blocks:
            blocks.append(d.PageBreak())
        blocks += _not_claimed(lc, run, rest, clauses)
    summary = "; ".join(f"{m.period} {money(m.credit, cur)} "
                        + ("claimed" if m.to_claim else "lapsed, not claimed" if not m.claimable
                           else "nothing owed") for m in run.months)
    cover = [("To", cp.claim.send_to if cp.claim else "— (the contract names no claim address)"),
             ("From", info.customer), ("Provider", info.provider),
             ("Contract", info.id + (f" — {info.title}" if info.title else "")),
             ("Months", summary),
             ("Amount claimed", money(run.claimed_total, cur)),
             ("As of", _local(run.as_of, zone)),
             ("Contract file", f"{inputs.contract_file} (SHA-256 {run.contract_sha256})"),
             ("Incident log", f"{run.incidents_file} (SHA-256 {run.incidents_sha256})"),
             ("Generated by", f"slakit {inputs.tool_version}")]
    if inputs.package_name:
        cover.append(("Evidence package", f"{inputs.package_name} (manifest SHA-256 {inputs.manifest_sha256})"))
    return d.Document(title=f"Service credit claim {inputs.label} — {info.id}",
                      subtitle=f"{info.customer} to {info.provider}",
                      footer=(f"{info.id} · claim {inputs.label} · contract SHA-256 {run.contract_sha256[:16]} · "
                              f"log SHA-256 {run.incidents_sha256[:16]} · slakit {inputs.tool_version}"),
                      blocks=tuple(blocks), cover=tuple(cover), toc=False, keywords=(info.id, inputs.label))
