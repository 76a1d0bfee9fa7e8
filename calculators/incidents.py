"""Incident logs: CSV, JSON Lines or a JSON array -> one validated log (`IncidentLog`).

CSV is read by `pyarrow.csv.read_csv` (all threads; quoting, CRLF, a UTF-8 byte-order mark
and UTF-8 text on that path); a file it refuses (a row with fewer or more cells than the
header, bytes that are not UTF-8, a repeated column) is read again by `pandas.read_csv`,
which fills short rows with empty cells and says what is wrong with the others. JSON Lines
and JSON arrays are read with the standard library.

What the columns are and what is checked is one declarative spec (`SPEC`, built from
`calculators.column_spec`): each column names its parser and its checks, each check a
reason code (`calculators.incident_reasons.Reason`), the rows it rejects as a mask over the
whole column, a message and a fix. Every check runs on whole columns at once (numpy, or on
the distinct values of a text column), so a log of a million rows loads in about a second;
Python only loops over the rows that are wrong, to describe them. All bad rows are reported
together, each with its row number, column, value and reason code. Nothing downstream sees
a log with errors unless the caller asks to skip bad rows; the skipped rows are then kept in
`IncidentLog.skipped` so every output can list them.

The calculators read the log's columns as the loader checked them (`IncidentLog.columns`,
`calculators.log_columns`: int64 arrays, and text columns as codes into their distinct
values); the pandas frame `IncidentLog.frame` is made from them on first use, so a command
that needs no frame (`slakit credits`) imports no pandas. pandas is imported by the general
readers, by the reporting of problems and by the frame.

The frame has one row per (incident, unit): a `node` incident whose target is a hostlist
(`r01-n[03-05]`) becomes one row per node, all with the same `id` and `row` (hostlists are
expanded by `slaschema.hostlist`).

Columns of `IncidentLog.frame`:

============== ======== =====================================================================
column         dtype    meaning
============== ======== =====================================================================
id             str      incident id
row            int64    1-based row of the input (CSV: data row, header and blank lines
                        excluded; JSON Lines: line number; JSON array: element number)
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

Reason codes: see `calculators.incident_reasons` (and docs/incident-log-codes.md).
"""

from __future__ import annotations

import codecs
import csv
import difflib
import hashlib
import io
import itertools
import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from calculators.column_spec import Check, Column, Context, is_missing, validate
from calculators.csv_lines import (breaks_explained, cells_over_lines, line_breaks, may_hold_breaks, text_reader,
                                   unclosed_quote)
from calculators.incident_reasons import Reason
from calculators import log_prefetch
from calculators.log_columns import Columns, FrameColumns, LoadedColumns, columns_of, first_rows
from calculators.log_csv_plain import read_plain
from calculators.log_csv import (BLOCK_SIZE, COLUMNS, LAZY_TEXT, NA, TEXT_CONVERTED, TIME_COLUMNS, convert_columns,
                                 csv_header, detect_format, fast_times, read_csv_arrow, text_column)
from slaschema import hostlist
from slaschema.safefiles import check_cli_file, wide_encoding
from slaschema.textsafe import cut, lone_surrogates_replaced
from slaschema.errors import InputError, Problem
from slaschema.models import SCOPES

if TYPE_CHECKING:
    import pandas as pd

    from slaschema.loader import LoadedContract
    from slaschema.topology import ResolvedTopology

REQUIRED = ("id", "scope", "target", "start")
OPTIONAL_TIMES = TIME_COLUMNS[1:]
TEXT_COLUMNS = ("cause", "ticket")
FRAME_COLUMNS = ("id", "row", "scope", "target", "start", "end", "impact", "gpus_affected", "category",
                 "notice_at", "detected_at", "reported_at", "responded_at", "resolved_at", "severity",
                 "cause", "ticket")
_MANGLED = re.compile(r"(.+)\.(\d+)")
_FEW = frozenset({"scope", "target", "impact", "gpus_affected", "category", "severity", "cause"})
IMPACTS = ("down", "degraded")
SEVERITIES = ("sev1", "sev2", "sev3", "sev4")
DEFAULT_CATEGORY = "unplanned"

_NS_PER_UNIT = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


@dataclass(frozen=True, eq=False)
class IncidentLog:
    """A validated incident log: its columns as the calculators read them (`columns`:
    `calculators.log_columns`), and as a pandas frame (`frame`, made on first use; see the
    module docstring for its columns). Change a log by making a new one (`with_frame`)."""

    columns: Columns
    skipped: list[Problem] = field(default_factory=list)
    file: str | None = None
    digest: str | log_prefetch.Digest | None = None     # the file's SHA-256, or the thread working it out
    warnings: list[Problem] = field(default_factory=list)

    @property
    def sha256(self) -> str | None:
        """The SHA-256 of the file read (hex), None for a log not read from a file."""
        d = self.digest
        return d if d is None or isinstance(d, str) else d.hexdigest()

    @property
    def frame(self) -> pd.DataFrame:
        return self.columns.frame()         # made once, by the columns

    def with_frame(self, frame: pd.DataFrame) -> IncidentLog:
        """The same log (file, problems) with the rows of `frame` instead (its codes made afresh)."""
        return IncidentLog(FrameColumns(frame), self.skipped, self.file, self.digest, self.warnings)

    def coded(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """(codes, distinct values) of a text column, -1 where the cell is missing; the ids
        are numbered in order of first appearance. The loader hands over the codes it
        validated with, so the calculators do not hash a million strings again."""
        return self.columns.coded(column)

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
        import pandas as pd

        if isinstance(records, pd.DataFrame):
            raw = records
        elif isinstance(records, dict):
            raw = pd.DataFrame(records)
        elif records:
            raw = pd.DataFrame.from_records(records)
        else:
            raw = pd.DataFrame({c: pd.Series([], dtype=object) for c in REQUIRED})
        rows = np.arange(1, len(raw) + 1, dtype=np.int64)
        return _build(_FrameSource(raw), rows, topology, file=file, sha256=None, assume_tz=assume_tz,
                      skip_bad_rows=skip_bad_rows, gpus_required=gpus_required)


def coded(log: Any, column: str) -> tuple[np.ndarray, np.ndarray]:
    """`IncidentLog.coded` for any object with a `frame` (logs built by hand have no codes)."""
    return columns_of(log).coded(column)


def load_incidents(path: str | Path, lc: LoadedContract, assume_tz: str | None = None,
                   skip_bad_rows: bool = False, *, sha256: bool = True) -> IncidentLog:
    """Read and validate an incident log for a loaded contract.

    Raises `InputError` with every problem found (and the unknown_column warnings) unless
    `skip_bad_rows`, in which case bad rows are dropped and listed in `skipped`. Problems
    with the file itself (missing file, missing required column, unreadable CSV/JSON,
    no content at all) are raised even with `skip_bad_rows`.

    `sha256=False`: the file's SHA-256 is not worked out (0.1 s of CPU for a 137 MB log) and
    the log's `sha256` is None; for a caller whose output does not show it (the credits
    table and CSV).
    """
    source, rows, fname, digest = _read(path, sha256)
    return _build(source, rows, lc.topology, file=fname, sha256=digest, assume_tz=assume_tz,
                  skip_bad_rows=skip_bad_rows, gpus_required=lc.model.downtime.degraded == "proportional")


def load_incidents_without_contract(path: str | Path, assume_tz: str | None = None) -> IncidentLog:
    """Read and validate an incident log with no contract (`slakit reconcile OURS THEIRS`):
    the file is read and every cell checked as `load_incidents` reads and checks it, with the
    same codes, rows and columns, but for the checks that need the contract, which are not
    made: whether a target is a unit of the topology (any non-empty target is taken as
    written; a node hostlist is expanded, and one that is not valid is `unknown_target` as
    with a contract), the upper bound of `gpus_affected` (the target's GPUs per node; it must
    still be a whole number of at least 1), and whether a degraded incident must give
    `gpus_affected` (the contract's `degraded: proportional`). With no topology to bound a
    row's hostlist, the node names of all rows together are bounded by the node budget
    (`hostlist_too_large`, `slakit --max-nodes N`)."""
    source, rows, fname, digest = _read(path)
    return _build(source, rows, None, file=fname, sha256=digest, assume_tz=assume_tz,
                  skip_bad_rows=False, gpus_required=False)


def _read(path: str | Path, sha256: bool = True
          ) -> tuple[_FrameSource | _ArrowSource, np.ndarray, str, str | log_prefetch.Digest | None]:
    """The log's cells (CSV through Arrow, else pandas; JSON Lines; a JSON array), their row
    numbers, the file's name and its SHA-256 (or the prefetch's thread working it out; None
    unless `sha256`); the file-level problems raised."""
    p = Path(path)
    fname = str(path)
    check_cli_file(p, "incident log")          # no /proc, /sys, /dev, FIFO or device
    if not p.is_file():
        raise InputError([Problem(Reason.FILE_NOT_FOUND, "no such incident log", file=fname, fix="check the path")])
    fetched = log_prefetch.take(p)          # read in the background while the command started
    digest: str | log_prefetch.Digest | None = None
    if fetched is not None:
        data = fetched.data
        if sha256:                          # worked out beside the checks below and the engine
            digest = fetched.digest.start()
    else:
        try:
            data = p.read_bytes()
        except MemoryError:
            size = p.stat().st_size
            raise InputError([Problem(Reason.LOG_TOO_LARGE, f"the incident log ({size / 1e9:,.1f} GB) does not fit in "
                                      "memory: slakit reads a log whole", file=fname,
                                      fix="split the log, by month or by site, and name the part the period needs")]
                             ) from None
        if sha256:
            digest = hashlib.sha256(data).hexdigest()
    head = data[:4096].decode("utf-8-sig", errors="replace")
    if not head.strip() and not data.decode("utf-8-sig", errors="replace").strip():
        raise InputError([Problem(Reason.EMPTY_LOG, "the incident log is empty", file=fname,
                                  fix="export the incidents with a header row: id,scope,target,start,end,...")])
    kind = _not_a_log(data, head)
    if kind is not None:
        raise InputError([Problem(Reason.NOT_A_LOG, f"the incident log is {kind[0]}", file=fname, fix=kind[1])])
    wide = wide_encoding(data)
    if wide is not None:
        raise InputError([Problem(Reason.LOG_ENCODING, f"the incident log is {wide[0]} text, not UTF-8",
                                  file=fname, fix="save it as UTF-8 (in Excel: CSV UTF-8), or convert it: "
                                                  f"iconv -f {wide[1]} -t UTF-8 LOG > LOG-utf8.csv")])
    fmt = detect_format(fname, head)
    short: list[Problem] = []               # the CSV's rows of fewer cells than its header (`_short_rows`)
    source: _FrameSource | _ArrowSource | None
    if fmt == "csv":
        if fetched is not None:             # the background reading already tried Arrow on it
            source = (_ArrowSource(*fetched.arrow, converted=fetched.converted, n=fetched.rows,
                                   reread=None if fetched.rows is None else partial(_arrow_table, data))
                      if fetched.arrow is not None else None)
        else:
            source = _read_csv_arrow(data)
        if source is not None:
            if source.quoted:
                _refuse_cells_over_lines(data, source.n, fname, source)
            return source, np.arange(1, source.n + 1, dtype=np.int64), fname, digest
        read: Callable[[], tuple[pd.DataFrame, np.ndarray]] = partial(_read_csv, data, fname, short)
    escaped: list[Problem] = []             # the JSON readers' lone surrogates (`_surrogate_warning`)
    if fmt == "jsonl":
        read = partial(_read_jsonl, data.decode("utf-8-sig", errors="replace"), fname, escaped)
    elif fmt == "json":
        read = partial(_read_json_array, data.decode("utf-8-sig", errors="replace"), fname, escaped)
    # (Arrow reads only UTF-8 in the log's own columns: a log with other bytes there comes this way)
    warnings = _not_utf8_warning(data, fname)
    try:
        raw, rows = read()
        if fmt == "csv" and b'"' in data:
            _refuse_cells_over_lines(data, len(raw), fname)
    except InputError as e:                 # a file that cannot be read: said with its other problems
        e.problems.extend(warnings + escaped)
        raise
    warnings += escaped + short
    return _FrameSource(raw, warnings), rows, fname, digest


_MAGIC = ((b"\x1f\x8b", "a gzip-compressed file", "decompress it first (gunzip -k LOG.gz) and name the log inside"),
          (b"BZh", "a bzip2-compressed file", "decompress it first (bunzip2 -k LOG.bz2) and name the log inside"),
          (b"\xfd7zXZ\x00", "an xz-compressed file", "decompress it first (unxz -k LOG.xz) and name the log inside"),
          (b"\x28\xb5\x2f\xfd", "a zstd-compressed file", "decompress it first (unzstd LOG.zst) and name the log inside"),
          (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook is one)",
           "export the sheet as CSV (in Excel: CSV UTF-8), or unzip the archive and name the log inside"),
          (b"%PDF-", "a PDF", "name the incident log the report was made from (CSV, JSON Lines or a JSON array)"))
