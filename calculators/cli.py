"""`slakit credits` and `slakit explain`: incident log -> availability and service credits."""

from __future__ import annotations

import csv
import io
from datetime import datetime
from typing import TYPE_CHECKING

import click

from calculators.period_option import period_options
from slaschema.cliconv import (OutputData, Progress, emit_output, fmt_given, no_progress_option, output_format,
                               output_option, progress_wanted)

if TYPE_CHECKING:
    import numpy as np

    from calculators.explain_records import Explanation
    from calculators.result import Result
    from slaschema.loader import LoadedContract

REV11_COLUMNS = ("service_seconds", "charged_fee", "not_charged")     # contracts using revision 1.1 fields

# a log of this size or more (about half a million incidents: a few seconds' work) shows its
# stages on a terminal's stderr; a smaller one finishes before a progress line would help
PROGRESS_LOG_BYTES = 64 << 20


def stage_progress(label: str, log_path: str, steps: int, no_progress: bool) -> Progress:
    """Progress through a command's `steps` stages (read and checked, computed, written) for
    a large incident log, on a terminal only (`--no-progress`, SLAKIT_NO_PROGRESS=1: none)."""
    import os

    try:
        large = os.stat(log_path).st_size >= PROGRESS_LOG_BYTES
    except OSError:
        large = False
    return Progress(label, steps, enabled=large and progress_wanted(no_progress))


def read_as_of(text: str, assume_tz: str | None = None, zone_option: str | None = "--assume-tz") -> datetime:
    """The reading of `--as-of` every command shares (`calculators.periods.parse_instant`); a
    value that is no instant is a usage error (exit 2) naming the option. `parse_as_of` adds
    the range the credits engine computes; a command with a range of its own checks that."""
    from calculators.periods import PeriodError, parse_instant

    try:
        return parse_instant(text, assume_tz, zone_option)
    except PeriodError as e:
        raise click.BadParameter(str(e), param_hint="--as-of") from None


def parse_as_of(text: str | None, assume_tz: str | None = None, zone_option: str | None = "--assume-tz"
                ) -> datetime | None:
    """`--as-of` of every command that computes credits (`read_as_of`), from the earliest to
    the latest instant the engine computes."""
    if text is None:
        return None
    from calculators.periods import EARLIEST_S, FIRST_MONTH, LAST_MONTH, LATEST_S

    at = read_as_of(text, assume_tz, zone_option)
    if at.timestamp() < EARLIEST_S:     # the documents wrote it as "1-01-01T00:00:00Z", no ISO 8601
        raise click.BadParameter(f"{text[:40]!r} is before 1970-01-02T00:00Z, the earliest instant slakit computes; "
                                 f"name a later time (and periods from {FIRST_MONTH}) [period_out_of_range]",
                                 param_hint="--as-of")
    if at.timestamp() > LATEST_S:
        raise click.BadParameter(f"{text[:40]!r} is after 9997-12-31T16:00Z, the latest instant slakit computes; "
                                 f"name an earlier time (and periods up to {LAST_MONTH}) [period_out_of_range]",
                                 param_hint="--as-of")
    return at


def _load(contract: str, incidents: str, assume_tz: str | None, skip_bad_rows: bool, fmt: str, sha256: bool,
          lists_skipped: bool = True):
    """The contract and the log, problems printed; `sha256`: whether the output shows the
    log's SHA-256 (`load_incidents`: not worked out otherwise); `lists_skipped`: whether the
    output lists the rows --skip-bad-rows left out (else they are printed on stderr)."""
    from calculators.incident_reasons import ROW_REASONS
    from calculators.incidents import load_incidents
    from slaschema.cli import echo_skipped, echo_warnings, load_or_exit
    from slaschema.errors import InputError

    lc = load_or_exit(contract, "json" if fmt == "json" else "table")
    try:
        log = load_incidents(incidents, lc, assume_tz=assume_tz, skip_bad_rows=skip_bad_rows, sha256=sha256)
    except InputError as e:                 # printed, exit 1 (slaschema.cli.report_input_errors)
        if not skip_bad_rows and any(p.row is not None and p.code in ROW_REASONS for p in e.problems):
            e.add_note("nothing computed: fix the rows above or pass --skip-bad-rows")
        raise
    echo_warnings(log.warnings)
    if not lists_skipped:
        echo_skipped(log.skipped, incidents)
    return lc, log


def _emit(text: OutputData, output: str | None, progress: Progress | None = None) -> None:
    """`emit_output`; with a `progress`, its last stage (written) is drawn before the
    `wrote FILE` line rather than across it."""
    emit_output(text, output, written=None if progress is None else lambda: progress.step(note="written"))


