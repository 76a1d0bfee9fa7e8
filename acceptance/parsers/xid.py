"""NVIDIA Xid events in a kernel log (`dmesg`, `dmesg -T`, `journalctl -k`, syslog) → `XidRecord`.

Recognised lines:
  `NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, <message>`
  (the `PCI:` prefix, `pid=` and `name=` are optional; `pid='<unknown>'` gives None),
  and the driver's "GPU ... has fallen off the bus" report, which prints no Xid line on some
  drivers: it becomes an event with xid 79 and kind "fell_off_bus".
Timestamps are kept as printed (`timestamp`) — dmesg -T and journalctl carry no time zone,
so the parser does not invent one — and the seconds since boot of plain dmesg (`uptime_s`).

The action for each Xid comes from the policy table `xid_policy.csv` (shipped next to this
module; columns xid, name, action, nonfatal_action, nvidia_immediate_action, note, source):
  drain    take the node out of service for hardware investigation / RMA
  reboot   reboot the node
  reset    reset the GPU before it takes work again
  monitor  application-level or informational; watch for recurrence
  investigate  not in the table (unknown Xid), or Xid 154 without a recognisable action
Xid 144–150 (NVLink5) use `nonfatal_action` when the message says "Nonfatal"; Xid 154
takes the action the driver names as the new state ("... to 0x2 (Node Reboot Required)";
"None" is monitor).

Stable JSON of `XidRecord.to_json()`:
  tool "xid", lines_scanned, events: list of
    xid, kind ("xid" | "fell_off_bus"), pci, pid, process, message, timestamp, uptime_s,
    host (the log line's, else the launcher prefix's), line (1-based), action,
    time_iso (ISO 8601 when the printed stamp names its zone, else None)
  xids (distinct, sorted), counts {xid: n}, worst_action (drain > reboot > reset >
  investigate > monitor; None without events), source (the launcher prefix, or None)
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

from datetime import datetime, timezone

from acceptance.parsers._common import ParseError, Record, clean_text
from acceptance.parsers._prefix import Source, segments, strip_prefixes

TOOL = "xid"

ACTIONS = ("drain", "reboot", "reset", "investigate", "monitor")  # worst first

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?)\):\s*(\d+),\s*(.*?)\s*$"
)
_PID = re.compile(r"^pid=(?:'?<unknown>'?|'?N/A'?|'?(\d+)'?),\s*")
_NAME = re.compile(r"^name=(\S*?),\s*")
_FELL = re.compile(r"fallen off the bus", re.I)
_FELL_PCI = re.compile(r"NVIDIA GPU\s+(?:at\s+)?(?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?)|PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?)")
_UPTIME = re.compile(r"\[\s*(\d+\.\d+)\]")
_CTIME = re.compile(r"\[((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2}\s+\d{1,2} \d\d:\d\d:\d\d(?:[.,]\d+)? \d{4})\]")
# `dmesg --decode` / `dmesg -x` lead every line with facility and level: "kern  :warn  : ".
_DECODE = re.compile(r"^\s*[a-z]{3,8}\s*:\s*(?:emerg|alert|crit|err|warn|notice|info|debug)\s*:\s?")
_ISO_TIME = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_SYS_TIME = rf"(?:\d{{4}}\s+)?{_MON}\s+\d{{1,2}}(?:\s+\d{{4}})?\s+\d\d:\d\d:\d\d(?:\.\d+)?(?:\s+\d{{4}})?"
# A program tag after the host: "kernel:", "kernel[0]:", or none at all for `dmesg --time-format iso`.
_TAG = r"(?:\s+(?P<host>[^\s\[:]+)\s+kernel(?:\[\d+\])?:|\s+kernel(?:\[\d+\])?:|\s|$)"
_ISO = re.compile(rf"^\s*(?:<\d+>\d?\s*)?(?P<ts>{_ISO_TIME}){_TAG}")
_SYSLOG = re.compile(rf"^\s*(?:<\d+>)?(?P<ts>{_SYS_TIME}){_TAG}")
# journalctl -o short-full ("Fri 2024-11-15 12:02:03 UTC"), -o short-unix ("1731672123.470068"),
# dmesg --time-format reltime ("[Nov15 12:02]").
_FULL = re.compile(rf"^\s*(?P<ts>(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [A-Z]{{2,5}}){_TAG}")
_UNIX = re.compile(rf"^\s*(?P<ts>\d{{9,11}}\.\d{{1,9}}){_TAG}")
_RELTIME = re.compile(r"\[((?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\d{1,2} \d\d:\d\d)\]")
_NHC = re.compile(r"^\s*([A-Za-z0-9][\w.-]*) \| ")
_STATE_154 = [
    (re.compile(r"reboot", re.I), "reboot"),
    (re.compile(r"drain", re.I), "drain"),
    (re.compile(r"reset", re.I), "reset"),
    (re.compile(r"^\s*none\s*$", re.I), "monitor"),
]
# "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)": the new state
_NEW_STATE_154 = re.compile(r"\bto\s+(?:0x[0-9a-f]+\s*)?\(([^)]*)\)", re.I)


@dataclass(frozen=True)
class XidPolicy(Record):
    xid: int
    name: str
    action: str
    nonfatal_action: str | None
    nvidia_immediate_action: str | None
    note: str
    source: str


@lru_cache(maxsize=1)
def policy_table() -> dict[int, XidPolicy]:
    """The shipped per-Xid policy, keyed by Xid number."""
    text = resources.files("acceptance.parsers").joinpath("xid_policy.csv").read_text(encoding="utf-8")
    table: dict[int, XidPolicy] = {}
    for row in csv.DictReader(text.splitlines()):
        table[int(row["xid"])] = XidPolicy(
            xid=int(row["xid"]), name=row["name"], action=row["action"],
            nonfatal_action=row["nonfatal_action"] or None,
            nvidia_immediate_action=row["nvidia_immediate_action"] or None,
            note=row["note"], source=row["source"],
        )
    return table


def action_for(xid: int, message: str = "") -> str:
    """The action for one Xid event under the shipped policy ("investigate" when unknown)."""
    policy = policy_table().get(xid)
    if policy is None:
        return "investigate"
    if xid == 154:
        # judge the state the action changed to, not the one it left
        to = _NEW_STATE_154.search(message)
        state = to.group(1) if to else message
        for pattern, action in _STATE_154:
            if pattern.search(state):
                return action
        return "investigate"
    if policy.nonfatal_action and re.search(r"\bnon-?fatal\b", message, re.I):
        return policy.nonfatal_action
    return policy.action


@dataclass(frozen=True)
class XidEvent(Record):
    xid: int
    kind: str
    pci: str | None
    pid: int | None
    process: str | None
    message: str
    timestamp: str | None
    uptime_s: float | None
    host: str | None
    line: int
    action: str
    time_iso: str | None = None


@dataclass(frozen=True)
class XidRecord(Record):
    tool: str
    lines_scanned: int
    events: tuple[XidEvent, ...]
    xids: tuple[int, ...]
    counts: dict[int, int]
    worst_action: str | None
    source: Source | None = None


def time_iso(timestamp: str | None) -> str | None:
    """The ISO 8601 form of a printed time stamp that names its zone (dmesg --time-format iso,
    journalctl -o short-iso / short-iso-precise); None for local times without a zone."""
    if timestamp and re.fullmatch(r"\d{9,11}\.\d+", timestamp):  # seconds since the epoch: UTC
        return datetime.fromtimestamp(float(timestamp), tz=timezone.utc).isoformat()
    full = re.fullmatch(r"\w{3} (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?) (UTC|GMT)", timestamp or "")
    if full:
        timestamp = f"{full.group(1)}T{full.group(2)}+00:00"
    if not timestamp or not re.match(r"\d{4}-", timestamp) or not re.search(r"(?:Z|[+-]\d\d:?\d\d)$", timestamp):
        return None
    t = timestamp.replace(",", ".").replace(" ", "T", 1)
    t = re.sub(r"Z$", "+00:00", t)
    t = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", t)
    t = re.sub(r"\.(\d{6})\d+", r".\1", t)
    try:
        return datetime.fromisoformat(t).isoformat()
    except ValueError:
        return None


def _when(prefix: str) -> tuple[str | None, float | None, str | None]:
    timestamp = host = None
    d = _DECODE.match(prefix)
    if d:
        prefix = prefix[d.end():]
    m = _ISO.match(prefix) or _SYSLOG.match(prefix) or _FULL.match(prefix) or _UNIX.match(prefix)
    if m:
        timestamp, host = m.group("ts"), m.group("host")
    c = _CTIME.search(prefix) or _RELTIME.search(prefix)
    if c and timestamp is None:
        timestamp = c.group(1)
    u = _UPTIME.search(prefix)
    uptime = float(u.group(1)) if u else None
    n = _NHC.match(prefix)
    if n and host is None:
        host = n.group(1)
    return timestamp, uptime, host


def parse_xid(text: str) -> XidRecord:
    """All Xid events in a kernel log. Raises ParseError only for an empty input.

    Time stamps of plain dmesg, `dmesg -T`, `dmesg --time-format iso`, `dmesg --decode`
    (facility and level first), `journalctl -k` (short, short-iso, short-precise,
    short-iso-precise) and syslog (with or without the year) are kept on every event.
    A log gathered from several hosts through pdsh / srun --label / Ray gives the events of
    every host, each with the host (or rank label) its prefix named."""
    text = clean_text(text)
    if not text.strip():
        raise ParseError(TOOL, "empty kernel log")
    segs = segments(text)
    events: list[XidEvent] = []
    scanned = 0
    for seg in segs:
        rec = _parse_log(seg.text)
        scanned += rec.lines_scanned
        who = seg.source.host if seg.source else None
        events += [e if e.host or who is None else replace(e, host=who) for e in rec.events]
    return _record(scanned, events, segs[0].source if len(segs) == 1 else None)


def _parse_log(text: str) -> XidRecord:
    # A last line without its line end is still read: a missed Xid would claim a clean log. Its
    # number and PCI address need their delimiters, so a cut can only shorten the message.
    lines = text.splitlines()
    events: list[XidEvent] = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            continue  # comments around a pasted log, never kernel output
        m = _XID.search(line)
        if m:
            rest = m.group(3)
            pid = process = None
            pm = _PID.match(rest)
            if pm:
                pid = int(pm.group(1)) if pm.group(1) else None
                rest = rest[pm.end():]
                nm = _NAME.match(rest)
                if nm:
                    name = nm.group(1).strip("'")
                    process = None if name in {"", "<unknown>"} else name
                    rest = rest[nm.end():]
            xid = int(m.group(2))
            timestamp, uptime, host = _when(line[: m.start()])
            events.append(XidEvent(
                xid=xid, kind="xid", pci=m.group(1).lower(), pid=pid, process=process, message=rest,
                timestamp=timestamp, uptime_s=uptime, host=host, line=i + 1, action=action_for(xid, rest),
                time_iso=time_iso(timestamp),
            ))
            continue
        if _FELL.search(line) and ("NVRM" in line or (i > 0 and "NVRM" in lines[i - 1])):
            window = lines[max(0, i - 2): i + 1]
            pci = None
            start = i
            for k, w in enumerate(window):
                pm2 = _FELL_PCI.search(w)
                if pm2:
                    pci = (pm2.group(1) or pm2.group(2)).lower()
                    start = max(0, i - 2) + k
            timestamp, uptime, host = _when(lines[start].split("NVRM:")[0])
            message = " ".join(re.sub(r"^.*?NVRM:\s*", "", w).strip() for w in lines[start: i + 1])
            events.append(XidEvent(
                xid=79, kind="fell_off_bus", pci=pci, pid=None, process=None, message=message,
                timestamp=timestamp, uptime_s=uptime, host=host, line=start + 1, action=action_for(79, message),
                time_iso=time_iso(timestamp),
            ))
    return _record(len(lines), events, None)


def _record(scanned: int, events: list[XidEvent], source: Source | None) -> XidRecord:
    counts: dict[int, int] = {}
    for e in events:
        counts[e.xid] = counts.get(e.xid, 0) + 1
    worst = None
    for action in ACTIONS:
        if any(e.action == action for e in events):
            worst = action
            break
    return XidRecord(
        tool=TOOL, lines_scanned=scanned, events=tuple(events), xids=tuple(sorted(counts)),
        counts=dict(sorted(counts.items())), worst_action=worst, source=source,
    )


def split_samples(text: str) -> list[str]:
    """A kernel log is one sample; Xid events are independent lines."""
    text = strip_prefixes(clean_text(text))
    return [text] if text.strip() else []
