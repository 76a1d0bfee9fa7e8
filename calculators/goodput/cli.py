"""`slakit goodput`: what the buyer got, from sacct, the incident log and the credits engine."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import click

from calculators.cli import check_zone_option as _check_zone     # shared with `import slurm-events`
from calculators.cli import zone_given
from calculators.cli import zone_option as _zone_option
from calculators.period_option import period_options
from slaschema.cliconv import no_progress_option, output_option

if TYPE_CHECKING:
    from slaschema.loader import LoadedContract


def _utc_year(t: datetime) -> int:
    try:
        return t.astimezone(timezone.utc).year
    except OverflowError:                    # year 1 east of UTC, year 9999 west of it
        return 0


CSV_COLUMNS = ("period", "contracted_gpu_hours", "paid_gpu_hours", "available_gpu_hours", "allocated_gpu_hours",
               "completed_gpu_hours", "lost_gpu_hours", "useful_gpu_hours", "goodput_pct", "fee", "credit",
               "effective_price_per_useful_gpu_hour", "runs", "runs_completed", "runs_ended_by_infrastructure",
               "runs_requeued_by_infrastructure", "runs_infrastructure_unattributed")



def load_inputs(lc: LoadedContract, sacct_file, live, incidents, tz, plist, skip_bad_rows):
    """(runs, log) for the goodput commands; one InputError with the problems of every input."""
    from calculators.goodput.sacct import parse_sacct, read_sacct_file, sacct_live
    from calculators.incidents import load_incidents
    from calculators.slurm_client import format_time
    from slaschema.errors import InputError

    topo = lc.topology
    problems = []
    runs = log = None
    try:
        if live:
            lo = format_time(min(p.start for p in plist), tz)
            hi = format_time(max(p.end for p in plist), tz)
            runs = parse_sacct(sacct_live(lo, hi), topo.nodes, topo.node_gpus, tz, file="sacct (live)",
                               skip_bad_rows=skip_bad_rows)
        else:
            runs = read_sacct_file(sacct_file, topo.nodes, topo.node_gpus, tz, skip_bad_rows=skip_bad_rows)
    except InputError as e:
        problems += e.problems
    if incidents:
        try:
            log = load_incidents(incidents, lc, skip_bad_rows=skip_bad_rows)
            from slaschema.cli import echo_warnings

            echo_warnings(log.warnings)
        except InputError as e:
            problems += e.problems
    elif live:
        from calculators.importers.slurm_events import events_csv, parse_events, sacctmgr_events

        try:
            imp = parse_events(sacctmgr_events(format_time(min(p.start for p in plist), tz)), tz,
                               file="sacctmgr show event (live)")
            import pandas as pd

            frame = pd.read_csv(io.StringIO(events_csv(imp, neutralise=False)), dtype=str, keep_default_na=False)
            frame = frame[frame["target"].isin(set(topo.nodes))]
            log = _log_from_frame(frame, lc)
        except InputError as e:
            problems += e.problems
    if problems:
        raise InputError(problems)          # printed, exit 1 (slaschema.cli.report_input_errors)
    return runs, log


def _log_from_frame(frame, lc: LoadedContract):
    """An incident log from imported rows (written to a temporary CSV and loaded as any log)."""
    import tempfile
    from pathlib import Path

    from calculators.incidents import load_incidents

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "slurm-events.csv"
        frame.to_csv(p, index=False)
        log = load_incidents(p, lc)
    return log


@click.command()
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option("--sacct", "sacct_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Saved `sacct -a -X -D -P --format=...` output (see docs/goodput.md for the field list).")
@click.option("--live", is_flag=True, help="Run sacct (and, without --incidents, sacctmgr show event) now.")
@click.option("--incidents", type=click.Path(dir_okay=False), metavar="LOG",
              help="Incident log for availability, credits and attribution.")
@period_options()
@click.option("--checkpoint-interval", metavar="DURATION",
              help="Jobs checkpoint this often (e.g. 30m): work since the last checkpoint is lost. A job's "
                   "comment `checkpoint_interval=` or `last_checkpoint=` overrides it.")
@click.option("--window", "window", default="5m", show_default=True, metavar="DURATION",
              help="An incident on a job's nodes matches it when it starts by the job's End + window and "
                   "has not ended before End.")
@click.option("--train-log", "train_logs", multiple=True, metavar="JOBID=FILE[:PROFILE]",
              help="Training log of a job (repeatable): productive-time fraction from its step lines.")
@click.option("--profiles", type=click.Path(dir_okay=False), metavar="YAML", help="More training-log profiles.")
@_zone_option()
@click.option("--as-of", "as_of", metavar="TS", help="Running jobs and open incidents end here "
              "(default: the end of the period, or now if earlier).")
@click.option("--skip-bad-rows", is_flag=True, help="Leave bad rows out (counted in the output).")
@click.option("--include-jobs", is_flag=True,
              help="List the jobs ended by infrastructure (job ids and node lists are the customer's data; "
                   "without this only counts and GPU-hours are shown).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
              help="Output format (default: from the -o extension, else table).")
@output_option()
@no_progress_option
@click.pass_context
def goodput(ctx, contract, sacct_file, live, incidents, periods, checkpoint_interval, window, train_logs, profiles,
            tz, tz_alias, as_of, skip_bad_rows, include_jobs, fmt, output, no_progress):
    """GPU-hours paid, available, allocated, completed and useful per month, and the work lost
    to infrastructure, from Slurm accounting (sacct) and an incident log.

    Jobs in NODE_FAIL or BOOT_FAIL, and runs requeued while an incident was on their nodes,
    are attributed to the incidents on their nodes at their end time. Goodput = useful /
    paid GPU-hours; the effective price is what was paid after credits per useful GPU-hour.
    Exit 1 on bad input (every problem is listed).
    """
    from calculators.cli import _emit, read_as_of, stage_progress
    from calculators.goodput.compute import compute_goodput
    from calculators.periods import PeriodError, parse_periods
    from slaschema.cli import load_or_exit
    from slaschema.types import parse_duration

    if bool(sacct_file) == bool(live):
        raise click.UsageError("name the job records: --sacct FILE or --live")
    from slaschema.cliconv import fmt_given, output_format

    fmt = output_format(output, fmt, ("table", "json", "csv"), explicit=fmt_given(ctx))

    def dur(text, hint):
        if text is None:
            return None
        try:
            s = int(parse_duration(text).total_seconds())
        except Exception:
            raise click.BadParameter(f"{text!r} is not a duration such as 30m, 2h or PT30M", param_hint=hint) from None
        if s < 0:
            raise click.BadParameter("a duration is not negative", param_hint=hint)
        return s

    ckpt = dur(checkpoint_interval, "--checkpoint-interval")
    if ckpt == 0:
        raise click.BadParameter("a checkpoint interval is longer than 0", param_hint="--checkpoint-interval")
    win = dur(window, "--window")
    tz = zone_given(tz, tz_alias)
    zone = _check_zone(tz)
    # a local --as-of in the zone named, as for credits; the range is goodput's own (1900-2200)
    as_of_dt = read_as_of(as_of, tz) if as_of is not None else None
    if as_of_dt is not None and not 1900 <= _utc_year(as_of_dt) <= 2200:
        raise click.BadParameter(f"{as_of!r}: give an instant between the years 1900 and 2200 [as_of_out_of_range]",
                                 param_hint="--as-of")
    lc = load_or_exit(contract, "json" if fmt == "json" else "table")
    try:
        plist = parse_periods(list(periods), lc.model.contract.timezone)
    except PeriodError as e:
        raise click.BadParameter(str(e), param_hint="--month/--quarter/--period") from None
    start, end = min(p.start for p in plist), max(p.end for p in plist)
    now = int(datetime.now(timezone.utc).timestamp())
    if as_of_dt is not None:
        as_of_s = int(as_of_dt.timestamp())
    else:               # the end of the period; now while the period runs
        as_of_s = now if start < now < end else end
    training = _training(train_logs, profiles, zone)
    # a saved sacct file of 64 MiB or more (about half a million jobs): its stages on a terminal
    progress = stage_progress("goodput", sacct_file or "", 3, no_progress)
    try:
        runs, log = load_inputs(lc, sacct_file, live, incidents, zone, plist, skip_bad_rows)
        progress.step(note="job records" + (" and incidents" if incidents else "") + " read and checked")
        result = compute_goodput(lc, runs, plist, log=log, as_of=as_of_s, checkpoint_interval_s=ckpt, window_s=win,
                                 training=_match_training(training, runs))
        progress.step(note=f"{len(plist)} month(s) computed")
        if fmt == "json":
            from slaschema.jsontext import dumps_indented

            _emit(dumps_indented(result.to_json(include_jobs)), output, progress)
        elif fmt == "csv":
            _emit(render_csv(result), output, progress)
        else:
            _emit(render_table(result, include_jobs), output, progress)
    finally:
        progress.close()
    for p in runs.skipped[:20]:
        click.echo(f"skipped: {p.format()}", err=True)


def _training(specs, profiles_file, tz):
    if not specs:
        return []
    from calculators.goodput.trainlog import load_profiles, productivity_from_file
    from slaschema.errors import InputError, Problem

    profiles = load_profiles(profiles_file)
    out, problems = [], []
    for spec in specs:
        job, sep, rest = spec.partition("=")
        if not sep or not job or not rest:
            raise click.BadParameter(f"{spec!r}: write JOBID=FILE or JOBID=FILE:PROFILE", param_hint="--train-log")
        path, _, prof = rest.rpartition(":") if ":" in rest and rest.rsplit(":", 1)[1] in profiles else (rest, "", None)
        try:
            out.append(productivity_from_file(job, path, profiles, prof, tz=tz))
        except InputError as e:
            problems += e.problems
        except OSError as e:
            problems.append(Problem("file_not_found", f"cannot read the training log: {e.strerror}", file=path,
                                    fix="check the path after JOBID="))
    if problems:
        raise InputError(problems)          # printed, exit 1 (slaschema.cli.report_input_errors)
    return out


def _match_training(training, runs):
    """Each training log with its job's elapsed time (all runs of the JobID) and GPUs from sacct."""
    import numpy as np

    from calculators.goodput.trainlog import with_job

    out = []
    for tr in training:
        hit = np.flatnonzero(runs.job_id == tr.job_id)
        if len(hit):
            ends = np.where(runs.end[hit] < 0, runs.start[hit], runs.end[hit])
            out.append(with_job(tr, int((ends - runs.start[hit]).sum()), int(runs.gpus[hit[-1]])))
        else:
            out.append(tr)
    return out


