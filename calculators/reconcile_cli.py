"""`slakit reconcile [CONTRACT] OURS THEIRS`: our incident log against the provider's
(`calculators.reconcile`), and with a contract the credit difference the two logs make
(`calculators.credit_difference`).

Both logs are read by the loader `slakit credits` reads a log with (`calculators.incidents`):
a file one command refuses the other refuses with the same problem lines. Under a contract
the targets are checked against its topology; with none they cannot be, and are taken as
written (the table says so).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import click

from calculators.period_option import period_options
from slaschema.cliconv import DURATION, deprecated_contract_option, resolve_contract

if TYPE_CHECKING:
    from calculators.incidents import IncidentLog
    from slaschema.loader import LoadedContract

# the JSON of `slakit reconcile`: 2 counts incidents as rows and adds the entries compared
RECONCILE_FORMAT = "slakit-reconcile/2"


@click.command("reconcile")
@click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False),
                metavar="[CONTRACT] OURS THEIRS")
@click.option("--tolerance", type=DURATION, default="5m", show_default=True,
              help="Start/end differences up to this are agreement.")
@click.option("--as-of", "as_of", help="End of open incidents (ISO 8601; a time without an offset is in "
              "--assume-tz) [default: the latest time in either log].")
@click.option("--assume-tz", metavar="ZONE", help="Zone for timestamps written without an offset (both logs, and "
              "a local --as-of).")
@deprecated_contract_option("--contract")
@period_options(many=True, required=False,
                help="For the credit difference [default: every month from the first incident to --as-of].")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def reconcile_cmd(paths, tolerance, as_of, assume_tz, contract_option, periods, fmt) -> None:
    """Compare our incident log OURS with the provider's THEIRS.

    Lists incidents missing on either side and start/end disagreements beyond the
    tolerance. With a CONTRACT first, also the credits each log earns under it, per month
    and node, and their difference. Exit 0 when the logs agree, 1 when they do not (or an
    input is bad).
    """
    from calculators.cli import _check_zone, parse_as_of
    from calculators.memory import release_freed
    from calculators.reconcile import latest_time, load_log, log_entries, reconcile
    from slaschema.cli import echo_warnings, load_or_exit
    from slaschema.errors import gather

    if len(paths) not in (2, 3):
        raise click.UsageError(f"expected [CONTRACT] OURS THEIRS, got {len(paths)} path(s) [reconcile_arguments]")
    if len(paths) == 2 and Path(paths[0]).suffix.lower() in (".yaml", ".yml"):
        # an incident log is CSV, JSON Lines or JSON: a YAML file first is the contract
        raise click.UsageError(f"{paths[0]} is a contract and {paths[1]} one log; reconcile needs both logs, "
                               "OURS and THEIRS, after the contract [reconcile_arguments]")
    _check_zone(assume_tz)
    contract = resolve_contract(paths[0] if len(paths) == 3 else None, contract_option)
    ours, theirs = paths[-2:]
    loaded = load_or_exit(contract, fmt) if contract is not None else None
    # both logs read as `slakit credits` reads a log (with the contract: its targets checked);
    # every problem of both at once: printed, exit 1 (slaschema.cli.report_input_errors)

    shown: set[str] = set()        # the same file as OURS and THEIRS: its warnings once

    def read(path: str) -> tuple[IncidentLog | None, list]:
        # each log's entries are taken before the next is read; without a contract the
        # loaded log (its frame and the loader's structures) is not kept: nothing else needs it
        log = load_log(path, loaded, assume_tz)
        echo_warnings(log.warnings, shown)
        release_freed()        # the loader's own temporaries: not resident beside the entries
        return (log if loaded is not None else None), log_entries(log)

    (ours_loaded, ours_log), (theirs_loaded, theirs_log) = gather(read, (ours, theirs))
    logs = (ours_loaded, theirs_loaded)
    release_freed()            # what reading let go (without a contract, both logs): not kept beside the matching
    if loaded is not None and not periods:        # (before the matching, which may take a while)
        _check_default_months((ours, ours_log), (theirs, theirs_log), as_of_given=bool(as_of))
    if as_of:
        at = parse_as_of(as_of, assume_tz).astimezone(timezone.utc)     # in UTC, as the findings' times
    else:
        at = latest_time(chain(ours_log, theirs_log)) or datetime.fromisoformat("1970-01-01T00:00:00+00:00")
    result = reconcile(ours_log, theirs_log, tolerance, at)
    earliest = min((e.start for e in chain(ours_log, theirs_log)), default=None)
    credit = _credit_difference(loaded, *logs, periods, at, earliest)
    # the findings hold what the output shows: the entries and logs go before it is laid out
    del ours_log, theirs_log, logs, ours_loaded, theirs_loaded
    if fmt == "json":
        doc = {"format": RECONCILE_FORMAT, "agree": result.agree, "as_of": at.isoformat(),
               "tolerance_s": result.tolerance_s,
               "ours_incidents": result.ours_count, "theirs_incidents": result.theirs_count,
               "ours_entries": result.ours_entries, "theirs_entries": result.theirs_entries,
               "matched": result.matched, "counts": result.counts(),
               "findings": [f.to_json() for f in result.findings], "credit_difference": credit}
        _echo_json(doc)
    else:
        _print_reconciliation(result, credit)
    sys.exit(0 if result.agree else 1)


def _echo_json(doc: dict, piece: int = 1 << 16) -> None:
    """`click.echo(json.dumps(doc, indent=2))`, the same text, written as it is encoded in
    pieces of about `piece` characters: the whole text and the encoder's list of its parts
    (millions for a million findings) are never held at once."""
    parts: list[str] = []
    size = 0
    for part in json.JSONEncoder(indent=2).iterencode(doc):
        parts.append(part)
        size += len(part)
        if size >= piece:
            click.echo("".join(parts), nl=False)
            parts.clear()
            size = 0
    click.echo("".join(parts))


def _check_default_months(*logs, as_of_given: bool) -> None:
    """Without --period the credit months run from the logs' first incident to --as-of (by
    default the logs' latest time): a log time outside what credits are computed for
    (1970-01-02 to 9997-12-31 UTC) is that log's problem, with its file and row, not an
    option's (`[log_out_of_range]`, exit 1)."""
    from calculators.periods import EARLIEST_S, LATEST_S
    from slaschema.errors import InputError, Problem

    def outside(t: datetime | None) -> bool:
        return t is not None and not EARLIEST_S <= t.timestamp() <= LATEST_S

    problems = []
    for path, entries in logs:
        bad = [(e, t) for e in entries for t in ((e.start,) if as_of_given else (e.start, e.end)) if outside(t)]
        if bad:
            e, t = bad[0]
            more = len({id(x) for x, _ in bad}) - 1
            problems.append(Problem(
                "log_out_of_range",
                "incident time outside the times credits are computed for (1970-01-02 to 9997-12-31 UTC), "
                "so the credit difference has no default month" + (f" ({more} more such row(s))" if more else ""),
                file=str(path), row=e.row, column="start" if t is e.start else "end", value=t.isoformat(),
                fix="correct the timestamp, or name the months to compare (--period YYYY-MM)"))
    if problems:
        raise InputError(problems)


