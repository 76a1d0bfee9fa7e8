"""The Arrow parse of an incident log that is a CSV, and the format's detection: what the
background reading (`calculators.log_prefetch`) needs before anything else, so this module
imports only pyarrow's CSV reader (`calculators.log_csv` converts the columns parsed here).
"""

from __future__ import annotations

import csv
import sys
import weakref
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv

COLUMNS = ("id", "scope", "target", "start", "end", "impact", "gpus_affected", "category", "notice_at",
           "severity", "detected_at", "reported_at", "responded_at", "resolved_at", "cause", "ticket")

BLOCK_SIZE = 1 << 22     # bytes per block pyarrow parses (one block per thread at a time)


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


def looks_like_csv(name: str, data: bytes) -> bool:
    """Whether the loader reads `data` (the file `name`) as CSV."""
    return detect_format(name, data[:4096].decode("utf-8-sig", errors="replace")) == "csv"


def csv_header(data: bytes) -> list[str] | None:
    """The header's cells (after a byte-order mark), or None when the first line is blank."""
    begin = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    nl = data.find(b"\n", begin)
    end = len(data) if nl < 0 else nl
    cr = data.find(b"\r", begin, end)          # (looked for before the line feed only: a file
    line = data[begin:end if cr < 0 else cr]    # without carriage returns is not read through)
    if not line.strip():
        return None
    try:
        return next(csv.reader([line.decode("utf-8")]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return None


PIECE_SIZE = 1 << 26     # bytes per piece when the parse can be stopped (`read_csv_arrow(stop=...)`)


def read_csv_arrow(data: bytes, block_size: int = BLOCK_SIZE, *, stop: Callable[[], bool] | None = None,
                   piece_size: int = PIECE_SIZE) -> tuple[pa.Table, dict[str, str], list[str], bool] | None:
    """`(table, raw_names, names, quoted)`: the CSV as an Arrow table of strings (the columns of the
    format only), the stripped header names mapped to the cells as written, the stripped
    names in order, and whether the file holds a quote character (only then can a cell hold a
    line break: `calculators.csv_lines`); None when pyarrow refuses the file or a row has another number
    of cells than the header (the general reader then reads it and describes what is wrong).

    `stop`: asked between pieces of `piece_size` bytes; when it says True the parse ends and
    None is returned (the background reading of a command that is exiting). Pieces end at a
    newline and are only used for a file without a quote character, where a newline always
    ends a row (as Arrow splits its own blocks then); a quoted file is parsed in one go."""
    header = csv_header(data)
    if header is None:
        return None
    names = [c.strip() for c in header]
    if any(not c for c in names) or len(set(names)) != len(names):
        return None
    wanted = [raw for raw, name in zip(header, names) if name in COLUMNS]
    if not wanted:
        return None
    ragged: list[Any] = []

    def invalid_row(row: Any) -> str:
        ragged.append(row)
        return "skip"

    # a ragged row Arrow cannot hand over (its bytes are not UTF-8) fails before the handler
    # runs; Python would print that as "Exception ignored in ..." (`_quiet_handlers`)
    invalid_row.failed = False  # type: ignore[attr-defined]
    _HANDLERS.add(invalid_row)

    quoted = b'"' in data
    # a newline can only be inside a value when a value is quoted; without any quote
    # character Arrow splits blocks at newlines, which is faster
    parse = pa_csv.ParseOptions(newlines_in_values=quoted, invalid_row_handler=invalid_row)
    # a file of ASCII bytes only (most logs; 10 ms for 137 MB) is valid UTF-8 throughout: Arrow
    # then does not validate each cell (5-10 % of the parse's CPU)
    convert = pa_csv.ConvertOptions(column_types={c: pa.string() for c in wanted}, include_columns=wanted,
                                    null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False,
                                    check_utf8=not data.isascii())
    buf = pa.py_buffer(data)
    try:
        if stop is None or quoted or len(data) <= piece_size:
            table = pa_csv.read_csv(buf, read_options=pa_csv.ReadOptions(use_threads=True, block_size=block_size),
                                    parse_options=parse, convert_options=convert)
        else:
            tables = []
            for lo, hi in _pieces(data, piece_size):
                if stop():
                    return None
                read = pa_csv.ReadOptions(use_threads=True, block_size=block_size,
                                          column_names=None if lo == 0 else header)
                tables.append(pa_csv.read_csv(buf.slice(lo, hi - lo), read_options=read, parse_options=parse,
                                              convert_options=convert))
            table = pa.concat_tables(tables)
    except (pa.ArrowException, ValueError):
        return None
    if ragged or invalid_row.failed or table.column_names != wanted:  # type: ignore[attr-defined]
        return None
    return table, dict(zip(names, header)), names, quoted


_HANDLERS: weakref.WeakSet = weakref.WeakSet()     # the ragged-row handlers of reads under way


def _quiet_handlers(unraisable: Any) -> None:
    """`sys.unraisablehook`: an exception raised while Arrow called one of our ragged-row
    handlers marks the read as ragged (the general reader takes the file and says what is
    wrong) instead of printing a traceback; anything else goes to the hook there was."""
    obj = getattr(unraisable, "object", None)
    try:
        ours = obj in _HANDLERS
    except TypeError:                  # (not weakly referable: not ours)
        ours = False
    if ours:
        obj.failed = True
        return
    _previous_hook(unraisable)


_previous_hook = sys.unraisablehook
sys.unraisablehook = _quiet_handlers


def _pieces(data: bytes, size: int) -> list[tuple[int, int]]:
    """`[lo, hi)` byte ranges of about `size` bytes covering `data`, each ending after a newline
    (the last at the end). Blank lines (Arrow skips them) stay with the piece before."""
    out = []
    lo, n = 0, len(data)
    while lo < n:
        nl = data.find(b"\n", min(lo + size, n) - 1) if lo + size < n else -1
        hi = n if nl < 0 else nl + 1
        while hi < n and data[hi:hi + 1] in (b"\n", b"\r"):      # a run of blank lines: not a piece of its own
            hi += 1
        out.append((lo, hi))
        lo = hi
    return out