def render_csv(result) -> str:
    from slaschema.textsafe import csv_cell

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for m in [*(m.to_json() for m in result.months), {"period": "total", **result.totals()}]:
        jobs = m.pop("jobs")
        m.update({"runs": jobs.get("runs", ""), "runs_completed": jobs.get("completed", ""),
                  "runs_ended_by_infrastructure": jobs["ended_by_infrastructure"],
                  "runs_requeued_by_infrastructure": jobs["requeued_by_infrastructure"],
                  "runs_infrastructure_unattributed": jobs["infrastructure_unattributed"]})
        w.writerow({k: "" if m.get(k) is None else csv_cell(m.get(k)) for k in CSV_COLUMNS})
    return buf.getvalue()


def render_table(result, include_jobs: bool = False, top: int = 10) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    con = Console(file=buf, width=130, force_terminal=False, color_system=None)
    t = Table(title=f"Goodput — {result.contract} (GPU-hours; as of "
                    f"{datetime.fromtimestamp(result.as_of, timezone.utc):%Y-%m-%dT%H:%M:%SZ})")
    cols = ["Month", "Paid", "Available", "Allocated", "Completed", "Lost to infra", "Useful", "Goodput",
            f"Price/useful GPU-h ({result.currency})", "Infra jobs"]
    for c in cols:
        t.add_column(c, justify="left" if c == "Month" else "right")
    rows = [m.to_json() for m in result.months]
    if len(rows) > 1:
        rows.append({"period": "Total", **result.totals()})
    for m in rows:
        j = m["jobs"]
        infra = f"{j['ended_by_infrastructure']:,}"
        if j["infrastructure_unattributed"]:
            infra += f" ({j['infrastructure_unattributed']:,} unattributed)"
        t.add_row(m["period"], _h(m["paid_gpu_hours"]), _h(m["available_gpu_hours"]), _h(m["allocated_gpu_hours"]),
                  _h(m["completed_gpu_hours"]), _h(m["lost_gpu_hours"]), _h(m["useful_gpu_hours"]),
                  f"{m['goodput_pct']}%" if m["goodput_pct"] is not None else "—",
                  m["effective_price_per_useful_gpu_hour"] or "—", infra)
    con.print(t)
    if result.incident_costs:
        t2 = Table(title="Incidents that cost the most work")
        for c in ("Incident", "Scope", "Target", "Start", "Cause", "Jobs", "Lost GPU-h"):
            t2.add_column(c, justify="right" if c in ("Jobs", "Lost GPU-h") else "left")
        for c in result.incident_costs[:top]:
            d = c.to_json()
            t2.add_row(d["id"], d["scope"], d["target"], d["start"], d["cause"][:40], f"{d['jobs']:,}",
                       _h(d["lost_gpu_hours"]))
        con.print(t2)
    if result.gpus_from_nodes_runs:
        con.print(f"{result.gpus_from_nodes_runs:,} runs had no gres/gpu in AllocTRES: their GPUs are the "
                  "contract's GPUs of their nodes (whole-node mapping).")
    if result.incidents_file is None and not any(m.available_gpu_s is not None for m in result.months):
        con.print("No incident log: availability, credits and attribution are not computed.")
    for tr in result.training:
        con.print(tr.summary_line(include_jobs))
    if include_jobs and result.infra_jobs:
        t3 = Table(title="Jobs ended or requeued by infrastructure")
        for c in ("Job", "State", "Nodes", "GPUs", "Start", "End", "Lost from", "Lost GPU-h", "Incidents"):
            t3.add_column(c)
        for j in result.infra_jobs:
            d = j.to_json()
            t3.add_row(d["job_id"], d["state"], d["nodelist"], str(d["gpus"]), d["start"], d["end"], d["lost_from"],
                       _h(d["lost_gpu_hours"]), ", ".join(d["incidents"]) or "—")
        con.print(t3)
    return buf.getvalue()


