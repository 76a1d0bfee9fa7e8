"""An incident log of plain cells read in one compiled pass, without Arrow's CSV reader.

Most logs are written by a program: no quote character, every row with the header's number of
cells, times in one of the two ISO forms. For such a file `read_plain` splits the rows into the
columns the loader keeps in one pass of `kernels.compiled.split_plain` (in two threads, one per
half of the file, for a large one), where Arrow would first copy every cell into a string array
and the conversions (`log_csv.convert_columns`) then read each one again: the times become
epoch seconds and the text columns codes into their distinct cells as the cells are met; only
the ids are kept as strings. The result is what Arrow's reading and the conversions give for
the same file (`tests/incidents/test_log_csv_plain.py` compares them on random and hostile
files): the same codes, dictionaries and seconds.

Anything else (a quote character, in a row or in the header, a row of another number of
cells, a carriage return not before a line feed, a time of another form, bytes that are not
UTF-8 in a kept column, no row at all, memory for the columns not to be had) gives None, and the loader asks Arrow as before (`log_csv_parse.read_csv_arrow`), which
decides what the file holds and what is wrong with it. A file that fails late in the pass has
cost up to one pass more than Arrow alone.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pyarrow as pa

from calculators import arrow_compute as pc
from calculators import kernels
from calculators.log_csv import LAZY_TEXT, NA, TIME_COLUMNS, TextColumn, encoded_text, numpy_of, text_column
from calculators.log_csv_parse import COLUMNS, csv_header

SKIP, TEXT, CODES, TIMES = 0, 1, 2, 3         # the kinds `split_plain` knows, one per cell of a row
TWO_THREADS_FROM = 1 << 24                    # a file this large is split in two halves, one per thread


class Plain:
    """What `read_plain` read: the rows' number `n`, the header's names (`raw_names`, the
    stripped name -> the cell as written; `names`, the stripped ones in order), the ids as an
    Arrow `table` of strings (the one column kept as text), and `converted`, every column of
    the format present as `log_csv.convert_columns` gives it."""

    __slots__ = ("n", "table", "raw_names", "names", "converted")

    def __init__(self, *, n: int, table: pa.Table, raw_names: dict[str, str], names: list[str],
                 converted: dict[tuple[str, str], Any]) -> None:
        self.n = n
        self.table = table
        self.raw_names = raw_names
        self.names = names
        self.converted = converted


def _first_row(data: bytes | bytearray) -> int | None:
    """Where the row after the header begins (past its line end); None when the header ends in
    a carriage return not before a line feed (Arrow's line end, not read here)."""
    begin = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    nl = data.find(b"\n", begin)
    end = len(data) if nl < 0 else nl
    cr = data.find(b"\r", begin, end)
    if cr >= 0 and cr != end - 1:
        return None
    if cr == end - 1 and nl < 0:
        return None
    return len(data) if nl < 0 else nl + 1


def read_plain(data: bytes | bytearray) -> Plain | None:
    """The log `data` (a CSV's bytes) read in one pass, or None where Arrow is to read it."""
    compiled = kernels.compiled
    if compiled is None:
        return None
    header = csv_header(data)
    if header is None:
        return None
    names = [c.strip() for c in header]
    if any(not c for c in names) or len(set(names)) != len(names) or not any(c in COLUMNS for c in names):
        return None
    begin = _first_row(data)
    if begin is None or begin >= len(data) or b'"' in data[:begin]:
        # (a quote in the header: Arrow reads a quoted cell there, or one never closed that
        # runs to the end of the file; `csv_header` reads the line alone)
        return None
    kinds = bytes(SKIP if c not in COLUMNS else TIMES if c in TIME_COLUMNS else TEXT if c in LAZY_TEXT else CODES
                  for c in names)
    bounds = [begin, len(data)]
    if len(data) - begin >= TWO_THREADS_FROM:
        mid = data.find(b"\n", begin + (len(data) - begin) // 2)
        if 0 <= mid < len(data) - 1:
            bounds = [begin, mid + 1, len(data)]
    halves = range(len(bounds) - 1)
    # the most rows each half can hold (its lines that are not empty; the second's from the
    # first's on)
    lines = [0] * len(halves)
    ready = [threading.Event() for _ in halves]
    ints: list[np.ndarray] = []               # the time and code columns, one array each for both halves
    made = threading.Event()
    parts: list[Any] = [None] * len(halves)
    failed: list[BaseException] = []

    def split(i: int) -> None:
        lo, hi = bounds[i], bounds[i + 1]
        try:
            lines[i] = compiled.line_ends(data, lo, hi) + (hi == len(data))
            ready[i].set()
            if i == 0:
                for e in ready:
                    e.wait()
                ints.extend(np.empty(sum(lines), dtype=np.int64) for k in kinds if k in (CODES, TIMES))
                made.set()
            else:
                made.wait()
            text = [(np.empty(lines[i] + 1, dtype=np.int32), np.empty(hi - lo, dtype=np.uint8))
                    for k in kinds if k == TEXT]
            t, n = iter(text), iter(ints)
            outs = tuple(next(t) if k == TEXT else next(n) for k in kinds if k != SKIP)
            got = compiled.split_plain(data, lo, hi, kinds, outs, NA, sum(lines[:i]))
            parts[i] = None if got is None else (got[0], text, got[1])
        except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
            failed.append(exc)
            for e in (*ready, made):
                e.set()

    if len(halves) == 1:
        split(0)
    else:
        other = threading.Thread(target=split, args=(1,), name="slakit-plain", daemon=True)
        other.start()
        split(0)
        other.join()
    if any(isinstance(e, MemoryError) for e in failed):
        return None                  # (room for the rows not to be had: Arrow reads the file)
    if failed:
        raise failed[0]
    if any(p is None for p in parts):
        return None
    n = sum(p[0] for p in parts)
    if n == 0:
        return None
    if len(parts) > 1 and parts[0][0] != lines[0]:
        # (each line `line_ends` counts is a row or a refusal, so the second half's rows follow
        # the first's at lines[0]; were they not to, the columns would have a gap: Arrow reads it)
        return None
    try:
        converted = _columns(names, kinds, parts, [a[:n] for a in ints])
    except pa.ArrowInvalid:          # not UTF-8 in a kept column: Arrow's reader refuses it too
        return None
    ids = [c for c, k in zip(names, kinds) if k == TEXT]
    table = pa.table({header[names.index(c)]: converted.pop(("raw", c)) for c in ids})
    return Plain(n=n, table=table, raw_names=dict(zip(names, header)), names=names, converted=converted)


def _strings(offsets: np.ndarray, values: Any, n: int) -> pa.Array:
    """An Arrow string array of `n` cells from its int32 `offsets` and value bytes, its UTF-8
    checked (ArrowInvalid where it is not)."""
    arr = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(values)])
    arr.validate(full=True)
    return arr


