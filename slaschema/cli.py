"""`slakit validate | show | schema | init | templates`: contract commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from slaschema.cliconv import output_option
from slaschema.textsafe import shown_name

if TYPE_CHECKING:
    from slaschema.loader import LoadedContract

# the first field of each JSON document these commands print
PROBLEMS_FORMAT = "slakit-problems/1"          # the problems of an input judged bad (any command, --format json)
VALIDATE_FORMAT = "slakit-validate/1"
SUMMARY_FORMAT = "slakit-contract-summary/1"   # `show`


def emit_problems(problems, fmt: str, stream=None) -> None:
    """Print problems as `file:line:col: path: message (got V) [code]` lines or JSON."""
    stream = stream or sys.stderr
    if fmt == "json":
        click.echo(json.dumps({"format": PROBLEMS_FORMAT, "ok": False, "problems": [p.to_json() for p in problems]},
                              indent=2))
    else:
        for p in problems:
            click.echo(_problem_line(p), file=stream)
        n = sum(1 for p in problems if p.severity == "error")
        click.echo(f"{n} error(s)", file=stream)


def _problem_line(p) -> str:
    """One problem as one line for a terminal (`warning: ` in front of a warning)."""
    from slaschema.textsafe import terminal_text

    return terminal_text(("warning: " if p.severity == "warning" else "") + p.format(), keep_newlines=False)


SKIPPED_SHOWN = 50        # skipped rows' problems printed one by one on stderr


def echo_skipped(problems, source: str = "the log") -> None:
    """The problems of the rows `--skip-bad-rows` left out, on stderr: for an output that has
    no place for them (a CSV of figures, an explanation), so no row is dropped unsaid."""
    if not problems:
        return
    rows = sorted({p.row for p in problems if p.row is not None})
    click.echo(f"warning: {len(rows)} row(s) of {source} skipped (--skip-bad-rows) and not counted, "
               f"{len(problems)} problem(s):", err=True)
    for p in problems[:SKIPPED_SHOWN]:
        click.echo("  " + _problem_line(p), err=True)
    if len(problems) > SKIPPED_SHOWN:
        click.echo(f"  ... and {len(problems) - SKIPPED_SHOWN:,} more", err=True)


def echo_warnings(problems, seen: set[str] | None = None) -> None:
    """The warnings among `problems` (of an input that was read: a column ignored, bytes read
    as U+FFFD) as `warning: file:line: message [code]` lines on stderr, whatever the output
    format: a command that succeeds still says what it read differently from the file.
    `seen`: the lines a command printed already (and adds these to): a file it reads twice
    (`reconcile LOG LOG`) has its warnings printed once."""
    for p in problems:
        if p.severity == "warning":
            line = _problem_line(p)
            if seen is not None:
                if line in seen:
                    continue
                seen.add(line)
            click.echo(line, err=True)


def exit_on_input_error(exc, fmt: str | None = "table") -> NoReturn:
    """The one handling of bad input: the problems of `exc` (an `InputError`) as
    `file:line:col ... [code]` lines on stderr (JSON problems on stdout with `fmt` json), then
    its notes on stderr, and exit `exc.exit_code` (1 unless the command was called wrongly)."""
    emit_problems(exc.problems, "json" if fmt == "json" else "table")
    for note in getattr(exc, "__notes__", ()):
        click.echo(note, err=True)
    sys.exit(exc.exit_code)


def report_input_errors(callback):
    """`callback` (a command's function) with the one handling of bad input: an
    `InputError` it raises goes to `exit_on_input_error`, with no traceback: JSON problems when
    the command's `--format` is json or it writes JSON (the format `slaschema.cliconv.output_format`
    chose from `-o`), lines otherwise. The `slakit` command wraps every subcommand with it
    (`slakit.cli`)."""
    import functools

    from slaschema.cliconv import written_format
    from slaschema.errors import InputError

    @functools.wraps(callback)
    def run(*args, **kwargs):
        import click

        from slaschema.cliconv import refuse_output_is_input

        ctx = click.get_current_context(silent=True)
        if ctx is not None:
            refuse_output_is_input(ctx)
        try:
            return callback(*args, **kwargs)
        except InputError as e:
            exit_on_input_error(e, "json" if "json" in (kwargs.get("fmt"), written_format()) else "table")
    run.reports_input_errors = True
    return run


# Checks of a loaded contract that live in a higher layer (acceptance registers the check of
# every criterion's params, as `accept run` plans them): `slakit validate` runs them all.
CONTRACT_CHECKS: list = []


def register_contract_check(check) -> None:
    """Add `check(LoadedContract) -> list[Problem]` to what `slakit validate` checks."""
    if check not in CONTRACT_CHECKS:
        CONTRACT_CHECKS.append(check)


def contract_check_problems(lc: LoadedContract) -> list:
    """The problems the registered checks find in `lc`, located in its file."""
    from slaschema.loader import locate_problems

    problems = [p for check in CONTRACT_CHECKS for p in check(lc)]
    return locate_problems(lc, problems) if problems else []


def load_or_exit(path: str, fmt: str = "table") -> LoadedContract:
    """Load a contract or print every problem and exit 1."""
    from slaschema.errors import InputError
    from slaschema.loader import load_contract

    try:
        return load_contract(path)
    except InputError as e:
        exit_on_input_error(e, fmt)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def validate(files: tuple[str, ...], fmt: str) -> None:
    """Check contract FILES against the schema and the format's rules, and the params of
    every acceptance criterion as `accept run` checks them (the same codes).

    Reports every problem at once as file:line:col: field: message (got VALUE) [code].
    A required check param the contract leaves out is a warning (give it at run time with
    `accept run --param ID.KEY=VALUE`). Exit 1 if any file is invalid.
    """
    from slaschema.errors import InputError
    from slaschema.loader import load_contract

    results = []
    bad = False
    for f in files:
        try:
            lc = load_contract(f)
            extra = contract_check_problems(lc)
            if any(p.severity == "error" for p in extra):
                raise InputError(extra)
            results.append({"file": f, "ok": True, "contract": lc.id, "sha256": lc.sha256,
                            "counts": lc.topology.counts(),
                            **({"warnings": [p.to_json() for p in extra]} if extra else {})})
            if fmt == "table":
                c = lc.topology.counts()
                click.echo(f"{f}: ok — {lc.id}: {c['nodes']} nodes, {c['gpus']} GPUs, sha256 {lc.sha256[:12]}")
                for p in extra:
                    click.echo(_problem_line(p))
        except InputError as e:
            bad = True
            results.append({"file": f, "ok": False, "problems": [p.to_json() for p in e.problems]})
            if fmt == "table":
                emit_problems(e.problems, fmt, sys.stdout)
    if fmt == "json":
        click.echo(json.dumps({"format": VALIDATE_FORMAT, "ok": not bad, "files": results}, indent=2))
    sys.exit(1 if bad else 0)


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def show(file: str, fmt: str) -> None:
    """Summarise a contract: parties, term, topology, fees, targets, credits, exclusions."""
    from slaschema.summary import render_summary, summary

    lc = load_or_exit(file, fmt)
    data = summary(lc)
    if fmt == "json":
        click.echo(json.dumps({"format": SUMMARY_FORMAT, **data}, indent=2))
    else:
        render_summary(data)


@click.command()
@output_option()
def schema(output: str | None) -> None:
    """Print the contract JSON Schema (for editors and other tools)."""
    from slaschema.cliconv import output_format
    from slaschema.schema import schema_text

    output_format(output, "json", ("json",))
    text = schema_text()
    if output:
        from slaschema.fileio import write_atomic

        write_atomic(Path(output), text)
    else:
        click.echo(text, nl=False)


@click.command()
def templates() -> None:
    """List the bundled contract templates."""
    from slaschema.templates import list_templates

    for name, desc in list_templates():
        click.echo(f"{name:28s} {desc}")


_JOINERS = "\u200c\u200d\u200e\u200f"       # ZWNJ, ZWJ, LRM, RLM: part of how Persian, Arabic or Hebrew names are written


def _one_line(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A name written into the contract: one line of printable text (the joiners and direction
    marks some scripts need allowed). A newline was folded into a space by YAML (the name
    changed without a word), a control character made the generated contract invalid YAML
    reported against a file the user never wrote, and a bidi override turns a name around."""
    if value is not None and not value.isprintable():
        bad = next((ch for ch in value if not ch.isprintable() and ch not in _JOINERS), None)
        if bad is not None:
            what = "a line break" if bad in "\n\r" else "a control or format character"
            raise click.BadParameter(f"it is written into the contract as one line of printable text, but holds "
                                     f"U+{ord(bad):04X} ({what}); remove it [text_not_printable]", ctx=ctx, param=param)
    return value


