"""Incident logs: CSV, JSON Lines or a JSON array -> one validated pandas frame.

Every check runs on whole columns at once (pandas/numpy), so a log of a million rows loads
in seconds; Python only loops over the rows that are wrong, to describe them. All bad rows
are reported together, each with its row number, column, value and a stable reason code.
Nothing downstream sees a log with errors unless the caller asks to skip bad rows; the
skipped rows are then kept in `IncidentLog.skipped` so every output can list them.

The frame has one row per (incident, unit): a `node` incident whose target is a hostlist
(`r01-n[03-05]`) becomes one row per node, all with the same `id` and `row`.

Columns of `IncidentLog.frame`:

============== ======== =====================================================================
column         dtype    meaning
============== ======== =====================================================================
id             str      incident id
row            int64    1-based row of the input (CSV: data row, header excluded; JSON Lines:
                        line number; JSON array: element number)
scope          str      node, rack, cluster or site
target         str      unit id at that scope (hostlists already expanded)
start          int64    epoch seconds UTC (sub-second parts dropped)
end            Int64    epoch seconds UTC, <NA> while the incident is open
impact         str      down or degraded
gpus_affected  Int64    GPUs lost per node (meaningful for degraded), <NA> when not given
category       str      unplanned (default) or an exclusion name; unknown names are kept
notice_at,     Int64    epoch seconds UTC or <NA>
detected_at,
reported_at,
responded_at,
resolved_at
severity       str      sev1..sev4 or missing
cause, ticket  str      free text or missing
============== ======== =====================================================================

Reason codes: missing_column, missing_id, missing_value, duplicate_id, timestamp_invalid,
timestamp_naive, end_before_start, unknown_scope, unknown_target, unknown_impact,
unknown_severity, gpus_affected_range, empty_log, file_not_found, csv_invalid, json_invalid,
duplicate_column, unknown_timezone (--assume-tz);
warnings (never block): unknown_column, empty_log for a well-formed log without rows.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import json
import re
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from slaschema import hostlist
from slaschema.safefiles import check_cli_file
from slaschema.errors import InputError, Problem

if TYPE_CHECKING:
    from slaschema.loader import LoadedContract
    from slaschema.topology import ResolvedTopology

REQUIRED = ("id", "scope", "target", "start")
TIME_COLUMNS = ("start", "end", "notice_at", "detected_at", "reported_at", "responded_at", "resolved_at")
OPTIONAL_TIMES = TIME_COLUMNS[1:]
TEXT_COLUMNS = ("cause", "ticket")
COLUMNS = ("id", "scope", "target", "start", "end", "impact", "gpus_affected", "category", "notice_at",
           "severity", "detected_at", "reported_at", "responded_at", "resolved_at", "cause", "ticket")
FRAME_COLUMNS = ("id", "row", "scope", "target", "start", "end", "impact", "gpus_affected", "category",
                 "notice_at", "detected_at", "reported_at", "responded_at", "resolved_at", "severity",
                 "cause", "ticket")
SCOPES = ("node", "rack", "cluster", "site")
_MANGLED = re.compile(r"(.+)\.(\d+)")
_FEW = frozenset({"scope", "target", "impact", "gpus_affected", "category", "severity", "cause"})
IMPACTS = ("down", "degraded")
SEVERITIES = ("sev1", "sev2", "sev3", "sev4")
DEFAULT_CATEGORY = "unplanned"

_NS_PER_UNIT = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


@dataclass(frozen=True, eq=False)
class IncidentLog:
    """A validated incident log (see the module docstring for the frame's columns)."""

    frame: pd.DataFrame
    skipped: list[Problem] = field(default_factory=list)
    file: str | None = None
    sha256: str | None = None
    warnings: list[Problem] = field(default_factory=list)
    _codes: dict[str, tuple[Any, np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def coded(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """(codes, distinct values) of a text column of the frame, -1 where the cell is
        missing; the ids are numbered in order of first appearance. The loader hands over
        the codes it validated with, so the calculators do not hash a million strings again;
        a column replaced since (another array) is factorised afresh. (Change a log's frame
        by making a new `IncidentLog`, never in place.)"""
        s = self.frame[column]
        got = self._codes.get(column)
        where, _owner = _backing(s)
        if got is not None and got[0][0] == where:
            return got[1], got[2]
        codes, uniques = pd.factorize(s.to_numpy(dtype=object), use_na_sentinel=True)
        out = (codes.astype(np.int64), np.asarray(uniques, dtype=object))
        self._codes[column] = (_backing(s), *out)
        return out

    @property
    def incident_ids(self) -> list[str]:
        return list(dict.fromkeys(self.frame["id"].tolist()))

    @property
    def skipped_rows(self) -> list[int]:
        return sorted({p.row for p in self.skipped if p.row is not None})

    def skipped_json(self) -> list[dict[str, Any]]:
        return [p.to_json() for p in self.skipped]

    @classmethod
    def from_records(cls, records: list[dict[str, Any]] | dict[str, Any] | pd.DataFrame,
                     topology: ResolvedTopology, *,
                     assume_tz: str | None = None, skip_bad_rows: bool = False,
                     gpus_required: bool = False, file: str | None = None) -> IncidentLog:
        """Build a log from dicts (tests, simulations, importers).

        `records` is a list of dicts, or columns (a dict of equal-length sequences or a
        DataFrame), which skips building a frame from dicts. Timestamps may be ISO 8601
        strings, aware `datetime`s, pandas Timestamps or ints (epoch seconds UTC). Whole
        columns of ints take a fast path with no parsing.
        `gpus_required`: a degraded incident must say `gpus_affected` (contracts with
        `degraded: proportional`).
        """
        if isinstance(records, pd.DataFrame):
            raw = records
        elif isinstance(records, dict):
            raw = pd.DataFrame(records)
        elif records:
            raw = pd.DataFrame.from_records(records)
        else:
            raw = pd.DataFrame({c: pd.Series([], dtype=object) for c in REQUIRED})
        rows = np.arange(1, len(raw) + 1, dtype=np.int64)
        return _build(raw, rows, topology, file=file, sha256=None, assume_tz=assume_tz,
                      skip_bad_rows=skip_bad_rows, gpus_required=gpus_required)


def coded(log: Any, column: str) -> tuple[np.ndarray, np.ndarray]:
    """`IncidentLog.coded` for any object with a `frame` (logs built by hand have no codes)."""
    if hasattr(log, "coded"):
        return log.coded(column)
    codes, uniques = pd.factorize(log.frame[column].to_numpy(dtype=object), use_na_sentinel=True)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)


def _backing(s: pd.Series) -> tuple[tuple[int, int], Any]:
    """What identifies a column's cells: (address, length) of its buffer; and the buffer's
    owner, to hold so that the address cannot be reused by another array."""
    a = np.asarray(s.array)
    return (a.__array_interface__["data"][0], len(a)), (a if a.base is None else a.base)


def load_incidents(path: str | Path, lc: LoadedContract, assume_tz: str | None = None,
                   skip_bad_rows: bool = False) -> IncidentLog:
    """Read and validate an incident log for a loaded contract.

    Raises `InputError` with every problem found (and the unknown_column warnings) unless
    `skip_bad_rows`, in which case bad rows are dropped and listed in `skipped`. Problems
    with the file itself (missing file, missing required column, unreadable CSV/JSON,
    no content at all) are raised even with `skip_bad_rows`.
    """
    p = Path(path)
    fname = str(path)
    check_cli_file(p, "incident log")          # no /proc, /sys, /dev, FIFO or device
    if not p.is_file():
        raise InputError([Problem("file_not_found", "no such incident log", file=fname, fix="check the path")])
    padded, size = _read_padded(p)
    data = memoryview(padded)[:size]
    digest = hashlib.sha256(data).hexdigest()
    head = bytes(data[:4096]).decode("utf-8-sig", errors="replace")
    if not head.strip() and not bytes(data).decode("utf-8-sig", errors="replace").strip():
        raise InputError([Problem("empty_log", "the incident log is empty", file=fname,
                                  fix="export the incidents with a header row: id,scope,target,start,end,...")])
    fmt = detect_format(fname, head)
    gpus_required = lc.model.downtime.degraded == "proportional"
    if fmt == "csv":
        got = _read_csv_fast(padded, size)
        if got is not None:
            del data, padded        # the file's bytes are not needed while the log is built
            raw, rows, fast = got
            try:
                return _build(raw, rows, lc.topology, file=fname, sha256=digest, assume_tz=assume_tz,
                              skip_bad_rows=skip_bad_rows, gpus_required=gpus_required, fast=fast)
            except _Retry:
                del raw, rows, fast, got
            padded, size = _read_padded(p)
            data = memoryview(padded)[:size]
            digest = hashlib.sha256(data).hexdigest()
        raw, rows = _read_csv(data, fname)   # bytes straight to the C parser: no decode/re-encode
    elif fmt == "jsonl":
        raw, rows = _read_jsonl(bytes(data).decode("utf-8-sig", errors="replace"), fname)
    else:
        raw, rows = _read_json_array(bytes(data).decode("utf-8-sig", errors="replace"), fname)
    return _build(raw, rows, lc.topology, file=fname, sha256=digest, assume_tz=assume_tz,
                  skip_bad_rows=skip_bad_rows, gpus_required=gpus_required)


def detect_format(name: str, text: str) -> str:
    """csv, jsonl or json: by extension, then by the first non-blank character."""
    lower = name.lower()
    first = text.lstrip()[:1]
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith(".json"):
        return "json" if first == "[" else "jsonl"
    if lower.endswith((".csv", ".txt")):
        return "csv"
    if first == "[":
        return "json"
    if first == "{":
        return "jsonl"
    return "csv"


# --- readers: everything becomes a frame of strings (NaN = empty) plus row numbers -----------

def _read_csv(data: bytes, fname: str) -> tuple[pd.DataFrame, np.ndarray]:
    try:
        with warnings.catch_warnings():
            # a row with more cells than the header: an error, never silently dropped cells
            warnings.simplefilter("error", pd.errors.ParserWarning)
            raw = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, na_filter=False,
                              skip_blank_lines=True, index_col=False, encoding="utf-8-sig",
                              encoding_errors="replace")
    except (pd.errors.ParserError, pd.errors.ParserWarning, pd.errors.EmptyDataError, ValueError) as e:
        raise InputError([Problem("csv_invalid", f"the CSV cannot be read: {str(e).strip()}", file=fname,
                                  fix="check quoting and that every row has as many cells as the header")]) from None
    raw.columns = [str(c).strip() for c in raw.columns]
    return raw, np.arange(1, len(raw) + 1, dtype=np.int64)


# --- fast path for plain CSV ------------------------------------------------------------------
#
# Most incident logs are machine exports: ASCII, no quoting, one ISO 8601 timestamp format.
# For those the file is split on its newline and comma bytes with numpy, every column is
# factorised on its bytes (few distinct values -> few Python strings), and timestamps of
# the forms 2027-02-03T10:00:00Z / 2027-02-03T04:00:00-06:00 are computed from their
# digits. Anything else (quotes, CR, non-ASCII, ragged rows, other time formats) takes the
# pandas path below for the whole file or for that column; a log with any problem is read
# again on the pandas path, so problems are always described by one reader.

_FAST_WIDTH = 32          # widest column turned into a byte matrix; wider ones are sliced
_SPACE = np.zeros(256, dtype=bool)     # the ASCII characters str.strip() removes
_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True


class _Fast:
    """What the fast reader found: per text column its (codes, distinct cells) -- the cells
    exactly as the pandas reader gives them --, and the time columns it could parse."""

    def __init__(self) -> None:
        self.codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.times: dict[str, np.ndarray] = {}
        self.plain: set[str] = set()      # text columns without empty or padded cells
        self.names: list[str] = []        # the header; `raw` holds only what the general parser needs


class _Retry(Exception):
    """The fast path found a problem: read the file again the precise way."""


def _read_padded(p: Path) -> tuple[bytearray, int]:
    """The file's bytes followed by `_FAST_WIDTH` zero bytes, and its length: the fast
    reader loads fixed-width windows past a cell's end without copying the file first."""
    size = p.stat().st_size
    buf = bytearray(size + _FAST_WIDTH)
    view = memoryview(buf)
    got = 0
    with open(p, "rb") as f:
        while got < size:
            n = f.readinto(view[got:size])
            if not n:
                break
            got += n
        rest = f.read()
    del view
    if got != size or rest:                  # the file changed while it was read
        data = bytes(buf[:got]) + rest
        return bytearray(data) + bytearray(_FAST_WIDTH), len(data)
    return buf, size


_CHUNK = 1 << 22    # bytes compared at a time when looking for a delimiter (no file-sized temporaries)


def _positions(arr: np.ndarray, byte: int, out: np.ndarray | None = None) -> np.ndarray | None:
    """Positions of `byte` in `arr`; with `out`, written there, None unless exactly len(out)."""
    parts = []
    at = 0
    for i in range(0, len(arr), _CHUNK):
        hit = np.flatnonzero(arr[i:i + _CHUNK] == byte)
        if out is None:
            parts.append(hit + i)
            continue
        if at + len(hit) > len(out):
            return None
        np.add(hit, i, out=out[at:at + len(hit)])
        at += len(hit)
    if out is None:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return out if at == len(out) else None


def _read_csv_fast(padded: bytearray, size: int) -> tuple[pd.DataFrame, np.ndarray, _Fast] | None:
    """(raw frame, row numbers, what was found) like `_read_csv`, or None when the file is
    not plain enough for this reader. `padded`: the file's `size` bytes, then `_FAST_WIDTH`
    zero bytes (`_read_padded`)."""
    arr = np.frombuffer(padded, dtype=np.uint8)
    begin = 3 if padded.startswith(b"\xef\xbb\xbf") else 0
    if size <= begin or int(arr[begin:size].max()) >= 128:
        return None
    if any(padded.find(b, begin, size) >= 0 for b in (b'"', b"\r", b"\x00")):
        return None
    head_end = padded.find(b"\n", begin, size)
    if head_end <= begin:
        return None
    names = [c.strip() for c in padded[begin:head_end].decode("ascii").split(",")]
    if any(not c for c in names) or len(set(names)) != len(names):
        return None
    buf = arr[head_end + 1:size]                 # followed by `_FAST_WIDTH` zero bytes
    nl = _positions(buf, 10)
    ends = nl if len(buf) and buf[-1] == 10 else np.append(nl, len(buf))
    starts = np.concatenate([[0], nl + 1])[:len(ends)]
    filled = ends > starts                     # blank lines are skipped, as pandas does
    if not filled.all():
        starts, ends = starts[filled], ends[filled]
    n, k = len(starts), len(names)
    if n == 0:
        return None
    # positions fit in 32 bits below 2 GiB: half the memory of the largest array here
    commas = _positions(buf, 44, np.empty(n * (k - 1), dtype=np.int32 if len(buf) < 2**31 else np.int64))
    if commas is None:
        return None
    if k > 1:
        commas = commas.reshape(n, k - 1)
        # as many commas as k - 1 per line, sorted: each line's own are between its ends
        if not ((commas[:, 0] >= starts).all() and (commas[:, -1] < ends).all()):
            return None
    fast = _Fast()

    def column(j: int) -> tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray] | None]:
        s = starts if j == 0 else commas[:, j - 1] + 1
        e = ends if j == k - 1 else commas[:, j]
        if names[j] in TIME_COLUMNS:
            t = _fast_times(buf, s, e)
            if t is not None:
                return t, None
        coded = _fast_factorize(buf, padded, head_end + 1, s, e)
        uniques = coded[1]
        if len(uniques) <= 1024:     # no cell empty or padded: str.strip() changes none
            is_plain = all(v and not (_SPACE[ord(v[0])] or _SPACE[ord(v[-1])]) for v in uniques.tolist())
        else:
            is_plain = bool((e > s).all() and not (_SPACE[buf[s]].any() or _SPACE[buf[e - 1]].any()))
        if is_plain:
            plain.add(names[j])
        return None, coded

    plain: set[str] = set()
    # one column at a time: reading columns in two threads was no faster on two cores
    # (each thread's allocations come from its own arena, fresh pages to fault in)
    done = [column(j) for j in range(k)]
    raw: dict[str, Any] = {}
    for name, (t, coded) in zip(names, done):
        if t is not None:
            fast.times[name] = t
        else:
            fast.codes[name] = coded
            if name in TIME_COLUMNS:     # other forms of time: the general parser reads the cells
                raw[name] = pd.Series(coded[1][coded[0]], dtype=object)
    fast.plain = plain
    fast.names = names
    return pd.DataFrame(raw, index=pd.RangeIndex(n)), np.arange(1, n + 1, dtype=np.int64), fast


