"""The comparison document and its renderers (terminal table, JSON, Markdown, PDF).

`comparison(offers, sims)` builds one plain document (offers, rows, notes); every renderer
takes that document and nothing else, so the PDF, the Markdown and the JSON always agree.
"""

from __future__ import annotations

import io
import math
from decimal import Decimal
from typing import Any
from xml.sax.saxutils import escape

from slaschema.compare.terms import Row, best_of, machine, term_rows
from slaschema.loader import LoadedContract

SIM_SECTION = "Simulated"
FORMAT = "slakit-compare/2"     # rows: "values" for machines, "display" as printed


def _gpu_hours(lc: LoadedContract, sim: dict[str, Any]) -> Decimal:
    """GPU-hours of the simulated months (every GPU of the offer, every hour of each month)."""
    from calculators.periods import parse_month, shift_label

    zone = lc.model.contract.timezone
    first, last = sim["periods"]
    label, hours = first, Decimal(0)
    while True:
        hours += parse_month(label, zone).hours
        if label == last:
            break
        label = shift_label(label, 1)
    return hours * lc.topology.gpu_count


def _sim_rows(sims: list[dict[str, Any]], offers: list[LoadedContract]) -> list[Row]:
    """Rows from each offer's simulation summary (same model, seed, runs and months)."""
    rows: list[Row] = []

    def add(term: str, values: list[Any], fmt, better, rule: str, unit: str | None = None, data=None) -> None:
        shown = tuple(fmt(v) for v in values)
        plain = tuple(machine(data(v) if data else v) for v in values)
        rows.append(Row(SIM_SECTION, term, shown, best_of(values, better, "worst"), rule, plain, unit))

    cur = sims[0]["currency"] if len({s["currency"] for s in sims}) == 1 else None
    add("expected credits (mean)", [(float(s["credits"]["mean"]), s["currency"]) for s in sims],
        lambda v: f"{v[0]:,.2f} {v[1]}", None, "for information (offers differ in size)", cur, lambda v: v[0])
    net = [Decimal(s["fee_total"]) - Decimal(s["credits"]["mean"]) for s in sims]
    add("fee minus expected credits", [(n, s["currency"]) for n, s in zip(net, sims)],
        lambda v: f"{v[0]:,.2f} {v[1]}", None, "for information: what the simulated months cost after credits "
        "(offers differ in size)", cur, lambda v: float(v[0]))
    delivered = []
    for n, s, lc in zip(net, sims, offers):
        hours = _gpu_hours(lc, s) - Decimal(str(s["lost_gpu_hours"]["mean"]))
        delivered.append(n / hours if hours > 0 else None)
    add("price per delivered GPU-hour", delivered, lambda v: "n/a" if v is None else f"{v:.4f}", "lower",
        "lower is better: (fee - expected credits) / (GPU-hours - expected lost GPU-hours)",
        f"{cur} per GPU-hour" if cur else "currency per GPU-hour", lambda v: None if v is None else float(v))
    add("expected credits, % of fee", [s["credits"]["mean_pct_of_fee"] for s in sims], lambda v: f"{v:.2f}%",
        "higher", "higher is better: more of the fee comes back for the same failures")
    add("credits P50 / P95, % of fee",
        [(float(s["credits"]["p50"]) / float(s["fee_total"]) * 100 if float(s["fee_total"]) else 0.0,
          float(s["credits"]["p95"]) / float(s["fee_total"]) * 100 if float(s["fee_total"]) else 0.0)
         for s in sims], lambda v: f"{v[0]:.2f}% / {v[1]:.2f}%", None, "for information")
    add("value returned (credits / lost GPU-hours)",
        [s["value_returned"]["ratio_of_means"] for s in sims],
        lambda v: "n/a" if v is None else f"{v:.3f}", "higher",
        "higher is better: credits per unit of value lost")
    scopes: list[str] = []
    for s in sims:
        scopes += [k for k in s["availability"] if k not in scopes]
    for scope in scopes:
        add(f"{scope} availability (mean)",
            [float(s["availability"][scope]["mean"]) if scope in s["availability"] else None for s in sims],
            lambda v: "—" if v is None else f"{math.floor(v * 10**4) / 10**4:.4f}%", None,
            "for information: measured under each contract's own downtime rules")
    add("P(chronic-failure exit fires)", [s["termination"]["chronic_any"] for s in sims], lambda v: f"{v:.1%}",
        "higher", "higher is better: the exit right is reachable")
    return rows


