"""nccl-tests output (`all_reduce_perf`, `all_gather_perf`, ...) → `NcclRecord`.

Lines tagged by launchers (`[1,0]<stdout>:` from mpirun --tag-output, `0: ` from srun --label)
and markdown quoting are accepted. A run that never printed a result table (mpirun "not
enough slots", a CUDA failure, an NCCL error) gives a record with `error` set and no rows;
only text with neither a result table nor a recognisable failure raises `ParseError`.

Stable JSON of `NcclRecord.to_json()`:
  tool "nccl-tests", collective (e.g. "all_reduce_perf"; named in the text, or inferred from
  the table: None when it cannot be told), nccl_version, ranks (rank lines; None when the
  output has no "Using devices" list), nodes (distinct host names of the rank lines),
  hosts (those names, sorted), gpu_models, rows: list of
    size_bytes, count, type, redop, root,
    oop_time_us, oop_algbw_gbps, oop_busbw_gbps, oop_wrong,
    ip_time_us, ip_algbw_gbps, ip_busbw_gbps, ip_wrong,
    busbw_gbps (out-of-place busbw; in-place only when out-of-place is missing), wrong (sum of both; None if N/A)
  avg_busbw_gbps (the tool's "Avg bus bandwidth" line, reported as printed; do not judge on it),
  peak_busbw_gbps (largest busbw_gbps of the rows), out_of_bounds (count, None if absent),
  wrong_total, elided (True when the paste left out rows, "..."), error (None, or why the
  run failed), source (the launcher prefix, or None).
`NcclRecord.busbw_at(size_bytes)` returns the busbw of the row with exactly that size, or None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from acceptance.parsers._common import ParseError, Record, clean_text, strip_line_prefix
from acceptance.parsers._prefix import Source, cut_last_line, prepassed

TOOL = "nccl-tests"

_SRUN = re.compile(r"^\s{0,3}\d{1,5}: ?")
_ROW = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)"
    r"\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"
    r"\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"
)
_RANK = re.compile(r"#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s+(.*?)\s*$")
_HEADER = re.compile(r"#\s+size\s+count\s+type\s+redop", re.I)
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([0-9.]+)")
_OOB = re.compile(r"#\s*Out of bounds values\s*:\s*(\d+)")
_COLLECTIVE = re.compile(r"\b((?:all_reduce|all_gather|alltoall|broadcast|reduce_scatter|reduce|sendrecv|scatter|gather|hypercube)_perf)\b")
_NCCL_VERSION = re.compile(r"NCCL version\s+(\S+)")
_START = re.compile(r"#\s*nThread\s+\d+")

_FAILURES = [
    (re.compile(r"There are not enough slots available in the system"), "mpirun: not enough slots available"),
    (re.compile(r"Test CUDA failure [^\n]*'([^'\n]*)'"), "CUDA failure: {0}"),
    (re.compile(r"Test NCCL failure [^\n]*'([^'\n]*)'"), "NCCL failure: {0}"),
    (re.compile(r"NCCL WARN ([^\n]*)"), "NCCL warning: {0}"),
    (re.compile(r"(mpirun|prterun) (?:noticed|was unable|detected)[^\n]*"), "{full}"),
    (re.compile(r"srun: error: ([^\n]*)"), "srun: {0}"),
    (re.compile(r"Primary job\s+terminated normally, but \d+ process returned"), "a rank exited with a non-zero status"),
    (re.compile(r"(?:command not found|No such file or directory)[^\n]*_perf|_perf[^\n]*(?:command not found|No such file or directory)"), "nccl-tests binary not found"),
]

_TYPE_SIZE = {"int8": 1, "uint8": 1, "char": 1, "half": 2, "bfloat16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1,
              "int32": 4, "uint32": 4, "int": 4, "float": 4, "int64": 8, "uint64": 8, "double": 8}


@dataclass(frozen=True)
class NcclRow(Record):
    size_bytes: int
    count: int
    type: str
    redop: str
    root: int
    oop_time_us: float | None
    oop_algbw_gbps: float | None
    oop_busbw_gbps: float | None
    oop_wrong: int | None
    ip_time_us: float | None
    ip_algbw_gbps: float | None
    ip_busbw_gbps: float | None
    ip_wrong: int | None
    busbw_gbps: float | None
    wrong: int | None


@dataclass(frozen=True)
class NcclRecord(Record):
    tool: str
    collective: str | None
    nccl_version: str | None
    ranks: int | None
    nodes: int | None
    hosts: tuple[str, ...]
    gpu_models: tuple[str, ...]
    rows: tuple[NcclRow, ...]
    avg_busbw_gbps: float | None
    peak_busbw_gbps: float | None
    out_of_bounds: int | None
    wrong_total: int | None
    elided: bool
    error: str | None
    source: Source | None = None

    def busbw_at(self, size_bytes: int) -> float | None:
        """Bus bandwidth (GB/s) of the row with exactly `size_bytes`; None when no such row."""
        for row in self.rows:
            if row.size_bytes == size_bytes:
                return row.busbw_gbps
        return None

    def row_at(self, size_bytes: int) -> NcclRow | None:
        for row in self.rows:
            if row.size_bytes == size_bytes:
                return row
        return None


def _num(s: str) -> float | None:
    try:
        v = float(s)
    except ValueError:
        return None
    return v if v == v and v not in (float("inf"), float("-inf")) else None


def _wrong(s: str) -> int | None:
    return int(s) if s.isdigit() else None


def _lines(text: str) -> list[str]:
    out = []
    srun_tagged = sum(1 for ln in text.splitlines() if re.match(r"^\s{0,3}\d{1,5}: [#\s]", ln)) >= 2
    for ln in clean_text(text).splitlines():
        ln = strip_line_prefix(ln)
        if srun_tagged:
            m = _SRUN.match(ln)
            if m:
                ln = ln[m.end():]
        out.append(ln)
    return out


def split_samples(text: str) -> list[str]:
    """Each run in `text`: split before every "# nThread" banner or "# Using devices" list / table
    header that starts a new run after a finished one."""
    lines = _lines(text)
    starts: list[int] = []
    seen_rows = False
    in_run = False
    for i, ln in enumerate(lines):
        s = ln.strip()
        new_run = bool(_START.match(s)) or (
            (s.startswith("# Using devices") or _HEADER.match(s) or s.startswith("#") and "out-of-place" in s)
            and (seen_rows or not in_run)
        )
        if new_run and (seen_rows or not starts or not in_run):
            starts.append(i)
            seen_rows = False
            in_run = True
            continue
        if _ROW.match(ln):
            seen_rows = True
        if _AVG.match(s):
            in_run = False
            seen_rows = True
    if not starts:
        return ["\n".join(lines) + ("\n" if text.endswith("\n") else "")] if lines else []
    # The command line and "# Collective test starting: X" printed before a run belong to it;
    # the first run also keeps everything before it (prompt, launcher messages).
    starts = [0] + [_with_preamble(lines, i) for i in starts[1:]]
    bounds = starts + [len(lines)]
    samples = []
    for a, b in zip(bounds, bounds[1:]):
        chunk = "\n".join(lines[a:b]) + ("\n" if b < len(lines) or text.endswith("\n") else "")
        if chunk.strip():
            samples.append(chunk)
    return samples


def _with_preamble(lines: list[str], start: int) -> int:
    i = start
    while i > 0 and (not lines[i - 1].strip() or "Collective test starting" in lines[i - 1]
                     or _COLLECTIVE.search(lines[i - 1]) and not _ROW.match(lines[i - 1])
                     and not _AVG.search(lines[i - 1])):
        i -= 1
    return i


@prepassed(prefer=_HEADER)
def parse_nccl_tests(text: str) -> NcclRecord:
    """Parse one nccl-tests run (the first if `text` holds several)."""
    text = clean_text(text)
    samples = split_samples(text)
    body = samples[0] if samples else ""
    # A failure printed before any run banner (mpirun) belongs to the first sample too.
    if not _HEADER.search(body):
        body = text
    # a last line without its line end may be a row cut part way: `_parse_one` does not read it
    return _parse_one(body)


def _parse_one(text: str) -> NcclRecord:
    lines = cut_last_line(_lines(text), text)
    rows: list[NcclRow] = []
    hosts: list[str] = []
    models: list[str] = []
    ranks: set[int] = set()
    avg = oob = None
    elided = False
    header_seen = False
    for ln in lines:
        s = ln.strip()
        rm = _RANK.search(ln)
        if rm:
            ranks.add(int(rm.group(1)))
            if rm.group(2) not in hosts:
                hosts.append(rm.group(2))
            if rm.group(4) and rm.group(4) not in models:
                models.append(rm.group(4))
            continue
        if _HEADER.match(s):
            header_seen = True
            continue
        am = _AVG.search(s)
        if am:
            avg = float(am.group(1))
            continue
        om = _OOB.search(s)
        if om:
            oob = int(om.group(1))
            continue
        if header_seen and s in {"...", "[...]"}:
            elided = True
            continue
        m = _ROW.match(ln)
        if m and header_seen:
            g = m.groups()
            oop_bw, ip_bw = _num(g[7]), _num(g[11])
            w1, w2 = _wrong(g[8]), _wrong(g[12])
            rows.append(NcclRow(
                size_bytes=int(g[0]), count=int(g[1]), type=g[2], redop=g[3], root=int(g[4]),
                oop_time_us=_num(g[5]), oop_algbw_gbps=_num(g[6]), oop_busbw_gbps=oop_bw, oop_wrong=w1,
                ip_time_us=_num(g[9]), ip_algbw_gbps=_num(g[10]), ip_busbw_gbps=ip_bw, ip_wrong=w2,
                busbw_gbps=oop_bw if oop_bw is not None else ip_bw,
                wrong=None if w1 is None and w2 is None else (w1 or 0) + (w2 or 0),
            ))
    error = _failure(text)
    if not rows and error is None:
        if header_seen:
            error = "result table has no rows"
        else:
            raise ParseError(TOOL, "no nccl-tests result table and no recognisable failure")
    wrongs = [r.wrong for r in rows if r.wrong is not None]
    peaks = [r.busbw_gbps for r in rows if r.busbw_gbps is not None]
    nv = _NCCL_VERSION.search(text)
    return NcclRecord(
        tool=TOOL,
        collective=_collective(text, rows, len(ranks) or None),
        nccl_version=nv.group(1) if nv else None,
        ranks=len(ranks) or None,
        nodes=len(hosts) or None,
        hosts=tuple(sorted(hosts)),
        gpu_models=tuple(models),
        rows=tuple(rows),
        avg_busbw_gbps=avg,
        peak_busbw_gbps=max(peaks) if peaks else None,
        out_of_bounds=oob,
        wrong_total=sum(wrongs) if wrongs else None,
        elided=elided,
        error=error if (error and (not rows or not error.startswith("NCCL warning"))) else None,
    )


def _failure(text: str) -> str | None:
    for pattern, template in _FAILURES:
        m = pattern.search(text)
        if m:
            if template == "{full}":
                return m.group(0).strip()
            return template.format(*(g.strip() for g in m.groups())) if m.groups() else template
    return None


def _collective(text: str, rows: list[NcclRow], ranks: int | None) -> str | None:
    m = _COLLECTIVE.search(text)
    if m:
        return m.group(1)
    if not rows:
        return None
    # all_reduce is the one collective whose element count covers the whole buffer with a
    # reduction op and no root; other collectives either divide by the rank count or set a root.
    sized = [r for r in rows if r.size_bytes > 0 and r.type in _TYPE_SIZE]
    if sized and all(r.count * _TYPE_SIZE[r.type] == r.size_bytes for r in sized) and all(
        r.redop != "none" and r.root == -1 for r in rows
    ):
        return "all_reduce_perf"
    return None