def history_options(f):
    """`--history FILE` (repeatable) and `--history-from YYYY-MM` for the chronic-failure window."""
    from calculators.period_option import MONTH

    f = click.option("--history-from", "history_from", type=MONTH,
                     help="Also compute the months from YYYY-MM up to the first reported month from the same log, "
                          "to judge the chronic-failure termination trigger on the contract's whole window.")(f)
    return click.option("--history", "history_files", multiple=True, type=click.Path(dir_okay=False),
                        metavar="FILE", help="An earlier month's `slakit credits --format json` output "
                                             "(repeatable), for the chronic-failure window.")(f)


def apply_history(lc: LoadedContract, log, result: Result, history_files, history_from: str | None,
                  fmt: str = "table") -> Result:
    """`result` with the chronic-failure trigger judged on earlier months too (unchanged without history).
    Exits 1 on unreadable history files, 2 on a bad --history-from."""
    if not history_files and not history_from:
        return result
    from calculators.engine import compute
    from calculators.history import (
        history_from_result,
        load_history_files,
        with_history,
    )
    from calculators.periods import PeriodError, parse_month, shift_label

    months: dict = {}
    if history_files:
        months, _ = load_history_files(list(history_files), lc.id)   # bad files: printed, exit 1
    if history_from:
        zone = lc.model.contract.timezone
        try:
            first = parse_month(history_from, zone)
        except PeriodError as e:
            raise click.BadParameter(str(e), param_hint="--history-from") from None
        start = result.periods[0].period
        if first.start >= start.start:
            raise click.BadParameter(f"name a month before {start.label}", param_hint="--history-from")
        labels = [first.label]
        while shift_label(labels[-1], 1) != start.label:
            labels.append(shift_label(labels[-1], 1))
        from calculators.engine import EngineError

        try:
            earlier = compute(lc, log, labels, as_of=result.as_of, support=False)
        except EngineError as e:            # printed with its code, exit 1 (slakit.cli)
            raise EngineError(f"--history-from {history_from}: {e}") from None
        months = {**months, **history_from_result(earlier)}
    return with_history(lc, result, months)


def _local_zone() -> str:
    import os

    tz = os.environ.get("TZ")
    if tz:
        return tz.lstrip(":")
    try:
        from pathlib import Path

        link = Path("/etc/localtime").resolve()
        if "zoneinfo/" in str(link):
            return str(link).split("zoneinfo/", 1)[1]
    except OSError:
        pass
    return "UTC"


ZONE_HELP = "Zone for timestamps written without an offset."


def zone_option(help: str = ZONE_HELP + " Slurm's times carry none. Default: this machine's zone "
                "(TZ, /etc/localtime), as for `slakit watch`."):
    """`--assume-tz ZONE` of the commands whose `--tz` it was (goodput, import lanl, import
    slurm-events), with `--tz` kept as a hidden deprecated alias: the command receives `tz` and
    `tz_alias` and calls `zone_given`."""
    from slaschema.cliconv import deprecated_alias

    def decorate(f):
        f = deprecated_alias("--tz", "--assume-tz", "tz_alias", metavar="ZONE")(f)
        return click.option("--assume-tz", "tz", default=None, metavar="ZONE", help=help)(f)

    return decorate


def zone_given(tz: str | None, tz_alias: str | None) -> str | None:
    """The zone named with `--assume-tz` or its deprecated `--tz` (None when neither is given;
    a usage error when both are)."""
    from slaschema.cliconv import resolve_alias

    zone = resolve_alias(tz, tz_alias, "--assume-tz", "--tz")
    if zone is not None:        # an empty value (`--assume-tz "$ZONE"`, ZONE unset) is no default
        _check_zone(zone, "--assume-tz" if tz is not None else "--tz")
    return zone


def check_zone_option(tz: str | None, option: str = "--assume-tz") -> str:
    """`--assume-tz` of goodput and `import slurm-events` (`option`: review's `--sacct-tz`): the
    named IANA zone, default the local one."""
    zone = _local_zone() if tz is None else tz
    _check_zone(zone, option)
    return zone


def _check_zone(assume_tz: str | None, option: str = "--assume-tz") -> None:
    if assume_tz is None:
        return
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(assume_tz)
    except Exception:
        raise click.BadParameter(f"{assume_tz!r} is not an IANA time zone; write e.g. UTC, Europe/Berlin or "
                                 "America/Chicago [unknown_timezone]", param_hint=option) from None


