"""JSON, JUnit XML and terminal-table renderings of a run document. Pure functions."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree as ET

from acceptance.judge import fmt

STYLE = {"pass": "green", "warn": "yellow", "fail": "red", "skip": "cyan", "error": "magenta"}


def render_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"


def measured_text(v: dict[str, Any], unit: str = "") -> str:
    m = v.get("measured")
    if m is None:
        return "—"
    text = fmt(m) if isinstance(m, float) else str(m)
    return f"{text} {unit}".strip() if isinstance(m, float) and unit else text


def render_junit(doc: dict[str, Any]) -> str:
    """One <testsuite> per criterion, one <testcase> per verdict (node)."""
    suites = ET.Element("testsuites", name=f"slakit acceptance {doc['contract']['id']}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for c in doc["criteria"]:
        verdicts = c["verdicts"]
        counts = {
            "tests": len(verdicts),
            "failures": sum(1 for v in verdicts if v["status"] == "fail"),
            "errors": sum(1 for v in verdicts if v["status"] == "error"),
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
            elif v["status"] == "error":
                ET.SubElement(case, "error", message=message, type=v["reason"]).text = body
            elif v["status"] == "skip":
                ET.SubElement(case, "skipped", message=message)
            elif v["status"] == "warn":
                ET.SubElement(case, "system-out").text = f"WARN {message}. {body}".strip()
    for k, v in totals.items():
        suites.set(k, str(v))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def criterion_rows(doc: dict[str, Any]) -> list[dict[str, str]]:
    """Per criterion: id, check, status, measured (worst verdict's), expected, nodes, reason."""
    rows = []
    order = ["error", "fail", "warn", "skip", "pass"]
    for c in doc["criteria"]:
        vs = sorted(c["verdicts"], key=lambda v: order.index(v["status"]))
        top = vs[0] if vs else {}
        n_nodes = len({v["node"] for v in c["verdicts"]})
        bad = sum(1 for v in c["verdicts"] if v["status"] in ("fail", "error"))
        rows.append({
            "id": c["id"], "check": c["check"], "status": c["status"],
            "measured": measured_text(top, c.get("unit", "")) if top else "—",
            "expected": c["expected"], "reason": c.get("reason") or "",
            "nodes": f"{bad}/{n_nodes} bad" if bad else str(n_nodes),
        })
    return rows


def render_table(doc: dict[str, Any], console: Any) -> None:
    """Print the summary and per-criterion table to a rich Console."""
    from rich.table import Table

    c = doc["contract"]
    state = doc["run"].get("state")
    status = doc["status"]
    title = f"Acceptance {c['id']}: [{STYLE.get(status, '')}]{status.upper()}[/]" + (
        f" ({state})" if state not in (None, "complete") else "")
    table = Table(title=title, show_lines=False)
    for col in ("criterion", "check", "status", "measured", "expected", "nodes", "reason"):
        table.add_column(col, overflow="fold")
    for r in criterion_rows(doc):
        table.add_row(r["id"], r["check"], f"[{STYLE.get(r['status'], '')}]{r['status']}[/]", r["measured"],
                      r["expected"], r["nodes"], r["reason"])
    console.print(table)
    counts = ", ".join(f"{k} {v}" for k, v in doc["counts"].items() if v)
    console.print(f"criteria: {counts}")
    for crit in doc["criteria"]:
        for v in crit["verdicts"]:
            if v["status"] in ("fail", "error", "warn", "skip") and v.get("remediation"):
                console.print(f"  [{STYLE[v['status']]}]{v['status']}[/] {crit['id']} "
                              f"{v['node'] or 'cluster'}: {v['reason']} — {v['remediation']}", highlight=False)
