"""Slurm's client commands as the calculators read them: running one (`sacct`, `sacctmgr`)
and the time strings they print.

Slurm prints local wall-clock times without an offset, `YYYY-MM-DDTHH:MM:SS` (unless
SLURM_TIME_FORMAT is set), and `Unknown` or `None` where there is no time (a job that never
started, an event still open). The zone of those times is the caller's to name.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from slaschema.errors import InputError, Problem

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
# The cells that hold no time, as sacct writes them (compared exactly, for vectorised reads).
NOT_A_TIME = ("Unknown", "None", "", "unknown", "none", "UNKNOWN", "NONE")
# The years Slurm writes; a time outside them is a corrupt field.
YEARS = (1900, 9998)


def parse_time(text: str, zone: ZoneInfo) -> datetime:
    """A Slurm time (local wall clock in `zone`, or with an offset) in UTC; ValueError for text
    that is no ISO time and for a time that leaves the calendar in UTC (year 1 east of it,
    9999 west) or lies outside `YEARS`, which Slurm never writes."""
    t = datetime.fromisoformat(text)
    try:
        out = (t if t.tzinfo else t.replace(tzinfo=zone)).astimezone(timezone.utc)
    except OverflowError:
        raise ValueError(text) from None
    if not YEARS[0] <= out.year <= YEARS[1]:
        raise ValueError(text)
    return out


def format_time(epoch: int, zone: str) -> str:
    """Epoch seconds as the local wall-clock time in `zone` that Slurm's options take
    (`--starttime=`, `Start=`)."""
    return datetime.fromtimestamp(epoch, ZoneInfo(zone)).strftime(TIME_FORMAT)


def run_client(argv: Sequence[str], *, code: str, timeout_s: float,
               env: Mapping[str, str] | None = None) -> str:
    """Run a Slurm client command and return its output; an `InputError` with `code` when it
    cannot run (not installed, no answer within `timeout_s`) or exits non-zero."""
    argv = list(argv)
    shown = " ".join(argv)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                              env=dict(env) if env is not None else None)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InputError([Problem(code, f"cannot run {argv[0]}: {e}", file=shown,
                                  fix="run on a Slurm login node (slurm-client installed, SLURM_CONF set), or "
                                      "save the output to a file and pass it instead")]) from None
    if proc.returncode != 0:
        raise InputError([Problem(code, f"{argv[0]} failed (exit {proc.returncode}): {proc.stderr.strip()}",
                                  file=shown, fix="check that slurmdbd is reachable (sacctmgr show cluster)")])
    return proc.stdout