@click.command()
@click.argument("contract", type=click.Path(dir_okay=False))
@click.argument("incidents", type=click.Path(dir_okay=False))
@period_options(many=True)
@click.option("--as-of", "as_of", metavar="TS", help="Open incidents end here (default: end of the last month).")
@click.option("--assume-tz", metavar="ZONE", help="Zone for timestamps written without an offset.")
@click.option("--skip-bad-rows", is_flag=True, help="Compute without the bad rows (the table and JSON list them; with --format csv they are listed on stderr).")
@click.option("--accepted-on", type=click.DateTime(["%Y-%m-%d"]), metavar="DATE",
              help="Acceptance date: adds acceptance-delay credit and termination right.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
              help="Output format (default: from the -o extension, else table).")
@output_option()
@history_options
@no_progress_option
@click.pass_context
def credits(ctx, contract, incidents, periods, as_of, assume_tz, skip_bad_rows, accepted_on, fmt, output,
            history_files, history_from, no_progress):
    """Availability and service credits per unit and month from an INCIDENTS log.

    Every scope with a service level is listed unit by unit; every node gets its fee and
    credit. Exit 1 if the contract or the log has errors (all are printed; pass
    --skip-bad-rows to compute without the bad rows).
    """
    from slaschema.gc_pause import gc_paused

    # the collector off for the whole run: it would rescan the imported modules' objects and
    # the loaded contract at every few hundred allocations (slaschema.gc_pause)
    with gc_paused():
        from calculators import log_prefetch

        log_prefetch.start(incidents)           # the log is read while the modules below load
        import calculators.engine  # noqa: F401
        # and those the engine and the table take later: imported while the log is still being read
        import calculators.claims  # noqa: F401
        import calculators.result  # noqa: F401
        import calculators.support  # noqa: F401

        fmt = output_format(output, fmt, ("table", "json", "csv"), explicit=fmt_given(ctx))
        if fmt == "table":
            # what the table's layout takes from Rich (its column collapse, its emoji names),
            # imported while the log is parsed rather than after the computing; Rich's console
            # only for a line it must lay out (`PlainConsole`)
            import rich._emoji_codes  # noqa: F401
            import rich.table  # noqa: F401

            import slaschema.plain_table  # noqa: F401
        elif fmt == "json":
            import calculators.result_json  # noqa: F401
        _check_zone(assume_tz)
        as_of_dt = parse_as_of(as_of, assume_tz)
        progress = stage_progress("credits", incidents, 3, no_progress)
        try:
            _credits(progress, contract, incidents, periods, as_of_dt, assume_tz, skip_bad_rows, accepted_on, fmt,
                     output, history_files, history_from)
        finally:
            progress.close()


def _credits(progress, contract, incidents, periods, as_of_dt, assume_tz, skip_bad_rows, accepted_on, fmt, output,
             history_files, history_from) -> None:
    from calculators.engine import compute
    from calculators.periods import PeriodError, parse_periods

    # of the credits outputs only the JSON document shows the log's SHA-256
    lc, log = _load(contract, incidents, assume_tz, skip_bad_rows, fmt, sha256=fmt == "json",
                    lists_skipped=fmt != "csv")           # (the table and the JSON list them)
    if fmt != "json":           # (the JSON document's id lists are Arrow's: it reuses those pages)
        from calculators.memory import release_arrow_beside

        release_arrow_beside()
    progress.step(note=f"{len(log.columns):,} incident rows read and checked")
    try:
        plist = parse_periods(list(periods), lc.model.contract.timezone)
    except PeriodError as e:
        raise click.BadParameter(str(e), param_hint="--month/--quarter/--period") from None
    from calculators.performance import availability_log, performance_figures, render_performance

    full_log, log = log, availability_log(lc, log)
    # the support figures appear in the JSON document only: the table and CSV skip them; an
    # EngineError (the log does not fit the contract) is printed with its code, exit 1 (slakit.cli)
    result = compute(lc, log, plist, as_of=as_of_dt,
                     accepted_on=accepted_on.date() if accepted_on else None, support=fmt == "json")
    perf = performance_figures(lc, full_log, plist, as_of=as_of_dt) if lc.model.performance else None
    result = apply_history(lc, log, result, history_files, history_from, fmt)
    progress.step(note=f"{len(plist)} month(s) computed")
    if fmt == "json" and perf is not None:
        _emit(lambda write: result.write_json(write, extra={"performance": perf}), output, progress)
    elif fmt == "table" and perf is not None:
        _emit(render_table(result) + "\n" + render_performance(perf, lc.model.contract.currency) + "\n", output,
              progress)
    elif fmt == "json":
        _emit(result.write_json, output, progress)
    elif fmt == "csv":
        from calculators.settle import CSV_COLUMNS, csv_rows

        buf = io.StringIO()
        columns = CSV_COLUMNS + (REV11_COLUMNS if result.revision_1_1 else ())
        w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        from slaschema.textsafe import csv_cell

        for r in csv_rows(result):
            w.writerow({k: csv_cell(v) for k, v in r.items()})
        _emit(buf.getvalue(), output, progress)
    else:
        _emit(render_table(result), output, progress)