def comparison(offers: list[LoadedContract], sims: list[dict[str, Any]] | None = None,
               lint_reports: list[Any] | None = None) -> dict[str, Any]:
    rows = term_rows(offers)
    if lint_reports is not None:
        errors = [r.count("error") for r in lint_reports]
        warnings = [r.count("warning") for r in lint_reports]
        rows.append(Row("Review", "lint errors / warnings", tuple(f"{e} / {w}" for e, w in zip(errors, warnings)),
                        best_of([e * 10**6 + w for e, w in zip(errors, warnings)], "lower", "worst"),
                        "fewer is better (slakit lint)",
                        tuple({"errors": e, "warnings": w} for e, w in zip(errors, warnings)), "findings"))
    sim_info = None
    if sims:
        rows += _sim_rows(sims, offers)
        s0 = sims[0]
        sim_info = {"model": s0["model"], "seed": s0["seed"], "runs": s0["runs"], "months": s0["months"]}
    return {
        "format": FORMAT,
        "offers": [{"file": lc.file, "contract": lc.id, "provider": lc.model.contract.provider,
                    "title": lc.model.contract.title, "sha256": lc.sha256} for lc in offers],
        "rows": [r.to_json() for r in rows],
        "simulation": sim_info,
        "simulations": sims or [],
        "best_counts": [sum(1 for r in rows if i in r.best) for i in range(len(offers))],
    }


def _labels(doc: dict[str, Any]) -> list[str]:
    return [f"{chr(65 + i)}: {o['contract']}" for i, o in enumerate(doc["offers"])]


def render_markdown(doc: dict[str, Any]) -> str:
    """Markdown of the comparison; every text from the offers (provider, title, ids, values)
    goes through `md_text`, so an offer cannot put HTML or script links into the document."""
    from slaschema.textsafe import md_text as md

    labels = [md(lab) for lab in _labels(doc)]
    out = ["# Offer comparison", ""]
    for lab, o in zip(labels, doc["offers"]):
        out.append(f"- **{lab}** — {md(o['provider'])}, {md(o['title'] or '')} (`{md(o['file']).replace('`', '')}`, "
                   f"sha256 {o['sha256'][:12]})")
    out.append("")
    out.append("Best offer for the buyer per row is marked **bold ✓**; ties share the mark; the rule column says "
               "how the row is judged.")
    if doc["simulation"]:
        s = doc["simulation"]
        out.append(f"Simulated rows: model `{s['model']['name']}`, seed {s['seed']}, {s['runs']} runs x "
                   f"{s['months']} months, each offer on its own topology.")
    out.append("")
    out.append("Best-offer marks: " + ", ".join(f"{lab.split(':')[0]} {n}" for lab, n in
                                                 zip(labels, doc["best_counts"])))
    section = None
    for r in doc["rows"]:
        if r["section"] != section:
            section = r["section"]
            out += ["", f"## {section}", "", "| term | " + " | ".join(labels) + " | rule |",
                    "|---|" + "---|" * len(labels) + "---|"]
        cells = [(f"**{md(v)}** ✓" if i in r["best"] else md(v)) for i, v in enumerate(r["display"])]
        out.append(f"| {md(r['term'])} | " + " | ".join(cells) + f" | {md(r['rule'])} |")
    return "\n".join(out) + "\n"