# _KEEP[k]: a word whose first k bytes are kept by `&` and the others cleared (any byte order)
_KEEP = np.array([[0xFF] * k + [0] * (8 - k) for k in range(9)], dtype=np.uint8).view(np.uint64).ravel()


def _gather(buf: np.ndarray, s: np.ndarray, width: int) -> np.ndarray:
    """Rows of the `width` bytes (at most `_FAST_WIDTH`) from each offset in `s` (`buf` is a
    view of a buffer with `_FAST_WIDTH` zero bytes after its end)."""
    windows = np.lib.stride_tricks.sliding_window_view(
        np.lib.stride_tricks.as_strided(buf, shape=(len(buf) + _FAST_WIDTH,), strides=buf.strides), width)
    return windows[s]


def _byte_matrix(buf: np.ndarray, s: np.ndarray, e: np.ndarray, width: int) -> np.ndarray:
    """Cells as rows of `width` bytes (a multiple of 8), zero-padded; masked a word at a time."""
    m = _gather(buf, s, width)
    words = m.view(np.uint64)
    lens = e - s
    for k in range(width // 8):
        words[:, k] &= _KEEP[np.clip(lens - 8 * k, 0, 8)]
    return m


def _strings(m: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Rows of zero-padded ASCII bytes -> object array of str, made by one decode and split
    (cells never hold a newline or a zero byte: the fast reader has checked)."""
    rows, width = m.shape
    out = np.zeros((rows, width + 1), dtype=np.uint8)
    out[:, :width] = m
    out[np.arange(rows), lens] = 10
    return np.array(out.tobytes().decode("ascii").replace("\x00", "").split("\n")[:-1], dtype=object)


def _fast_factorize(buf: np.ndarray, data: bytes | bytearray, offset: int, s: np.ndarray, e: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct cell strings in first-appearance order) of one column."""
    n = len(s)
    width = int((e - s).max())
    if width == 0:
        return np.zeros(n, dtype=np.int64), np.array([""], dtype=object)
    if width > _FAST_WIDTH:
        cells = [data[offset + a:offset + b].decode("ascii") for a, b in zip(s.tolist(), e.tolist())]
        codes, uniques = pd.factorize(np.array(cells, dtype=object))
        return codes.astype(np.int64), np.asarray(uniques, dtype=object)
    w8 = -(-width // 8) * 8
    m = _byte_matrix(buf, s, e, w8)
    words = m.view(np.uint64)                   # (n, w8 / 8)
    codes, _ = pd.factorize(words[:, 0])
    for c in range(1, words.shape[1]):
        c2, u2 = pd.factorize(words[:, c])
        codes, _ = pd.factorize(codes.astype(np.int64) * len(u2) + c2)
    codes = codes.astype(np.int64)
    # codes number the values in order of first appearance: a code's first row is where
    # the running maximum of the codes steps up
    first = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0)
    return codes, _strings(m[first], (e - s)[first])


_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
# byte i of `YYYY-MM-DDTHH:MM:SS` is allowed in [_SHAPE_LOW[i], _SHAPE_LOW[i] + _SHAPE_SPAN[i]]
# (uint8 arithmetic wraps, so one subtraction and one comparison test both bounds)
_SHAPE_LOW = np.full(19, ord("0"), dtype=np.uint8)
_SHAPE_SPAN = np.full(19, 9, dtype=np.uint8)
for _i, _c in zip((4, 7, 10, 13, 16), b"--T::"):
    _SHAPE_LOW[_i], _SHAPE_SPAN[_i] = _c, 0
_FIRST_YEAR = 1900
# days from 1970-01-01 to the first of each month 1900-01 .. 2200-12 (proleptic Gregorian), and lengths
_MONTHS = np.arange("1900-01", "2201-01", dtype="datetime64[M]")
_MONTH_START = _MONTHS.astype("datetime64[D]").astype(np.int64)
_MONTH_LEN = (_MONTHS + 1).astype("datetime64[D]").astype(np.int64) - _MONTH_START


def _fast_times(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray | None:
    """Epoch seconds (missing = INT64_MIN) of a column of `YYYY-MM-DDTHH:MM:SSZ` or
    `...SS+HH:MM` cells (or empty ones); None when any cell has another form or an
    impossible date (the caller then parses the column the general way)."""
    ln = e - s
    z, off, empty = ln == 20, ln == 25, ln == 0
    if not (z | off | empty).all():
        return None
    cells = ~empty
    m = _gather(buf, s[cells], 25)
    off = off[cells]
    # digits where digits belong and - - T : : between them, in one pass over the 19 bytes
    if not ((m[:, :19] - _SHAPE_LOW) <= _SHAPE_SPAN).all():
        return None
    tz = m[:, 19]
    if not ((tz == 90) | (off & ((tz == 43) | (tz == 45)))).all():
        return None
    if off.any():
        mo_ = m[off]
        if not (((mo_[:, [20, 21, 23, 24]] - np.uint8(48)) <= 9).all() and (mo_[:, 22] == 58).all()):
            return None

    # the 14 digits as 7 two-digit numbers: 19 20 | 27 | 02 | 03 | 10 | 00 | 00
    d = m[:, _DIGITS].astype(np.int32)
    d -= 48
    two = d[:, 0::2] * 10 + d[:, 1::2]
    y = (two[:, 0] * 100 + two[:, 1]).astype(np.int64)
    mo, dd, hh, mi, ss = (two[:, k].astype(np.int64) for k in range(2, 7))

    def num(i: int, j: int) -> np.ndarray:
        return (m[:, i].astype(np.int64) - 48) * 10 + (m[:, j].astype(np.int64) - 48)
    if not ((y >= _FIRST_YEAR) & (y < _FIRST_YEAR + len(_MONTH_START) // 12) & (mo >= 1) & (mo <= 12)
            & (hh <= 23) & (mi <= 59) & (ss <= 59)).all():
        return None
    ym = (y - _FIRST_YEAR) * 12 + mo - 1
    if not ((dd >= 1) & (dd <= _MONTH_LEN[ym])).all():
        return None
    epoch = (_MONTH_START[ym] + dd - 1) * 86400 + hh * 3600 + mi * 60 + ss
    if off.any():
        oh, om = num(20, 21), num(23, 24)
        if not ((oh <= 23) & (om <= 59) | ~off).all():      # bytes 20-24 of a Z cell are not its own
            return None
        sign = np.where(tz == 45, -1, np.where(tz == 43, 1, 0))     # Z: no offset
        epoch -= sign * (oh * 3600 + om * 60)
    out = np.full(len(s), np.iinfo(np.int64).min, dtype=np.int64)
    out[cells] = epoch
    return out


def _read_jsonl(text: str, fname: str) -> tuple[pd.DataFrame, np.ndarray]:
    records: list[dict] = []
    rows: list[int] = []
    problems: list[Problem] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(Problem("json_invalid", f"line is not JSON: {e.msg}", file=fname, row=lineno,
                                    line=lineno, col=e.colno, value=line[:80]))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem("json_invalid", "each line must be a JSON object", file=fname, row=lineno,
                                    line=lineno, value=type(obj).__name__))
            continue
        records.append(obj)
        rows.append(lineno)
    if problems:
        raise InputError(problems)
    return _records_frame(records), np.asarray(rows, dtype=np.int64)


def _read_json_array(text: str, fname: str) -> tuple[pd.DataFrame, np.ndarray]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError([Problem("json_invalid", f"not valid JSON: {e.msg}", file=fname, line=e.lineno,
                                  col=e.colno)]) from None
    if not isinstance(data, list):
        raise InputError([Problem("json_invalid", "a JSON incident log is an array of objects", file=fname,
                                  value=type(data).__name__, fix="write [ {...}, {...} ] or use JSON Lines")])
    bad = [Problem("json_invalid", "array element is not an object", file=fname, row=i, value=type(x).__name__)
           for i, x in enumerate(data, start=1) if not isinstance(x, dict)]
    if bad:
        raise InputError(bad)
    return _records_frame(data), np.arange(1, len(data) + 1, dtype=np.int64)


def _records_frame(records: list[dict]) -> pd.DataFrame:
    if not records:
        return pd.DataFrame()
    raw = pd.DataFrame.from_records(records)
    raw.columns = [str(c).strip() for c in raw.columns]
    for c in raw.columns:                 # a nested object or list is a value to refuse, as text
        if raw[c].dtype == object and raw[c].map(lambda v: isinstance(v, (dict, list))).any():
            raw[c] = raw[c].map(lambda v: json.dumps(v) if isinstance(v, (dict, list)) else v)
    return raw


# --- the vectorised validation -------------------------------------------------------------

class _Text:
    """A text column as codes into its distinct values: checks and lookups run once per
    distinct value (a few, even in a million rows) and reach the rows through the codes.

    `codes[i]` is -1 where the cell is missing or blank; `uniques` are the cleaned values
    (stripped, never empty). After `map` the values may repeat; `clean` keeps them distinct.
    """

    __slots__ = ("_distinct", "_values", "codes", "uniques")

    def __init__(self, codes: np.ndarray, uniques: np.ndarray, distinct: bool = False) -> None:
        self.codes = codes
        self.uniques = uniques
        self._values: np.ndarray | None = None
        self._distinct = distinct

    @staticmethod
    def clean(codes: np.ndarray, uniques: np.ndarray, plain: bool = False) -> _Text:
        """From raw distinct cells: stripped, blank ones missing (unless `plain`: none is
        blank or padded), then made distinct again."""
        if plain:
            return _Text(codes, np.asarray(uniques, dtype=object), True)
        cleaned = [_clean_cell(v) for v in uniques]
        c2, u2 = pd.factorize(np.array(cleaned, dtype=object), use_na_sentinel=True)
        remap = np.append(c2.astype(np.int64), -1)
        return _Text(remap[codes], np.asarray(u2, dtype=object), True)

    @staticmethod
    def of(s: pd.Series, few: bool = False) -> _Text:
        """From a column of any cells (the general readers)."""
        if few:
            codes, uniques = pd.factorize(s.to_numpy(dtype=object), use_na_sentinel=True)
            return _Text.clean(codes.astype(np.int64), np.asarray(uniques, dtype=object))
        codes, uniques = pd.factorize(_as_text(s).to_numpy(dtype=object), use_na_sentinel=True)
        return _Text(codes.astype(np.int64), np.asarray(uniques, dtype=object), True)

    @staticmethod
    def missing(n: int) -> _Text:
        return _Text(np.full(n, -1, dtype=np.int64), np.zeros(0, dtype=object))

    def per_row(self, per_unique, na) -> np.ndarray:
        """`per_unique[code]` for each row, `na` where the cell is missing."""
        return np.append(np.asarray(per_unique), na)[self.codes]

    def isna(self) -> np.ndarray:
        return self.codes < 0

    def map(self, f) -> _Text:
        return _Text(self.codes, np.array([f(v) for v in self.uniques] + [None], dtype=object)[:-1])

    def fill(self, value: str) -> _Text:
        """Missing cells become `value`."""
        if not (self.codes < 0).any():
            return self
        u = np.append(self.uniques, value).astype(object)
        return _Text(np.where(self.codes < 0, len(u) - 1, self.codes), u)

    def distinct(self) -> _Text:
        """The same column with distinct `uniques`, still numbered in order of first appearance."""
        if self._distinct:
            return self
        c2, u2 = pd.factorize(self.uniques)
        if len(u2) == len(self.uniques):
            self._distinct = True
            return self
        # a merged value's first appearance is that of the earliest of its old values
        return _Text(np.append(c2.astype(np.int64), -1)[self.codes], np.asarray(u2, dtype=object), True)

    def subset(self, keep: np.ndarray | None) -> _Text:
        """The rows `keep` (boolean mask; None: all), numbering only the values they hold."""
        if keep is None:
            return self
        codes = self.codes[keep]
        used = np.zeros(len(self.uniques) + 1, dtype=bool)
        used[codes] = True                    # code -1 marks the last slot
        used = used[:-1]
        remap = np.append(np.cumsum(used) - 1, -1)
        return _Text(remap[codes], self.uniques[used], self._distinct)

    def values(self) -> np.ndarray:
        """The cells (object array, None where missing)."""
        if self._values is None:
            self._values = np.append(self.uniques, None)[self.codes]
        return self._values

    def take(self, idx: np.ndarray) -> np.ndarray:
        return np.append(self.uniques, None)[self.codes[idx]]

    def str_array(self, keep: np.ndarray | None) -> pd.api.extensions.ExtensionArray:
        """The column as pandas' `str` dtype, without checking each cell (only the distinct values)."""
        codes = self.codes if keep is None else self.codes[keep]
        return pd.array(self.uniques, dtype=str).take(codes, allow_fill=True)


class _Collector:
    """Problems per (row, column), created only for the rows that are wrong. `retry`: raise
    `_Retry` at the first problem (the fast reader leaves describing them to the pandas one)."""

    def __init__(self, rows: np.ndarray, file: str | None, retry: bool = False) -> None:
        self.rows = rows
        self.file = file
        self.retry = retry
        self.problems: list[Problem] = []
        self.bad = np.zeros(len(rows), dtype=bool)
        self.flagged: dict[str, np.ndarray] = {}      # column -> rows with a problem there

    def add(self, mask: np.ndarray, code: str, column: str, values: pd.Series | _Text | None, message,
            fix=None) -> None:
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            return
        if self.retry:
            raise _Retry
        self.bad |= mask
        self.flagged[column] = self.flagged.get(column, np.zeros(len(mask), dtype=bool)) | mask
        idx = np.flatnonzero(mask)
        if values is None:
            vals = [None] * len(idx)
        elif isinstance(values, _Text):
            vals = values.take(idx)
        else:
            vals = values.to_numpy(dtype=object)[idx]
        for i, v in zip(idx, vals):
            v = None if _isna(v) else v
            msg = message(int(i), v) if callable(message) else message
            self.problems.append(Problem(code, msg, file=self.file, row=int(self.rows[i]), column=column,
                                         value=v, fix=fix(int(i), v) if callable(fix) else fix))


def _isna(v: Any) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _as_text(s: pd.Series, few: bool = False) -> pd.Series:
    """Strings, stripped; empty and missing become None (object dtype).

    `few`: the column has few distinct values (scope, target, impact...), so only the
    distinct values are cleaned. Plain list comprehensions otherwise: on a million cells
    they are several times faster than the `.str` accessor.
    """
    vals = s.to_numpy(dtype=object)
    if few:
        codes, uniques = pd.factorize(vals, use_na_sentinel=True)
        clean = np.array([_clean_cell(v) for v in uniques] + [None], dtype=object)
        return pd.Series(clean[codes], index=s.index)
    try:
        out = [v.strip() or None for v in vals]
    except AttributeError:
        out = [_clean_cell(v) for v in vals]
    return pd.Series(np.array(out, dtype=object) if out else np.zeros(0, dtype=object), index=s.index)


def _clean_cell(v: Any) -> str | None:
    return _cell_str(v).strip() or None


def has_utc_offset(vals: np.ndarray) -> np.ndarray:
    """True where an ISO 8601 string carries a UTC offset (Z, +hh:mm, -hhmm) after the date."""
    return np.fromiter(((("Z" in (t := v[10:])) or ("z" in t) or ("+" in t) or ("-" in t)) for v in vals),
                       dtype=bool, count=len(vals))


def _all_str(s: pd.Series) -> bool:
    try:
        return bool(pd.api.types.infer_dtype(s, skipna=True) in ("string", "empty"))
    except TypeError:
        return False


def _cell_str(v: Any) -> str:
    if v is None or _isna(v):
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return str(v)


def _parse_times(s: pd.Series, column: str, col: _Collector, assume_tz: str | None) -> np.ndarray:
    """Epoch seconds (int64; missing = INT64_MIN) from strings, datetimes or ints."""
    n = len(s)
    out = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    if n == 0:
        return out
    if pd.api.types.is_integer_dtype(s.dtype) and not s.isna().any():
        return s.to_numpy(dtype=np.int64)
    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
        vals = s.to_numpy(dtype=float, na_value=np.nan)
        ok = ~np.isnan(vals)
        out[ok] = np.floor(vals[ok]).astype(np.int64)
        return out
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        ok = s.notna().to_numpy()
        out[ok] = _epoch(s[ok])
        return out
    if pd.api.types.is_datetime64_dtype(s.dtype):
        col.add(s.notna().to_numpy(), "timestamp_naive", column, s.astype(str),
                "timestamp has no UTC offset", "write it with an offset (2027-02-03T10:00:00Z) or pass --assume-tz")
        return out
    obj = s.astype(object).to_numpy()
    kinds = np.fromiter((_kind(v) for v in obj), dtype=np.int8, count=n) if not _all_str(s) else None
    if kinds is None:
        if not _parse_uniform(s, column, col, assume_tz, out):
            _parse_strings(_as_text(s), column, col, assume_tz, out, np.ones(n, dtype=bool))
        return out
    # mixed objects: ints, datetimes, strings
    is_int = kinds == 1
    if is_int.any():
        out[is_int] = np.array([int(v) for v in obj[is_int]], dtype=np.int64)
    is_dt = kinds == 2
    if is_dt.any():
        naive = np.zeros(n, dtype=bool)
        for i in np.flatnonzero(is_dt):
            v = obj[i]
            if v.tzinfo is None or v.utcoffset() is None:
                naive[i] = True
            else:
                out[i] = int(pd.Timestamp(v).timestamp() // 1)
        if naive.any():
            if assume_tz:
                for i in np.flatnonzero(naive):
                    try:
                        out[i] = int(pd.Timestamp(obj[i]).tz_localize(assume_tz, ambiguous="raise",
                                                                     nonexistent="raise").timestamp() // 1)
                    except Exception:
                        naive[i] = False
                        col.add(_one(n, i), "timestamp_invalid", column, pd.Series(obj.astype(str)),
                                f"local time does not exist or is ambiguous in {assume_tz}",
                                "write the time with a UTC offset")
                naive[:] = False
            col.add(naive, "timestamp_naive", column, pd.Series(obj.astype(str)), "timestamp has no UTC offset",
                    "write it with an offset (2027-02-03T10:00:00Z) or pass --assume-tz")
    is_str = kinds == 3
    if is_str.any():
        text = pd.Series(np.array([(v.strip() or None) if k == 3 else None for v, k in zip(obj, kinds)],
                                  dtype=object))
        _parse_strings(text, column, col, assume_tz, out, is_str)
    bad = kinds == 4
    col.add(bad, "timestamp_invalid", column, pd.Series(obj).map(_cell_str), "not a timestamp",
            "write ISO 8601 with an offset, e.g. 2027-02-03T10:00:00Z")
    return out


def _one(n: int, i: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[i] = True
    return m


def _kind(v: Any) -> int:
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT or v is pd.NA:
        return 0
    if isinstance(v, (bool, np.bool_)):
        return 4
    if isinstance(v, (int, np.integer)):
        return 1
    if isinstance(v, float):
        return 1 if v.is_integer() else 4
    if isinstance(v, datetime):
        return 2
    if isinstance(v, str):
        return 3
    return 4


def _epoch(ts: pd.Series) -> np.ndarray:
    """Epoch seconds, floored, from an aware datetime Series without NaT."""
    unit = getattr(ts.dt, "unit", "ns")
    per = _NS_PER_UNIT[unit]
    return ts.dt.tz_convert("UTC").array.asi8 // per


_INVALID_FIX = "write e.g. 2027-02-03T10:00:00Z or 2027-02-03T04:00:00-06:00"
_NAIVE_FIX = "write it with an offset (2027-02-03T10:00:00Z) or pass --assume-tz ZONE"


def _parse_uniform(s: pd.Series, column: str, col: _Collector, assume_tz: str | None, out: np.ndarray) -> bool:
    """Fast path for a column whose times all carry the same offset, or all carry none.

    pandas parses such a column in one C pass; it raises when offsets differ or when
    naive and aware times are mixed, and then the caller takes the per-cell path.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = pd.to_datetime(s, format="ISO8601", errors="coerce")
    except (ValueError, TypeError, OverflowError):
        return False
    aware = isinstance(parsed.dtype, pd.DatetimeTZDtype)
    if not aware and not pd.api.types.is_datetime64_dtype(parsed.dtype):
        return False
    ok = parsed.notna().to_numpy()
    if not ok.all():
        miss = np.flatnonzero(~ok)
        vals = s.to_numpy(dtype=object)[miss]
        nonempty = miss[(vals != "") & s.notna().to_numpy()[miss]]
        invalid = np.zeros(len(s), dtype=bool)
        for i in nonempty:
            v = s.iat[i]
            invalid[i] = isinstance(v, str) and bool(v.strip())
        col.add(invalid, "timestamp_invalid", column, s, "not an ISO 8601 timestamp", _INVALID_FIX)
    if aware:
        out[ok] = _epoch(parsed[ok])
        return True
    if not ok.any():
        return True
    if assume_tz is None:
        col.add(ok, "timestamp_naive", column, s, "timestamp has no UTC offset", _NAIVE_FIX)
        return True
    local = parsed[ok].dt.tz_localize(assume_tz, ambiguous="NaT", nonexistent="NaT")
    valid = local.notna().to_numpy()
    idx = np.flatnonzero(ok)
    out[idx[valid]] = _epoch(local[valid])
    odd = np.zeros(len(s), dtype=bool)
    odd[idx[~valid]] = True
    col.add(odd, "timestamp_invalid", column, s,
            f"this local time does not exist or is ambiguous in {assume_tz} (daylight saving change)",
            "write the time with a UTC offset")
    return True


def _parse_strings(text: pd.Series, column: str, col: _Collector, assume_tz: str | None,
                   out: np.ndarray, where: np.ndarray) -> None:
    present = text.notna().to_numpy() & where
    if not present.any():
        return
    has_offset = np.zeros(len(text), dtype=bool)
    has_offset[present] = has_utc_offset(text.to_numpy(dtype=object)[present])
    aware = present & has_offset
    naive = present & ~has_offset
    if aware.any():
        parsed = pd.to_datetime(text[aware], utc=True, format="ISO8601", errors="coerce")
        ok = parsed.notna().to_numpy()
        idx = np.flatnonzero(aware)
        out[idx[ok]] = _epoch(parsed[ok])
        bad = np.zeros(len(text), dtype=bool)
        bad[idx[~ok]] = True
        col.add(bad, "timestamp_invalid", column, text, "not an ISO 8601 timestamp",
                "write e.g. 2027-02-03T10:00:00Z or 2027-02-03T04:00:00-06:00")
    if naive.any():
        idx = np.flatnonzero(naive)
        parsed = pd.to_datetime(text[naive], format="ISO8601", errors="coerce")
        if isinstance(parsed.dtype, pd.DatetimeTZDtype):  # pragma: no cover - defensive
            parsed = parsed.dt.tz_localize(None)
        ok = parsed.notna().to_numpy()
        unparsable = np.zeros(len(text), dtype=bool)
        unparsable[idx[~ok]] = True
        col.add(unparsable, "timestamp_invalid", column, text, "not an ISO 8601 timestamp",
                "write e.g. 2027-02-03T10:00:00Z or 2027-02-03T04:00:00-06:00")
        good_idx = idx[ok]
        if assume_tz:
            local = parsed[ok].dt.tz_localize(assume_tz, ambiguous="NaT", nonexistent="NaT")
            valid = local.notna().to_numpy()
            out[good_idx[valid]] = _epoch(local[valid])
            odd = np.zeros(len(text), dtype=bool)
            odd[good_idx[~valid]] = True
            col.add(odd, "timestamp_invalid", column, text,
                    f"this local time does not exist or is ambiguous in {assume_tz} (daylight saving change)",
                    "write the time with a UTC offset")
        else:
            nv = np.zeros(len(text), dtype=bool)
            nv[good_idx] = True
            col.add(nv, "timestamp_naive", column, text, "timestamp has no UTC offset",
                    "write it with an offset (2027-02-03T10:00:00Z) or pass --assume-tz ZONE")


def _iso(sec: int) -> str:
    return datetime.fromtimestamp(int(sec), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_TARGET_INDEX: dict[int, tuple[Any, Any]] = {}


def _target_index(topo: ResolvedTopology) -> _TargetIndex:
    """One `_TargetIndex` per topology object (simulations load thousands of logs on one)."""
    import weakref

    hit = _TARGET_INDEX.get(id(topo))
    if hit is not None and hit[0]() is topo:
        return hit[1]
    idx = _TargetIndex(topo)
    if len(_TARGET_INDEX) > 16:
        _TARGET_INDEX.clear()
    try:
        _TARGET_INDEX[id(topo)] = (weakref.ref(topo), idx)
    except TypeError:
        pass
    return idx


class _TargetIndex:
    """Topology lookups as pandas Indexes, plus each unit's smallest GPUs-per-node."""

    def __init__(self, topo: ResolvedTopology) -> None:
        self.topo = topo
        self.units = {s: pd.Index(topo.units(s)) for s in SCOPES}
        gpus = np.asarray(topo.node_gpus, dtype=np.int64)
        node_rack = np.asarray(topo.node_rack, dtype=np.int64)
        rack_cluster = np.asarray(topo.rack_cluster, dtype=np.int64)
        cluster_site = np.asarray(topo.cluster_site, dtype=np.int64)
        node_cluster = rack_cluster[node_rack] if len(node_rack) else node_rack
        node_site = cluster_site[node_cluster] if len(node_cluster) else node_cluster
        self.min_gpus = {"node": gpus}
        for scope, owner, count in (("rack", node_rack, len(topo.racks)), ("cluster", node_cluster, len(topo.clusters)),
                                    ("site", node_site, len(topo.sites))):
            m = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
            np.minimum.at(m, owner, gpus)
            self.min_gpus[scope] = m


def _build(raw: pd.DataFrame, rows: np.ndarray, topo: ResolvedTopology, *, file: str | None, sha256: str | None,
           assume_tz: str | None, skip_bad_rows: bool, gpus_required: bool,
           fast: _Fast | None = None) -> IncidentLog:
    """Validate `raw` and build the log. `fast`: what `_read_csv_fast` found; any problem
    then raises `_Retry` (the pandas reader describes problems)."""
    if assume_tz is not None:
        try:
            ZoneInfo(assume_tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise InputError([Problem("unknown_timezone", f"unknown time zone {assume_tz!r}", file=file,
                                      value=assume_tz, fix="use an IANA name such as America/Chicago or UTC")]) from None
    n = len(raw)
    present = fast.names if fast is not None else list(raw.columns)
    file_problems: list[Problem] = []
    warns: list[Problem] = []
    # pandas renames a repeated CSV header to `name.1`, `name.2`, ...
    repeated = {c: m.group(1) for c in present if (m := _MANGLED.fullmatch(c)) and m.group(1) in COLUMNS
                and m.group(1) in present}
    for c in present:
        if c not in COLUMNS and c not in repeated:
            close = difflib.get_close_matches(c, COLUMNS, n=1, cutoff=0.6)
            warns.append(Problem("unknown_column", f"column {c!r} is not part of the incident log format; "
                                 "it is ignored", file=file, column=c, value=c, severity="warning",
                                 fix=f"did you mean {close[0]!r}?" if close else None))
    for c in sorted(set(repeated.values()) | {c for c in present if present.count(c) > 1}):
        file_problems.append(Problem("duplicate_column", f"column {c!r} appears more than once", file=file,
                                     column=c, value=c, fix="keep one column of each name"))
    if n or len(present):
        for c in REQUIRED:
            if c not in present:
                file_problems.append(Problem("missing_column", f"required column {c!r} is missing", file=file,
                                             column=c, fix="the header needs id,scope,target,start "
                                             "(plus end, impact, category, ... as needed)"))
    if file_problems:
        raise InputError(file_problems + warns)
    if n == 0:
        if file is not None:
            warns.append(Problem("empty_log", "the incident log has no incidents", file=file, severity="warning"))
        return IncidentLog(empty_frame(), [], file, sha256, warns)

    raw = raw.reset_index(drop=True)
    col = _Collector(rows, file, retry=fast is not None)

    cache: dict[str, _Text] = {}

    def text(c: str) -> _Text:
        if c not in cache:
            if fast is not None and c in fast.codes:
                codes, uniques = fast.codes[c]
                cache[c] = _Text.clean(codes, uniques, plain=c in fast.plain)
            elif c in raw.columns:
                cache[c] = _Text.of(raw[c], few=c in _FEW)
            else:
                cache[c] = _Text.missing(n)
        return cache[c]

    ids = text("id")
    scope = text("scope").map(str.lower)
    target = text("target")
    # required values
    col.add(ids.isna(), "missing_id", "id", None, "incident id is empty",
            "give every incident a unique id (the ticket number)")
    for c, t in (("scope", scope), ("target", target)):
        col.add(t.isna(), "missing_value", c, None, f"{c} is empty", None)
    # duplicate ids (every occurrence after the first): ids are distinct values
    present_ids = ~ids.isna()
    if int(present_ids.sum()) != len(ids.uniques):
        codes_s = pd.Series(ids.codes)
        first = ~codes_s.duplicated(keep="first").to_numpy() & present_ids
        dup = ~first & present_ids
        first_row = dict(zip(ids.take(np.flatnonzero(first)).tolist(), rows[first].tolist()))
        col.add(dup, "duplicate_id", "id", ids, lambda i, v: f"incident id {v!r} is already used in row {first_row[v]}",
                "incident ids must be unique")
    # scope
    scope_code = scope.per_row([SCOPES.index(v) if v in SCOPES else -1 for v in scope.uniques], -1)
    col.add(~scope.isna() & (scope_code < 0), "unknown_scope", "scope", text("scope"),
            "scope must be node, rack, cluster or site", None)
    # impact
    impact = text("impact").map(str.lower)
    col.add(impact.per_row([v not in IMPACTS for v in impact.uniques], False), "unknown_impact", "impact",
            text("impact"), "impact must be down or degraded", "leave it empty for down")
    impact = impact.fill("down")
    # severity
    sev_text = text("severity")
    severity = sev_text.map(str.lower)
    col.add(severity.per_row([v not in SEVERITIES for v in severity.uniques], False), "unknown_severity",
            "severity", sev_text, "severity must be sev1, sev2, sev3 or sev4", None)
    # category
    category = text("category").fill(DEFAULT_CATEGORY)
    # timestamps
    times: dict[str, np.ndarray] = {}
    for c in TIME_COLUMNS:
        if fast is not None and c in fast.times:
            times[c] = fast.times[c]
        elif c in raw.columns:
            times[c] = _parse_times(raw[c], c, col, assume_tz)
        else:
            times[c] = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    NA = np.iinfo(np.int64).min
    st, en = times["start"], times["end"]
    start_missing = (st == NA) & ~col.flagged.get("start", np.zeros(n, dtype=bool))
    col.add(start_missing, "missing_value", "start", None, "start is empty",
            "write when the fault began, e.g. 2027-02-03T10:00:00Z")
    ebs = (st != NA) & (en != NA) & (en < st)
    if ebs.any():
        end_text = text("end")
        col.add(ebs, "end_before_start", "end", end_text,
                lambda i, v: f"end is before start ({_iso(en[i])} < {_iso(st[i])})", "swap or correct the times")
    # targets, per scope; node targets may be hostlists. Lookups run on the distinct
    # targets only (a few thousand even in a million-row log), then spread by code.
    idx = _target_index(topo)
    t_codes, t_uniques = target.codes, target.uniques
    has_target = t_codes >= 0
    unit_pos = np.full(n, -1, dtype=np.int64)          # position of the target in its scope's units
    node_lists: dict[int, list[str]] = {}
    tgt_ok = np.zeros(n, dtype=bool)
    for k, s in enumerate(SCOPES):
        in_scope = (scope_code == k) & has_target
        if not in_scope.any():
            continue
        pos = np.append(idx.units[s].get_indexer(t_uniques), -1)[t_codes]
        unit_pos[in_scope] = pos[in_scope]
        known = in_scope & (pos >= 0)
        unknown = in_scope & ~known
        tgt_ok |= known
        if s == "node" and unknown.any():
            tv = target.values()
            expr_mask = np.zeros(n, dtype=bool)
            for i in np.flatnonzero(unknown):
                expr_mask[i] = "[" in tv[i] or "," in tv[i]
            expanded: dict[str, tuple[list[str] | None, str]] = {}
            for i in np.flatnonzero(expr_mask):
                t = tv[i]
                if t not in expanded:
                    expanded[t] = _expand_nodes(t, idx.units["node"])
                names, why = expanded[t]
                if names is not None:
                    node_lists[int(i)] = names
                    unknown[i] = False
                    tgt_ok[i] = True
                else:
                    col.add(_one(n, i), "unknown_target", "target", target, why,
                            "use node ids from the contract's topology (e.g. r01-n07 or r01-n[03-05])")
            unknown &= ~expr_mask
        col.add(unknown, "unknown_target", "target", target, f"no {s} with this id in the contract's topology",
                _suggest(idx.units[s]))
    # gpus_affected
    g_text = text("gpus_affected")
    g_present = ~g_text.isna()
    gnum = g_text.per_row(pd.to_numeric(pd.Series(g_text.uniques, dtype=object), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan), np.nan)
    not_int = g_present & (np.isnan(gnum) | (np.floor(np.nan_to_num(gnum)) != np.nan_to_num(gnum)))
    col.add(not_int, "gpus_affected_range", "gpus_affected", g_text, "gpus_affected must be a whole number",
            None)
    gvals = np.where(g_present & ~not_int, np.nan_to_num(gnum), 0).astype(np.int64)
    limit = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    check = g_present & ~not_int
    for k, s in enumerate(SCOPES):
        m = check & (scope_code == k) & tgt_ok & (unit_pos >= 0)
        if m.any():
            limit[m] = idx.min_gpus[s][unit_pos[m]]
    expr_limit: dict[int, int] = {}
    for i, names in node_lists.items():
        key = id(names)   # rows with the same expression share one list
        if key not in expr_limit:
            expr_limit[key] = int(idx.min_gpus["node"][idx.units["node"].get_indexer(names)].min())
        limit[i] = expr_limit[key]
    out_range = g_present & ~not_int & ((gvals < 1) | (gvals > limit))
    col.add(out_range, "gpus_affected_range", "gpus_affected", g_text,
            lambda i, v: f"gpus_affected must be between 1 and {limit[i] if limit[i] < 2**62 else 'the GPUs per node'}",
            None)
    if gpus_required:
        need = impact.per_row([v == "degraded" for v in impact.uniques], False) & ~g_present
        col.add(need, "missing_value", "gpus_affected", None,
                "a degraded incident needs gpus_affected (the contract counts degraded time proportionally)",
                "write how many GPUs of the node are lost")

    problems = sorted(col.problems, key=lambda p: (p.row or 0, COLUMNS.index(p.column)
                                                   if p.column in COLUMNS else 99))
    if problems and not skip_bad_rows:
        raise InputError(problems + warns)
    keep = ~col.bad
    skipped = problems if skip_bad_rows else []

    all_kept = not col.bad.any()
    kept = None if all_kept else keep

    def pick(a: np.ndarray) -> np.ndarray:
        return a if all_kept else a[keep]

    def na_int(a: np.ndarray) -> pd.arrays.IntegerArray:
        a = pick(a)
        missing = a == NA
        if not a.flags.writeable:    # a caller's array (from_records): not ours to change
            return pd.arrays.IntegerArray(np.where(missing, 0, a), missing)
        a[missing] = 0               # the array read for this log: changed in place
        return pd.arrays.IntegerArray(a, missing)

    def na_text(t: _Text) -> np.ndarray:
        return pick(t.values())

    frame = pd.DataFrame({
        "id": ids.str_array(kept),
        "row": pick(rows),
        "scope": scope.str_array(kept),
        "target": target.str_array(kept),
        "start": pick(st),
        "end": na_int(en),
        "impact": impact.str_array(kept),
        "gpus_affected": pd.arrays.IntegerArray(pick(np.where(g_present, gvals, 0)), pick(~g_present)),
        "category": category.str_array(kept),
        "notice_at": na_int(times["notice_at"]),
        "detected_at": na_int(times["detected_at"]),
        "reported_at": na_int(times["reported_at"]),
        "responded_at": na_int(times["responded_at"]),
        "resolved_at": na_int(times["resolved_at"]),
        "severity": pd.Series(na_text(severity), dtype=object),
        "cause": pd.Series(na_text(text("cause")), dtype=object),
        "ticket": pd.Series(na_text(text("ticket")), dtype=object),
    })
    # the codes the frame's text columns were built from, for the calculators (`IncidentLog.coded`)
    coded = {c: t.distinct().subset(kept) for c, t in
             (("id", ids), ("scope", scope), ("target", target), ("impact", impact), ("category", category),
              ("severity", severity))}
    if node_lists:
        kept_pos = np.flatnonzero(keep)
        local = {int(np.searchsorted(kept_pos, i)): names for i, names in node_lists.items() if keep[i]}
        if local:
            counts = np.ones(len(frame), dtype=np.int64)
            for j, names in local.items():
                counts[j] = len(names)
            frame = frame.loc[frame.index.repeat(counts)].reset_index(drop=True)
            targets = frame["target"].to_numpy(dtype=object)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            for j, names in local.items():
                targets[starts[j]:starts[j] + len(names)] = names
            frame["target"] = pd.Series(targets, dtype=str)
            at = np.repeat(np.arange(len(counts)), counts)
            coded = {c: _Text(t.codes[at], t.uniques, True) for c, t in coded.items() if c != "target"}
    codes = {c: (_backing(frame[c]), t.codes, t.uniques) for c, t in coded.items()}
    return IncidentLog(frame, skipped, file, sha256, warns, codes)


def _expand_nodes(expr: str, nodes: pd.Index) -> tuple[list[str] | None, str]:
    try:
        names = hostlist.expand(expr, limit=hostlist.row_budget(len(nodes)))
    except hostlist.HostlistError as e:
        return None, f"target is not a valid hostlist: {e}"
    missing = [x for x in names if x not in nodes]
    if missing:
        return None, f"hostlist names nodes not in the contract's topology: {hostlist.compress(missing)}"
    return list(dict.fromkeys(names)), ""


def _suggest(units: pd.Index):
    names = units.tolist() if len(units) <= 20_000 else []
    cache: dict[str, str | None] = {}

    def fix(i: int, v: Any) -> str | None:
        if v is None or not names:
            return None
        if v not in cache:
            if len(cache) >= 20:
                return None
            close = difflib.get_close_matches(str(v), names, n=1, cutoff=0.7)
            cache[v] = f"did you mean {close[0]!r}?" if close else None
        return cache[v]
    return fix


def empty_frame() -> pd.DataFrame:
    """A frame with the log's columns and dtypes and no rows."""
    ints = pd.arrays.IntegerArray(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
    return pd.DataFrame({
        "id": pd.Series([], dtype=str), "row": np.zeros(0, dtype=np.int64), "scope": pd.Series([], dtype=str),
        "target": pd.Series([], dtype=str), "start": np.zeros(0, dtype=np.int64), "end": ints.copy(),
        "impact": pd.Series([], dtype=str), "gpus_affected": ints.copy(), "category": pd.Series([], dtype=str),
        "notice_at": ints.copy(), "detected_at": ints.copy(), "reported_at": ints.copy(),
        "responded_at": ints.copy(), "resolved_at": ints.copy(), "severity": pd.Series([], dtype=object),
        "cause": pd.Series([], dtype=object), "ticket": pd.Series([], dtype=object),
    })
