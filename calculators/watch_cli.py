"""`slakit watch --slurm -o LOG.csv`: Slurm node states polled into an incident log
(`calculators.watch`), the log `slakit credits` reads."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone

import click

from slaschema.cliconv import DURATION, output_option


@click.command("watch")
@click.option("--slurm", "use_slurm", is_flag=True, required=True,
              help="Poll Slurm node states (sinfo) of the cluster in this environment.")
@click.option("--interval", type=DURATION, default="30s", show_default=True)
@output_option(required=True, fixed="csv",
               help="Incident log (CSV, *.csv) to create or update; feeds `slakit credits` directly.")
@click.option("--state", "state_file", type=click.Path(dir_okay=False),
              help="State file for restarts [default: OUTPUT.state.json].")
@click.option("--partition", help="Only nodes of this partition.")
@click.option("--once", is_flag=True, help="Poll once and exit (exit 1 when sinfo fails).")
@click.option("--max-polls", type=click.IntRange(min=1), help="Stop after this many polls.")
def watch(use_slurm, interval, output, state_file, partition, once, max_polls) -> None:
    """Record DOWN/DRAIN/FAIL periods of Slurm nodes as incidents (scope=node).

    Survives restarts: open incidents and the last poll are kept in the state file, so a
    restarted watcher neither duplicates nor loses incidents. Runs until interrupted.
    """
    import csv
    import subprocess
    import time
    from pathlib import Path

    from calculators.watch import load_state, poll_slurm, read_log, recover, save_state, step, update_log

    out = Path(output)
    state_path = Path(state_file) if state_file else out.with_name(out.name + ".state.json")
    try:
        state = load_state(state_path)
    except (ValueError, KeyError, json.JSONDecodeError) as exc:     # printed, exit 1 (report_input_errors)
        from slaschema.errors import InputError, Problem

        raise InputError([Problem("bad_state_file", f"cannot read the watch state file: {exc}", file=str(state_path),
                                  fix="it is written by `slakit watch` only: restore it, or name another with "
                                      "--state")]) from None
    try:
        logged = read_log(out)[1]
    except (OSError, ValueError, csv.Error):
        logged = []                  # (a log that cannot be read: the first poll's write says so)
    state = recover(state, logged)   # (a watcher killed between the log and the state file)
    limit = 1 if once else max_polls
    polls = 0
    period = interval.total_seconds()
    next_at = time.monotonic()
    try:
        while limit is None or polls < limit:
            polls += 1
            try:
                snapshot = poll_slurm(partition)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                click.echo(f"watch: poll failed: {exc} [poll_failed]", err=True)
                if once:
                    sys.exit(1)
            else:
                now = datetime.now(timezone.utc)
                state, changed = step(state, snapshot, now)
                update_log(out, changed)
                save_state(state_path, state)
                for inc in changed:
                    what = "closed" if inc.end else "opened"
                    click.echo(f"{now:%Y-%m-%dT%H:%M:%SZ} {what} {inc.id} ({inc.cause})", err=True)
            if limit is not None and polls >= limit:
                break
            next_at += period
            time.sleep(max(0.0, next_at - time.monotonic()))
    except KeyboardInterrupt:
        pass


def register(group: click.Group) -> None:
    group.add_command(watch)