_CONTRACT_START = re.compile(r"(?:\s*#[^\n]*\n)*\s*slakit\s*:")


def _not_a_log(data: bytes, head: str) -> tuple[str, str] | None:
    """(what the file is, the fix) for a file that is plainly no incident log: a compressed
    file, an archive or workbook, a PDF (by their first bytes), or a slakit contract (a
    document starting with the `slakit:` key, as a contract named in the log's place is)."""
    for magic, what, fix in _MAGIC:
        if data.startswith(magic):
            return what, fix
    if _CONTRACT_START.match(head):
        return ("a slakit contract (YAML)",
                "name the contract first and the incident log second: slakit credits CONTRACT LOG")
    return None


def _refuse_cells_over_lines(data: bytes, n_rows: int, fname: str, source: _ArrowSource | None = None) -> None:
    """Raise `csv_invalid` for the quoted cells of the CSV `data` (read as `n_rows` rows) that
    run over line breaks where they must not: one that hides incident rows, or a one-line
    value over lines (`calculators.csv_lines`; a file-level error, also with --skip-bad-rows).
    With Arrow's `source`, the cells it read may show that there is nothing to find."""
    if not may_hold_breaks(data, n_rows):
        return
    if source is not None and breaks_explained(data, n_rows, {name: source.table.column(raw)
                                                               for name, raw in source.raw_names.items()
                                                               if raw in source.table.column_names}):
        return
    problems = cells_over_lines(data, fname)
    if problems:
        raise InputError(problems)


_NOT_UTF8_SHOWN = 5            # lines named in the warning (all are counted)
_UTF8_PIECE = 1 << 20          # bytes decoded at a time while looking for stray ones


def _is_continuation(data: bytes, i: int) -> bool:
    return 0 <= i < len(data) and 0x80 <= data[i] < 0xC0


def _first_stray(data: bytes, start: int) -> int:
    """Where the first byte from `start` on that is not part of UTF-8 text is (`start` at the
    beginning of a character), or -1: decoded a piece at a time, each ending before a
    character, so the memory taken is one piece's, whatever the file's size."""
    view, n, at = memoryview(data), len(data), start
    while at < n:
        end = min(at + _UTF8_PIECE, n)
        back = 0
        while end < n and back < 3 and _is_continuation(data, end):
            end -= 1
            back += 1
        try:
            codecs.utf_8_decode(view[at:end], "strict", True)
        except UnicodeDecodeError as e:
            return at + e.start
        at = end
    return -1


def _shown_bytes(data: bytes, lo: int, hi: int) -> str:
    """data[lo:hi] for a message: stray bytes as \\xNN, what a terminal would not show (escape
    sequences, a byte-order mark, ...) as \\x or \\u escapes, the ends moved off a character's middle."""
    while lo < hi and _is_continuation(data, lo):
        lo += 1
    while hi > lo and _is_continuation(data, hi):
        hi -= 1
    text = data[lo:hi].decode("utf-8", errors="backslashreplace")
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _named_places(shown: list[int], count: int) -> str:
    """`2, 3, 4, 5, 6, ...`: the first places (lines, elements) of `count`, "..." for the rest."""
    return ", ".join(str(x) for x in shown) + (", ..." if count > len(shown) else "")


def _not_utf8_warning(data: bytes, fname: str) -> list[Problem]:
    """A `not_utf8` warning naming the lines that hold bytes that are not UTF-8 (the readers
    read each as U+FFFD): the first few, their count, and the first such bytes shown as \\xNN
    with some of their line. No warning (an empty list) for a file that is all UTF-8. Lines
    end at LF, CRLF or a lone CR; the file is read as bytes (no copy of it as text)."""
    if data.isascii():
        return []
    lines: list[int] = []
    count, first = 0, ""
    line, at = 1, 0
    pos = _first_stray(data, 0)
    while pos >= 0:                     # one search per line that holds stray bytes
        line += line_breaks(data, at, pos)
        at = pos
        ends = [i for i in (data.find(b"\n", pos), data.find(b"\r", pos)) if i >= 0]
        end = min(ends) if ends else len(data)
        if not lines:                   # the first stray bytes with some of the line around them
            start = max(data.rfind(b"\n", 0, pos), data.rfind(b"\r", 0, pos)) + 1
            first = _shown_bytes(data, max(start, pos - 30), min(end, pos + 30))
        if len(lines) < _NOT_UTF8_SHOWN:
            lines.append(line)
        count += 1
        pos = _first_stray(data, end) if end < len(data) else -1
    if not count:
        return []
    named, many = _named_places(lines, count), count != 1
    return [Problem(Reason.NOT_UTF8, f"{count} line{'s hold' if many else ' holds'} bytes that are not UTF-8, "
                    f"read as U+FFFD (line{'s' if many else ''} {named}); the first: {first}", file=fname,
                    line=lines[0], severity="warning",
                    fix="save the log as UTF-8 (in Excel: CSV UTF-8), or convert it: "
                        "iconv -f WINDOWS-1252 -t UTF-8 LOG > LOG-utf8.csv")]


# --- readers -----------------------------------------------------------------------------------

