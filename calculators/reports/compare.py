"""The comparison document and its renderers (terminal table, JSON, Markdown, HTML, PDF).

`comparison(offers, sims, lint_reports)` builds one `Comparison`, a frozen record (the
offers, the rows, the simulation they were run under, the simulation summaries and the
best-offer counts); every renderer takes that record and nothing else, so the PDF, the
Markdown, the table and the JSON (`Comparison.to_json()`, the one serializer) always agree.
PDF, Markdown and HTML are the shared renderers (`calculators.reports.pdf`, `.text`) of
one `calculators.reports.doc` document, `compare_document(cmp)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from calculators.reports import doc as d
from slaschema.compare.terms import Row, best_of, machine, term_rows
from slaschema.loader import LoadedContract

if TYPE_CHECKING:
    from calculators.simulate.run import SimSummary

SIM_SECTION = "Simulated"
FORMAT = "slakit-compare/2"     # rows: "values" for machines, "display" as printed


@dataclass(frozen=True, kw_only=True)
class Offer:
    """One compared offer: its contract file, id, provider, title (None when the contract
    has none) and the file's sha256."""

    file: str
    contract: str
    provider: str
    title: str | None
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "contract": self.contract, "provider": self.provider, "title": self.title,
                "sha256": self.sha256}


@dataclass(frozen=True, kw_only=True)
class SimulationInfo:
    """What the simulated rows were run under (the same for every offer): the failure
    model, the seed, the runs and the months of the horizon."""

    model_name: str
    model_description: str
    seed: int
    runs: int
    months: int

    def to_json(self) -> dict[str, Any]:
        return {"model": {"name": self.model_name, "description": self.model_description}, "seed": self.seed,
                "runs": self.runs, "months": self.months}


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """The comparison of two or more offers. `rows` are the term rows (`slaschema.compare.terms.Row`:
    display text per offer, the values for machines, the indices of the best offers and the
    rule), then the lint row and the simulated rows; `simulation` is None and `simulations`
    empty when no offer was simulated; `best_counts[i]` is how many rows mark offer i best."""

    offers: tuple[Offer, ...]
    rows: tuple[Row, ...]
    simulation: SimulationInfo | None
    simulations: tuple[SimSummary, ...]
    best_counts: tuple[int, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        """`A: contract-id`, `B: ...`: the offers' column heads."""
        return tuple(f"{chr(65 + i)}: {o.contract}" for i, o in enumerate(self.offers))

    def to_json(self) -> dict[str, Any]:
        """The `slakit-compare/2` document (`slakit compare --format json`)."""
        return {
            "format": FORMAT,
            "offers": [o.to_json() for o in self.offers],
            "rows": [r.to_json() for r in self.rows],
            "simulation": None if self.simulation is None else self.simulation.to_json(),
            "simulations": [s.to_json() for s in self.simulations],
            "best_counts": list(self.best_counts),
        }


def _gpu_hours(lc: LoadedContract, sim: SimSummary) -> Decimal:
    """GPU-hours of the simulated months (every GPU of the offer, every hour of each month)."""
    from calculators.periods import parse_month, shift_label

    zone = lc.model.contract.timezone
    last = sim.last_period
    label, hours = sim.first_period, Decimal(0)
    while True:
        hours += parse_month(label, zone).hours
        if label == last:
            break
        label = shift_label(label, 1)
    return hours * lc.topology.gpu_count


def _sim_rows(sims: list[SimSummary], offers: list[LoadedContract]) -> list[Row]:
    """Rows from each offer's simulation summary (same model, seed, runs and months)."""
    rows: list[Row] = []

    def add(term: str, values: list[Any], fmt, better, rule: str, unit: str | None = None, data=None) -> None:
        shown = tuple(fmt(v) for v in values)
        plain = tuple(machine(data(v) if data else v) for v in values)
        rows.append(Row(section=SIM_SECTION, term=term, values=shown, best=best_of(values, better, "worst"),
                        rule=rule, data=plain, unit=unit))

    cur = sims[0].currency if len({s.currency for s in sims}) == 1 else None
    add("expected credits (mean)", [(float(s.credits.mean), s.currency) for s in sims],
        lambda v: f"{v[0]:,.2f} {v[1]}", None, "for information (offers differ in size)", cur, lambda v: v[0])
    net = [s.fee_total - s.credits.mean for s in sims]
    add("fee minus expected credits", [(n, s.currency) for n, s in zip(net, sims)],
        lambda v: f"{v[0]:,.2f} {v[1]}", None, "for information: what the simulated months cost after credits "
        "(offers differ in size)", cur, lambda v: float(v[0]))
    delivered = []
    for n, s, lc in zip(net, sims, offers):
        hours = _gpu_hours(lc, s) - Decimal(str(s.lost_gpu_hours_mean))
        delivered.append(n / hours if hours > 0 else None)
    add("price per delivered GPU-hour", delivered, lambda v: "n/a" if v is None else f"{v:.4f}", "lower",
        "lower is better: (fee - expected credits) / (GPU-hours - expected lost GPU-hours)",
        f"{cur} per GPU-hour" if cur else "currency per GPU-hour", lambda v: None if v is None else float(v))
    add("expected credits, % of fee", [s.credits.mean_pct_of_fee for s in sims], lambda v: f"{v:.2f}%",
        "higher", "higher is better: more of the fee comes back for the same failures")
    add("credits P50 / P95, % of fee",
        [(float(s.credits.p50) / float(s.fee_total) * 100 if s.fee_total else 0.0,
          float(s.credits.p95) / float(s.fee_total) * 100 if s.fee_total else 0.0)
         for s in sims], lambda v: f"{v[0]:.2f}% / {v[1]:.2f}%", None, "for information")
    add("value returned (credits / value of lost GPU-hours)",
        [s.value_returned_ratio_of_means for s in sims],
        lambda v: "n/a" if v is None else f"{v:.3f}", "higher",
        "higher is better: expected credits / (expected lost GPU-hours x price per GPU-hour)")
    scopes: list[str] = []
    for s in sims:
        scopes += [k for k in s.availability if k not in scopes]
    for scope in scopes:
        add(f"{scope} availability (mean)",
            [float(s.availability[scope].mean) if scope in s.availability else None for s in sims],
            lambda v: "—" if v is None else f"{math.floor(v * 10**4) / 10**4:.4f}%", None,
            "for information: measured under each contract's own downtime rules")
    add("P(chronic-failure exit fires)", [s.chronic_any for s in sims], lambda v: f"{v:.1%}",
        "higher", "higher is better: the exit right is reachable")
    return rows


def comparison(offers: list[LoadedContract], sims: list[SimSummary] | None = None,
               lint_reports: list[Any] | None = None) -> Comparison:
    """The comparison of `offers`; `sims` are their simulation summaries (one per offer, in
    the same order, run under the same model, seed, runs and months) or None; `lint_reports`
    their `slaschema.lint` reports (the lint row) or None."""
    rows = term_rows(offers)
    if lint_reports is not None:
        errors = [r.count("error") for r in lint_reports]
        warnings = [r.count("warning") for r in lint_reports]
        rows.append(Row(section="Review", term="lint errors / warnings",
                        values=tuple(f"{e} / {w}" for e, w in zip(errors, warnings)),
                        best=best_of([e * 10**6 + w for e, w in zip(errors, warnings)], "lower", "worst"),
                        rule="fewer is better (slakit lint)",
                        data=tuple({"errors": e, "warnings": w} for e, w in zip(errors, warnings)), unit="findings"))
    sim_info = None
    if sims:
        rows += _sim_rows(sims, offers)
        s0 = sims[0]
        sim_info = SimulationInfo(model_name=s0.model_name, model_description=s0.model_description, seed=s0.seed,
                                  runs=s0.runs, months=s0.months)
    return Comparison(
        offers=tuple(Offer(file=lc.file, contract=lc.id, provider=lc.model.contract.provider,
                           title=lc.model.contract.title, sha256=lc.sha256) for lc in offers),
        rows=tuple(rows), simulation=sim_info, simulations=tuple(sims or ()),
        best_counts=tuple(sum(1 for r in rows if i in r.best) for i in range(len(offers))))


def compare_document(cmp: Comparison) -> d.Document:
    """The comparison as one shared document: the offers, how rows are judged, then one table
    per section (term, one column per offer, rule) with the best offer's cells marked."""
    labels = cmp.labels
    n = len(labels)
    blocks: list[d.Block] = [
        d.Bullets(tuple(f"{lab} — {o.provider}, {o.title or ''} ({o.file}, sha256 {o.sha256[:12]})"
                        for lab, o in zip(labels, cmp.offers))),
        d.Para("The best offer for the buyer in each row is marked (bold on green in the PDF, bold with a check "
               "mark in Markdown and HTML); ties share the mark; the rule column says how the row is judged.")]
    if cmp.simulation:
        s = cmp.simulation
        blocks.append(d.Para(f"Simulated rows: model {s.model_name}, seed {s.seed}, {s.runs} runs x "
                             f"{s.months} months, each offer on its own topology."))
    blocks.append(d.Para("Best-offer marks: " + ", ".join(f"{lab.split(':')[0]} {k}" for lab, k in
                                                          zip(labels, cmp.best_counts)), "strong"))
    sections: dict[str, list[Row]] = {}
    for r in cmp.rows:
        sections.setdefault(r.section, []).append(r)
    widths = (48.0, *([(277.0 - 48 - 52) / max(1, n)] * n), 52.0)
    for section, rows in sections.items():
        blocks.append(d.Heading(section, 1))
        blocks.append(d.Table(header=("term", *labels, "rule"),
                              rows=tuple((r.term, *r.values, r.rule) for r in rows),
                              widths=widths, font_size=7.5,
                              marks=tuple((i, 1 + j) for i, r in enumerate(rows) for j in r.best)))
    return d.Document(
        title="Offer comparison", subtitle=None, blocks=tuple(blocks), toc=False, cover_page=False, landscape=True,
        author="slakit compare", keywords=("comparison", *(o.contract for o in cmp.offers)),
        footer="Offer comparison · " + " · ".join(f"{lab} sha256 {o.sha256[:12]}"
                                                  for lab, o in zip(labels, cmp.offers)))


def render_markdown(cmp: Comparison) -> str:
    from calculators.reports.text import render_markdown as markdown

    return markdown(compare_document(cmp))


def render_html(cmp: Comparison) -> str:
    from calculators.reports.text import render_html as html

    return html(compare_document(cmp))


def render_pdf(cmp: Comparison) -> bytes:
    from calculators.reports.pdf import render_pdf as pdf

    return pdf(compare_document(cmp))


def render_table(cmp: Comparison, console: Any = None) -> None:
    """The terminal table; best offers in bold green, or marked `*` where the output has no
    colour (piped, redirected, NO_COLOR). `console` is a `rich.console.Console` (default: stdout)."""
    from rich.console import Console
    from rich.markup import escape as escape_markup
    from rich.table import Table

    labels = cmp.labels
    console = console or Console()
    plain = not console.is_terminal or console.no_color or console.color_system is None
    title = ("Offer comparison (best for the buyer marked *)" if plain
             else "Offer comparison (best for the buyer in bold green)")
    t = Table(title=title, show_lines=False)
    t.add_column("term", overflow="fold")
    for lab in labels:
        t.add_column(lab, overflow="fold")
    section = None
    for r in cmp.rows:
        if r.section != section:
            section = r.section
            t.add_row(f"[bold underline]{section}[/]", *[""] * len(labels))
        mark = (lambda v: f"{escape_markup(v)} *") if plain else (lambda v: f"[bold green]{escape_markup(v)}[/]")
        t.add_row(r.term, *[(mark(v) if i in r.best else escape_markup(v)) for i, v in enumerate(r.values)])
    console.print(t)
    console.print(("best-offer marks (*): " if plain else "best-offer marks: ")
                  + ", ".join(f"{lab} {n}" for lab, n in zip(labels, cmp.best_counts)),
                  highlight=False)
    if cmp.simulation:
        s = cmp.simulation
        console.print(f"simulated rows: model {s.model_name}, seed {s.seed}, {s.runs} runs x "
                      f"{s.months} months", highlight=False)