def _credit_difference(contract: LoadedContract | None, ours_log: IncidentLog | None,
                       theirs_log: IncidentLog | None, periods,
                       as_of: datetime, earliest: datetime | None) -> dict:
    """The JSON of the credit difference the logs make under the contract
    (`calculators.credit_difference`); `available: false` without a contract (and no logs)."""
    if contract is None:
        return {"available": False, "reason": "no_contract"}
    from calculators.credit_difference import compare_logs
    from calculators.periods import PeriodError

    if earliest is None and not periods:
        return {"available": False, "reason": "no_incidents"}      # no month to compute without --month
    try:
        return compare_logs(contract, ours_log, theirs_log, periods, as_of=as_of, first=earliest).to_json()
    except PeriodError as e:            # a month outside the years computed (--as-of 9999-...)
        raise click.BadParameter(str(e), param_hint="--as-of/--month/--quarter/--period") from None


def _print_reconciliation(result, credit: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from slaschema.textsafe import rich_text

    def t(x):
        return x.strftime("%m-%d %H:%M:%S") if x else "open"

    console = Console()
    if result.findings:
        table = Table(title="Incident log disagreements (times UTC)")
        table.add_column("kind", no_wrap=True)
        table.add_column("unit", no_wrap=True)
        for col in ("ours", "theirs"):
            table.add_column(col)
        table.add_column("delta", justify="right")
        for f in result.findings:
            # ids, units and categories come from the logs: shown as written, never run as
            # Rich markup or terminal escapes
            ours_span = f"{rich_text(f.ours)}\n{t(f.ours_start)}→{t(f.ours_end)}" if f.ours else "—"
            theirs_span = f"{rich_text(f.theirs)}\n{t(f.theirs_start)}→{t(f.theirs_end)}" if f.theirs else "—"
            if f.kind == "category_differs":
                delta = rich_text(f"{f.details['ours']} vs {f.details['theirs']}")
            else:
                delta = "" if f.delta_s is None else f"{f.delta_s:+.0f} s"
            unit = rich_text(f.unit if f.scope == "node" else f"{f.scope} {f.unit}")
            table.add_row(f.kind, unit, ours_span, theirs_span, delta)
        console.print(table)
    counts = ", ".join(f"{k} {v}" for k, v in result.counts().items())

    def side(n: int, entries: int) -> str:
        return f"{n} incident{'s' * (n != 1)} ({entries} entr{'ies' if entries != 1 else 'y'})"

    # matched + missing_in_theirs = our entries, matched + missing_in_ours = theirs
    click.echo(f"ours {side(result.ours_count, result.ours_entries)}, theirs "
               f"{side(result.theirs_count, result.theirs_entries)}; per entry (an incident on one node or "
               f"target): matched {result.matched}, {counts} (tolerance {result.tolerance_s:g} s)")
    if not credit.get("available"):
        if credit["reason"] == "no_contract":
            click.echo("targets taken as written: with no contract they are not checked against a topology")
        click.echo(f"credit difference: not computed ({credit['reason']})")
        return
    for m in credit["months"]:
        click.echo(f"credits {m['period']}: ours {m['ours']} {credit['currency']}, theirs {m['theirs']}, "
                   f"difference {m['difference']}")
        for n in m["nodes"]:
            click.echo(f"  {n['node']}: ours {n['ours']}, theirs {n['theirs']}, difference {n['difference']}")
    click.echo(f"credit difference (ours - theirs): {credit['difference']} {credit['currency']}")


def register(group: click.Group) -> None:
    group.add_command(reconcile_cmd)