def render_table(result: Result, max_rows: int = 25) -> str:
    """Terminal tables: per month the totals, then the units with downtime or credit (as plain
    text, laid out as Rich lays out its tables: `calculators.plain_table`)."""
    from slaschema.plain_table import PlainConsole, PlainTable
    from calculators.result import iso
    from slaschema.textsafe import rich_text, shown_name, terminal_text

    buf = io.StringIO()
    con = PlainConsole(buf, width=120)      # Rich's console only for a line it must lay out
    con.print(f"[bold]{result.contract}[/] — credits in {result.currency}, months in {result.timezone}, "
              f"open incidents end at {iso(result.as_of)}")
    if result.open_incidents:
        ids = list(result.open_incidents)
        con.print(rich_text(f"open incidents, counted until as_of: {', '.join(shown_name(i) for i in ids[:10])}")
                  + (" …" if len(ids) > 10 else ""), emoji=False)
    if result.skipped_rows:
        con.print(f"[yellow]{len(result.skipped_rows)} problem(s) in skipped rows:[/]")
        for p in result.skipped_rows:
            con.print(rich_text(f"  row {p.get('row')}, column {p.get('column')}: {p.get('message')} [{p.get('code')}]"),
                      emoji=False)
    rev11 = result.revision_1_1
    totals = PlainTable(title="Months")
    cols = ["period", "hours", "fee total", "credit uncapped", "cap", "credit total"]
    cols += ["not charged", "remedy"] if rev11 else []
    claims = result.claims is not None
    claim_cols = ["claim due", "claim"] if claims else []
    for col in cols + claim_cols + ["note"]:
        totals.add_column(col, justify="right" if col not in ("period", "note", "claim") else "left",
                          no_wrap=col in ("period", "claim due", "claim"))
    for m in result.month_totals():
        note = []
        if m.cap_applied:
            note.append("cap applied")
        if m.minimum_applied:
            note.append(f"{'not more than' if m.minimum_rule == 'more_than' else 'below'} minimum {m.minimum}")
        extra = [_amount(m.not_charged_total), _amount(m.remedy_total)] if rev11 else []
        cells = [_claim_due_text(m.claim_due, result.timezone), m.claim_status.replace("_", " ")] if claims else []
        totals.add_row(m.period, format(m.hours.normalize(), "f"), _amount(m.fee_total),
                       _amount(m.credit_uncapped), _amount(m.cap_amount) if m.cap_amount is not None else "-",
                       _amount(m.credit_total), *extra, *cells, ", ".join(note))
    for q in result.quarter_totals():
        if len(q.months) > 1:
            extra = [_amount(q.not_charged_total), _amount(q.remedy_total)] if rev11 else []
            totals.add_row(q.quarter, "", _amount(q.fee_total), "", "", _amount(q.credit_total), *extra,
                           *("",) * len(claim_cols), "sum of the months")
    totals.print(con)
    if result.claims is not None:
        con.print(claims_line(result.claims, result.currency, result.timezone))
    for p in result.periods:
        for name, sm in p.scopes.items():
            lost = _positive(sm.lnum)
            hit = _affected(sm, lost)
            n_down = int(lost.sum())
            t = PlainTable(title=f"{p.period.label} — {name}: {n_down} of {len(sm.ids)} with downtime, {len(hit)} with "
                            f"downtime, excluded time or flags; {int((~sm.met).sum())} below target {sm.target}%")
            for col in ("id", "downtime s", *(("service s",) if rev11 else ()), "excluded s", "availability %",
                        "met", "credit %", "credit", "incidents", "flags"):
                t.add_column(col, justify="right" if col.endswith(("s", "%", "credit")) else "left")
            order = _first_by_credit(hit, sm.credit_cents, sm.ids, max_rows)
            shown = [i for i in order if sm.in_service(i)]      # (records skip the others)
            preview = sm.incident_preview(shown, 4)
            for i, u in zip(shown, sm.records(p, shown, incidents=False)):
                ids, n_ids = preview[i]
                t.add_row(terminal_text(u.id), seconds_text(u.downtime_seconds),
                          *((str(u.service_seconds),) if rev11 else ()),
                          str(u.excluded_seconds), format(u.availability, "f"),
                          "yes" if u.met else "NO", format(u.credit_pct, "f"), _amount(u.credit),
                          terminal_text(", ".join(shown_name(i) for i in ids)) + (f" +{n_ids - 4}" if n_ids > 4 else ""),
                          " ".join(u.flags))
            if hit:
                t.print(con)
                if len(hit) > max_rows:
                    con.print(f"  … {len(hit) - max_rows} more {name} unit(s) (see --format json or csv)")
            else:
                con.print(f"{p.period.label} — {name}: no downtime, excluded time or flags in any of "
                          f"{len(sm.ids)} units")
    term = result.termination
    chronic = term.chronic if term is not None else None
    if chronic is not None:
        if chronic.triggered:
            con.print(f"[bold red]Chronic failure: termination right[/] for "
                      f"{', '.join(t.id for t in chronic.triggered[:10])}"
                      + (" …" if len(chronic.triggered) > 10 else ""))
        else:
            con.print(f"Chronic failure: no unit below target in {chronic.months_below_target} of the months "
                      f"considered ({', '.join(chronic.months_considered)}; the contract looks at "
                      f"{chronic.within_months}).")
        near = chronic.near or ()
        if near:
            con.print(f"Chronic failure: one month below target away from the termination right: "
                      f"{', '.join(t.id for t in near[:10])}" + (" …" if len(near) > 10 else ""))
        if chronic.months_missing:
            con.print(f"  ({chronic.note})")
    acc = term.acceptance_delay if term is not None else None
    if acc is not None:
        deadline = acc.deadline.isoformat() if acc.deadline else None
        con.print(f"Acceptance: {acc.days_late} day(s) late (deadline {deadline}), credit {_amount(acc.credit)} "
                  f"{acc.currency}; termination right: {'yes' if acc.termination_right else 'no'}")
    return buf.getvalue()


