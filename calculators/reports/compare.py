"""The comparison document and its renderers (terminal table, JSON, Markdown, HTML, PDF).

`comparison(offers, sims)` builds one plain document (offers, rows, notes); every renderer
takes that document and nothing else, so the PDF, the Markdown and the JSON always agree.
PDF, Markdown and HTML are the shared renderers (`calculators.reports.pdf`, `.text`) of
one `calculators.reports.doc` document, `compare_document(doc)`.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from calculators.reports import doc as d
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


def compare_document(doc: dict[str, Any]) -> d.Document:
    """The comparison as one shared document: the offers, how rows are judged, then one table
    per section (term, one column per offer, rule) with the best offer's cells marked."""
    labels = _labels(doc)
    n = len(labels)
    blocks: list[d.Block] = [
        d.Bullets(tuple(f"{lab} — {o['provider']}, {o['title'] or ''} ({o['file']}, sha256 {o['sha256'][:12]})"
                        for lab, o in zip(labels, doc["offers"]))),
        d.Para("The best offer for the buyer in each row is marked (bold on green in the PDF, bold with a check "
               "mark in Markdown and HTML); ties share the mark; the rule column says how the row is judged.")]
    if doc["simulation"]:
        s = doc["simulation"]
        blocks.append(d.Para(f"Simulated rows: model {s['model']['name']}, seed {s['seed']}, {s['runs']} runs x "
                             f"{s['months']} months, each offer on its own topology."))
    blocks.append(d.Para("Best-offer marks: " + ", ".join(f"{lab.split(':')[0]} {k}" for lab, k in
                                                          zip(labels, doc["best_counts"])), "strong"))
    sections: dict[str, list[dict[str, Any]]] = {}
    for r in doc["rows"]:
        sections.setdefault(r["section"], []).append(r)
    widths = (48.0, *([(277.0 - 48 - 52) / max(1, n)] * n), 52.0)
    for section, rows in sections.items():
        blocks.append(d.Heading(section, 1))
        blocks.append(d.Table(header=("term", *labels, "rule"),
                              rows=tuple((r["term"], *r["display"], r["rule"]) for r in rows),
                              widths=widths, font_size=7.5,
                              marks=tuple((i, 1 + j) for i, r in enumerate(rows) for j in r["best"])))
    return d.Document(
        title="Offer comparison", subtitle=None, blocks=tuple(blocks), toc=False, cover_page=False, landscape=True,
        author="slakit compare", keywords=("comparison", *(o["contract"] for o in doc["offers"])),
        footer="Offer comparison · " + " · ".join(f"{lab} sha256 {o['sha256'][:12]}"
                                                  for lab, o in zip(labels, doc["offers"])))


def render_markdown(doc: dict[str, Any]) -> str:
    from calculators.reports.text import render_markdown as markdown

    return markdown(compare_document(doc))


def render_html(doc: dict[str, Any]) -> str:
    from calculators.reports.text import render_html as html

    return html(compare_document(doc))


def render_pdf(doc: dict[str, Any]) -> bytes:
    from calculators.reports.pdf import render_pdf as pdf

    return pdf(compare_document(doc))


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