def _columns(names: list[str], kinds: bytes, parts: list[Any], ints: list[np.ndarray]) -> dict[tuple[str, str], Any]:
    """`log_csv.convert_columns`' result from the halves `split_plain` read (`ints`: the time
    and code columns of both), plus ("raw", c): each text column as an Arrow chunked array of
    its halves."""
    out: dict[tuple[str, str], Any] = {}
    t = d = i = 0
    for c, k in zip(names, kinds):
        if k == TIMES:
            out[("times", c)] = ints[i]
            i += 1
        elif k == TEXT:
            col = pa.chunked_array([_strings(off[:rows + 1], vals[:int(off[rows])], rows)
                                    for rows, text, _ in parts if rows for off, vals in [text[t]]], type=pa.string())
            out[("raw", c)] = col
            out[("text", c)] = text_column(col, lazy=c in LAZY_TEXT)
            t += 1
        elif k == CODES:
            out[("text", c)] = _codes(parts, ints[i], d, lazy=c in LAZY_TEXT)
            d += 1
            i += 1
    return out


def _codes(parts: list[Any], codes: np.ndarray, d: int, lazy: bool) -> TextColumn:
    """The `d`th codes column of the halves as one column (`codes`, both halves' codes, remapped
    in place): the second half's values met in the first keep their codes there, the others
    follow in the order they are met (Arrow's dictionary encoding of the two dictionaries one
    after the other)."""
    rows, _, dicts = parts[0]
    k, offsets, values = dicts[d]
    dictionary = _strings(np.frombuffer(offsets, dtype=np.int32), values, k)
    if len(parts) > 1 and parts[1][0]:
        k2, offsets2, values2 = parts[1][2][d]
        both = pc.dictionary_encode(pa.concat_arrays([dictionary, _strings(np.frombuffer(offsets2, dtype=np.int32),
                                                                            values2, k2)]))
        if k:                        # (no first half's values: the second's codes stand)
            remap = numpy_of(both.indices)[k:].astype(np.int64)
            codes[rows:] = remap[codes[rows:]]
        dictionary = both.dictionary
    return encoded_text(codes, dictionary, lazy=lazy)
