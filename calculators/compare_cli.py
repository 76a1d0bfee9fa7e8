"""`slakit compare A.yaml B.yaml [...]`: competing offers side by side."""

from __future__ import annotations

import json
from pathlib import Path

import click

from slaschema.cliconv import Progress, no_progress_option, output_format, progress_wanted
from slaschema.textsafe import shown_name


@click.command()
@click.argument("contracts", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the comparison to FILE: .pdf, .md (Markdown) or .html.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--failure-model", "model_name", default="llama3", show_default=True,
              help="Failure model for the simulated rows (built-in name or YAML file).")
@click.option("--runs", type=click.IntRange(0, 100_000), default=300, show_default=True,
              help="Monte Carlo runs per offer; 0 leaves the simulated rows out.")
@click.option("--months", type=click.IntRange(1, 120), default=12, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@no_progress_option
def compare(contracts: tuple[str, ...], output: str | None, fmt: str, model_name: str, runs: int, months: int,
            seed: int, no_progress: bool) -> None:
    """Compare the terms of two or more offers side by side: price per GPU-hour, targets and
    credits per scope, downtime rules, exclusions, caps, support, acceptance and exit rights.
    Each row marks the best offer for the buyer and says how it judges. With --runs > 0 every
    offer is also simulated under the same failure model and seed (expected credits,
    availability, value returned, chance the chronic-failure exit fires).
    """
    if len(contracts) < 2:
        raise click.UsageError("compare needs at least two contracts")
    kind = output_format(output, None, ("pdf", "md", "html"), explicit=False) if output else None
    if output and kind is None:
        raise click.UsageError(f"-o {output}: name the report *.pdf, *.md or *.html [output_extension]")
    from calculators.reports.compare import comparison, render_html, render_markdown, render_pdf, render_table
    from slaschema.errors import gather
    from slaschema.lint import lint
    from slaschema.loader import load_contract

    offers = gather(load_contract, contracts)   # every bad contract at once: printed, exit 1 (report_input_errors)
    sims = None
    if runs > 0:
        from calculators.simulate.models import load_model
        from calculators.simulate.run import simulate

        model = load_model(model_name)
        for lc in offers:
            if lc.model.contract.effective is None:
                raise click.UsageError(f"{lc.file} has no effective date; the simulation needs a first month")
            from calculators.periods import horizon_problem

            eff = lc.model.contract.effective.from_
            problem = horizon_problem(f"{eff.year:04d}-{eff.month:02d}", months,
                                      f"{lc.file}: the effective date {eff.year:04d}-{eff.month:02d}",
                                      "; or give --runs 0 to compare the terms only")
            if problem:
                raise click.UsageError(problem)
        progress = Progress("simulate offers", runs * len(offers), enabled=progress_wanted(no_progress))
        try:
            sims = [simulate(lc, model, months=months, runs=runs, seed=seed, on_run=progress.step).summary()
                    for lc in offers]
        finally:
            progress.close()
    cmp = comparison(offers, sims, [lint(lc) for lc in offers])
    if output:
        from slaschema.fileio import write_atomic

        data = render_pdf(cmp) if kind == "pdf" else render_html(cmp) if kind == "html" else render_markdown(cmp)
        write_atomic(Path(output), data)
    if fmt == "json":
        click.echo(json.dumps(cmp.to_json(), indent=2))
    else:
        render_table(cmp)
        if output:
            click.echo(f"wrote {shown_name(output)}")


def register(group: click.Group) -> None:
    group.add_command(compare)
