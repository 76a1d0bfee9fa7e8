"""Independent availability monitor: Slurm node states polled into an incident log.

A node is out of service while its state carries DOWN, DRAIN (drained/draining) or FAIL.
Each such period becomes one incident row in the incident-log format (scope=node,
category=unplanned, cause = Slurm's reason). `start` is the timestamp Slurm keeps for the
reason (`sinfo %H`) when it has one, else the poll that first saw the node out; `end` is the
first poll that sees it back.

Restarts: the open incidents and the last poll time live in a state file, and incident ids
are derived from node and start, so a restarted watcher continues open incidents instead of
opening duplicates and closes the ones that ended while it was away. The log is rewritten
atomically, keyed by id; rows it did not write are kept as they are. A poll writes the log,
then the state file; a watcher killed between the two is set right from the log when it
starts again (`recover`).

`step` is pure; `poll_slurm` and the file functions are the IO edge.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

OUT_FLAGS = {"down", "drain", "drained", "draining", "fail", "failing"}
COLUMNS = ["id", "scope", "target", "start", "end", "impact", "category", "cause", "detected_at"]
STATE_VERSION = 1


@dataclass(frozen=True)
class Observation:
    node: str
    state: str                     # sinfo %T: idle, drained, down*, mixed+drain, ...
    reason: str                    # sinfo %E ("none" when none)
    since: datetime | None         # sinfo %H: when the reason was set, if known

    @property
    def out_of_service(self) -> bool:
        parts = self.state.strip().lower().rstrip("*~#!%$@^-").split("+")
        return any(p in OUT_FLAGS for p in parts)


@dataclass(frozen=True)
class Incident:
    id: str
    node: str
    start: datetime
    end: datetime | None
    cause: str
    detected_at: datetime          # the poll that first saw it

    def row(self) -> dict[str, str]:
        return {
            "id": self.id, "scope": "node", "target": self.node, "start": iso(self.start),
            "end": iso(self.end) if self.end else "", "impact": "down", "category": "unplanned",
            "cause": self.cause, "detected_at": iso(self.detected_at),
        }


@dataclass(frozen=True)
class WatchState:
    open: Mapping[str, Incident]   # node -> open incident
    last_poll: datetime | None


def iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def incident_id(node: str, start: datetime) -> str:
    return f"{node}-{start.astimezone(timezone.utc):%Y%m%dT%H%M%SZ}"


def step(state: WatchState, snapshot: Mapping[str, Observation], now: datetime) -> tuple[WatchState, list[Incident]]:
    """Apply one poll. Returns the new state and the incidents whose row changed
    (newly opened or closed). Nodes absent from the snapshot keep their open incidents."""
    open_ = dict(state.open)
    changed: list[Incident] = []
    for node, obs in snapshot.items():
        current = open_.get(node)
        if obs.out_of_service and current is None:
            start = obs.since if obs.since is not None and obs.since <= now else now
            if state.last_poll is not None and start < state.last_poll:
                start = state.last_poll    # it was not out at the previous poll
            reason = obs.reason if obs.reason and obs.reason.lower() != "none" else obs.state
            inc = Incident(incident_id(node, start), node, start, None, reason, now)
            open_[node] = inc
            changed.append(inc)
        elif not obs.out_of_service and current is not None:
            closed = replace(current, end=max(now, current.start))
            del open_[node]
            changed.append(closed)
    return WatchState(open_, now), changed


def recover(state: WatchState, log_rows: list[dict[str, str]]) -> WatchState:
    """The state as the log has it, for a watcher killed between the two writes of a poll (the
    log first, then the state file): a row this watcher wrote (scope node, its id made from
    the target and the start) that is open in the log but not in the state is open again, so
    the next poll that sees the node back closes it; an incident open in the state whose row
    the log has already closed is closed. Without this, a node that came back while no watcher
    ran kept an open row for good, or had its end moved to the restart."""
    from slaschema.textsafe import csv_cell, csv_uncell

    open_ = dict(state.open)
    by_id = {r.get("id"): r for r in log_rows}
    for node, inc in list(open_.items()):
        row = by_id.get(inc.id) or by_id.get(csv_cell(inc.id))
        if row is not None and row.get("end"):
            del open_[node]
    for r in log_rows:
        node = csv_uncell(r.get("target") or "")
        start = _log_time(r.get("start"))
        if r.get("scope") != "node" or r.get("end") or not node or start is None or node in open_:
            continue
        if csv_uncell(r.get("id") or "") != incident_id(node, start):
            continue                       # a row from elsewhere: kept as it is, not taken over
        detected = _log_time(r.get("detected_at")) or start
        open_[node] = Incident(incident_id(node, start), node, start, None, csv_uncell(r.get("cause") or ""), detected)
    return WatchState(open_, state.last_poll)


def _log_time(text: str | None) -> datetime | None:
    """A time as `iso` writes it (2027-03-01T08:00:05Z), else None."""
    if not text or not text.endswith("Z"):
        return None
    try:
        t = datetime.fromisoformat(text[:-1] + "+00:00")
    except ValueError:
        return None
    return t if iso(t) == text else None


# --- Slurm IO ------------------------------------------------------------------------------

def parse_sinfo(text: str) -> dict[str, Observation]:
    """`sinfo -N -h -o "%N|%T|%H|%E"` -> {node: Observation}; first line per node wins."""
    out: dict[str, Observation] = {}
    for line in text.splitlines():
        parts = line.split("|", 3)
        if len(parts) != 4 or parts[0] in out:
            continue
        node, st, since, reason = (p.strip() for p in parts)
        out[node] = Observation(node, st, reason, _slurm_time(since))
    return out


def _slurm_time(text: str) -> datetime | None:
    if not text or text.lower() in ("unknown", "none", "n/a"):
        return None
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return None
    if not 1970 <= t.year <= 9998:       # not a time Slurm means (an unset or corrupt field)
        return None
    # Slurm prints the controller's local time without an offset; the watcher runs with the
    # same zone (set TZ to match otherwise).
    try:
        return (t if t.tzinfo else t.astimezone()).astimezone(timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None


def poll_slurm(partition: str | None = None, env: Mapping[str, str] | None = None) -> dict[str, Observation]:
    argv = ["sinfo", "-N", "-h", "-o", "%N|%T|%H|%E"]
    if partition:
        argv += ["-p", partition]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=dict(env) if env else None)
    if proc.returncode != 0:
        raise RuntimeError(f"sinfo failed (rc {proc.returncode}): {proc.stderr.strip()}")
    return parse_sinfo(proc.stdout)


# --- files -----------------------------------------------------------------------------------

def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    from slaschema.fileio import temp_for

    fd, tmp = temp_for(path)
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_state(path: Path) -> WatchState:
    if not path.exists():
        return WatchState({}, None)
    doc = json.loads(path.read_text())
    if doc.get("version") != STATE_VERSION:
        raise ValueError(f"{path}: unsupported watch state version {doc.get('version')!r}")
    open_ = {}
    for node, d in doc.get("open", {}).items():
        open_[node] = Incident(d["id"], node, datetime.fromisoformat(d["start"]), None, d["cause"],
                               datetime.fromisoformat(d["detected_at"]))
    last = doc.get("last_poll")
    return WatchState(open_, datetime.fromisoformat(last) if last else None)


def save_state(path: Path, state: WatchState) -> None:
    doc = {
        "version": STATE_VERSION,
        "last_poll": state.last_poll.isoformat() if state.last_poll else None,
        "open": {n: {"id": i.id, "start": i.start.isoformat(), "cause": i.cause,
                     "detected_at": i.detected_at.isoformat()} for n, i in sorted(state.open.items())},
    }
    _atomic_write(path, json.dumps(doc, indent=2) + "\n")


def read_log(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    if not path.exists() or path.stat().st_size == 0:
        return list(COLUMNS), []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or COLUMNS)
        rows = [dict(r) for r in reader]
    for c in COLUMNS:
        if c not in header:
            header.append(c)
    return header, rows


def update_log(path: Path, changed: list[Incident]) -> None:
    """Upsert rows by id, in start order; rows from elsewhere are kept."""
    if not changed:
        if not path.exists():
            _atomic_write(path, ",".join(COLUMNS) + "\n")
        return
    from slaschema.textsafe import csv_cell

    header, rows = read_log(path)
    index = {r.get("id"): i for i, r in enumerate(rows)}
    for inc in changed:
        row = inc.row()
        key = inc.id if inc.id in index else csv_cell(inc.id)     # the id as this file wrote it
        if key in index:
            merged = dict(rows[index[key]])
            merged.update(row)
            rows[index[key]] = merged
        else:
            index[key] = len(rows)
            rows.append(row)
    rows.sort(key=lambda r: (r.get("start") or "", r.get("target") or "", r.get("id") or ""))

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=header, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: csv_cell(r.get(k, "") or "") for k in header})
    _atomic_write(path, buf.getvalue())
