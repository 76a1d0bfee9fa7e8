"""`slakit simulate CONTRACT`: what the SLA would pay under a failure model (Monte Carlo)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from calculators.period_option import MONTH
from slaschema.cliconv import Progress, emit_output, fmt_given, no_progress_option, output_format, output_option, \
    progress_wanted
from slaschema.textsafe import shown_name

if TYPE_CHECKING:
    from calculators.simulate.run import SimSummary

MODEL_FORMAT = "slakit-failure-model/1"      # the first field of `simulate --show-model --format json`


def render_table(summary: SimSummary, file=None) -> None:
    """The simulation's distributions as terminal tables (`SimResult.summary()`)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file) if file is None else Console(file=file, width=120, color_system=None)
    cur = summary.currency
    console.print(f"[bold]{summary.contract}[/]: {summary.runs} runs x {summary.months} months "
                  f"({summary.first_period} to {summary.last_period}), model {summary.model_name}, "
                  f"seed {summary.seed}", highlight=False)
    console.print(f"incidents per run: {summary.incidents_mean_per_run} "
                  f"({summary.incidents_per_1000_gpu_days} per 1,000 GPU-days); fee over the horizon "
                  f"{summary.fee_total} {cur}", highlight=False)
    c = summary.credits
    t = Table(title="Credits over the horizon")
    for col in ("mean", "P50", "P95", "max", "mean % of fee", "P(any credit)"):
        t.add_column(col, justify="right")
    t.add_row(str(c.mean), str(c.p50), str(c.p95), str(c.max), f"{c.mean_pct_of_fee:.2f}%", f"{c.probability_any:.0%}")
    console.print(t)
    a = Table(title="Availability per scope (mean over unit-months, distribution over runs, %)")
    for col in ("scope", "mean", "P5", "P50", "P95", "worst unit-month (P50)", "unit-months below target",
                "P(chronic exit)"):
        a.add_column(col, justify="right")
    for scope, v in summary.availability.items():
        a.add_row(scope, str(v.mean), str(v.p5), str(v.p50), str(v.p95), str(v.worst_unit_month_p50),
                  f"{v.unit_months_below_target_pct:.2f}%", f"{summary.chronic.get(scope, 0.0):.1%}")
    console.print(a)
    console.print(f"GPU-hours lost per run: mean {summary.lost_gpu_hours_mean:.0f} "
                  f"(value {summary.value_lost_mean} {cur} at {summary.price_per_gpu_hour}/GPU-h)",
                  highlight=False)
    ratio = "n/a" if summary.value_returned_ratio_of_means is None else f"{summary.value_returned_ratio_of_means:.3f}"
    console.print(f"value returned (credits / value of lost GPU-hours): {ratio} "
                  f"(per run P50 {summary.value_returned_p50:.3f}, P95 {summary.value_returned_p95:.3f})",
                  highlight=False)
    console.print(f"P(any chronic-failure exit): {summary.chronic_any:.1%}; acceptance: "
                  f"{summary.acceptance}", highlight=False)


@click.command()
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option("--failure-model", "model_name", default="llama3", show_default=True,
              help="Built-in model (llama3, titan, titan-wearout) or a YAML model file.")
@click.option("--months", type=click.IntRange(1, 120), default=12, show_default=True)
@click.option("--runs", type=click.IntRange(1, 1_000_000), default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--start", type=MONTH, default=None, help="First month (default: the contract's effective date).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              help="Output format (default: from the -o extension, else table).")
@output_option()
@click.option("--chart", type=click.Path(dir_okay=False), default=None,
              help="Also write a chart to FILE (.png or .pdf).")
@click.option("--show-model", is_flag=True, help="Print the failure model (every rate with its source) and exit.")
@no_progress_option
@click.pass_context
def simulate(ctx, contract: str, model_name: str, months: int, runs: int, seed: int, start: str | None, fmt: str,
             output: str | None, chart: str | None, show_model: bool, no_progress: bool) -> None:
    """Monte Carlo of what CONTRACT pays: generate incident logs for its topology from a
    failure model, compute each run with the credits engine, and report availability per
    scope, credits (mean, P50, P95), the odds that each termination trigger fires, and the
    value returned (credits / value of the GPU-hours lost). Deterministic for a seed.
    """
    from slaschema.cli import load_or_exit

    if chart and Path(chart).suffix.lower() not in (".png", ".pdf"):
        raise click.UsageError("--chart must end in .png or .pdf [output_extension]")
    fmt = output_format(output, fmt, ("table", "json"), explicit=fmt_given(ctx))
    from calculators.simulate.models import load_model

    model = load_model(model_name)        # a bad model: problems printed, exit 1 (report_input_errors)
    if show_model:
        click.echo(json.dumps({"format": MODEL_FORMAT, **model.describe()}, indent=2))
        return
    lc = load_or_exit(contract, fmt)
    if start is None and lc.model.contract.effective is None:
        raise click.UsageError("the contract has no effective date; name the first month with --start YYYY-MM")
    from calculators.periods import horizon_problem

    if start is not None:
        problem = horizon_problem(start, months, f"--start {start}")
    else:
        eff = lc.model.contract.effective.from_
        problem = horizon_problem(f"{eff.year:04d}-{eff.month:02d}", months,
                                  f"the contract's effective date {eff.year:04d}-{eff.month:02d} (name another with --start)")
    if problem:
        raise click.UsageError(problem)
    from calculators.simulate.run import FORMAT
    from calculators.simulate.run import simulate as run_simulation

    progress = Progress(f"simulate {lc.id}", runs, enabled=progress_wanted(no_progress))
    try:
        result = run_simulation(lc, model, months=months, runs=runs, seed=seed, start=start, on_run=progress.step)
    finally:
        progress.close()
    summary = result.summary()
    if chart:
        from calculators.simulate.chart import render_chart
        from slaschema.fileio import write_atomic

        write_atomic(Path(chart), render_chart(result, Path(chart).suffix.lower().lstrip(".")))
    if fmt == "json":
        emit_output(json.dumps({"format": FORMAT, **summary.to_json()}, indent=2) + "\n", output)
    elif output:
        import io

        buf = io.StringIO()
        render_table(summary, buf)
        emit_output(buf.getvalue(), output)
    else:
        render_table(summary)
    if chart and fmt == "table" and not output:
        click.echo(f"wrote {shown_name(chart)}")


def register(group: click.Group) -> None:
    group.add_command(simulate)