def _h(v) -> str:
    if v is None:
        return "—"
    from decimal import Decimal

    return f"{Decimal(v):,.2f}"


def goodput_options(f):
    """`slakit review` options for its goodput section (`--sacct FILE` turns it on)."""
    f = click.option("--sacct-tz", "gp_tz", default=None, metavar="ZONE",
                     help="Zone of the sacct times (default: this machine's zone).")(f)
    f = click.option("--checkpoint-interval", "gp_checkpoint", default=None, metavar="DURATION",
                     help="With --sacct: jobs checkpoint this often; work since the last checkpoint is lost.")(f)
    return click.option("--sacct", "gp_sacct", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                        help="Saved sacct output (see `slakit goodput`): adds the goodput section.")(f)


def review_goodput_json(lc: LoadedContract, log, res, opts: dict, skip_bad_rows: bool = False):
    """The goodput document for `slakit review` (None without --sacct); same log and credits run."""
    if not opts.get("gp_sacct"):
        return None
    from calculators.goodput.compute import compute_goodput
    from calculators.goodput.sacct import read_sacct_file
    from slaschema.types import parse_duration

    ckpt = None
    if opts.get("gp_checkpoint"):
        try:
            ckpt = int(parse_duration(opts["gp_checkpoint"]).total_seconds())
        except Exception:
            raise click.BadParameter(f"{opts['gp_checkpoint']!r} is not a duration such as 30m",
                                     param_hint="--checkpoint-interval") from None
        if ckpt <= 0:
            raise click.BadParameter("a checkpoint interval is longer than 0", param_hint="--checkpoint-interval")
    zone = _check_zone(opts.get("gp_tz"), "--sacct-tz")
    runs = read_sacct_file(opts["gp_sacct"], lc.topology.nodes, lc.topology.node_gpus, zone,
                           skip_bad_rows=skip_bad_rows)      # InputError: printed, exit 1 (report_input_errors)
    plist = [p.period for p in res.periods]
    return compute_goodput(lc, runs, plist, log=log, as_of=res.as_of, checkpoint_interval_s=ckpt,
                           credits_result=res).to_json()


def register(group: click.Group) -> None:
    group.add_command(goodput)
