"""Periodic performance re-checks as incidents: `accept run ... --as-incidents LOG`.

For every performance level of the contract (`performance:`) whose criterion ran, each
node's measured value of the level's metric is compared with the level's floor
(`floor` x `published`):

- below the floor and no open performance incident for (level, node): a new row opens,
  `scope: node`, `impact: degraded`, `category: performance`, starting at the measurement;
- at or above the floor with an open one: that row is closed (`end` = the measurement);
- otherwise nothing changes. A node without a measurement this run (skip, error, not run)
  leaves its incident as it is: the state is only changed by evidence.

So a node is below its performance level from the first failing measurement until the next
passing one. Rows are identified as `perf-<level>-<node>-<start as YYYYMMDDTHHMMSSZ>`. The
log is an incident log (CSV) as `slakit credits` reads it; other rows in it are kept as they
are, and the rows written here are neutralised as in every CSV slakit writes
(`slaschema.textsafe.csv_cell`). The file is rewritten atomically (temp file and rename).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

from acceptance.document import RunDocument
from slaschema.errors import InputError, Problem
from slaschema.fileio import temp_for
from slaschema.models import Contract

CATEGORY = "performance"
COLUMNS = ("id", "scope", "target", "start", "end", "impact", "category", "cause")
MAX_LOG_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Measurement:
    level: str
    node: str
    value: float | None
    floor: Decimal
    at: datetime


@dataclass(frozen=True)
class Change:
    kind: str            # opened | closed
    incident: str
    node: str
    level: str
    at: datetime
    value: float | None


def measurements(contract: Contract, doc: RunDocument, at: datetime) -> list[Measurement]:
    """Per performance level and node, the measured value of the level's metric. Pure."""
    crit_by_id = {c.id: c for c in contract.acceptance.criteria}
    entries = {c.id: c for c in doc.criteria}
    out: list[Measurement] = []
    for level in contract.performance:
        crit = crit_by_id.get(level.criterion)
        entry = entries.get(level.criterion)
        if crit is None or entry is None:
            continue
        metric = level.metric or crit.metric
        seen: dict[str, float | None] = {}
        for v in entry.verdicts:
            node = v.node
            if not node or v.details.get("metric") != metric:
                continue
            if v.reason == "fleet_outlier":
                continue
            m = v.measured
            value = float(m) if isinstance(m, (int, float)) and not isinstance(m, bool) else None
            if node not in seen or (value is not None and (seen[node] is None or value < seen[node])):
                seen[node] = value
        for node, value in sorted(seen.items()):
            out.append(Measurement(level.id, node, value, level.floor_value, at))
    return out


def _stamp(at: datetime) -> str:
    return at.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _iso(at: datetime) -> str:
    return at.astimezone(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def apply(rows: list[dict[str, str]], found: Sequence[Measurement]) -> tuple[list[dict[str, str]], list[Change]]:
    """The log rows after this run's measurements, and what changed. Pure."""
    from slaschema.textsafe import csv_cell

    rows = [dict(r) for r in rows]
    changes: list[Change] = []
    for m in found:
        if m.value is None:
            continue
        prefix = f"perf-{m.level}-{m.node}-"
        written = (prefix, csv_cell(prefix))        # as this file wrote it (a hidden character as <U+hhhh>)
        open_rows = [r for r in rows if r.get("id", "").startswith(written) and not (r.get("end") or "").strip()]
        below = Decimal(str(m.value)) < m.floor
        if below and not open_rows:
            iid = prefix + _stamp(m.at)
            new = {"id": iid, "scope": "node", "target": m.node, "start": _iso(m.at), "end": "",
                   "impact": "degraded", "category": CATEGORY,
                   "cause": f"performance level {m.level}: measured {m.value:g} below floor "
                            f"{format(m.floor.normalize(), 'f')}"}
            # the row this run writes is neutralised for a spreadsheet or terminal (slaschema.textsafe);
            # the log's other rows stay as they are
            rows.append({k: csv_cell(v) for k, v in new.items()})
            changes.append(Change("opened", iid, m.node, m.level, m.at, m.value))
        elif not below:
            for r in open_rows:
                r["end"] = _iso(m.at)
                changes.append(Change("closed", r["id"], m.node, m.level, m.at, m.value))
    return rows, changes


def read_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    if not path.exists():
        return list(COLUMNS), []
    if not path.is_file():
        raise InputError([Problem("log_not_a_file", f"{path}: not a regular file", value=str(path),
                                  fix="name an incident log CSV file")])
    if path.stat().st_size > MAX_LOG_BYTES:
        raise InputError([Problem("log_too_large", f"{path}: larger than {MAX_LOG_BYTES >> 20} MiB",
                                  value=str(path), fix="start a new log for this period")])
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError([Problem("log_not_utf8", f"{path}: not UTF-8 text", value=str(path),
                                  fix="the incident log must be a UTF-8 CSV file")]) from None
    try:
        records = [r for r in csv.reader(io.StringIO(text)) if r]     # blank lines hold no row
    except csv.Error as exc:
        raise InputError([Problem("log_unreadable", f"not a readable CSV file: {exc}", file=str(path),
                                  fix="the incident log must be a CSV file as `slakit credits` reads it")]) from None
    if not records:
        return list(COLUMNS), []
    header = records[0]
    missing = [c for c in ("id", "scope", "target", "start") if c not in header]
    if missing:
        raise InputError([Problem("log_columns", f"{path}: the header lacks {', '.join(missing)}",
                                  value=",".join(header), fix="an incident log CSV has id,scope,target,start,...")])
    # A row with fewer or more fields than the header is refused, never padded or cut: the
    # log is rewritten, and a cut-off row would come back as a different incident.
    problems = [Problem("log_row_fields", f"{len(r)} fields where the header has {len(header)}", file=str(path),
                        row=i, value=",".join(r)[:80],
                        fix="repair the row (a cut-off line, or a comma in an unquoted cell) before re-checking")
                for i, r in enumerate(records[1:], start=1) if len(r) != len(header)]
    if problems:
        raise InputError(problems[:200])
    rows = [dict(zip(header, r)) for r in records[1:]]
    header = list(header)
    for c in COLUMNS:
        if c not in header:
            header.append(c)
    return header, rows


def write_rows(path: Path, header: Sequence[str], rows: Sequence[Mapping[str, str]]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(header), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in header})
    fd, tmp = temp_for(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(buf.getvalue())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_log(contract: Contract, path: Path) -> None:
    """What `update_log` would refuse before the run's measurements: a contract without
    performance levels, a LOG that cannot be read. `accept run --as-incidents` asks this before
    it runs anything, so a run of hours is not lost to it."""
    if not contract.performance:
        raise InputError([Problem("no_performance_levels", "--as-incidents: the contract has no `performance:` levels",
                                  path="performance", fix="add a performance level naming the re-checked criterion")])
    read_rows(path)


def update_log(contract: Contract, doc: RunDocument, path: Path, at: datetime) -> list[Change]:
    """Read LOG, apply this run's measurements, write it back. Returns the changes."""
    check_log(contract, path)
    header, rows = read_rows(path)
    new_rows, changes = apply(rows, measurements(contract, doc, at))
    if changes or not path.exists():
        write_rows(path, header, new_rows)
    return changes


def run_time(doc: RunDocument) -> datetime:
    """When the run's measurements were taken: its finish time, else its start, else now (aware)."""
    return doc.finished_at or datetime.now(timezone.utc)