def _read_csv(data: bytes, fname: str, short: list[Problem] | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """The general reader: pandas, every cell a string ('' = empty); short rows are filled
    with empty cells (a `short_row` warning names them, into `short`), a row with too many
    cells is an error (never silently dropped cells)."""
    import pandas as pd

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            raw = pd.read_csv(io.BytesIO(data), dtype=object, keep_default_na=False, na_filter=False,
                              skip_blank_lines=True, index_col=False, encoding="utf-8-sig",
                              encoding_errors="replace")
    except (pd.errors.ParserError, pd.errors.ParserWarning, pd.errors.EmptyDataError, ValueError) as e:
        long_row = _first_long_row(data)
        if long_row is not None:
            row, line, cells, header = long_row
            sep = _other_separator(csv_header(data) or []) if header == 1 else None
            raise InputError([Problem(Reason.CSV_INVALID, f"the CSV cannot be read: the row has {cells} cells, the "
                                      f"header has {header} (file line {line})", file=fname, row=row, line=line,
                                      fix="quote a cell that holds a comma, or remove the extra cells" if sep is None
                                      else _separator_fix(sep))]) from None
        open_at = unclosed_quote(data) if "EOF inside string" in str(e) else None
        if open_at is not None:
            raise InputError([Problem(Reason.CSV_INVALID, "a quote opened in this row is never closed: the rest of the "
                                      "file would be text of one cell", file=fname, row=open_at[0], line=open_at[1],
                                      fix="close the quote where the cell ends (a \" inside a quoted cell is written "
                                          "\"\"), or remove the stray \"")]) from None
        raise InputError([Problem(Reason.CSV_INVALID, f"the CSV cannot be read: {str(e).strip()}", file=fname,
                                  fix="check quoting and that every row has as many cells as the header")]) from None
    header = csv_header(data) or []
    # (pandas names an empty header cell `Unnamed: i`: named here for what it is)
    raw.columns = [_EMPTY_HEADER.format(i + 1) if i < len(header) and not header[i].strip() else str(c).strip()
                   for i, c in enumerate(raw.columns)]
    if short is not None:
        short.extend(_short_rows(data, fname, [str(c) for c in raw.columns]))
    return raw, np.arange(1, len(raw) + 1, dtype=np.int64)


_SHORT_SHOWN = 5               # short rows named in the warning (all are counted)


def _short_rows(data: bytes, fname: str, columns: list[str]) -> list[Problem]:
    """A `short_row` warning for the rows with fewer cells than the header (the general reader
    fills them with empty cells): the first few by row and file line, their count, and the
    columns the first one lacks; an end among them is said to read as an open incident. Rows
    are counted as the general reader counts them (`_counted_rows`)."""
    found: list[tuple[int, int, int]] = []
    count = 0
    with _counted_rows(data) as (header, rows):
        if header is None:
            return []
        try:
            for row, line, cells in rows:
                if cells < len(header):
                    count += 1
                    if len(found) < _SHORT_SHOWN:
                        found.append((row, line, cells))
        except csv.Error:
            return []
    if not count:
        return []
    row, line, cells = found[0]
    missing = columns[cells:len(header)]
    shown = ", ".join(repr(cut(c)) for c in missing[:6])   # (as unknown_column)
    opened = " (its end is missing: the incident reads as open, counted until as_of)" if "end" in missing else ""
    many = count != 1
    return [Problem(Reason.SHORT_ROW, f"{count} row{'s have' if many else ' has'} fewer cells than the header's "
                    f"{len(header)}, the cells missing read as empty (row{'s' if many else ''} "
                    f"{_named_places([f[0] for f in found], count)}); the first, row {row} (file line {line}), has "
                    f"{cells}: no {shown}{', ...' if len(missing) > 6 else ''}{opened}",
                    file=fname, row=row, line=line, severity="warning",
                    fix="check that the export was not cut short; write an empty cell as nothing between two "
                        "commas, keeping every row's commas")]


@contextmanager
def _counted_rows(data: bytes) -> Iterator[tuple[list[str] | None, Iterator[tuple[int, int, int]]]]:
    """The CSV's header cells (None for a file of blank lines) and its rows as (data row, file
    line it starts on, its cells), counted as the general reader (pandas) counts them: a blank
    line, or one of spaces and tabs only, is no row, before the header too. The rows raise
    csv.Error where the csv module cannot read on (broken quoting)."""
    with text_reader(data) as reader:        # (a cell of any length: pandas reads it)

        def blank(cells: list[str]) -> bool:
            return not cells or (len(cells) == 1 and not cells[0].strip(" \t"))

        header = None
        try:
            for cells in reader:
                if not blank(cells):
                    header = cells
                    break
        except csv.Error:
            header = None

        def rows() -> Iterator[tuple[int, int, int]]:
            row, line = 0, reader.line_num + 1
            for cells in reader:
                if not blank(cells):
                    row += 1
                    yield row, line, len(cells)
                line = reader.line_num + 1

        yield header, rows()


_EMPTY_HEADER = "(empty header cell {})"
_EMPTY_HEADER_NAME = re.compile(r"\(empty header cell (\d+)\)")


def _hidden_in_ids(ids: _Text, rows: np.ndarray, file: str | None) -> list[Problem]:
    """An `id_hidden_characters` warning naming the rows whose ids hold a character a terminal
    or viewer does not show as itself (`textsafe.has_hidden`): INC-27001 and INC-27001 with a
    zero-width space are two ids that look the same. The outputs show such characters as
    `<U+hhhh>` or `\\u` escapes; the ids are kept as written. Ids of ASCII letters, digits and
    punctuation (most logs) are cleared by the least and the greatest of their bytes where the
    reader had them in Arrow (2 ms for a million ids)."""
    from slaschema.textsafe import has_hidden, shown_name

    arrow = ids.arrow
    if arrow is not None:
        chunks = arrow.chunks if isinstance(arrow, pa.ChunkedArray) else [arrow]
        plain = True
        for chunk in chunks:
            bufs = chunk.buffers()
            data = bufs[2] if len(bufs) > 2 else None
            b = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
            if len(b) and (int(b.min()) < 0x20 or int(b.max()) >= 0x7F):     # (two reductions, no temporaries)
                plain = False
        if plain:
            return []
    elif not has_hidden("".join(str(u) for u in ids.uniques)):
        return []
    bad = np.array([k for k, u in enumerate(ids.uniques) if isinstance(u, str) and has_hidden(u)], dtype=np.int64)
    if not len(bad):
        return []
    at = np.flatnonzero(np.isin(ids.codes, bad))
    named = ", ".join(str(int(r)) for r in rows[at[:5]]) + (", ..." if len(at) > 5 else "")
    first = shown_name(ids.uniques[int(bad[0])])
    return [Problem(Reason.ID_HIDDEN_CHARACTERS, f"{len(bad):,} incident id(s) hold characters a terminal or viewer "
                    f"does not show as themselves (row{'s' if len(at) > 1 else ''} {named}; the first: {first[:60]}): "
                    "two such ids can look the same; the outputs show the characters as <U+hhhh> or \\u escapes",
                    file=file, column="id", severity="warning",
                    fix="write ids with printable characters only (the ticket number as it reads)")]


def _other_separator(header: list[str]) -> str | None:
    """The separator of a header read as one cell that holds the names split by `;`, a tab or
    `|` (a CSV saved with another delimiter, as Excel does in many locales), or None."""
    if len(header) != 1:
        return None
    return next((x for x in (";", "\t", "|") if header[0].count(x) >= 3
                 and "id" in (part.strip() for part in header[0].split(x))), None)


def _separator_fix(sep: str) -> str:
    return (f"the file's cells are separated by {sep!r}, not commas: save it as comma-separated values "
            "(in Excel: CSV UTF-8)")


def _first_long_row(data: bytes) -> tuple[int, int, int, int] | None:
    """(data row, file line it starts on, its cells, the header's cells) of the first row with
    more cells than the header, rows counted as the general reader counts them
    (`_counted_rows`); None when there is none or the quoting is what is broken."""
    with _counted_rows(data) as (header, rows):
        if header is None:
            return None
        try:
            for row, line, cells in rows:
                if cells > len(header):
                    return row, line, cells, len(header)
        except csv.Error:
            return None
    return None


_BLOCK_SIZE = BLOCK_SIZE


def _read_csv_arrow(data: bytes) -> _ArrowSource | None:
    """The CSV's columns read in one pass where its cells are plain (`calculators.log_csv_plain`),
    else as an Arrow table of strings (`calculators.log_csv.read_csv_arrow`); None when the
    general reader must read it."""
    plain = read_plain(data)
    if plain is not None:
        return _ArrowSource(plain.table, plain.raw_names, plain.names, False, converted=plain.converted, n=plain.n,
                            reread=partial(_arrow_table, data))
    got = read_csv_arrow(data, _BLOCK_SIZE)
    return _ArrowSource(*got) if got is not None else None


def _arrow_table(data: bytes) -> pa.Table | None:
    """Arrow's table of strings of a CSV read in one pass (`read_plain`), for the cells of a
    column that pass kept no text of (a time column's cells as written, shown in a problem)."""
    got = read_csv_arrow(data, _BLOCK_SIZE)
    return got[0] if got is not None else None


_TOO_DEEP = "JSON nested too deeply to read (arrays or objects inside each other thousands of levels deep)"
_TOO_DEEP_FIX = "an incident is one flat object of id, scope, target, start, ... values"


class _KeyTwice(dict):
    """A JSON object in which a key is given twice (`twice`: those keys, in order): readers
    disagree on which value counts, so the log is refused rather than one of them taken."""

    twice: list[str]


def _object(items: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(items)
    if len(out) == len(items):
        return out
    twice = _KeyTwice(out)
    seen: set[str] = set()
    twice.twice = list(dict.fromkeys(k for k, _ in items if k in seen or seen.add(k)))
    return twice


def _long_int(text: str) -> int | str:
    """A JSON integer; one of more than 40 digits stays its text, as a CSV cell would (Python
    refuses to read one of more than 4,300 digits, and no field of a log needs 40)."""
    return int(text) if len(text) <= 41 else text


# one decoder: json.loads with a hook makes one per call. NaN, Infinity and -Infinity are not
# JSON; Python reads them as floats (a NaN end was a missing end: an open incident), here they
# stay text, so the column's check reports them as it reports the same cell in a CSV
_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_int=_long_int, parse_constant=str)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LINE_END = re.compile(r"\r\n|\r|\n")


def _loads(text: str, each: bool = False) -> tuple[Any, list[int]]:
    """`json.loads(text)`, objects with a key given twice as `_KeyTwice`, lone surrogates as
    U+FFFD; with the 1-based places where any was replaced: `[1]` (the document) or, with
    `each` and an array, the elements that held one."""
    if text.startswith("\ufeff"):
        return json.loads(text), []     # refused, with json.loads's own message
    data = _DECODER.decode(text)
    if not _SURROGATE_ESCAPE.search(text):
        return data, []
    if each and isinstance(data, list):
        places = []
        for i, x in enumerate(data):
            data[i], n = lone_surrogates_replaced(x)
            if n:
                places.append(i + 1)
        return data, places
    data, n = lone_surrogates_replaced(data)
    return data, [1] if n else []


def _surrogate_warning(places: list[int], fname: str, where: str) -> list[Problem]:
    """A `not_utf8` warning naming the lines (JSON Lines) or elements (an array) in which an
    escaped lone UTF-16 surrogate (`\\ud800`, not half of a pair) was read as U+FFFD, as a
    CSV's bytes that are not UTF-8 are."""
    if not places:
        return []
    shown = _named_places(places[:_NOT_UTF8_SHOWN], len(places))
    many = len(places) != 1
    return [Problem(Reason.NOT_UTF8, f"{len(places)} {where}{'s hold' if many else ' holds'} an escaped lone UTF-16 "
                    f"surrogate (\\ud800-\\udfff, not half of a pair), read as U+FFFD ({where}"
                    f"{'s' if many else ''} {shown})", file=fname, row=places[0],
                    line=places[0] if where == "line" else None, severity="warning",
                    fix="write the character itself (the log is UTF-8), or both halves of its surrogate pair")]


def _key_twice(message: str, key: str, fname: str, row: int, line: int | None) -> Problem:
    return Problem(Reason.JSON_DUPLICATE_KEY, message, file=fname, row=row, line=line, value=key,
                   fix="give each key once in an incident's object")


def _object_key_twice(obj: _KeyTwice, fname: str, row: int, line: int | None) -> Problem:
    keys = ", ".join(repr(k) for k in obj.twice)
    return _key_twice(f"an object gives the key {keys} twice", obj.twice[0], fname, row, line)


def _read_jsonl(text: str, fname: str, warnings: list[Problem] | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """The objects of a JSON Lines log; `warnings` gets the lines whose lone surrogates were
    read as U+FFFD (`_surrogate_warning`)."""
    records: list[dict] = []
    rows: list[int] = []
    problems: list[Problem] = []
    lone: list[int] = []
    # lines end at LF, CRLF or a lone CR, as the byte-level warnings count them (str.splitlines
    # also breaks at \x0c, \x1c-\x1e, U+0085, U+2028 and U+2029, which JSON allows raw in a string)
    for lineno, line in enumerate(_LINE_END.split(text), start=1):
        if not line.strip():
            continue
        try:
            obj, replaced = _loads(line)
            if replaced:
                lone.append(lineno)
        except json.JSONDecodeError as e:
            problems.append(Problem(Reason.JSON_INVALID, f"line is not JSON: {e.msg}", file=fname, row=lineno,
                                    line=lineno, col=e.colno, value=line[:80]))
            continue
        except RecursionError:
            problems.append(Problem(Reason.JSON_INVALID, _TOO_DEEP, file=fname, row=lineno, line=lineno,
                                    fix=_TOO_DEEP_FIX))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(Reason.JSON_INVALID, "each line must be a JSON object", file=fname, row=lineno,
                                    line=lineno, value=type(obj).__name__))
            continue
        if type(obj) is _KeyTwice:
            problems.append(_object_key_twice(obj, fname, lineno, lineno))
            continue
        records.append(obj)
        rows.append(lineno)
    if warnings is not None:
        warnings.extend(_surrogate_warning(lone, fname, "line"))
    if problems:
        raise InputError(problems)
    rows_a = np.asarray(rows, dtype=np.int64)
    return _records_frame(records, rows_a, fname, "line"), rows_a


def _read_json_array(text: str, fname: str, warnings: list[Problem] | None = None
                     ) -> tuple[pd.DataFrame, np.ndarray]:
    """The objects of a JSON array log; `warnings` gets the elements whose lone surrogates
    were read as U+FFFD (`_surrogate_warning`)."""
    try:
        data, lone = _loads(text, each=True)
    except json.JSONDecodeError as e:
        raise InputError([Problem(Reason.JSON_INVALID, f"not valid JSON: {e.msg}", file=fname, line=e.lineno,
                                  col=e.colno)]) from None
    except RecursionError:
        raise InputError([Problem(Reason.JSON_INVALID, _TOO_DEEP, file=fname, fix=_TOO_DEEP_FIX)]) from None
    if warnings is not None and isinstance(data, list):
        warnings.extend(_surrogate_warning(lone, fname, "element"))
    if not isinstance(data, list):
        raise InputError([Problem(Reason.JSON_INVALID, "a JSON incident log is an array of objects", file=fname,
                                  value=type(data).__name__, fix="write [ {...}, {...} ] or use JSON Lines")])
    bad = [Problem(Reason.JSON_INVALID, "array element is not an object", file=fname, row=i, value=type(x).__name__)
           if not isinstance(x, dict) else _object_key_twice(x, fname, i, None)
           for i, x in enumerate(data, start=1) if type(x) is not dict]
    if bad:
        raise InputError(bad)
    rows = np.arange(1, len(data) + 1, dtype=np.int64)
    return _records_frame(data, rows, fname, "element"), rows


def _records_frame(records: list[dict], rows: np.ndarray, fname: str, where: str) -> pd.DataFrame:
    """The objects as a frame of their keys, stripped of white space. Two keys the same but
    for white space around them (`end`, ` end`) are refused where one object gives both
    (`where`: `line` of JSON Lines or `element` of an array, at `rows`); in different objects
    they are one column named twice, which the column checks report."""
    import pandas as pd

    if not records:
        return pd.DataFrame()
    raw = pd.DataFrame.from_records(records)
    names = [str(c).strip() for c in raw.columns]
    problems = []
    for name in dict.fromkeys(n for n in names if names.count(n) > 1):
        keys = [c for c, n in zip(raw.columns, names) if n == name]
        for i in [i for i, r in enumerate(records) if sum(k in r for k in keys) > 1]:    # both given (null too)
            row = int(rows[i])
            problems.append(_key_twice(f"the object gives the key {name!r} twice, as "
                                       f"{' and '.join(repr(k) for k in keys)} (white space around a key is not "
                                       "part of its name)", name, fname, row, row if where == "line" else None))
    if problems:
        raise InputError(problems)
    raw.columns = names
    for i in range(raw.shape[1]):   # a nested object or list is a value to refuse, as text
        col = raw.iloc[:, i]
        if col.dtype == object and col.map(lambda v: isinstance(v, (dict, list))).any():
            raw.isetitem(i, col.map(lambda v: json.dumps(v) if isinstance(v, (dict, list)) else v))
    return raw


# --- the vectorised validation -------------------------------------------------------------


# --- where the cells come from: an Arrow table (CSV) or a pandas frame (JSON, records) ----------

class _ArrowSource:
    """Cells of a CSV read by pyarrow: text columns are dictionary-encoded in Arrow (one
    pass in C; the distinct values become Python strings once); time columns of the usual
    ISO 8601 forms are cast by Arrow, others parsed the general way."""

    warnings: tuple[Problem, ...] = ()      # (Arrow reads UTF-8 only: nothing was read differently)

    def __init__(self, table: pa.Table, raw_names: dict[str, str], names: list[str], quoted: bool = True,
                 converted: dict[tuple[str, str], Any] | None = None, n: int | None = None,
                 reread: Callable[[], pa.Table | None] | None = None) -> None:
        self.table = table                # the columns as read (some only, where `reread` reads them all)
        self._reread = reread
        self.raw_names = raw_names        # stripped header name -> the header cell as written
        self.names = names
        self.quoted = quoted              # the file holds a quote character (a cell may hold a line break)
        self.n = table.num_rows if n is None else n
        self._text: dict[str, _Text] = {}
        self.converted: dict[tuple[str, str], Any] = dict(converted or {})

    def _column(self, c: str) -> pa.ChunkedArray | None:
        raw = self.raw_names.get(c)
        if raw is None:
            return None
        if raw not in self.table.column_names and self._reread is not None:
            whole, self._reread = self._reread(), None
            if whole is not None and whole.num_rows == self.n:
                self.table = whole
        return self.table.column(raw) if raw in self.table.column_names else None

    def text(self, c: str) -> _Text:
        """The column as codes into its distinct cells, stripped, empty ones missing
        (`calculators.log_csv.text_column`)."""
        got = self._text.get(c)
        if got is not None:
            return got
        conv = self.converted.get(("text", c))
        if conv is None:
            col = self._column(c)
            if col is not None and len(col):
                conv = text_column(col, lazy=c in LAZY_TEXT)
        got = _Text.missing(self.n) if conv is None else _Text(conv.codes, conv.uniques, True, arrow=conv.dictionary)
        self._text[c] = got
        return got

    def prepare(self, text_columns: tuple[str, ...], time_columns: tuple[str, ...]) -> None:
        """Convert the columns present in two threads (`calculators.log_csv.convert_columns`),
        unless the background reading did already."""
        if not self.converted:
            self.converted = convert_columns(self.table, self.raw_names, text_columns, time_columns)

    def times(self, c: str, ctx: Context) -> np.ndarray:
        fast = self.converted.get(("times", c))
        if fast is not None:
            return fast
        col = self._column(c)
        if col is None:
            return np.full(self.n, NA, dtype=np.int64)
        fast = fast_times(col)
        if fast is not None:
            return fast
        import pandas as pd

        cells = pd.Series(np.asarray(col.to_numpy(zero_copy_only=False), dtype=object), dtype=object)
        return _parse_times(cells, c, ctx, ctx.options.get("assume_tz"))


class _FrameSource:
    """Cells of a pandas frame: the general CSV reader, JSON, records handed over in Python."""

    def __init__(self, raw: pd.DataFrame, warnings: list[Problem] | tuple[Problem, ...] = ()) -> None:
        self.raw = raw.reset_index(drop=True)
        self.names = list(raw.columns)
        self.n = len(raw)
        self._text: dict[str, _Text] = {}
        self.warnings = tuple(warnings)        # about the file as read (`_not_utf8_warning`)

    def text(self, c: str) -> _Text:
        if c not in self._text:
            self._text[c] = _Text.of(self.raw[c], few=c in _FEW) if c in self.raw.columns else _Text.missing(self.n)
        return self._text[c]

    def times(self, c: str, ctx: Context) -> np.ndarray:
        if c not in self.raw.columns:
            return np.full(self.n, NA, dtype=np.int64)
        return _parse_times(self.raw[c], c, ctx, ctx.options.get("assume_tz"))


# --- the vectorised validation -------------------------------------------------------------

def _first_seen(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """`pandas.factorize(values)` of a column's distinct values (strings): each value's code in
    order of first appearance, -1 for None or NaN, and the values."""
    seen: dict[Any, int] = {}
    codes = np.fromiter((-1 if v is None or (isinstance(v, float) and v != v) else seen.setdefault(v, len(seen))
                         for v in values), dtype=np.int64, count=len(values))
    uniques = np.empty(len(seen), dtype=object)
    for v, i in seen.items():
        uniques[i] = v
    return codes, uniques


class _Text:
    """A text column as codes into its distinct values: checks and lookups run once per
    distinct value (a few, even in a million rows) and reach the rows through the codes.

    `codes[i]` is -1 where the cell is missing or blank; `uniques` are the cleaned values
    (stripped, never empty). After `map` the values may repeat; `clean` keeps them distinct.
    """

    __slots__ = ("_distinct", "_values", "arrow", "codes", "uniques")

    def __init__(self, codes: np.ndarray, uniques: np.ndarray, distinct: bool = False,
                 arrow: pa.Array | None = None) -> None:
        self.codes = codes
        self.uniques = uniques
        self._values: np.ndarray | None = None
        self._distinct = distinct
        self.arrow = arrow            # `uniques` as an Arrow array, where the reader had one

    @staticmethod
    def clean(codes: np.ndarray, uniques: np.ndarray, plain: bool = False) -> _Text:
        """From raw distinct cells: stripped, blank ones missing (unless `plain`: none is
        blank or padded), then made distinct again."""
        import pandas as pd

        if plain:
            return _Text(codes, np.asarray(uniques, dtype=object), True)
        cleaned = [_clean_cell(v) for v in uniques]
        c2, u2 = pd.factorize(np.array(cleaned, dtype=object), use_na_sentinel=True)
        remap = np.append(c2.astype(np.int64), -1)
        return _Text(remap[codes], np.asarray(u2, dtype=object), True)

    @staticmethod
    def of(s: pd.Series, few: bool = False) -> _Text:
        """From a column of any cells (the general readers)."""
        import pandas as pd

        if few:
            codes, uniques = pd.factorize(s.to_numpy(dtype=object), use_na_sentinel=True)
            return _Text.clean(codes.astype(np.int64), np.asarray(uniques, dtype=object))
        codes, uniques = pd.factorize(_as_text(s).to_numpy(dtype=object), use_na_sentinel=True)
        return _Text(codes.astype(np.int64), np.asarray(uniques, dtype=object), True)

    @staticmethod
    def missing(n: int) -> _Text:
        return _Text(np.full(n, -1, dtype=np.int64), np.zeros(0, dtype=object))

    def per_row(self, per_unique, na) -> np.ndarray:
        """`per_unique[code]` for each row, `na` where the cell is missing (a column with no
        value at all gives `na`'s type, not numpy's float of an empty list)."""
        values = np.asarray(per_unique)
        if not values.size:
            values = np.asarray([], dtype=np.asarray(na).dtype)
        return np.append(values, na)[self.codes]

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
        c2, u2 = _first_seen(self.uniques)
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
            if not len(self.uniques):            # no cell given: an object array starts as all None
                self._values = np.empty(len(self.codes), dtype=object)
            else:
                self._values = np.append(self.uniques, None)[self.codes]
        return self._values

    def take(self, idx: np.ndarray) -> np.ndarray:
        return np.append(self.uniques, None)[self.codes[idx]]

    def str_array(self, keep: np.ndarray | None) -> pd.api.extensions.ExtensionArray:
        """The column as pandas' `str` dtype, without checking each cell (only the distinct values)."""
        import pandas as pd

        codes = self.codes if keep is None else self.codes[keep]
        if self.arrow is not None and isinstance(pd.array([], dtype=str), pd.arrays.ArrowStringArray):
            if len(codes) == len(self.arrow) and (codes == np.arange(len(codes))).all():
                taken = self.arrow           # every cell distinct and given (the ids): the values in order
            else:
                taken = self.arrow.take(pa.array(codes, mask=codes < 0))     # no Python strings
            return pd.arrays.ArrowStringArray(pa.chunked_array([taken]), dtype=pd.array([], dtype=str).dtype)
        return pd.array(np.asarray(self.uniques, dtype=object), dtype=str).take(codes, allow_fill=True)



def _as_text(s: pd.Series, few: bool = False) -> pd.Series:
    """Strings, stripped; empty and missing become None (object dtype).

    `few`: the column has few distinct values (scope, target, impact...), so only the
    distinct values are cleaned. Plain list comprehensions otherwise: on a million cells
    they are several times faster than the `.str` accessor.
    """
    import pandas as pd

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
    import pandas as pd

    try:
        return bool(pd.api.types.infer_dtype(s, skipna=True) in ("string", "empty"))
    except TypeError:
        return False


def _cell_str(v: Any) -> str:
    if v is None or is_missing(v):
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return str(v)


def _parse_times(s: pd.Series, column: str, ctx: Context, assume_tz: str | None) -> np.ndarray:
    """Epoch seconds (int64; missing = INT64_MIN) from strings, datetimes or ints."""
    import pandas as pd

    n = len(s)
    out = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    if n == 0:
        return out
    if pd.api.types.is_integer_dtype(s.dtype) and not s.isna().any():
        vals = s.to_numpy(dtype=np.int64)
        far = (vals < _EPOCH_MIN) | (vals > _EPOCH_MAX)
        if not far.any():
            return vals
        out[~far] = vals[~far]
        _report_far(ctx, far, column, s)
        return out
    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
        vals = s.to_numpy(dtype=float, na_value=np.nan)
        ok = ~np.isnan(vals)
        far = ok & ~((vals >= _EPOCH_MIN) & (vals <= _EPOCH_MAX))     # ±inf and 1e30 too
        ok &= ~far
        out[ok] = np.floor(vals[ok]).astype(np.int64)
        _report_far(ctx, far, column, s)
        return out
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        ok = s.notna().to_numpy()
        out[ok] = _epoch(s[ok])
        return out
    if pd.api.types.is_datetime64_dtype(s.dtype):
        ctx.report(s.notna().to_numpy(), Reason.TIMESTAMP_NAIVE, column, s.astype(str),
                "timestamp has no UTC offset", "write it with an offset (2027-02-03T10:00:00Z) or pass --assume-tz")
        return out
    obj = s.astype(object).to_numpy()
    kinds = (np.fromiter((_kind(v, pd.NaT, pd.NA) for v in obj), dtype=np.int8, count=n) if not _all_str(s)
             else None)
    if kinds is None:
        if not _parse_uniform(s, column, ctx, assume_tz, out):
            _parse_strings(_as_text(s), column, ctx, assume_tz, out, np.ones(n, dtype=bool))
        return out
    # mixed objects: ints, datetimes, strings
    is_int = kinds == 1
    if is_int.any():
        far = is_int & np.fromiter((k == 1 and not _EPOCH_MIN <= v <= _EPOCH_MAX for v, k in zip(obj, kinds)),
                                   dtype=bool, count=n)
        is_int &= ~far
        out[is_int] = np.array([int(v) for v in obj[is_int]], dtype=np.int64)
        _report_far(ctx, far, column, pd.Series(obj))
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
                        ctx.report(_one(n, i), Reason.TIMESTAMP_INVALID, column, pd.Series(obj.astype(str)),
                                f"local time does not exist or is ambiguous in {assume_tz}",
                                "write the time with a UTC offset")
                naive[:] = False
            ctx.report(naive, Reason.TIMESTAMP_NAIVE, column, pd.Series(obj.astype(str)), "timestamp has no UTC offset",
                    "write it with an offset (2027-02-03T10:00:00Z) or pass --assume-tz")
    is_str = kinds == 3
    if is_str.any():
        text = pd.Series(np.array([(v.strip() or None) if k == 3 else None for v, k in zip(obj, kinds)],
                                  dtype=object))
        _parse_strings(text, column, ctx, assume_tz, out, is_str)
    bad = kinds == 4
    ctx.report(bad, Reason.TIMESTAMP_INVALID, column, pd.Series(obj).map(_cell_str), "not a timestamp",
            "write ISO 8601 with an offset, e.g. 2027-02-03T10:00:00Z")
    return out


# epoch seconds a JSON log may give: 0001-01-01 .. 9999-12-31T23:59:59 UTC, the instants an
# ISO 8601 timestamp writes (beyond int64 a number wrapped, or became a missing time)
_EPOCH_MIN, _EPOCH_MAX = -62_135_596_800, 253_402_300_799


def _report_far(ctx: Context, far: np.ndarray, column: str, shown: pd.Series) -> None:
    ctx.report(far, Reason.TIMESTAMP_INVALID, column, shown.map(_cell_str),
               "a number of epoch seconds outside the years 1 to 9999 (UTC)",
               "write ISO 8601 with an offset, e.g. 2027-02-03T10:00:00Z")


def _one(n: int, i: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[i] = True
    return m


def _kind(v: Any, nat: Any, na: Any) -> int:
    """0 missing (None, NaN, pandas' `nat` and `na`), 1 int, 2 datetime, 3 str, 4 anything else."""
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is nat or v is na:
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
    import pandas as pd

    unit = getattr(ts.dt, "unit", "ns")
    per = _NS_PER_UNIT[unit]
    return ts.dt.tz_convert("UTC").array.asi8 // per


_INVALID_FIX = "write e.g. 2027-02-03T10:00:00Z or 2027-02-03T04:00:00-06:00"
_LEAP_SECOND = re.compile(r"[T ]\d\d:?\d\d:?60(?:[.,]\d+)?(?:[Zz]|[+-]\d\d(?::?\d\d)?)?\s*$")
_LOWER_DESIGNATOR = re.compile(r"\d{4}-?\d\d-?\d\dt|\d(?:[.,]\d+)?z\s*$")


def _invalid_time_fix(ctx: Context, i: int, v: Any) -> str:
    """The fix of a timestamp that is not ISO 8601, for the two forms RFC 3339 allows and slakit
    does not read said apart: a leap second and a lower-case t or z."""
    if isinstance(v, str) and _LEAP_SECOND.search(v):
        return "leap seconds are not read: write 23:59:59 instead"
    if isinstance(v, str) and _LOWER_DESIGNATOR.search(v):
        return "write the T between date and time, and the Z, in upper case: e.g. 2027-02-03T10:00:00Z"
    return _INVALID_FIX


_NAIVE_FIX = "write it with an offset (2027-02-03T10:00:00Z) or pass --assume-tz ZONE"


def _parse_uniform(s: pd.Series, column: str, ctx: Context, assume_tz: str | None, out: np.ndarray) -> bool:
    """Fast path for a column whose times all carry the same offset, or all carry none.

    pandas parses such a column in one C pass; it raises when offsets differ or when
    naive and aware times are mixed, and then the caller takes the per-cell path.
    """
    import pandas as pd

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
        ctx.report(invalid, Reason.TIMESTAMP_INVALID, column, s, "not an ISO 8601 timestamp", _invalid_time_fix)
    if aware:
        out[ok] = _epoch(parsed[ok])
        return True
    if not ok.any():
        return True
    if assume_tz is None:
        ctx.report(ok, Reason.TIMESTAMP_NAIVE, column, s, "timestamp has no UTC offset", _NAIVE_FIX)
        return True
    local = parsed[ok].dt.tz_localize(assume_tz, ambiguous="NaT", nonexistent="NaT")
    valid = local.notna().to_numpy()
    idx = np.flatnonzero(ok)
    out[idx[valid]] = _epoch(local[valid])
    odd = np.zeros(len(s), dtype=bool)
    odd[idx[~valid]] = True
    ctx.report(odd, Reason.TIMESTAMP_INVALID, column, s,
            f"this local time does not exist or is ambiguous in {assume_tz} (daylight saving change)",
            "write the time with a UTC offset")
    return True


def _parse_strings(text: pd.Series, column: str, ctx: Context, assume_tz: str | None,
                   out: np.ndarray, where: np.ndarray) -> None:
    import pandas as pd

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
        ctx.report(bad, Reason.TIMESTAMP_INVALID, column, text, "not an ISO 8601 timestamp",
                _invalid_time_fix)
    if naive.any():
        idx = np.flatnonzero(naive)
        parsed = pd.to_datetime(text[naive], format="ISO8601", errors="coerce")
        if isinstance(parsed.dtype, pd.DatetimeTZDtype):  # pragma: no cover - defensive
            parsed = parsed.dt.tz_localize(None)
        ok = parsed.notna().to_numpy()
        unparsable = np.zeros(len(text), dtype=bool)
        unparsable[idx[~ok]] = True
        ctx.report(unparsable, Reason.TIMESTAMP_INVALID, column, text, "not an ISO 8601 timestamp",
                _invalid_time_fix)
        good_idx = idx[ok]
        if assume_tz:
            local = parsed[ok].dt.tz_localize(assume_tz, ambiguous="NaT", nonexistent="NaT")
            valid = local.notna().to_numpy()
            out[good_idx[valid]] = _epoch(local[valid])
            odd = np.zeros(len(text), dtype=bool)
            odd[good_idx[~valid]] = True
            ctx.report(odd, Reason.TIMESTAMP_INVALID, column, text,
                    f"this local time does not exist or is ambiguous in {assume_tz} (daylight saving change)",
                    "write the time with a UTC offset")
        else:
            nv = np.zeros(len(text), dtype=bool)
            nv[good_idx] = True
            ctx.report(nv, Reason.TIMESTAMP_NAIVE, column, text, "timestamp has no UTC offset",
                    "write it with an offset (2027-02-03T10:00:00Z) or pass --assume-tz ZONE")


def _iso(sec: int) -> str:
    return datetime.fromtimestamp(int(sec), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_TARGET_INDEX: dict[int, tuple[Any, Any]] = {}


def _target_index(topo: ResolvedTopology | None) -> _TargetIndex | None:
    """One `_TargetIndex` per topology object (simulations load thousands of logs on one);
    None without a topology (a log read with no contract)."""
    import weakref

    if topo is None:
        return None
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


class UnitIds:
    """A scope's unit ids in topology order, looked up by id (`get_indexer` as a pandas
    Index of distinct ids answers it: each value's position, -1 for none)."""

    __slots__ = ("_at", "_ids")

    def __init__(self, ids: list[str]) -> None:
        self._ids = list(ids)
        self._at: dict[str, int] = {}
        for i, u in enumerate(self._ids):
            self._at.setdefault(u, i)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and value in self._at

    def get_indexer(self, values: Any) -> np.ndarray:
        at = self._at
        try:        # the keys are str: any other hashable value finds none
            return np.fromiter(map(at.get, values, itertools.repeat(-1, len(values))), dtype=np.int64,
                               count=len(values))
        except TypeError:           # a value that cannot be hashed (a list)
            return np.fromiter((at.get(v, -1) if isinstance(v, str) else -1 for v in values), dtype=np.int64,
                               count=len(values))

    def positions_of(self, codes: np.ndarray, uniques: Any) -> np.ndarray:
        """`get_indexer(uniques)[codes]` (-1 for a code of -1, a missing value), looking up
        only the values the codes name: a scope's rows name a few of a log's distinct targets."""
        wanted = np.zeros(len(uniques) + 1, dtype=bool)      # the last entry: code -1
        wanted[codes] = True
        at = np.flatnonzero(wanted[:-1])
        table = np.full(len(uniques) + 1, -1, dtype=np.int64)
        if len(at):
            table[at] = self.get_indexer(uniques[at])
        return table[codes]

    def tolist(self) -> list[str]:
        return list(self._ids)


class _TargetIndex:
    """Topology lookups by unit id, plus each unit's smallest GPUs-per-node."""

    def __init__(self, topo: ResolvedTopology) -> None:
        self.topo = topo
        self.units = {s: UnitIds(topo.units(s)) for s in SCOPES}
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



# --- the column spec: what each column is and what is checked ------------------------------------

def _text(ctx: Context, c: str) -> _Text:
    t = ctx.source.text(c)
    ctx.raw[c] = t
    return t


def _lower(ctx: Context, c: str) -> _Text:
    return _text(ctx, c).map(str.lower)


def _times(ctx: Context, c: str) -> np.ndarray:
    return ctx.source.times(c, ctx)


def _scope(ctx: Context, c: str) -> _Text:
    scope = _lower(ctx, c)
    ctx.derived["scope_code"] = scope.per_row([SCOPES.index(v) if v in SCOPES else -1 for v in scope.uniques], -1)
    return scope


def _targets(ctx: Context, c: str) -> _Text:
    """Each target looked up in its scope's units; node targets may be hostlists. Lookups
    run on the distinct targets only (a few thousand even in a million-row log), then
    spread by code. Leaves the unit positions, the expanded hostlists and the unknown
    targets (with why) for the checks of this column and of gpus_affected."""
    target = _text(ctx, c)
    idx: _TargetIndex | None = ctx.options["index"]
    if idx is None:
        return _targets_as_written(ctx, target)
    scope_code = ctx.derived["scope_code"]
    t_codes, t_uniques = target.codes, target.uniques
    has_target = t_codes >= 0
    node_lists: dict[int, list[str]] = {}
    why: dict[int, str] = {}                            # hostlist rows that cannot be expanded
    # each (scope, distinct target) the rows name is looked up once, and every row's position
    # read from that table in one gather (a row without a scope or a target reads -1)
    # (rows: the scopes, then none; columns: the distinct targets, then none)
    width = len(t_uniques) + 1
    pair = np.where(scope_code >= 0, scope_code, len(SCOPES)) * width + np.where(has_target, t_codes, width - 1)
    named = np.zeros((len(SCOPES) + 1, width), dtype=bool)
    named.reshape(-1)[pair] = True
    table = np.full((len(SCOPES) + 1, width), -1, dtype=np.int64)
    for k, s in enumerate(SCOPES):
        at = np.flatnonzero(named[k, :-1])
        if len(at):
            table[k, at] = idx.units[s].get_indexer(t_uniques[at])
    unit_pos = table.reshape(-1)[pair]
    in_scope = (scope_code >= 0) & has_target
    tgt_ok = in_scope & (unit_pos >= 0)
    unknown_all = in_scope & ~tgt_ok
    node = SCOPES.index("node")
    if unknown_all.any():
        tv = target.values()
        lists = [i for i in np.flatnonzero(unknown_all & (scope_code == node)).tolist() if "[" in tv[i] or "," in tv[i]]
        _within_node_budget(ctx, [tv[i] for i in lists], hostlist.row_budget(len(idx.units["node"])))
        expanded: dict[str, tuple[list[str] | None, str]] = {}
        for i in lists:
            t = tv[i]
            if t not in expanded:
                expanded[t] = _expand_nodes(t, idx.units["node"])
            names, reason = expanded[t]
            if names is not None:
                node_lists[i] = names
                unknown_all[i] = False
                tgt_ok[i] = True
            else:
                why[i] = reason
    ctx.derived.update(unit_pos=unit_pos, node_lists=node_lists, target_why=why, target_unknown=unknown_all,
                       target_ok=tgt_ok, suggest={s: _suggest(idx.units[s]) for s in SCOPES})
    return target


def _within_node_budget(ctx: Context, exprs: list[str], per_row: int) -> None:
    """Raise `hostlist_too_large` when the hostlists of the node rows (`exprs`, one a row) name
    more nodes together than the node budget: counted per distinct expression before any is
    expanded. Each row's list is bounded by the topology (`per_row`: a row naming more is an
    unknown target, and not counted here), but not their sum: 300 rows naming all 12,600
    nodes of a fleet (22 KB of log) made 3.8 million rows and 1.8 GB."""
    rows: dict[str, int] = {}
    for t in exprs:
        rows[t] = rows.get(t, 0) + 1
    sizes: dict[str, int] = {}
    for t in rows:
        try:
            names = hostlist.count(t)
        except hostlist.HostlistError:     # not a valid hostlist: an unknown target, said by the checks
            continue
        if names <= per_row:
            sizes[t] = names
    total = sum(sizes[t] * rows[t] for t in sizes)
    budget = hostlist.max_nodes()
    if total <= budget:
        return
    top = sorted(sizes, key=lambda t: -sizes[t] * rows[t])[:3]
    shown = "; ".join(f"{cut(t, 40)} ({sizes[t]:,} nodes) in {rows[t]:,} row(s)"
                      for t in top)
    raise InputError([Problem(
        Reason.HOSTLIST_TOO_LARGE, f"the node rows' hostlists name {total:,} nodes together, more than the node "
        f"budget of {budget:,}; the most from {shown}", file=ctx.file, column="target", value=total,
        fix="write an outage of a whole rack, cluster or site as one row with that scope and its id, not as a "
            "hostlist of its nodes; a log that needs more takes `slakit --max-nodes N`")])


def _targets_as_written(ctx: Context, target: _Text) -> _Text:
    """`_targets` with no topology: every non-empty target of a known scope is a unit as
    written, but a node target with `[` or `,`, which is a hostlist, expanded; one that is not
    a valid hostlist is unknown (with why). The names all rows expand to are counted before
    any is expanded: more than the node budget together is `hostlist_too_large` for the file."""
    n = ctx.n
    scope_code = ctx.derived["scope_code"]
    t_codes, t_uniques = target.codes, target.uniques
    in_scope = (scope_code >= 0) & (t_codes >= 0)
    node_rows = in_scope & (scope_code == SCOPES.index("node"))
    lists = np.zeros(len(t_uniques), dtype=bool)          # the distinct targets that are hostlists
    rows_of = np.zeros(len(t_uniques), dtype=np.int64)    # node rows naming each distinct target
    np.add.at(rows_of, t_codes[node_rows], 1)
    for k in np.flatnonzero(rows_of).tolist():
        lists[k] = "[" in t_uniques[k] or "," in t_uniques[k]
    names_of: dict[int, int] = {}
    bad: dict[int, str] = {}
    for k in np.flatnonzero(lists).tolist():
        try:
            names_of[k] = hostlist.count(t_uniques[k])
        except hostlist.HostlistError as e:
            bad[k] = f"target is not a valid hostlist: {e}"
    budget = hostlist.max_nodes()
    total = int(rows_of.sum()) + sum((names - 1) * int(rows_of[k]) for k, names in names_of.items())
    if total > budget:
        raise InputError([Problem(Reason.HOSTLIST_TOO_LARGE, f"the node rows name {total:,} nodes together; one log "
                                  f"read without a contract may name at most {budget:,}", file=ctx.file,
                                  column="target", value=total,
                                  fix="check the targets; a larger cluster needs `slakit --max-nodes N`")])
    expanded: dict[int, list[str]] = {}
    for k in names_of:
        try:
            expanded[k] = list(dict.fromkeys(hostlist.expand(t_uniques[k], limit=budget)))
        except hostlist.HostlistError as e:
            bad[k] = f"target is not a valid hostlist: {e}"
    node_lists: dict[int, list[str]] = {}
    why: dict[int, str] = {}
    unknown = np.zeros(n, dtype=bool)
    if bad or expanded:
        for i in np.flatnonzero(node_rows & lists[np.maximum(t_codes, 0)]).tolist():
            k = int(t_codes[i])
            if k in bad:
                why[i] = bad[k]
                unknown[i] = True
            else:
                node_lists[i] = expanded[k]           # rows with the same expression share one list
    ctx.derived.update(unit_pos=np.full(n, -1, dtype=np.int64), node_lists=node_lists, target_why=why,
                       target_unknown=unknown, target_ok=in_scope & ~unknown, suggest=None)
    return target


def _unknown_target_message(ctx: Context, i: int, v: Any) -> str:
    if i in ctx.derived["target_why"]:
        return ctx.derived["target_why"][i]
    return f"no {SCOPES[ctx.derived['scope_code'][i]]} with this id in the contract's topology"


def _unknown_target_fix(ctx: Context, i: int, v: Any) -> str | None:
    if i in ctx.derived["target_why"]:
        if ctx.derived["suggest"] is None:
            return "write one node id or a hostlist (e.g. r01-n07 or r01-n[03-05])"
        return "use node ids from the contract's topology (e.g. r01-n07 or r01-n[03-05])"
    return ctx.derived["suggest"][SCOPES[ctx.derived["scope_code"][i]]](i, v)


def _gpus(ctx: Context, c: str) -> _Text:
    """The GPU counts as numbers; leaves which cells are given, whole numbers and their
    values, and each row's largest allowed count (the target's smallest GPUs per node)."""
    g_text = _text(ctx, c)
    idx: _TargetIndex | None = ctx.options["index"]
    present = ~g_text.isna()
    # the numbers, whether whole, and their values worked out per distinct cell, then spread
    num = _numbers(g_text.uniques)
    whole = np.nan_to_num(num)
    not_int_u = np.isnan(num) | (np.floor(whole) != whole)
    # huge counts (1e400 reads as inf) stay huge, and out of range, without an invalid cast
    values_u = np.clip(np.where(not_int_u, 0, whole), -2.0**62, 2.0**62).astype(np.int64)
    not_int = g_text.per_row(not_int_u, False)
    values = g_text.per_row(values_u, 0)
    limit = np.full(ctx.n, np.iinfo(np.int64).max, dtype=np.int64)
    check = np.flatnonzero(present & ~not_int)            # the rows with a whole number
    scope_code, unit_pos = ctx.derived["scope_code"], ctx.derived["unit_pos"]
    if idx is None:              # no topology: no upper bound (the GPUs per node are not known)
        ctx.derived.update(gpus_present=present, gpus_not_int=not_int, gpus_values=values, gpus_limit=limit)
        return g_text
    sc, pos = scope_code[check], unit_pos[check]
    ok = ctx.derived["target_ok"][check] & (pos >= 0)
    for k, s in enumerate(SCOPES):
        m = ok & (sc == k)
        if m.any():
            limit[check[m]] = idx.min_gpus[s][pos[m]]
    per_list: dict[int, int] = {}
    for i, names in ctx.derived["node_lists"].items():
        key = id(names)   # rows with the same expression share one list
        if key not in per_list:
            per_list[key] = int(idx.min_gpus["node"][idx.units["node"].get_indexer(names)].min())
        limit[i] = per_list[key]
    ctx.derived.update(gpus_present=present, gpus_not_int=not_int, gpus_values=values, gpus_limit=limit)
    return g_text


_DIGITS = re.compile(r"([0-9]{1,15})(?:\.0*)?")


def _numbers(values: Any) -> np.ndarray:
    """The cells as floats, NaN where not a number, as `pandas.to_numeric(errors="coerce")`
    reads them: counts written as plain digits, or as a whole number with zero decimals
    (`8.0`, as a spreadsheet or a float column writes them), directly; anything else by pandas."""
    matches = [_DIGITS.fullmatch(v) if isinstance(v, str) else None for v in values]
    if all(m is not None for m in matches):
        return np.array([float(int(m.group(1))) for m in matches], dtype=float)
    import pandas as pd

    return pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _duplicate_ids(ctx: Context) -> np.ndarray | None:
    """Every occurrence of an id after the first (ids are distinct values of the codes)."""
    ids: _Text = ctx.values["id"]
    present = ~ids.isna()
    if int(present.sum()) == len(ids.uniques):
        return None
    first = first_rows(ids.codes) & present
    ctx.derived["first_row"] = dict(zip(ids.take(np.flatnonzero(first)).tolist(), ctx.rows[first].tolist()))
    return ~first & present


def _one_of(column: str, allowed: tuple[str, ...]) -> Any:
    def test(ctx: Context) -> np.ndarray:
        t: _Text = ctx.values[column]
        return t.per_row([v not in allowed for v in t.uniques], False)
    return test


def _missing(column: str) -> Any:
    return lambda ctx: ctx.values[column].isna()


def _end_before_start(ctx: Context) -> np.ndarray:
    st, en = ctx.values["start"], ctx.values["end"]
    return (st != NA) & (en != NA) & (en < st)


def _start_missing(ctx: Context) -> np.ndarray:
    return (ctx.values["start"] == NA) & ~ctx.flagged.get("start", np.zeros(ctx.n, dtype=bool))


def _gpus_out_of_range(ctx: Context) -> np.ndarray:
    d = ctx.derived
    v = d["gpus_values"]
    return d["gpus_present"] & ~d["gpus_not_int"] & ((v < 1) | (v > d["gpus_limit"]))


def _gpus_needed(ctx: Context) -> np.ndarray | None:
    if not ctx.options["gpus_required"]:
        return None
    impact: _Text = ctx.values["impact"]
    return impact.per_row([v == "degraded" for v in impact.uniques], False) & ~ctx.derived["gpus_present"]


def _gpus_limit_message(ctx: Context, i: int, v: Any) -> str:
    limit = int(ctx.derived["gpus_limit"][i])
    return f"gpus_affected must be between 1 and {limit if limit < 2**62 else 'the GPUs per node'}"


def _cells_as_written(c: str) -> Callable[[Context], _Text]:
    """`Check.show` for a time column: its cells as the log writes them (stripped), not the
    parsed epoch seconds."""
    return lambda ctx: ctx.source.text(c)


def _iso_pair(ctx: Context, i: int, v: Any) -> str:
    return f"end is before start ({_iso(ctx.values['end'][i])} < {_iso(ctx.values['start'][i])})"


_TIME_FIX = "write when the fault began, e.g. 2027-02-03T10:00:00Z"
_UNKNOWN_SHOWN = 20            # unknown columns warned of one by one (the rest in one warning)
_SCOPE_FIX = "write node, rack, cluster or site: the level of the unit that was down"

SPEC: tuple[Column, ...] = (
    Column("id", _text, required=True, checks=(
        Check(Reason.MISSING_ID, _missing("id"), "incident id is empty",
              "give every incident a unique id (the ticket number)", show=None),
        Check(Reason.DUPLICATE_ID, _duplicate_ids,
              lambda ctx, i, v: f"incident id {v!r} is already used in row {ctx.derived['first_row'][v]}",
              "incident ids must be unique"),
    )),
    Column("scope", _scope, required=True, checks=(
        Check(Reason.MISSING_VALUE, _missing("scope"), "scope is empty", _SCOPE_FIX, show=None),
        Check(Reason.UNKNOWN_SCOPE, lambda ctx: ~ctx.values["scope"].isna() & (ctx.derived["scope_code"] < 0),
              "scope must be node, rack, cluster or site", _SCOPE_FIX),
    )),
    Column("target", _targets, required=True, checks=(
        Check(Reason.MISSING_VALUE, _missing("target"), "target is empty",
              "write the id of the unit that was down, as the contract's topology names it (a node may be "
              "a hostlist such as r01-n[03-05])", show=None),
        Check(Reason.UNKNOWN_TARGET, lambda ctx: ctx.derived["target_unknown"], _unknown_target_message,
              _unknown_target_fix),
    )),
    Column("start", _times, required=True, checks=(
        Check(Reason.MISSING_VALUE, _start_missing, "start is empty", _TIME_FIX, show=None),
    )),
    Column("end", _times, checks=(
        Check(Reason.END_BEFORE_START, _end_before_start, _iso_pair, "swap or correct the times",
              show=_cells_as_written("end")),
    )),
    Column("impact", _lower, default="down", checks=(
        Check(Reason.UNKNOWN_IMPACT, _one_of("impact", IMPACTS), "impact must be down or degraded",
              "leave it empty for down"),
    )),
    Column("gpus_affected", _gpus, checks=(
        Check(Reason.GPUS_AFFECTED_RANGE, lambda ctx: ctx.derived["gpus_not_int"],
              "gpus_affected must be a whole number", "write how many GPUs of the node are lost, e.g. 2"),
        Check(Reason.GPUS_AFFECTED_RANGE, _gpus_out_of_range, _gpus_limit_message,
              "write how many GPUs of the node are lost, from 1 to its GPUs per node (empty: all of them)"),
        Check(Reason.MISSING_VALUE, _gpus_needed,
              "a degraded incident needs gpus_affected (the contract counts degraded time proportionally)",
              "write how many GPUs of the node are lost", show=None),
    )),
    Column("category", _text, default=DEFAULT_CATEGORY),
    Column("notice_at", _times),
    Column("severity", _lower, checks=(
        Check(Reason.UNKNOWN_SEVERITY, _one_of("severity", SEVERITIES), "severity must be sev1, sev2, sev3 or sev4",
              "write sev1 (most severe) to sev4, or leave it empty"),
    )),
    Column("detected_at", _times),
    Column("reported_at", _times),
    Column("responded_at", _times),
    Column("resolved_at", _times),
    Column("cause", _text),
    Column("ticket", _text),
)
assert tuple(c.name for c in SPEC) == COLUMNS and tuple(c.name for c in SPEC if c.required) == REQUIRED


def _build(source: _FrameSource | _ArrowSource, rows: np.ndarray, topo: ResolvedTopology | None, *,
           file: str | None, sha256: str | log_prefetch.Digest | None, assume_tz: str | None,
           skip_bad_rows: bool, gpus_required: bool) -> IncidentLog:
    """Check the header, run `SPEC` over the cells and build the log."""
    if assume_tz is not None:
        try:
            ZoneInfo(assume_tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise InputError([Problem(Reason.UNKNOWN_TIMEZONE, f"unknown time zone {assume_tz!r}", file=file,
                                      value=assume_tz, fix="use an IANA name such as America/Chicago or UTC")]) from None
    n = source.n
    present = source.names
    file_problems: list[Problem] = []
    warns: list[Problem] = list(source.warnings)
    # pandas renames a repeated CSV header to `name.1`, `name.2`, ...
    repeated = {c: m.group(1) for c in present if (m := _MANGLED.fullmatch(c)) and m.group(1) in COLUMNS
                and m.group(1) in present}
    unknown = [c for c in present if c not in COLUMNS and c not in repeated]
    for c in unknown[:_UNKNOWN_SHOWN]:
        empty = _EMPTY_HEADER_NAME.fullmatch(c)
        if empty:
            warns.append(Problem(Reason.UNKNOWN_COLUMN, f"the header's cell {empty.group(1)} is empty: its column is "
                                 "ignored", file=file, severity="warning", fix="name the column, or remove it"))
            continue
        close = difflib.get_close_matches(c, COLUMNS, n=1, cutoff=0.6) if len(c) <= 100 else []
        name = cut(c)                                         # (a header cell may be megabytes long)
        warns.append(Problem(Reason.UNKNOWN_COLUMN, f"column {name!r} is not part of the incident log format; "
                             "it is ignored", file=file, column=name, value=name, severity="warning",
                             fix=f"did you mean {close[0]!r}?" if close else None))
    if len(unknown) > _UNKNOWN_SHOWN:       # one warning for the rest (a header of thousands of names)
        warns.append(Problem(Reason.UNKNOWN_COLUMN, f"{len(unknown) - _UNKNOWN_SHOWN:,} more columns are not part of "
                             "the incident log format; they are ignored", file=file, severity="warning",
                             value=len(unknown) - _UNKNOWN_SHOWN))
    counts = Counter(present)              # (a header of 40,000 names: no count of each over all of them)
    for c in sorted(set(repeated.values()) | {c for c, k in counts.items() if k > 1}):
        file_problems.append(Problem(Reason.DUPLICATE_COLUMN, f"column {c!r} appears more than once", file=file,
                                     column=c, value=c, fix="keep one column of each name"))
    if n or len(present):
        sep = _other_separator(present)
        for c in REQUIRED:
            if c not in present:
                fix = ("the header needs id,scope,target,start (plus end, impact, category, ... as needed)"
                       if sep is None else _separator_fix(sep))
                file_problems.append(Problem(Reason.MISSING_COLUMN, f"required column {c!r} is missing", file=file,
                                             column=c, fix=fix))
    if file_problems:
        raise InputError(file_problems + warns)
    if n == 0:
        if file is not None:
            warns.append(Problem(Reason.EMPTY_LOG, "the incident log has no incidents", file=file,
                                 severity="warning"))
        return IncidentLog(_empty_columns(), [], file, sha256, warns)

    if isinstance(source, _ArrowSource):
        source.prepare(TEXT_CONVERTED, TIME_COLUMNS)
    ctx = validate(SPEC, Context(source, rows, file=file, options={
        "assume_tz": assume_tz, "gpus_required": gpus_required, "index": _target_index(topo)}))
    v = ctx.values
    warns += _hidden_in_ids(v["id"], rows, file)
    problems = sorted(ctx.problems, key=lambda p: (p.row or 0, COLUMNS.index(p.column)
                                                   if p.column in COLUMNS else 99))
    if problems and not skip_bad_rows:
        raise InputError(problems + warns)
    keep = ~ctx.bad
    skipped = problems if skip_bad_rows else []
    all_kept = not ctx.bad.any()
    kept = None if all_kept else keep

    def pick(a: np.ndarray) -> np.ndarray:
        return a if all_kept else a[keep]

    g_present = ctx.derived["gpus_present"]
    ints = {"row": pick(rows), "start": pick(v["start"]),
            **{c: pick(v[c]) for c in OPTIONAL_TIMES},
            "gpus_affected": pick(np.where(g_present, ctx.derived["gpus_values"], NA))}
    texts = {c: v[c] for c in ("id", "scope", "target", "impact", "category", "severity", "cause", "ticket")}
    # the codes the frame's text columns are built from, for the calculators (`IncidentLog.coded`)
    coded = {c: v[c].distinct().subset(kept) for c in ("id", "scope", "target", "impact", "category", "severity")}
    codes = {c: (t.codes, t.uniques) for c, t in coded.items()}
    n_rows = int(keep.sum())
    expand: tuple[np.ndarray, dict[int, list[str]]] | None = None
    node_lists = ctx.derived["node_lists"]
    if node_lists:
        kept_pos = np.flatnonzero(keep)
        local = {int(np.searchsorted(kept_pos, i)): names for i, names in node_lists.items() if keep[i]}
        if local:
            counts = np.ones(n_rows, dtype=np.int64)
            for j, names in local.items():
                counts[j] = len(names)
            expand = (counts, local)
    columns_ints = ints
    repeat: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None = None
    if expand is not None:
        # one row per node of a hostlist: the incident's row repeated, each repeat naming its node
        at = np.repeat(np.arange(len(expand[0])), expand[0])
        columns_ints = {c: a[at] for c, a in ints.items()}
        codes = {c: (t_codes[at], uniques) if c != "target" else _expanded_targets(t_codes[at], uniques, *expand)
                 for c, (t_codes, uniques) in codes.items()}
        repeat = (at, codes["target"])
    make = partial(_make_frame, ints, texts, kept, repeat, isinstance(source, _FrameSource))
    # the targets' positions the checks looked up, for the engine (a hostlist's repeats: its nodes')
    positions = None
    if topo is not None:
        pos = pick(ctx.derived["unit_pos"])
        if repeat is not None:
            counts, local = expand
            pos = pos[repeat[0]]
            first = np.cumsum(counts) - counts
            nodes = _target_index(topo).units["node"]
            for j, names in local.items():
                pos[first[j]:first[j] + len(names)] = nodes.get_indexer(names)
        positions = (topo, pos)
    columns = LoadedColumns(len(columns_ints["row"]), FRAME_COLUMNS, columns_ints, NA, codes, make, positions)
    return IncidentLog(columns, skipped, file, sha256, warns)


def _expanded_targets(codes: np.ndarray, uniques: np.ndarray, counts: np.ndarray,
                      local: dict[int, list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """The target codes after a hostlist's rows were repeated, one per node (`codes`: the
    row's own code on each repeat), each repeat naming its node: renumbered in order of first
    appearance, as the frame's target column would be factorised."""
    codes = codes.copy()
    at = {u: i for i, u in enumerate(uniques.tolist())}
    names = list(uniques.tolist())
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for j, nodes in local.items():
        for k, node in enumerate(nodes):
            c = at.get(node)
            if c is None:
                c = at[node] = len(names)
                names.append(node)
            codes[starts[j] + k] = c
    if not len(codes):
        return codes, np.zeros(0, dtype=object)
    used, first = np.unique(codes, return_index=True)
    order = used[np.argsort(first)]          # the codes in order of first appearance
    remap = np.full(len(names), -1, dtype=np.int64)
    remap[order] = np.arange(len(order), dtype=np.int64)
    values = np.empty(len(order), dtype=object)
    values[:] = [names[i] for i in order.tolist()]
    return remap[codes], values


def _make_frame(ints: dict[str, np.ndarray], texts: dict[str, _Text], kept: np.ndarray | None,
                repeat: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None, copy: bool) -> pd.DataFrame:
    """The log's frame (`IncidentLog.frame`) from the columns `_build` checked: text columns
    as pandas' `str` dtype (Arrow strings where they were read by Arrow), times as nullable
    Int64; `repeat`: where hostlist targets were expanded, the row each frame row repeats and
    the expanded targets' codes and values (`_expanded_targets`)."""
    import pandas as pd

    def na_int(a: np.ndarray) -> pd.arrays.IntegerArray:
        missing = a == NA
        return pd.arrays.IntegerArray(np.where(missing, 0, a), missing)

    def objects(c: str) -> pd.Series:
        values = texts[c].values()
        return pd.Series(values if kept is None else values[kept], dtype=object, copy=False)

    frame = pd.DataFrame({
        "id": texts["id"].str_array(kept),
        "row": ints["row"],
        "scope": texts["scope"].str_array(kept),
        "target": texts["target"].str_array(kept),
        "start": ints["start"],
        "end": na_int(ints["end"]),
        "impact": texts["impact"].str_array(kept),
        "gpus_affected": na_int(ints["gpus_affected"]),
        "category": texts["category"].str_array(kept),
        "notice_at": na_int(ints["notice_at"]),
        "detected_at": na_int(ints["detected_at"]),
        "reported_at": na_int(ints["reported_at"]),
        "responded_at": na_int(ints["responded_at"]),
        "resolved_at": na_int(ints["resolved_at"]),
        "severity": objects("severity"),
        "cause": objects("cause"),
        "ticket": objects("ticket"),
    }, copy=copy)   # a caller's columns (from_records) are copied
    if repeat is not None:
        at, (t_codes, t_values) = repeat
        frame = frame.take(at).reset_index(drop=True)
        frame["target"] = pd.Series(np.append(t_values, None)[t_codes], dtype=str)
    return frame


def _expand_nodes(expr: str, nodes: UnitIds) -> tuple[list[str] | None, str]:
    try:
        names = hostlist.expand(expr, limit=hostlist.row_budget(len(nodes)))
    except hostlist.HostlistError as e:
        return None, f"target is not a valid hostlist: {e}"
    missing = [x for x in names if x not in nodes]
    if missing:
        return None, f"hostlist names nodes not in the contract's topology: {hostlist.compress(missing)}"
    return list(dict.fromkeys(names)), ""


def _suggest(units: UnitIds):
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


def _empty_columns() -> LoadedColumns:
    """The columns of a log without incidents, as the loader hands over a log's (its frame,
    `empty_frame`, made on first use): `slakit credits` on a quarter without incidents needs
    no pandas either."""
    none = np.zeros(0, dtype=np.int64)
    ints = {c: none for c in ("row", *TIME_COLUMNS, "gpus_affected")}
    codes = {c: (none, np.zeros(0, dtype=object))
             for c in ("id", "scope", "target", "impact", "category", "severity", "cause", "ticket")}
    return LoadedColumns(0, FRAME_COLUMNS, ints, NA, codes, empty_frame)


def empty_frame() -> pd.DataFrame:
    """A frame with the log's columns and dtypes and no rows."""
    import pandas as pd

    ints = pd.arrays.IntegerArray(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
    return pd.DataFrame({
        "id": pd.Series([], dtype=str), "row": np.zeros(0, dtype=np.int64), "scope": pd.Series([], dtype=str),
        "target": pd.Series([], dtype=str), "start": np.zeros(0, dtype=np.int64), "end": ints.copy(),
        "impact": pd.Series([], dtype=str), "gpus_affected": ints.copy(), "category": pd.Series([], dtype=str),
        "notice_at": ints.copy(), "detected_at": ints.copy(), "reported_at": ints.copy(),
        "responded_at": ints.copy(), "resolved_at": ints.copy(), "severity": pd.Series([], dtype=object),
        "cause": pd.Series([], dtype=object), "ticket": pd.Series([], dtype=object),
    })

