"""`sacctmgr show event -P` -> an incident log, with the rules of `slakit watch`.

    sacctmgr -P show event Start=2027-01-01T00:00:00 format=Cluster,NodeName,TimeStart,TimeEnd,State,Reason,User

A node event whose state carries DOWN, DRAIN (drained/draining) or FAIL is a period out of
service (`calculators.watch.Observation.out_of_service`); other node events (UNK cold-start,
cluster TRES registrations) are not. Events of one node that overlap or touch are one
incident, as the watcher keeps one incident open while a node stays out, whatever Slurm
says in between: it starts at the first event's TimeStart, ends at the last one's TimeEnd
(open while Slurm says `Unknown`) and its cause is the first event's Reason (the state
when there is none). Rows: scope=node, impact=down, category=unplanned, detected_at =
start (Slurm recorded it then), id = `NODE-YYYYMMDDTHHMMSSZ` like the watcher's, so an
event log and a watch log of the same outage name it the same way.

Slurm prints local wall-clock times without an offset; `tz` names their zone. Reason
codes: events_missing_column, events_empty, events_time_invalid, events_end_before_start.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from calculators.slurm_client import parse_time, run_client
from calculators.watch import COLUMNS, Incident, Observation, incident_id
from slaschema.errors import InputError, Problem

EVENT_FIELDS = ("Cluster", "NodeName", "TimeStart", "TimeEnd", "State", "Reason", "User")
REQUIRED = ("nodename", "timestart", "timeend", "state")


@dataclass(frozen=True)
class EventImport:
    incidents: tuple[Incident, ...]
    events_read: int          # node events in the input
    events_out: int           # of those, out of service


def parse_events(text: str, tz: str = "UTC", file: str = "<sacctmgr>", cluster: str | None = None) -> EventImport:
    zone = ZoneInfo(tz)
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        raise InputError([Problem("events_empty", "the sacctmgr output is empty", file=file,
                                  fix="run `sacctmgr -P show event` (its first line is the header)")])
    header = [h.strip().lower() for h in lines[first].split("|")]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError([Problem("events_missing_column", f"no {c} column in the sacctmgr output", file=file, line=1,
                                  value=lines[first][:80], fix="run sacctmgr with -P and format="
                                  + ",".join(EVENT_FIELDS)) for c in missing])
    at = {h: j for j, h in enumerate(header)}
    problems: list[Problem] = []
    spans: list[tuple[str, datetime, datetime | None, str]] = []
    read = 0
    for i in range(first + 1, len(lines)):
        ln = lines[i]
        if not ln.strip():
            continue
        f = ln.split("|", len(header) - 1)
        f += [""] * (len(header) - len(f))
        node = f[at["nodename"]].strip()
        if not node:
            continue                      # a cluster event (TRES registration)
        if cluster and "cluster" in at and f[at["cluster"]].strip() != cluster:
            continue
        read += 1
        state = f[at["state"]].strip()
        reason = f[at["reason"]].strip() if "reason" in at else ""
        row = i - first
        raw_start, raw_end = f[at["timestart"]].strip(), f[at["timeend"]].strip()
        try:
            start = parse_time(raw_start, zone)
        except ValueError:
            problems.append(Problem("events_time_invalid", "TimeStart is not a time", file=file, row=row,
                                    column="TimeStart", value=raw_start, fix="sacctmgr prints YYYY-MM-DDTHH:MM:SS"))
            continue
        end = None
        if raw_end.lower() not in ("unknown", ""):
            try:
                end = parse_time(raw_end, zone)
            except ValueError:
                problems.append(Problem("events_time_invalid", "TimeEnd is not a time", file=file, row=row,
                                        column="TimeEnd", value=raw_end,
                                        fix="sacctmgr prints YYYY-MM-DDTHH:MM:SS, or Unknown while open"))
                continue
        if end is not None and end < start:
            problems.append(Problem("events_end_before_start", "TimeEnd is before TimeStart", file=file, row=row,
                                    column="TimeEnd", value=f[at["timeend"]].strip()))
            continue
        if not Observation(node, state, reason, start).out_of_service:
            continue
        cause = reason if reason and reason.lower() != "none" else state
        spans.append((node, start, end, cause))
    if problems:
        raise InputError(problems)
    spans.sort(key=lambda s: (s[0], s[1]))
    out: list[Incident] = []
    cur = None
    for node, start, end, cause in spans:
        if cur is not None and cur[0] == node and (cur[2] is None or start <= cur[2]):
            if cur[2] is not None and (end is None or end > cur[2]):
                cur = (cur[0], cur[1], end, cur[3])
            continue
        if cur is not None:
            out.append(Incident(incident_id(cur[0], cur[1]), cur[0], cur[1], cur[2], cur[3], cur[1]))
        cur = (node, start, end, cause)
    if cur is not None:
        out.append(Incident(incident_id(cur[0], cur[1]), cur[0], cur[1], cur[2], cur[3], cur[1]))
    out.sort(key=lambda x: (x.start, x.node))
    return EventImport(tuple(out), read, len(spans))


def events_csv(imp: EventImport, *, neutralise: bool = True) -> str:
    """The incident log's CSV text; `neutralise=False` keeps node names and reasons as Slurm
    wrote them (for a log slakit reads itself, never for a file people open)."""
    import csv
    import io

    from slaschema.textsafe import csv_cell

    cell = csv_cell if neutralise else (lambda v: v)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for inc in imp.incidents:
        w.writerow({k: cell(v) for k, v in inc.row().items()})
    return buf.getvalue()


def sacctmgr_events(since: str, until: str | None = None, env: dict[str, str] | None = None) -> str:
    """Run `sacctmgr -P show event` for node events from `since` (a Slurm time)."""
    argv = ["sacctmgr", "-P", "show", "event", f"Start={since}", "format=" + ",".join(EVENT_FIELDS)]
    if until:
        argv.insert(-1, f"End={until}")
    return run_client(argv, code="events_failed", timeout_s=120, env=env)
