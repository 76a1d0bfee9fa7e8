"""The incident log's file-level reading that needs neither pandas nor the contract: its
columns, its format (CSV, JSON Lines or a JSON array) and the Arrow parse of a CSV.

`calculators.incidents` validates what is read here; `calculators.log_prefetch` runs the
reading in a thread while the command starts.
"""

from __future__ import annotations

import csv
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
    ends = [i for i in (data.find(b"\n", begin), data.find(b"\r", begin)) if i >= 0]
    line = data[begin:min(ends) if ends else len(data)]
    if not line.strip():
        return None
    try:
        return next(csv.reader([line.decode("utf-8")]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return None


def read_csv_arrow(data: bytes, block_size: int = BLOCK_SIZE) -> tuple[pa.Table, dict[str, str], list[str]] | None:
    """`(table, raw_names, names)`: the CSV as an Arrow table of strings (the columns of the
    format only), the stripped header names mapped to the cells as written, and the
    stripped names in order; None when pyarrow refuses the file or a row has another number
    of cells than the header (the general reader then reads it and describes what is wrong)."""
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

    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(use_threads=True, block_size=block_size),
            # a newline can only be inside a value when a value is quoted; without any quote
            # character Arrow splits blocks at newlines, which is faster
            parse_options=pa_csv.ParseOptions(newlines_in_values=b'"' in data, invalid_row_handler=invalid_row),
            convert_options=pa_csv.ConvertOptions(column_types={c: pa.string() for c in wanted},
                                                  include_columns=wanted, null_values=[],
                                                  strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowException, ValueError):
        return None
    if ragged or table.column_names != wanted:
        return None
    return table, dict(zip(names, header)), names