def _amount(value) -> str:
    """A money Decimal of the typed result as the tables show it: `1234.50`."""
    return format(value, "f")


def seconds_text(value) -> str:
    """A `downtime_seconds` value as the document writes it: an int, or a proportional
    downtime (a Decimal with 3 decimals) as the float the JSON document holds."""
    return str(value) if isinstance(value, int) else repr(float(value))


def _claim_due_text(due: int | datetime | None, zone: str) -> str:
    """The due instant in the contract's zone (`2027-03-31 00:00 CDT`), `none` without a window."""
    if due is None:
        return "none"
    from zoneinfo import ZoneInfo

    if isinstance(due, datetime):
        return due.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M %Z")
    return datetime.fromtimestamp(due, ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M %Z")


def claims_line(claims, currency: str, zone: str) -> str:
    """`claimable as of …: 4,115.80 USD (2027-03 by …); lapsed: 2027-01, 2027-02 (71,690.61 USD)`."""
    from calculators import credits as cr
    from calculators.result import iso

    if claims.window is None:
        return (f"claimable as of {iso(claims.as_of)}: {cr.money(claims.claimable_cents)} {currency} "
                "(the contract sets no claim window)")
    open_ = [m for m in claims.months if m.claimable and m.credit_cents > 0]
    lapsed = [m for m in claims.months if not m.claimable and m.credit_cents > 0]
    text = f"claimable as of {iso(claims.as_of)}: {cr.money(claims.claimable_cents)} {currency}"
    if open_:
        text += " (" + ", ".join(f"{m.period} by {_claim_due_text(m.due, zone)}" for m in open_) + ")"
    if lapsed:
        text += (f"; lapsed, not claimable: {', '.join(m.period for m in lapsed)} "
                 f"({cr.money(sum(m.credit_cents for m in lapsed))} {currency})")
    return text


def _positive(values) -> np.ndarray:
    """`[int(x) > 0 for x in values]` as a boolean array (Python ints beyond int64 included)."""
    import numpy as np

    try:
        return np.asarray(values).astype(np.int64) > 0
    except (OverflowError, TypeError, ValueError):
        return np.asarray([int(x) > 0 for x in values], dtype=bool)


def _first_by_credit(hit: list[int], credit_cents, ids, k: int) -> list[int]:
    """The first `k` of the units `hit`, largest credit first, then by id: what
    `sorted(hit, key=lambda i: (-cents[i], ids[i]))[:k]` gives, without a Python key for every
    unit: the units whose credit is below the k-th largest cannot be among them."""
    import numpy as np

    cents = credit_cents.tolist()                # Python ints: no numpy scalar per unit
    if 0 < k and len(hit) > 4 * k:
        try:
            c = np.asarray([cents[i] for i in hit] if not isinstance(credit_cents, np.ndarray)
                           else credit_cents[hit]).astype(np.int64)
        except (OverflowError, TypeError, ValueError):
            c = None
        if c is not None:
            kth = np.partition(c, len(c) - k)[len(c) - k]     # the k-th largest credit
            hit = np.asarray(hit)[c >= kth].tolist()
    return sorted(hit, key=lambda i: (-cents[i], ids[i]))[:k]


def _affected(sm, lost=None):
    import numpy as np

    if lost is None:
        lost = _positive(sm.lnum)
    hit = lost | (sm.excluded > 0) | (sm.flags > 0)
    if sm.service is not None:
        hit &= sm.service > 0          # no unit-month outside service time
    return np.flatnonzero(hit).tolist()


@click.command()
@click.argument("contract", type=click.Path(dir_okay=False))
@click.argument("incidents", type=click.Path(dir_okay=False))
@click.option("--unit", required=True, help="A node, rack, cluster or site id.")
@period_options(quarter=False)
@click.option("--as-of", "as_of", metavar="TS", help="Open incidents end here (default: end of the month).")
@click.option("--assume-tz", metavar="ZONE", help="Zone for timestamps written without an offset.")
@click.option("--skip-bad-rows", is_flag=True, help="Compute without the bad rows (listed on stderr).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              help="Output format (default: from the -o extension, else table).")
@output_option()
@no_progress_option
@click.pass_context
def explain(ctx, contract, incidents, unit, periods, as_of, assume_tz, skip_bad_rows, fmt, output, no_progress):
    """How one unit's credit for one month comes about: timeline and arithmetic."""
    from calculators import log_prefetch

    log_prefetch.start(incidents)
    from calculators.explain import explain as build
    from calculators.periods import PeriodError

    fmt = output_format(output, fmt, ("table", "json"), explicit=fmt_given(ctx))
    _check_zone(assume_tz)
    as_of_dt = parse_as_of(as_of, assume_tz)
    progress = stage_progress("explain", incidents, 3, no_progress)
    try:
        lc, log = _load(contract, incidents, assume_tz, skip_bad_rows, fmt, sha256=False,   # (not shown)
                        lists_skipped=False)
        progress.step(note=f"{len(log.columns):,} incident rows read and checked")
        try:
            doc = build(lc, log, unit, periods[0], as_of_dt)     # EngineError: printed with its code (slakit.cli)
        except PeriodError as e:
            raise click.BadParameter(str(e), param_hint="--month/--period") from None
        progress.step(note=f"{unit} explained")
        if fmt == "json":
            from slaschema.jsontext import dumps_indented

            _emit(dumps_indented(doc.to_json()), output, progress)
        else:
            _emit(render_explanation(doc), output, progress)
    finally:
        progress.close()


def _rich_safe(obj):
    """`obj` (an explanation record, its parts, tuples and dicts of them) with `rich_text`
    over every string in it: ids, targets and categories from the log print without escapes,
    markup shown as written."""
    import dataclasses

    from calculators.explain_records import Interval
    from slaschema.textsafe import rich_text

    if isinstance(obj, str):
        return rich_text(obj)
    if isinstance(obj, Interval):                  # (times and numbers: nothing to make safe)
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **{f.name: _rich_safe(getattr(obj, f.name)) for f in dataclasses.fields(obj)})
    if isinstance(obj, tuple):
        return tuple(_rich_safe(v) for v in obj)
    if isinstance(obj, dict):
        return {k: _rich_safe(v) for k, v in obj.items()}
    return obj


# the most lines (incident parts and the steps' intervals) an explanation lays out with Rich; one
# with more has its parts as aligned columns and its intervals written as they are: Rich takes
# about 1.4 ms a line, 70 s for the 50,000 parts of a node down every 40 seconds for a month
BOXED_LINES = 2_000
ALIGNED_WIDTH = 60     # the widest cell of the aligned columns (in terminal cells; the JSON has them whole)


def _aligned(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A table as text in aligned columns (two spaces apart, under a rule), each cell as the
    terminal shows it (`terminal_text`, on one line); `title` above it."""
    from rich.cells import cell_len, set_cell_size

    from slaschema.textsafe import terminal_text

    width = lambda v: len(v) if v.isascii() else cell_len(v)  # noqa: E731

    def clipped(v: str) -> str:
        # (a cell wider than ALIGNED_WIDTH is cut, as the boxed table cuts it: one id of 10,000
        # characters would otherwise pad every line of the table to its width)
        return v if width(v) <= ALIGNED_WIDTH else set_cell_size(v, ALIGNED_WIDTH - 1) + "…"

    shown = [tuple(clipped(terminal_text(v, keep_newlines=False)) for v in row) for row in rows]
    widths = [max([width(c), *(width(r[k]) for r in shown)]) for k, c in enumerate(columns)]

    def line(values: tuple[str, ...]) -> str:
        return "  ".join(v + " " * (w - width(v)) for v, w in zip(values, widths)).rstrip()

    return "\n".join([title, line(columns), "  ".join("-" * w for w in widths),
                      *(line(r) for r in shown)]) + "\n"


def render_explanation(doc: Explanation) -> str:
    """The explanation as text: the incident parts, the steps of the timeline, availability,
    credit and money, numbered as the JSON document orders them."""
    import dataclasses

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from calculators.explain_records import (AVAILABILITY_PLACES, HOURS_PLACES, NodeNotInService, exact_text,
                                             iso_text, money_text, percent_text, seconds_value)
    from slaschema.textsafe import terminal_text

    parts = doc.incidents
    many = len(parts) + sum(len(step.intervals) for step in doc.steps) > BOXED_LINES
    # (the parts are shown as the terminal shows them, as Rich text without markup in the
    # boxed table, in aligned columns in a long one: they need no escapes for Rich's markup)
    doc = _rich_safe(dataclasses.replace(doc, incidents=()))
    buf = io.StringIO()
    # (emoji=False: an id written :thumbs_up: is shown as written, not as the emoji)
    con = Console(file=buf, width=160, force_terminal=False, color_system=None, emoji=False)
    parents = ", ".join(f"{k} {v}" for k, v in doc.parents.items())
    con.print(f"[bold]{doc.scope} {doc.unit}[/] ({parents}) — {doc.period} in {doc.zone}: "
              f"{iso_text(doc.start)} to {iso_text(doc.end)}, {doc.month_seconds} s = "
              f"{format(doc.hours.normalize(), 'f')} h; open incidents end at {iso_text(doc.as_of)}")
    title = "1. Incident parts on this unit (own and inherited)"
    columns = ("id", "row", "scope/target", "category", "impact", "part", "start", "end", "seconds", "flags")

    def cells(p: Any) -> tuple[str, ...]:
        impact = p.impact + (f" ({p.gpus_lost} GPUs)" if p.gpus_lost is not None else "")
        return (p.id, str(p.row), f"{p.scope} {p.target}", p.category, impact, p.part,
                iso_text(p.start), iso_text(p.end), str(p.seconds), " ".join(p.flags))

    if not parts:
        con.print("1. No incident touches this unit in the month.")
    elif many:
        buf.write(_aligned(f"{title}: {len(parts):,} parts", columns, [cells(p) for p in parts]))
    else:
        t = Table(title=title)
        for col in columns:
            t.add_column(col, no_wrap=col in ("start", "end", "id"))
        for p in parts:
            t.add_row(*(Text(terminal_text(v)) for v in cells(p)))
        con.print(t)
    if doc.clock is not None:
        con.print("   Clock (counts_from: report): each incident counts from the customer's report")
        for c in doc.clock:
            con.print(f"     {c.id}: fault {iso_text(c.fault_start)}, reported "
                      f"{iso_text(c.reported_at) if c.reported_at else '—'} → "
                      f"{('counted from ' + iso_text(c.clock_starts)) if c.clock_starts else 'counts nowhere'} "
                      f"({c.note})")
    if doc.service is not None:
        sv = doc.service
        w = sv.window
        if w is None:
            where = "union of its nodes' windows; "
        elif w.starts is None and w.ends is None:
            where = "no window of its own (always in service); "
        else:
            where = (f"window from {w.starts.isoformat() if w.starts is not None else 'the start'}"
                     + (f" until {w.ends.isoformat()} (not included); " if w.ends is not None else ", no end; "))
        con.print(f"   Service time: {where}{sv.service_seconds} s of the month's {sv.month_seconds} s")
    for k, step in enumerate(doc.steps, start=2):
        con.print(f"{k}. {step.text}: " + ("none" if not step.intervals else ""))
        for iv in step.intervals:
            extra = f", {iv.gpus_lost} GPUs lost" if iv.gpus_lost is not None else ""
            inm = (f" ({iv.in_month_seconds} s in the month)"
                   if iv.in_month_seconds is not None and iv.in_month_seconds != iv.seconds else "")
            line = f"     {iso_text(iv.start)} – {iso_text(iv.end)}  {iv.seconds} s{inm}{extra}"
            if many:            # (times and numbers only: the line Rich would print)
                buf.write(line + "\n")
            else:
                con.print(line)
    a = doc.availability
    n = len(doc.steps) + 2
    if doc.not_in_service:
        con.print(f"{n}. Not in service this month: no fee, no availability, no credit.")
    elif a is None:
        con.print(f"{n}. No service level for {doc.scope}s: no availability figure.")
    else:
        u = a.unit
        con.print(f"{n}. Downtime {seconds_value(u.downtime_seconds)} s"
                  + (f" ({a.lost_gpu_seconds} GPU-seconds lost)" if a.lost_gpu_seconds is not None else "")
                  + f"; excluded {u.excluded_seconds} s (reported only)")
        con.print(f"   availability = {a.formula} = {exact_text(a.exact_pct, AVAILABILITY_PLACES)}% → shown as "
                  f"{format(u.availability, 'f')}%; target {percent_text(u.target)}%: {'met' if u.met else 'NOT met'}")
        for tier in a.tiers:
            con.print(f"   tier below {tier.below}% → {tier.credit}%: {'applies' if tier.applies else 'no'}")
        if a.pro_rata:
            con.print(f"   pro rata: {a.pro_rata.formula}")
        fee_words = (f"charged fee {money_text(u.charged_fee)} (fee {money_text(u.fee)} less hours not charged)"
                     if u.charged_fee is not None and u.charged_fee != u.fee else f"fee {money_text(u.fee)}")
        con.print(f"   credit {format(u.credit_pct, 'f')}% of the {doc.scope} {fee_words} = {money_text(u.credit)}")
        if u.flags:
            con.print(f"   flags: {', '.join(u.flags)}")
    m = doc.money
    con.print(f"{n + 1}. Money ({m.currency}), node fee = {m.node_fee_formula}; stacking: {m.stacking}")
    for node in m.nodes:
        if isinstance(node, NodeNotInService):
            con.print(f"   {node.node}: not in service this month")
            continue
        if node.service_seconds is not None:
            con.print(f"   {node.node}: in service {node.service_seconds} s = "
                      f"{exact_text(node.service_hours, HOURS_PLACES)} h; hours not charged "
                      f"{exact_text(node.not_charged_exact)} → {money_text(node.not_charged)}; "
                      f"charged fee {exact_text(node.charged_fee_exact)}")
        shares = "; ".join(f"{s.scope} {s.unit}: {exact_text(s.share * 100)}%" for s in node.shares) or "none"
        con.print(f"   {node.node}: fee {exact_text(node.fee_exact)} → {money_text(node.fee)}; shares of fee: {shares}; "
                  f"{m.stacking} → {exact_text(node.stacked_share * 100)}% (basis {node.basis}); credit "
                  f"{exact_text(node.credit_exact)} → rounded half-up {money_text(node.credit_rounded)}; "
                  f"after cap and minimum {money_text(node.after_cap_and_minimum)}")
    if m.nodes_not_listed:
        con.print(f"   … {m.nodes_not_listed} more nodes")
    pm = m.month
    rev11 = pm.not_charged_total is not None
    con.print(f"{n + 2}. Month: fee total {money_text(pm.fee_total)}, node credits {money_text(pm.credit_uncapped)}, "
              f"cap {money_text(pm.cap_amount) if pm.cap_amount is not None else 'none'}"
              f"{' (applied)' if pm.cap_applied else ''}, minimum {pm.minimum}"
              f"{' (more than)' if rev11 and pm.minimum_rule == 'more_than' else ''}"
              f"{' (applied: nothing issued)' if pm.minimum_applied else ''} → credit total "
              f"{money_text(pm.credit_total)}")
    if rev11:
        con.print(f"   hours not charged {money_text(pm.not_charged_total)} (a billing adjustment, not subject to cap "
                  f"or minimum) + credit {money_text(pm.credit_total)} = remedy {money_text(pm.remedy_total)}")
    if pm.claim_status is not None:
        con.print(f"   claim: {'due before ' + iso_text(pm.claim_due) if pm.claim_due else 'no deadline'}, "
                  f"{pm.claim_status.replace('_', ' ')} as of {iso_text(doc.as_of)}")
    return buf.getvalue()


def register(group: click.Group) -> None:
    group.add_command(credits)
    group.add_command(explain)
