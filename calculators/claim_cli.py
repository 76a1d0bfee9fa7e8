"""`slakit claim`: the claim letter and evidence package, the claims ledger's status, package checks.

    slakit claim CONTRACT LOG --month M | --quarter Q [--as-of T] -o claim.pdf|claim.md
    slakit claim status LEDGER [CONTRACT ...] [--as-of T]
    slakit claim verify PACKAGE [--allowed-signers FILE --identity NAME]

`slakit claim CONTRACT LOG ...` is short for `slakit claim letter CONTRACT LOG ...`.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from calculators.period_option import period_options
from slaschema.cliconv import extra_output, output_option
from slaschema.textsafe import shown_name

FORMATS = ("pdf", "md")


class ClaimGroup(click.Group):
    """A group whose default subcommand is `letter`: `slakit claim CONTRACT LOG ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["letter", *args]
        return super().parse_args(ctx, args)


@click.group(cls=ClaimGroup)
def claim() -> None:
    """Claim service credits: a letter per month with its evidence package, and the claims ledger.

    `slakit claim CONTRACT LOG --quarter Q -o claim.pdf` is short for `slakit claim letter ...`.
    """


def _as_of(text: str | None, assume_tz: str | None = None) -> datetime:
    """`--as-of` read as every command reads it (`calculators.cli.read_as_of`), between the
    years 1900 and 9998; default: now."""
    if text is None:
        return datetime.now(timezone.utc).replace(microsecond=0)
    from calculators.cli import _check_zone, read_as_of

    _check_zone(assume_tz)
    t = read_as_of(text, assume_tz)
    try:
        in_range = 1900 <= t.astimezone(timezone.utc).year <= 9998
    except OverflowError:
        in_range = False
    if not in_range:
        raise click.BadParameter(f"{text!r}: give an instant between the years 1900 and 9998 [as_of_out_of_range]",
                                 param_hint="--as-of")
    return t


def _format_for(output: str, fmt: str | None) -> str:
    """--format, else the -o extension (.pdf, .md; none: pdf); a mismatch is a usage error."""
    from slaschema.cliconv import output_format

    return output_format(output, fmt, FORMATS, explicit=fmt is not None, default="pdf")


def _package_path(output: Path) -> Path:
    stem = output.name[: -len(output.suffix)] if output.suffix else output.name
    return output.with_name(stem + ".evidence.tar")


@claim.command("letter")
@click.argument("contract", type=click.Path(dir_okay=False))
@click.argument("incidents", type=click.Path(dir_okay=False))
@period_options(help="A quarter gives a letter per month.")
@click.option("--as-of", "as_of", metavar="TS",
              help="The instant the claim is judged at (deadlines) and open incidents end; default: now.")
@click.option("--assume-tz", metavar="ZONE", help="Zone for timestamps written without an offset.")
@output_option(required=True, help="The letter: .pdf or .md picks the format. The evidence package goes beside "
                                   "it (NAME.evidence.tar).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None, help="Letter format (default: from -o).")
@click.option("--monitor-log", "monitor_logs", multiple=True, type=click.Path(dir_okay=False, exists=True),
              metavar="FILE", help="The buyer's own monitor log (`slakit watch` output) for the package (repeatable).")
@click.option("--reconcile", "reconcile_reports", multiple=True, type=click.Path(dir_okay=False, exists=True),
              metavar="FILE", help="A `slakit reconcile` report for the package (repeatable).")
@click.option("--sign", "key", type=click.Path(dir_okay=False), metavar="KEY",
              help="Sign the package manifest with this SSH key (ssh-keygen -Y sign -n slakit-evidence).")
@click.option("--ledger", type=click.Path(dir_okay=False), metavar="FILE", callback=extra_output("csv"),
              help="Add the claimed months to this claims ledger (CSV, *.csv; created when missing).")
def letter(contract, incidents, periods, as_of, assume_tz, output, fmt, monitor_logs, reconcile_reports,
           key, ledger) -> None:
    """Write the claim letter for a month or a quarter, and its evidence package.

    One letter per month with a credit owed whose claim window is still open, addressed to
    `credits.claim.send_to`; months whose window closed (or with nothing owed) are listed as
    not claimed, with the reason. The package holds the incident rows of the claimed months,
    the claim's figures, the contract, the monitor log and reconcile report when given, a
    SHA-256 manifest and, with --sign, an OpenSSH signature over it. Exit 1 on bad input.
    """
    from calculators import claim_package
    from calculators.claim_case import ClaimError, claim_months
    from calculators.incidents import load_incidents
    from calculators.periods import PeriodError
    from calculators.reports.claim_letter import LetterInputs, claim_document
    from calculators.reports.cli import render
    from calculators.reports.fmt import money
    from slakit import __version__
    from slaschema.cli import echo_warnings, load_or_exit
    from slaschema.cliconv import unwritable
    from slaschema.errors import InputError
    from slaschema.fileio import write_atomic

    fmt = _format_for(output, fmt)
    when = _as_of(as_of, assume_tz)
    lc = load_or_exit(contract)
    log = load_incidents(incidents, lc, assume_tz=assume_tz)    # InputError: printed, exit 1 (report_input_errors)
    echo_warnings(log.warnings)
    label = periods[0]
    try:
        run = claim_months(lc, log, [label], when)
    except PeriodError as e:
        raise click.BadParameter(str(e), param_hint="--month/--quarter/--period") from None
    except ClaimError as e:
        raise click.BadParameter(str(e), param_hint="--as-of") from None
    out = Path(output)
    pkg = None
    try:
        if run.claimed:
            pkg = claim_package.build(run, lc.file, incidents, list(monitor_logs), list(reconcile_reports), key)
        if ledger:
            from calculators.claim_ledger import read_ledger

            if Path(ledger).exists():           # a FIFO or folder is refused too, not replaced
                read_ledger(ledger)             # refuse a bad ledger before anything is written
    except InputError as e:
        e.add_note("nothing written")
        raise
    package_path = _package_path(out)
    inputs = LetterInputs(contract_file=Path(lc.file).name, tool_version=__version__,
                          label=label,
                          package_name=package_path.name if pkg else None,
                          package_files=pkg.files if pkg else (), manifest_sha256=pkg.manifest_sha256 if pkg else None,
                          signed_by=pkg.signed_by if pkg else None)
    data = render(claim_document(lc, run, inputs), fmt)
    try:
        if pkg:
            write_atomic(package_path, pkg.data)
        write_atomic(out, data)
    except OSError as exc:
        if pkg and out.exists() is False and package_path.is_file():
            package_path.unlink()               # no package without its letter
        raise unwritable(out, exc) from None
    cur = run.currency
    click.echo(f"claim {inputs.label} for {lc.id} as of {when.isoformat()}: {money(run.claimed_total, cur)} claimed")
    for m in run.months:
        if m.to_claim:
            click.echo(f"  {m.period}: {money(m.credit, cur)} claimed, {m.status.replace('_', ' ')}")
        elif not m.claimable:
            click.echo(f"  {m.period}: {money(m.credit, cur)} lapsed, not claimed (window closed)")
        else:
            click.echo(f"  {m.period}: nothing owed")
    click.echo(f"  wrote {shown_name(out)} ({fmt}, {len(data):,} bytes)")
    if pkg:
        click.echo(f"  wrote {shown_name(package_path)} ({len(pkg.files)} files, manifest SHA-256 {pkg.manifest_sha256[:16]}"
                   + (f", signed by {pkg.signed_by})" if pkg.signed_by else ", unsigned)"))
    asked = [e for e in (lc.model.credits.claim.evidence if lc.model.credits.claim else [])
             if "monitor" in e.lower()]
    if pkg and asked and not monitor_logs:
        click.echo(f"  note: the contract asks for {asked[0]!r} and no --monitor-log was given; the package has none",
                   err=True)
    if ledger and any(m.credit > 0 for m in run.months):
        from calculators.claim_ledger import record_claims

        added, updated = record_claims(ledger, run)
        click.echo(f"  ledger {ledger}: {added} row(s) added, {updated} updated")


@claim.command("status")
@click.argument("ledger", type=click.Path(dir_okay=False))
@click.argument("contracts", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--as-of", "as_of", metavar="TS", help="Judge deadlines at this instant (default: now).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def status(ledger, contracts, as_of, fmt) -> None:
    """Outstanding claim amounts and deadlines across months and contracts, from the claims LEDGER.

    With CONTRACT files, only their rows are shown and each deadline comes from the contract's
    `credits.claim_window`; otherwise from the ledger's `due` column. Exit 1 on a bad ledger.
    """
    from calculators.claim_ledger import read_ledger, status_rows, totals
    from calculators.result import iso
    from slaschema.cli import load_or_exit

    when = int(_as_of(as_of).timestamp())
    loaded = {}
    for c in contracts:
        lc = load_or_exit(c, fmt)
        loaded[lc.id] = lc
    rows = read_ledger(ledger)          # InputError: printed in --format, exit 1 (report_input_errors)
    if loaded:
        rows = [r for r in rows if r.contract in loaded]
    st = status_rows(rows, when, loaded)
    tot = totals(st)
    if fmt == "json":
        from slaschema.jsontext import dumps_indented_ascii

        click.echo(dumps_indented_ascii({"format": "slakit-claim-status/1", "ledger": ledger, "as_of": iso(when),
                                         "rows": [s.to_json() for s in st], "totals": tot}))
        return
    click.echo(render_status(st, tot, iso(when), ledger), nl=False)


STATUS_COLUMNS = ("contract", "month", "claimed", "due before", "time left", "filed", "state", "outstanding", "flags")
STATUS_WIDTH = 140


def render_status(rows, tot, as_of: str, ledger: str) -> str:
    import io

    from rich.console import Console

    from calculators.reports.claims_text import local_instant, time_left
    from calculators.reports.fmt import money
    from slaschema.plain_table import PlainTable
    from slaschema.textsafe import rich_text, terminal_text

    dues: dict[tuple[int | None, str], str] = {}       # deadlines repeat from row to row
    lefts: dict[int, str] = {}
    cells = []
    for s in rows:
        due = dues.get((s.due, s.zone))
        if due is None:
            due = dues[(s.due, s.zone)] = local_instant(None if s.due is None else _iso(s.due), s.zone)
        left = ""
        if s.due is not None and s.state in ("to_file", "lapsed"):
            left = lefts.get(s.due) or lefts.setdefault(s.due, time_left(_iso(s.due), as_of))
        cells.append((terminal_text(s.contract), s.month, terminal_text(f"{money(s.amount_claimed)} {s.currency}".strip()),
                      due, left, s.filed.isoformat() if s.filed else "—", s.state.replace("_", " "),
                      money(s.outstanding), " ".join(s.flags).replace("_", " ")))
    title = f"Claims in {terminal_text(ledger)} as of {as_of}"
    right = {STATUS_COLUMNS.index("claimed"), STATUS_COLUMNS.index("outstanding")}
    buf = io.StringIO()
    con = Console(file=buf, width=STATUS_WIDTH, force_terminal=False, color_system=None)
    # plain text in one pass over the rows (Rich's layout took minutes on a large ledger)
    t = PlainTable(title=title)
    for j, col in enumerate(STATUS_COLUMNS):
        t.add_column(col, justify="right" if j in right else "left", no_wrap=col in ("due before", "month"))
    for row in cells:
        t.add_row(*row)
    t.print(con)
    for cur, v in tot.items():
        con.print(f"{rich_text(cur)}: outstanding {money(v['outstanding'])} (to file {money(v['to_file'])}, awaiting answer "
                  f"{money(v['awaiting'])}, accepted not paid {money(v['accepted_unpaid'])}); lost to lapsed windows "
                  f"{money(v['lost'])}; disputed {money(v['disputed'])}")
    if not rows:
        con.print("no claims in the ledger for these contracts")
    return buf.getvalue()


def _iso(epoch: int) -> str:
    from calculators.result import iso

    return iso(epoch)


@claim.command("verify")
@click.argument("package", type=click.Path(dir_okay=False, exists=True))
@click.option("--allowed-signers", type=click.Path(dir_okay=False, exists=True),
              help="OpenSSH allowed-signers file: the signer must be listed (else only integrity is checked).")
@click.option("--identity", help="The signer's principal in the allowed-signers file.")
def verify(package, allowed_signers, identity) -> None:
    """Check an evidence package: every file against the manifest, and the signature if present."""
    from calculators.claim_package import verify as check

    from slaschema.safefiles import read_regular
    from slaschema.textsafe import terminal_text

    if allowed_signers is not None and identity is None:
        raise click.UsageError("--allowed-signers needs --identity, the signer's principal listed in it "
                               "[identity_missing]")
    # an input that leaves nothing to judge (no regular file, no tar, no manifest, ssh-keygen
    # missing) is an InputError: printed, exit 1 (report_input_errors); what is judged follows
    data = read_regular(package, what="evidence package")
    problems = check(data, allowed_signers, identity, file=package)
    if problems:
        for p in problems:
            click.echo(terminal_text(p), err=True)
        click.echo(f"{package}: {len(problems)} problem(s)", err=True)
        sys.exit(1)
    click.echo(f"{package}: every file matches the manifest"
               + (" and the signature verifies" if _signed(data) else " (not signed)"))


def _signed(data: bytes) -> bool:
    from calculators.claim_package import SIGNATURE, _members

    return SIGNATURE in _members(data)


def register(group: click.Group) -> None:
    group.add_command(claim)
