"""JSON, JUnit XML and terminal-table renderings of a run document. Pure functions."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree as ET

from acceptance.coverage import not_covered_lines, scope_text
from acceptance.judge import fmt
from acceptance.results import NOT_IN_CONTRACT, PRECEDENCE

STYLE = {"pass": "green", "warn": "yellow", "fail": "red", "skip": "cyan", "error": "magenta",
         "not_run": "bright_red", "waived": "blue"}
ORDER = [str(s) for s in PRECEDENCE]


def decision_lines(doc: dict[str, Any]) -> list[str]:
    """The decision headline, the subset of a partial run and what it did not cover, and the
    waivers: the lines every rendering states."""
    d = doc.get("decision") or {}
    out = [d.get("headline") or doc["status"].upper()]
    scope = doc.get("scope") or {}
    if d.get("partial"):
        out.append(f"subset: {scope_text(scope)} — {d.get('subset_result')}")
        out += ["not covered: " + line for line in not_covered_lines(scope)]
    if d.get("blocking"):
        out.append("blocking verdicts: " + status_counts_text(d["blocking"]))
    for w in doc.get("waivers") or []:
        out.append(f"waiver {w['index']} ({w['state']}): {w['criterion']}" + (f" on {w['nodes']}" if w.get("nodes") else "")
                   + f" — {w['reason']} — approved by {w['approved_by']}, expires {w['expires']}"
                   + (f"; {w['verdicts_waived']} verdict(s) waived" if w["state"] == "applied" else ""))
    return out


def render_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"


def measured_text(v: dict[str, Any], unit: str = "") -> str:
    m = v.get("measured")
    if m is None:
        return "—"
    text = fmt(m) if isinstance(m, float) else str(m)
    return f"{text} {unit}".strip() if isinstance(m, float) and unit else text


def render_junit(doc: dict[str, Any]) -> str:
    """One <testsuite> per criterion, one <testcase> per verdict (node); first a suite
    `acceptance.decision` whose one case passes only for an acceptance (a partial run's is
    skipped, naming the subset). not_run verdicts are errors, waived ones pass with the waiver."""
    suites = ET.Element("testsuites", name=f"slakit acceptance {doc['contract']['id']}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    d = doc.get("decision")
    if d:
        lines = decision_lines(doc)
        suite = ET.SubElement(suites, "testsuite", name="acceptance.decision", tests="1",
                              failures="0" if d["accepted"] or d["partial"] else "1", errors="0",
                              skipped="1" if d["partial"] else "0", time="0")
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="decision", value=d["headline"])
        ET.SubElement(props, "property", name="partial", value=str(d["partial"]).lower())
        if d["partial"]:
            ET.SubElement(props, "property", name="subset", value=scope_text(doc.get("scope") or {}))
        case = ET.SubElement(suite, "testcase", classname="acceptance", name="decision", time="0")
        if d["partial"]:
            ET.SubElement(case, "skipped", message=d["headline"]).text = "\n".join(lines[1:])
        elif not d["accepted"]:
            ET.SubElement(case, "failure", message=d["headline"], type=d["result"]).text = "\n".join(lines[1:])
        else:
            ET.SubElement(case, "system-out").text = "\n".join(lines)
        totals["tests"] += 1
        totals["failures"] += 0 if d["accepted"] or d["partial"] else 1
        totals["skipped"] += 1 if d["partial"] else 0
    for c in doc["criteria"]:
        verdicts = c["verdicts"]
        counts = {
            "tests": len(verdicts),
            "failures": sum(1 for v in verdicts if v["status"] == "fail"),
            "errors": sum(1 for v in verdicts if v["status"] in ("error", "not_run")),
            "skipped": sum(1 for v in verdicts if v["status"] == "skip"),
        }
        for k in totals:
            totals[k] += counts[k]
        suite = ET.SubElement(suites, "testsuite", name=c["id"], time=f"{c.get('duration_s') or 0:.3f}",
                              **{k: str(v) for k, v in counts.items()})
        props = ET.SubElement(suite, "properties")
        for key in ("check", "metric", "severity", "expected", "status"):
            if c.get(key) is not None:
                ET.SubElement(props, "property", name=key, value=str(c[key]))
        for i, v in enumerate(verdicts):
            item = v.get("details", {}).get("item") or v.get("details", {}).get("component") or v.get("details", {}).get("test")
            name = f"{c['id']}[{v['node'] or 'cluster'}]" + (f" {item}" if item else "") + (f" #{i}" if not item and len(verdicts) > 1 else "")
            case = ET.SubElement(suite, "testcase", classname=c["check"], name=name, time="0")
            message = f"{v['reason']}: measured {measured_text(v, c.get('unit', ''))}, expected {v['expected']}"
            body = v.get("remediation") or ""
            if v["status"] == "fail":
                ET.SubElement(case, "failure", message=message, type=v["reason"]).text = body
            elif v["status"] in ("error", "not_run"):
                ET.SubElement(case, "error", message=f"{v['status']} {message}", type=v["reason"]).text = body
            elif v["status"] == "waived":
                w = v.get("details", {}).get("waived") or {}
                ET.SubElement(case, "system-out").text = (
                    f"WAIVED {w.get('status')} {w.get('reason')}: {message}; waiver {w.get('waiver')} approved by "
                    f"{w.get('approved_by')} until {w.get('expires')}: {w.get('justification')}")
            elif v["status"] == "skip":
                ET.SubElement(case, "skipped", message=message)
            elif v["status"] == "warn":
                ET.SubElement(case, "system-out").text = f"WARN {message}. {body}".strip()
    for k, v in totals.items():
        suites.set(k, str(v))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def criterion_rows(doc: dict[str, Any]) -> list[dict[str, str]]:
    """Per criterion: id, check, status, measured (decisive verdict's), expected, nodes (units
    covered and how many did not pass or were not run), reason (the decisive reason)."""
    rows = []
    for c in doc["criteria"]:
        vs = sorted(c["verdicts"], key=lambda v: ORDER.index(v["status"]))
        decisive = [v for v in vs if v["reason"] == c.get("reason") and v["status"] == c["status"]]
        top = decisive[0] if decisive else (vs[0] if vs else {})

        def unit(v: dict[str, Any]) -> Any:
            return v["node"] or (v.get("details") or {}).get("unit")

        n_nodes = len({unit(v) for v in c["verdicts"]})
        bad = len({unit(v) for v in c["verdicts"] if v["status"] in ("fail", "error")})
        missing = len({unit(v) for v in c["verdicts"] if v["status"] == "not_run"})
        nodes = str(n_nodes)
        if bad or missing:
            nodes = f"{n_nodes}: " + ", ".join(t for t in (f"{bad} bad" if bad else "",
                                                             f"{missing} not run" if missing else "") if t)
        rows.append({
            "id": c["id"], "check": c["check"], "status": c["status"],
            "measured": measured_text(top, c.get("unit", "")) if top else "—",
            "expected": (top.get("expected") or c["expected"]) if c["expected"] in ("", "—") and top
                        else c["expected"],
            "reason": c.get("reason_text") or c.get("reason") or "",
            "nodes": nodes,
        })
    return rows


MAX_TABLE_RACKS = 20
MAX_TABLE_NODES = 20
MAX_TABLE_REMEDIATIONS = 40


def status_counts_text(counts: dict[str, int]) -> str:
    """{"pass": 3, "error": 1} -> "error 1, pass 3" (worst first, zero counts left out)."""
    return ", ".join(f"{s} {counts[s]}" for s in ORDER if counts.get(s))


def aggregate_lines(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """Summary lines of the per-node, per-rack and overall roll-up: (status, text) each.
    Racks and nodes that did not pass come first; long lists end with a count of the rest."""
    agg = doc.get("aggregate")
    if not agg:
        return []
    o = agg["overall"]
    lines = [(o["status"], f"overall {o['status']}: {o['nodes']} node(s) — {status_counts_text(o['node_counts']) or 'none'}"
              + (f"; cluster-wide verdicts: {status_counts_text(o['cluster_counts'])}"
                 if any(o["cluster_counts"].values()) else ""))]
    order = ORDER
    racks = sorted(agg["racks"], key=lambda r: order.index(r["status"]) if r["status"] != "pass" else len(order))
    for r in racks[:MAX_TABLE_RACKS]:
        text = f"{_rack_label(r['rack'])} {r['status']}: {r['nodes']} node(s) — {status_counts_text(r['node_counts'])}"
        lines.append((r["status"], text))
    if len(racks) > MAX_TABLE_RACKS:
        rest = racks[MAX_TABLE_RACKS:]
        passing = sum(1 for r in rest if r["status"] == "pass")
        lines.append(("", f"… {len(rest)} more rack(s), {passing} of them pass (all in results.json)"))
    bad = [n for n in agg["nodes"] if n["status"] != "pass"]
    bad.sort(key=lambda n: order.index(n["status"]))
    for n in bad[:MAX_TABLE_NODES]:
        crits = ", ".join(f"{cid} {s}" for cid, s in n["criteria"].items())
        lines.append((n["status"], f"node {n['node']} ({_rack_label(n['rack'])}) {n['status']}: {crits}"))
    if len(bad) > MAX_TABLE_NODES:
        lines.append(("", f"… {len(bad) - MAX_TABLE_NODES} more node(s) that did not pass (all in results.json)"))
    return lines


def _rack_label(rack: str) -> str:
    return "not in the contract's topology" if rack == NOT_IN_CONTRACT else f"rack {rack}"


def render_table(doc: dict[str, Any], console: Any) -> None:
    """Print the summary and per-criterion table to a rich Console."""
    from rich.table import Table

    from slaschema.textsafe import deep

    doc = deep(doc)                        # no escape sequences or control characters from inputs
    c = {**doc["contract"], "id": _esc_markup(str(doc["contract"]["id"]))}
    state = doc["run"].get("state")
    status = doc["status"]
    d = doc.get("decision") or {}
    lines = decision_lines(doc) if d else []
    head = _esc_markup(lines[0]) if lines else status.upper()
    style = "green" if d.get("accepted") else "yellow" if d.get("partial") else STYLE.get(status, "")
    title = f"Acceptance {c['id']}: [{style}]{head}[/] (worst status {status})" + (
        f" ({state})" if state not in (None, "complete") else "")
    table = Table(title=title, show_lines=False)
    for col in ("criterion", "check", "status", "measured", "expected", "nodes", "reason"):
        table.add_column(col, overflow="fold")
    for r in criterion_rows(doc):
        e = {k: _esc_markup(str(v)) for k, v in r.items()}
        table.add_row(e["id"], e["check"], f"[{STYLE.get(r['status'], '')}]{e['status']}[/]", e["measured"],
                      e["expected"], e["nodes"], e["reason"])
    console.print(table)
    counts = ", ".join(f"{k} {v}" for k, v in doc["counts"].items() if v)
    console.print(f"criteria: {counts}")
    for text in lines[1:]:
        console.print(_esc_markup(text), highlight=False)
    for status, text in aggregate_lines(doc):
        style = STYLE.get(status)
        console.print(f"[{style}]{_esc_markup(text)}[/]" if style else _esc_markup(text), highlight=False)
    shown = hidden = 0
    for crit in doc["criteria"]:
        missing = [v for v in crit["verdicts"] if v["status"] == "not_run"]
        if missing:
            shown += 1
            console.print(f"  [{STYLE['not_run']}]not_run[/] {crit['id']}: {len(missing)} with no evidence — "
                          f"{_esc_markup(missing[0]['remediation'])}", highlight=False)
        for v in crit["verdicts"]:
            if v["status"] in ("fail", "error", "warn", "skip") and v.get("remediation"):
                if shown >= MAX_TABLE_REMEDIATIONS:
                    hidden += 1
                    continue
                shown += 1
                console.print(f"  [{STYLE[v['status']]}]{v['status']}[/] " + _esc_markup(
                              f"{crit['id']} {v['node'] or 'cluster'}: {v['reason']} — {v['remediation']}"),
                              highlight=False)
    if hidden:
        console.print(f"  … {hidden} more verdict(s) with remediation (all in results.json and the certificate)",
                      highlight=False)


def _esc_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
