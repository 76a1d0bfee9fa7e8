"""JSON, JUnit XML and terminal-table renderings of a run document (`acceptance.document.
RunDocument`). Pure functions of the typed document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.etree import ElementTree as ET

from acceptance.coverage import not_covered_lines, scope_text
from acceptance.document import RunDocument, VerdictEntry
from acceptance.evidence import dumps
from acceptance.judge import fmt
from acceptance.results import NOT_IN_CONTRACT, PRECEDENCE, Status

STYLE = {"pass": "green", "warn": "yellow", "fail": "red", "skip": "cyan", "error": "magenta",
         "not_run": "bright_red", "waived": "blue"}
ORDER = [str(s) for s in PRECEDENCE]


def decision_lines(doc: RunDocument) -> list[str]:
    """The decision headline, the subset of a partial run and what it did not cover, and the
    waivers: the lines every rendering states."""
    d = doc.decision
    out = [d.headline if d is not None and d.headline else doc.status.upper()]
    if d is not None and d.partial:
        out.append(f"subset: {scope_text(doc.scope)} — {d.subset_result}")
        out += ["not covered: " + line for line in not_covered_lines(doc.scope)]
    if d is not None and d.blocking:
        out.append("blocking verdicts: " + status_counts_text(d.blocking))
    for w in doc.waivers or ():
        out.append(f"waiver {w.index} ({w.state}): {w.criterion}" + (f" on {w.nodes}" if w.nodes else "")
                   + f" — {w.reason} — approved by {w.approved_by}, expires {w.expires.isoformat()}"
                   + (f"; {w.verdicts_waived} verdict(s) waived" if w.state == "applied" else ""))
    return out


def render_json(doc: RunDocument) -> str:
    """The run document as indented JSON (results.json holds the same data on one line)."""
    return dumps(doc.to_json(), pretty=True)


def measured_text(v: VerdictEntry | None, unit: str = "") -> str:
    m = v.measured if v is not None else None
    if m is None:
        return "—"
    text = fmt(m) if isinstance(m, float) else str(m)
    return f"{text} {unit}".strip() if isinstance(m, float) and unit else text


def render_junit(doc: RunDocument) -> str:
    """One <testsuite> per criterion, one <testcase> per verdict (node); first a suite
    `acceptance.decision` whose one case passes only for an acceptance (a partial run's is
    skipped, naming the subset). not_run verdicts are errors, waived ones pass with the waiver."""
    suites = ET.Element("testsuites", name=f"slakit acceptance {doc.contract.id}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    d = doc.decision
    if d is not None:
        lines = decision_lines(doc)
        suite = ET.SubElement(suites, "testsuite", name="acceptance.decision", tests="1",
                              failures="0" if d.accepted or d.partial else "1", errors="0",
                              skipped="1" if d.partial else "0", time="0")
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="decision", value=d.headline)
        ET.SubElement(props, "property", name="partial", value=str(d.partial).lower())
        if d.partial:
            ET.SubElement(props, "property", name="subset", value=scope_text(doc.scope))
        case = ET.SubElement(suite, "testcase", classname="acceptance", name="decision", time="0")
        if d.partial:
            ET.SubElement(case, "skipped", message=d.headline).text = "\n".join(lines[1:])
        elif not d.accepted:
            ET.SubElement(case, "failure", message=d.headline, type=d.result).text = "\n".join(lines[1:])
        else:
            ET.SubElement(case, "system-out").text = "\n".join(lines)
        totals["tests"] += 1
        totals["failures"] += 0 if d.accepted or d.partial else 1
        totals["skipped"] += 1 if d.partial else 0
    for c in doc.criteria:
        verdicts = c.verdicts
        counts = {
            "tests": len(verdicts),
            "failures": sum(1 for v in verdicts if v.status == Status.FAIL),
            "errors": sum(1 for v in verdicts if v.status in (Status.ERROR, Status.NOT_RUN)),
            "skipped": sum(1 for v in verdicts if v.status == Status.SKIP),
        }
        for k in totals:
            totals[k] += counts[k]
        suite = ET.SubElement(suites, "testsuite", name=c.id, time=f"{c.duration_s or 0:.3f}",
                              **{k: str(v) for k, v in counts.items()})
        props = ET.SubElement(suite, "properties")
        for key, value in (("check", c.check), ("metric", c.metric), ("severity", c.severity),
                           ("expected", c.expected), ("status", c.status)):
            if value is not None:
                ET.SubElement(props, "property", name=key, value=str(value))
        for i, v in enumerate(verdicts):
            item = v.details.get("item") or v.details.get("component") or v.details.get("test")
            name = f"{c.id}[{v.node or 'cluster'}]" + (f" {item}" if item else "") + (f" #{i}" if not item and len(verdicts) > 1 else "")
            case = ET.SubElement(suite, "testcase", classname=c.check, name=name, time="0")
            message = f"{v.reason}: measured {measured_text(v, c.unit)}, expected {v.expected}"
            body = v.remediation or ""
            if v.status == Status.FAIL:
                ET.SubElement(case, "failure", message=message, type=str(v.reason)).text = body
            elif v.status in (Status.ERROR, Status.NOT_RUN):
                ET.SubElement(case, "error", message=f"{v.status} {message}", type=str(v.reason)).text = body
            elif v.status == Status.WAIVED:
                w: Mapping[str, Any] = v.waived or {}
                ET.SubElement(case, "system-out").text = (
                    f"WAIVED {w.get('status')} {w.get('reason')}: {message}; waiver {w.get('waiver')} approved by "
                    f"{w.get('approved_by')} until {w.get('expires')}: {w.get('justification')}")
            elif v.status == Status.SKIP:
                ET.SubElement(case, "skipped", message=message)
            elif v.status == Status.WARN:
                ET.SubElement(case, "system-out").text = f"WARN {message}. {body}".strip()
    for key, n in totals.items():
        suites.set(key, str(n))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def criterion_rows(doc: RunDocument) -> list[dict[str, str]]:
    """Per criterion: id, check, status, measured (decisive verdict's), expected, nodes (units
    covered and how many did not pass or were not run), reason (the decisive reason)."""
    rows = []
    for c in doc.criteria:
        vs = sorted(c.verdicts, key=lambda v: ORDER.index(v.status))
        decisive = [v for v in vs if v.reason == c.reason and v.status == c.status]
        top = decisive[0] if decisive else (vs[0] if vs else None)
        n_nodes = len({v.unit for v in c.verdicts})
        bad = len({v.unit for v in c.verdicts if v.status in (Status.FAIL, Status.ERROR)})
        missing = len({v.unit for v in c.verdicts if v.status == Status.NOT_RUN})
        nodes = str(n_nodes)
        if bad or missing:
            nodes = f"{n_nodes}: " + ", ".join(t for t in (f"{bad} bad" if bad else "",
                                                             f"{missing} not run" if missing else "") if t)
        rows.append({
            "id": c.id, "check": c.check, "status": c.status,
            "measured": measured_text(top, c.unit) if top else "—",
            "expected": (top.expected or c.expected) if c.expected in ("", "—") and top else c.expected,
            "reason": c.reason_text or c.reason or "",
            "nodes": nodes,
        })
    return rows


MAX_TABLE_RACKS = 20
MAX_TABLE_NODES = 20
MAX_TABLE_REMEDIATIONS = 40


def status_counts_text(counts: Mapping[Status, int]) -> str:
    """{"pass": 3, "error": 1} -> "error 1, pass 3" (worst first, zero counts left out)."""
    return ", ".join(f"{s} {counts[s]}" for s in PRECEDENCE if counts.get(s))


def aggregate_lines(doc: RunDocument) -> list[tuple[str, str]]:
    """Summary lines of the per-node, per-rack and overall roll-up: (status, text) each.
    Racks and nodes that did not pass come first; long lists end with a count of the rest."""
    agg = doc.aggregate
    o = agg.overall
    lines: list[tuple[str, str]] = [
        (o.status, f"overall {o.status}: {o.nodes} node(s) — {status_counts_text(o.node_counts) or 'none'}"
         + (f"; cluster-wide verdicts: {status_counts_text(o.cluster_counts)}"
            if any(o.cluster_counts.values()) else ""))]
    order = ORDER
    racks = sorted(agg.racks, key=lambda r: order.index(r.status) if r.status != Status.PASS else len(order))
    for r in racks[:MAX_TABLE_RACKS]:
        text = f"{_rack_label(r.rack)} {r.status}: {r.nodes} node(s) — {status_counts_text(r.node_counts)}"
        lines.append((r.status, text))
    if len(racks) > MAX_TABLE_RACKS:
        rest = racks[MAX_TABLE_RACKS:]
        passing = sum(1 for r in rest if r.status == Status.PASS)
        lines.append(("", f"… {len(rest)} more rack(s), {passing} of them pass (all in results.json)"))
    bad = [n for n in agg.nodes if n.status != Status.PASS]
    bad.sort(key=lambda n: order.index(n.status))
    for n in bad[:MAX_TABLE_NODES]:
        crits = ", ".join(f"{cid} {s}" for cid, s in n.criteria.items())
        lines.append((n.status, f"node {n.node} ({_rack_label(n.rack)}) {n.status}: {crits}"))
    if len(bad) > MAX_TABLE_NODES:
        lines.append(("", f"… {len(bad) - MAX_TABLE_NODES} more node(s) that did not pass (all in results.json)"))
    return lines


def _rack_label(rack: str) -> str:
    return "not in the contract's topology" if rack == NOT_IN_CONTRACT else f"rack {rack}"


def render_table(doc: RunDocument, console: Any) -> None:
    """Print the summary and per-criterion table to a rich Console."""
    from rich.table import Table

    from slaschema.textsafe import terminal_text

    def clean(text: str) -> str:          # no escape sequences or control characters from inputs
        return _esc_markup(terminal_text(text))

    state = doc.run.state
    status = doc.status
    d = doc.decision
    lines = decision_lines(doc) if d is not None else []
    head = clean(lines[0]) if lines else status.upper()
    style = "green" if d is not None and d.accepted else "yellow" if d is not None and d.partial else STYLE.get(status, "")
    title = f"Acceptance {clean(doc.contract.id)}: [{style}]{head}[/] (worst status {status})" + (
        f" ({state})" if state not in (None, "complete") else "")
    table = Table(title=title, show_lines=False)
    for col in ("criterion", "check", "status", "measured", "expected", "nodes", "reason"):
        table.add_column(col, overflow="fold")
    for r in criterion_rows(doc):
        e = {k: clean(str(v)) for k, v in r.items()}
        table.add_row(e["id"], e["check"], f"[{STYLE.get(r['status'], '')}]{e['status']}[/]", e["measured"],
                      e["expected"], e["nodes"], e["reason"])
    console.print(table)
    counts = ", ".join(f"{k} {v}" for k, v in doc.counts.items() if v)
    console.print(f"criteria: {counts}")
    for text in lines[1:]:
        console.print(clean(text), highlight=False)
    for line_status, text in aggregate_lines(doc):
        line_style = STYLE.get(line_status)
        console.print(f"[{line_style}]{clean(text)}[/]" if line_style else clean(text), highlight=False)
    shown = hidden = 0
    for crit in doc.criteria:
        missing = [v for v in crit.verdicts if v.status == Status.NOT_RUN]
        if missing:
            shown += 1
            console.print(f"  [{STYLE['not_run']}]not_run[/] {clean(crit.id)}: {len(missing)} with no evidence — "
                          f"{clean(str(missing[0].remediation))}", highlight=False)
        for v in crit.verdicts:
            if v.status in (Status.FAIL, Status.ERROR, Status.WARN, Status.SKIP) and v.remediation:
                if shown >= MAX_TABLE_REMEDIATIONS:
                    hidden += 1
                    continue
                shown += 1
                console.print(f"  [{STYLE[v.status]}]{v.status}[/] " + clean(
                              f"{crit.id} {v.node or 'cluster'}: {v.reason} — {v.remediation}"),
                              highlight=False)
    if hidden:
        console.print(f"  … {hidden} more verdict(s) with remediation (all in results.json and the certificate)",
                      highlight=False)


def _esc_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
