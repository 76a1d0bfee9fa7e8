"""`slakit draft` (the SLA schedule) and `slakit review` (the SLA review)."""

from __future__ import annotations

from pathlib import Path

import click

from calculators.cli import history_options, parse_as_of
from calculators.goodput.cli import goodput_options, review_goodput_json
from calculators.period_option import period_options
from slaschema.cliconv import (Progress, extra_output, no_progress_option, output_format, output_option,
                               progress_wanted)
from slaschema.textsafe import shown_name

FORMATS = ("pdf", "md", "html")


def _format_for(output: str, fmt: str | None) -> str:
    """--format, else the -o extension (.pdf, .md, .html; none: pdf); a mismatch is a usage error."""
    return output_format(output, fmt, FORMATS, explicit=fmt is not None, default="pdf")


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` atomically (see slaschema.fileio)."""
    from slaschema.fileio import write_atomic as _write_atomic

    _write_atomic(path, data)


def render(document, fmt: str) -> bytes:
    if fmt == "pdf":
        from calculators.reports.pdf import render_pdf

        return render_pdf(document)
    from calculators.reports.text import render_html, render_markdown

    text = render_markdown(document) if fmt == "md" else render_html(document)
    return text.encode("utf-8")


@click.command()
@click.argument("contract", type=click.Path(dir_okay=False))
@output_option(required=True, help="Output file; .pdf, .md or .html picks the format.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format (default: from the file name, else pdf).")
def draft(contract: str, output: str, fmt: str | None) -> None:
    """Write the SLA schedule of CONTRACT: every clause as plain sentences, from the contract itself.

    The footer of every page carries the contract's SHA-256 and the slakit version, so both
    parties can check they signed the same terms; the PDF embeds the contract YAML. Pages
    are marked DRAFT until agreement.signed is set. Builds are byte-identical; the PDF
    creation date is SOURCE_DATE_EPOCH when set, else the contract's current revision date
    (else its signature date or the start of its term).
    """
    from calculators.reports.schedule import schedule_document
    from slakit import __version__
    from slaschema.cli import load_or_exit

    lc = load_or_exit(contract)
    fmt = _format_for(output, fmt)
    data = render(schedule_document(lc, __version__), fmt)
    write_atomic(output, data)
    click.echo(f"{output}: SLA schedule for {lc.id} ({fmt}, {len(data):,} bytes, contract sha256 {lc.sha256[:12]})")




@click.command()
@click.argument("contract", type=click.Path(dir_okay=False))
@click.argument("incidents", type=click.Path(dir_okay=False))
@period_options()
@output_option(required=True, help="Output file; .pdf, .md or .html picks the format.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format (default: from the file name, else pdf).")
@click.option("--as-of", "as_of", default=None,
              help="Open incidents run until this ISO 8601 instant (default: the end of the period).")
@click.option("--assume-tz", default=None, help="Zone for naive timestamps in the incident log.")
@click.option("--skip-bad-rows", is_flag=True, help="Leave out unreadable rows (they are listed in the report).")
@click.option("--register-limit", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Incidents printed in the register; the full register goes to OUTPUT.incidents.csv.")
@click.option("--json-out", type=click.Path(dir_okay=False), default=None, callback=extra_output("json"),
              help="Also write the result document the report is built from (JSON, *.json).")
@history_options
@goodput_options
@no_progress_option
def review(contract: str, incidents: str, periods: tuple[str, ...], output: str, fmt: str | None,
           as_of: str | None, assume_tz: str | None, skip_bad_rows: bool, register_limit: int,
           json_out: str | None, history_files: tuple[str, ...], history_from: str | None, no_progress: bool,
           **goodput) -> None:
    """Write the SLA review of CONTRACT for a quarter or a month from the INCIDENTS log.

    Cover with the inputs' SHA-256, executive summary (credits owed, targets met, termination
    rights, open and flagged incidents), availability per scope and month, downtime by
    category and cause, a rack x day fleet view, the credit statement, support compliance and
    the incident register; every node's credit in an appendix. Figures come from the credits
    engine; the report only formats them. The chronic-failure termination trigger looks at the
    contract's whole window when earlier months are given (--history or --history-from).
    Exit 1 when the contract, the log or a history file has errors.
    """
    from decimal import Decimal

    from calculators import log_prefetch

    log_prefetch.start(incidents)           # the log is read while the modules below load
    from calculators.cli import apply_history
    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from calculators.periods import PeriodError
    from calculators.reports.fmt import money
    from calculators.reports.review import ReviewInputs, review_document
    from calculators.reports.review_model import review_extras
    from slakit import __version__
    from slaschema.cli import echo_warnings, load_or_exit

    label = periods[0]
    fmt = _format_for(output, fmt)
    as_of_dt = parse_as_of(as_of, zone_option=None)
    lc = load_or_exit(contract)
    # a large fleet takes a while: a line on a terminal per finished stage
    progress = Progress(f"review {label}", 4, enabled=progress_wanted(no_progress))
    from slaschema.errors import InputError

    try:
        log = load_incidents(incidents, lc, assume_tz=assume_tz, skip_bad_rows=skip_bad_rows)
    except InputError:
        progress.close()
        raise                                   # printed, exit 1 (slaschema.cli.report_input_errors)
    echo_warnings(log.warnings)
    progress.step(note="incidents loaded")
    try:
        res = compute(lc, log, [label], as_of=as_of_dt, incidents=True)
    except PeriodError as e:
        raise click.BadParameter(str(e), param_hint="--month/--quarter/--period") from None
    res = apply_history(lc, log, res, history_files, history_from)
    extras = review_extras(res)
    progress.step(note="figures computed")
    out = Path(output)
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    inputs = ReviewInputs(contract_file=Path(lc.file).name, contract_sha256=lc.sha256,
                          incidents_file=Path(incidents).name, incidents_sha256=log.sha256 or "",
                          tool_version=__version__, period_label=label)
    document, attachments = review_document(lc, res, extras, inputs, register_limit=register_limit,
                                            attachment_stem=stem,
                                            goodput=review_goodput_json(lc, log, res, goodput, skip_bad_rows))
    progress.step(note="document built")
    data = render(document, fmt)
    write_atomic(out, data)
    progress.step(note=f"{fmt} written")
    written = [f"{out} ({fmt}, {len(data):,} bytes)"]
    for a in attachments:
        path = out.with_name(stem + a.name)
        write_atomic(path, a.data)
        written.append(f"{path} ({a.description})")
    if json_out:
        write_atomic(json_out, res.dumps_utf8())
        written.append(f"{json_out} (result document)")
    total = sum((m.credit_total for m in res.month_totals()), Decimal(0))
    click.echo(f"SLA review {label} for {lc.id}: credits owed {money(total, res.currency)}")
    for w in written:
        click.echo(f"  wrote {shown_name(w)}")


def register(group: click.Group) -> None:
    group.add_command(draft)
    group.add_command(review)