def render_pdf(doc: dict[str, Any]) -> bytes:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4, landscape
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.lib.units import mm
    from reportlab.platypus import LongTable, SimpleDocTemplate, Spacer, TableStyle

    from calculators.reports import fonts
    from calculators.reports.fonts import Paragraph

    labels = _labels(doc)
    buf = io.BytesIO()
    pdf = SimpleDocTemplate(buf, pagesize=landscape(A4), leftMargin=12 * mm, rightMargin=12 * mm,
                            topMargin=12 * mm, bottomMargin=12 * mm, title="Offer comparison",
                            author="slakit compare", invariant=1)
    ss = fonts.stylesheet(getSampleStyleSheet())
    cell = ParagraphStyle("cell", parent=ss["BodyText"], fontSize=7.5, leading=9)
    bold = ParagraphStyle("bold", parent=cell, fontName=fonts.BOLD)
    small = ParagraphStyle("small", parent=cell, fontSize=6.5, leading=8, textColor=colors.HexColor("#555555"))
    story: list[Any] = [Paragraph("Offer comparison", ss["Title"])]
    for lab, o in zip(labels, doc["offers"]):
        story.append(Paragraph(escape(f"{lab} — {o['provider']}, {o['title'] or ''} ({o['file']}, sha256 "
                                      f"{o['sha256'][:12]})"), ss["BodyText"]))
    note = "Best offer for the buyer per row is bold on green; ties share the mark."
    if doc["simulation"]:
        s = doc["simulation"]
        note += (f" Simulated rows: model {s['model']['name']}, seed {s['seed']}, {s['runs']} runs x "
                 f"{s['months']} months.")
    story += [Paragraph(escape(note), ss["BodyText"]), Spacer(1, 4 * mm)]
    width = landscape(A4)[0] - 24 * mm
    term_w, rule_w = 48 * mm, 52 * mm
    col_w = (width - term_w - rule_w) / max(1, len(labels))
    data: list[list[Any]] = [[Paragraph("term", bold)] + [Paragraph(escape(lab), bold) for lab in labels]
                             + [Paragraph("rule", bold)]]
    style = [fonts.TABLE_FONT, ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#bbbbbb")),
             ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#dde4ee")),
             ("VALIGN", (0, 0), (-1, -1), "TOP")]
    section = None
    for r in doc["rows"]:
        if r["section"] != section:
            section = r["section"]
            data.append([Paragraph(escape(section), bold)] + [""] * (len(labels) + 1))
            style += [("SPAN", (0, len(data) - 1), (-1, len(data) - 1)),
                      ("BACKGROUND", (0, len(data) - 1), (-1, len(data) - 1), colors.HexColor("#f0f0f0"))]
        row: list[Any] = [Paragraph(escape(r["term"]), cell)]
        for i, v in enumerate(r["display"]):
            row.append(Paragraph(escape(v), bold if i in r["best"] else cell))
            if i in r["best"]:
                style.append(("BACKGROUND", (1 + i, len(data)), (1 + i, len(data)), colors.HexColor("#d5f0d5")))
        row.append(Paragraph(escape(r["rule"]), small))
        data.append(row)
    table = LongTable(data, colWidths=[term_w] + [col_w] * len(labels) + [rule_w], repeatRows=1)
    table.setStyle(TableStyle(style))
    story.append(table)
    pdf.build(story, canvasmaker=fonts.canvas_class())
    return buf.getvalue()


def render_table(doc: dict[str, Any], console: Any = None) -> None:
    """The terminal table; best offers in bold green, or marked `*` where the output has no
    colour (piped, redirected, NO_COLOR)."""
    from rich.console import Console
    from rich.markup import escape as escape_markup
    from rich.table import Table

    labels = _labels(doc)
    console = console or Console()
    plain = not console.is_terminal or console.no_color or console.color_system is None
    title = ("Offer comparison (best for the buyer marked *)" if plain
             else "Offer comparison (best for the buyer in bold green)")
    t = Table(title=title, show_lines=False)
    t.add_column("term", overflow="fold")
    for lab in labels:
        t.add_column(lab, overflow="fold")
    section = None
    for r in doc["rows"]:
        if r["section"] != section:
            section = r["section"]
            t.add_row(f"[bold underline]{section}[/]", *[""] * len(labels))
        mark = (lambda v: f"{escape_markup(v)} *") if plain else (lambda v: f"[bold green]{escape_markup(v)}[/]")
        t.add_row(r["term"], *[(mark(v) if i in r["best"] else escape_markup(v)) for i, v in enumerate(r["display"])])
    console.print(t)
    console.print(("best-offer marks (*): " if plain else "best-offer marks: ")
                  + ", ".join(f"{lab} {n}" for lab, n in zip(labels, doc["best_counts"])),
                  highlight=False)
    if doc["simulation"]:
        s = doc["simulation"]
        console.print(f"simulated rows: model {s['model']['name']}, seed {s['seed']}, {s['runs']} runs x "
                      f"{s['months']} months", highlight=False)
