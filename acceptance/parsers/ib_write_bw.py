"""perftest `ib_write_bw` (also `ib_read_bw`, `ib_send_bw`) output → `IbBwRecord`.

The result table's bandwidth unit comes from its header: `BW peak[Gb/sec]` (with
`--report_gbits`) or `BW peak[MiB/sec]` / `BW peak[MB/sec]` (perftest's MB are 2^20 bytes);
every bandwidth in the record is converted to Gb/s (10^9 bit/s). A run that printed no table
but a recognisable perftest failure gives a record with `error` set.

Stable JSON of `IbBwRecord.to_json()`:
  tool "ib_write_bw", test (banner, e.g. "RDMA_Write BW Test"), device, port (from the
  command line's -i/--ib-port when shown), link_type, transport_type, connection_type,
  mtu_bytes, qps, bidirectional (bool), bw_unit (as printed: "Gb/sec", "MiB/sec", "MB/sec"),
  rows: list of {bytes, iterations, bw_peak_gbps, bw_avg_gbps, msg_rate_mpps},
  bw_avg_gbps (average bandwidth of the largest message size), bw_peak_gbps (largest peak),
  error, complete (False when the table has no closing dashed line: the paste was cut inside
  it), source (the launcher prefix, or None).
`IbBwRecord.bw_at(size_bytes)` gives the average Gb/s of the row with exactly that size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from acceptance.parsers._common import ParseError, Record, clean_text, to_int
from acceptance.parsers._prefix import Source, cut_last_line, prepassed, strip_prefixes

TOOL = "ib_write_bw"

_TABLE_HEAD = re.compile(r"#bytes\s+#iterations\s+BW peak\[([^\]]+)\]\s+BW average\[([^\]]+)\]\s+MsgRate\[Mpps\]", re.I)
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$")
_BANNER = re.compile(r"^\s*((?:RDMA_Write|RDMA_Read|Send|Atomic)\b.*?BW Test)\s*$", re.M)
_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9 .*_-]*?)\s*:\s*([^\t:]+?)(?=\t|\s{2,}|$)")
_CMD = re.compile(r"\b(ib_(?:write|read|send|atomic)_bw)\b([^\n]*)")
_FAILURES = [
    re.compile(r"Couldn't connect to [^\n]*"),
    re.compile(r"Unable to (?:open|init|create|find)[^\n]*"),
    re.compile(r"Couldn't (?:get device|create|allocate|post|read)[^\n]*"),
    re.compile(r"(?:IB device|Device) [^\n]* not found[^\n]*"),
    re.compile(r"No IB devices found[^\n]*"),
    re.compile(r"Failed to (?:modify|create|init|connect|exchange)[^\n]*"),
    re.compile(r"Conflicting .*? ibv_[^\n]*failed[^\n]*"),
]


@dataclass(frozen=True)
class IbBwRow(Record):
    bytes: int
    iterations: int
    bw_peak_gbps: float
    bw_avg_gbps: float
    msg_rate_mpps: float


@dataclass(frozen=True)
class IbBwRecord(Record):
    tool: str
    test: str | None
    device: str | None
    port: int | None
    link_type: str | None
    transport_type: str | None
    connection_type: str | None
    mtu_bytes: int | None
    qps: int | None
    bidirectional: bool
    bw_unit: str | None
    rows: tuple[IbBwRow, ...]
    bw_avg_gbps: float | None
    bw_peak_gbps: float | None
    error: str | None
    complete: bool = True
    source: Source | None = None

    def bw_at(self, size_bytes: int) -> float | None:
        for row in self.rows:
            if row.bytes == size_bytes:
                return row.bw_avg_gbps
        return None


def to_gbps(value: float, unit: str) -> float:
    """Convert a perftest bandwidth in `unit` to Gb/s."""
    u = unit.strip().lower().replace(" ", "")
    if u.startswith("gb/s") or u.startswith("gbit") or u == "gb/sec":
        return value
    if u in {"mib/sec", "mb/sec", "mib/s", "mb/s"}:
        return value * 1048576 * 8 / 1e9
    raise ValueError(unit)


def _table_end(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith(("---", "#")) or bool(_TABLE_HEAD.search(line))


def split_samples(text: str) -> list[str]:
    """Each perftest run in `text`: from the end of the previous table to the end of this one."""
    text = strip_prefixes(clean_text(text))
    lines = cut_last_line(text.split("\n"), text)
    out: list[str] = []
    start = 0
    i = 0
    while i < len(lines):
        if _TABLE_HEAD.search(lines[i]):
            j = i + 1
            while j < len(lines) and not _table_end(lines[j]):
                j += 1
            out.append("\n".join(lines[start:j + 1]) + "\n")
            start = j + 1
            i = j + 1
            continue
        i += 1
    return out


@prepassed()
def parse_ib_write_bw(text: str) -> IbBwRecord:
    """Parse the first perftest bandwidth run in `text`."""
    text = clean_text(text)
    samples = split_samples(text)
    if not samples:
        for pattern in _FAILURES:
            m = pattern.search(text)
            if m:
                return _record(text, [], None, m.group(0).strip())
        raise ParseError(TOOL, "no perftest result table (#bytes #iterations BW peak ...) found")
    sample = samples[0]
    head = _TABLE_HEAD.search(sample)
    assert head is not None
    unit = head.group(2).strip()
    rows: list[IbBwRow] = []
    try:
        for ln in sample[head.end():].splitlines():
            m = _ROW.match(ln)
            if m:
                rows.append(IbBwRow(
                    bytes=int(m.group(1)), iterations=int(m.group(2)),
                    bw_peak_gbps=round(to_gbps(float(m.group(3)), head.group(1)), 6),
                    bw_avg_gbps=round(to_gbps(float(m.group(4)), unit), 6),
                    msg_rate_mpps=float(m.group(5)),
                ))
    except ValueError:
        raise ParseError(TOOL, f"unknown bandwidth unit {unit!r}") from None
    error = None
    if not rows:
        error = next((m.group(0).strip() for p in _FAILURES if (m := p.search(sample))), "result table has no rows")
    # perftest closes its table with a dashed line; without it the paste was cut inside the table
    complete = any(ln.strip().startswith("---") for ln in sample[head.end():].splitlines())
    rec = _record(sample, rows, unit, error)
    return rec if complete else replace(rec, complete=False)


def _record(sample: str, rows: list[IbBwRow], unit: str | None, error: str | None) -> IbBwRecord:
    fields: dict[str, str] = {}
    for ln in sample.splitlines():
        if _TABLE_HEAD.search(ln):
            break
        for m in _FIELD.finditer(ln):
            key = m.group(1).strip().lower()
            if key in {"local address", "remote address"}:
                continue
            fields.setdefault(key, m.group(2).strip())
    banner = _BANNER.search(sample)
    cmd = _CMD.search(sample)
    args = cmd.group(2) if cmd else ""
    device = fields.get("device")
    if device is None:
        dm = re.search(r"(?:-d|--ib-dev(?:=|\s))\s*(\S+)", args)
        device = dm.group(1) if dm else None
    pm = re.search(r"(?:-i|--ib-port(?:=|\s))\s*(\d+)", args)
    mtu = re.match(r"(\d+)", fields.get("mtu", ""))
    bidir = bool(
        (banner and "bidirectional" in banner.group(1).lower())
        or fields.get("bidirectional", "").upper() == "ON"
        or re.search(r"(?:^|\s)(?:-b|--bidirectional)(?:\s|$)", args)
    )
    return IbBwRecord(
        tool=TOOL,
        test=banner.group(1).strip() if banner else None,
        device=device,
        port=int(pm.group(1)) if pm else None,
        link_type=fields.get("link type"),
        transport_type=fields.get("transport type"),
        connection_type=fields.get("connection type"),
        mtu_bytes=int(mtu.group(1)) if mtu else None,
        qps=to_int(fields.get("number of qps")),
        bidirectional=bidir,
        bw_unit=unit,
        rows=tuple(rows),
        bw_avg_gbps=max(rows, key=lambda r: r.bytes).bw_avg_gbps if rows else None,
        bw_peak_gbps=max(r.bw_peak_gbps for r in rows) if rows else None,
        error=error,
    )