@click.command()
@click.option("--template", "template", required=True, help="Template name (see `slakit templates`).")
@click.option("--provider", required=True, callback=_one_line)
@click.option("--customer", required=True, callback=_one_line)
@click.option("--nodes", "nodes", required=True,
              help="Hostlist of all nodes, e.g. 'r[01-04]-n[01-18]' (racks are derived) or 'gpu-[001-128]'.")
@click.option("--rack-size", type=int, default=None, help="Nodes per rack when names do not say (default: "
              "18 for NVL72, 8 for HGX).")
@click.option("--id", "contract_id", default=None, callback=_one_line,
              help="Contract id (default: from the template name).")
@click.option("--start", "start", default=None, help="Effective start date YYYY-MM-DD.")
@output_option(required=True, help="The contract to write (.yaml or .yml).")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def init(template: str, provider: str, customer: str, nodes: str, rack_size: int | None,
         contract_id: str | None, start: str | None, output: str, force: bool) -> None:
    """Write a valid starting contract from a template."""
    from slaschema.templates import render_template

    from slaschema.cliconv import output_format

    output_format(output, "yaml", ("yaml",))
    out = Path(output)
    if out.exists() and not force:
        raise click.UsageError(f"{output} exists; use --force to overwrite")
    try:
        text = render_template(template, provider=provider, customer=customer, nodes=nodes,
                               rack_size=rack_size, contract_id=contract_id, start=start,
                               base_dir=out.parent)
    except KeyError as e:
        raise click.UsageError(str(e.args[0])) from None
    from slaschema.fileio import write_atomic

    write_atomic(out, text)
    click.echo(f"wrote {shown_name(output)} (validated)")


def register(group: click.Group) -> None:
    for cmd in (validate, show, schema, templates, init):
        group.add_command(cmd)
