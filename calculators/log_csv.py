"""The incident log's file-level reading that needs neither pandas nor the contract: its
columns, its format (CSV, JSON Lines or a JSON array), the Arrow parse of a CSV
(`calculators.log_csv_parse`, read from here too) and the conversion of its columns.

`calculators.incidents` validates what is read here; `calculators.log_prefetch` runs the
reading in a thread while the command starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa

from calculators import arrow_compute as pc
from calculators import kernels

# the parse (with the format's columns and its detection) needs only pyarrow's CSV reader: the
# background reading parses with it while the rest of this module is imported
from calculators.log_csv_parse import (  # noqa: F401  (read from here too)
    _HANDLERS, BLOCK_SIZE, COLUMNS, PIECE_SIZE, _pieces, csv_header, detect_format, looks_like_csv, read_csv_arrow)


# --- the columns, converted by Arrow ---------------------------------------------------------

NA = np.iinfo(np.int64).min          # a missing time in the int64 columns while they are built
TIME_COLUMNS = ("start", "end", "notice_at", "detected_at", "reported_at", "responded_at", "resolved_at")
TEXT_CONVERTED = tuple(c for c in COLUMNS if c not in TIME_COLUMNS)

# the characters str.strip() removes (Arrow's own whitespace trimming knows fewer of them)
_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


# --- Arrow and numpy without pandas ---------------------------------------------------------------
# pyarrow imports pandas, when it is installed, the first time an array or a scalar is made from
# Python or numpy values (`pa.array`, `pa.scalar`, a Python number given to a compute function)
# or converted to numpy (`to_numpy`): pandas is a third of `slakit credits`' imports, and the
# command has no other use for it on a CSV log. These helpers make and read arrays through their
# buffers instead (`tests/incidents/test_no_pandas.py` runs the command and checks).

_NUMPY_TYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
                pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
                pa.float64(): np.float64}


def numpy_of(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a fixed-width (integer, float or boolean) Arrow array as numpy, read from
    its buffers (a read-only view of a one-chunk integer array); a null's slot holds whatever
    the buffer holds there (`null_mask` says where)."""
    if isinstance(arr, pa.ChunkedArray):
        parts = [numpy_of(c) for c in arr.chunks]
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=_numpy_dtype(arr.type))
    data = arr.buffers()[1]
    if pa.types.is_boolean(arr.type):
        return _bits(data, arr) if data is not None else np.zeros(len(arr), dtype=bool)
    dtype = _numpy_dtype(arr.type)
    if data is None:
        return np.zeros(len(arr), dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


def _numpy_dtype(t: pa.DataType) -> np.dtype:
    if pa.types.is_boolean(t):
        return np.dtype(bool)
    if t not in _NUMPY_TYPES:
        raise TypeError(f"no numpy type for Arrow {t}")
    return np.dtype(_NUMPY_TYPES[t])


def null_mask(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """True where `arr` is null."""
    if isinstance(arr, pa.ChunkedArray):
        parts = [null_mask(c) for c in arr.chunks]
        return np.concatenate(parts) if len(parts) != 1 else parts[0]
    if arr.null_count == 0:
        return np.zeros(len(arr), dtype=bool)
    return ~_bits(arr.buffers()[0], arr)


def _bits(buf: pa.Buffer, arr: pa.Array) -> np.ndarray:
    """The bitmap `buf` of `arr` (its values or its validity) as booleans, one per value."""
    bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), count=arr.offset + len(arr), bitorder="little")
    return bits[arr.offset:].astype(bool)


def int64_array(values: np.ndarray) -> pa.Array:
    """An Arrow int64 array of `values` (no nulls), sharing their buffer."""
    a = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(a), [None, pa.py_buffer(a)])


def string_scalar(text: str, type: pa.DataType = pa.large_string()) -> pa.Scalar:
    """`pa.scalar(text, type)` for a string type, made from buffers."""
    return pc.cast(_large_strings([text.encode("utf-8")]), type)[0]


def _large_strings(encoded: list[bytes]) -> pa.Array:
    """An Arrow large_string array of the UTF-8 `encoded` values, made from buffers."""
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(encoded),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def python_strings(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An Arrow string array as an object array of Python `str` (None for a null)."""
    out = np.empty(len(arr), dtype=object)
    out[:] = arr.to_pylist()
    return out


class TextValues:
    """Distinct strings kept as an Arrow string array; Python strings are made only for the
    ones asked for (`values[codes]`), or for all of them at once on first need of the whole
    (`np.asarray(values)`, iteration).

    A log's incident ids are a million distinct strings, and a command shows the ids of a
    few units (or, in a JSON document, gathers them in Arrow again): making a Python string
    of each id as the log is read took a quarter of a second, holding the interpreter lock
    the command's start-up needs. Indexing gives what an object array's indexing gives: a
    `str` for an integer, an object array for an integer array, a boolean mask or a slice.
    A gather of more than a quarter of the values makes all the strings once and indexes
    them, so that each value is one string wherever it is gathered to (a review gathers
    every unit's ids, 7 million, which as strings of their own took 0.45 GB more)."""

    __slots__ = ("_objects", "arrow")

    def __init__(self, arrow: pa.Array) -> None:
        self.arrow = arrow
        self._objects: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.arrow)

    def objects(self) -> np.ndarray:
        """All the values as an object array (made once)."""
        if self._objects is None:
            self._objects = python_strings(self.arrow)
        return self._objects

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.objects()
        return out if dtype is None or np.dtype(dtype) == out.dtype else out.astype(dtype)

    def __iter__(self) -> Any:
        return iter(self.objects())

    def tolist(self) -> list[Any]:
        return self.objects().tolist()

    def __getitem__(self, key: Any) -> Any:
        if self._objects is not None:
            return self._objects[key]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            k = int(key) + (len(self.arrow) if key < 0 else 0)
            if not 0 <= k < len(self.arrow):
                raise IndexError(f"index {int(key)} out of range for {len(self.arrow)} values")
            return self.arrow[k].as_py()
        if isinstance(key, slice):
            return python_strings(self.arrow[key])
        # any other key (a bool, None, Ellipsis, a tuple, a 0-d array, a mask of more dimensions)
        # is answered by the object array itself, as numpy answers it
        if not isinstance(key, (list, range, np.ndarray)):
            return self.objects()[key]
        array = np.asarray(key)
        if array.size == 0 and not isinstance(key, np.ndarray):
            array = array.astype(np.intp)      # an empty list is an empty gather, as numpy takes it
        if array.ndim == 0 or (array.dtype == bool and array.ndim != 1):
            return self.objects()[key]         # a 0-d array is a scalar index, a 2-d mask numpy's
        key = array
        if key.dtype == bool:
            if len(key) != len(self.arrow):
                raise IndexError(f"boolean index of length {len(key)} for {len(self.arrow)} values")
            key = np.flatnonzero(key)
        elif not np.issubdtype(key.dtype, np.integer):
            raise IndexError(f"values are indexed by integers or a boolean mask, not {key.dtype}")
        flat = key.reshape(-1).astype(np.int64, copy=False)
        if len(flat) and (int(flat.min()) < -len(self.arrow) or int(flat.max()) >= len(self.arrow)):
            raise IndexError(f"index out of range for {len(self.arrow)} values")
        if len(flat) > len(self.arrow) // 4:
            # a gather of many (every unit's ids for a document): one string per value, shared
            # by every place it is gathered to, not a new one per place
            return self.objects()[key]
        flat = np.where(flat < 0, flat + len(self.arrow), flat)
        if len(flat) <= _FEW_READ:
            # a few values (a table's four ids of a unit) one by one: 5 us where Arrow's take
            # and its result's conversion cost 40
            out = np.empty(len(flat), dtype=object)
            arrow = self.arrow
            out[:] = [arrow[k].as_py() for k in flat.tolist()]
            return out.reshape(key.shape)
        return python_strings(pc.take(self.arrow, int64_array(flat))).reshape(key.shape)


_FEW_READ = 16          # `TextValues` reads at most this many values one by one


def arrow_strings(values: Any, type: pa.DataType = pa.large_string()) -> pa.Array:
    """`values` (an object array of str, or `TextValues`) as an Arrow array of `type`, without
    a Python string per value where they are Arrow already."""
    if isinstance(values, TextValues):
        return pc.cast(values.arrow, type)
    if type in (pa.large_string(), pa.string()) and all(isinstance(v, str) for v in values):
        # from buffers (pa.array imports pandas): the ids of a log without incidents, or of
        # the rows kept after bad ones were skipped; a lone surrogate raises UnicodeEncodeError
        # as pa.array raises for it
        arr = _large_strings([v.encode("utf-8") for v in values])
        return arr if type == pa.large_string() else pc.cast(arr, type)
    return pa.array(values, type=type)


@dataclass(frozen=True)
class TextColumn:
    """A text column as `codes` (int64, -1 where the cell is empty or blank) into its
    distinct stripped cells, in order of first appearance: `dictionary` (Arrow) and
    `uniques` (the same as Python strings: an object array, or `TextValues` over
    `dictionary` for a column of mostly distinct values, made by `text_column(lazy=True)`)."""

    codes: np.ndarray
    dictionary: pa.Array
    uniques: np.ndarray | TextValues


LAZY_TEXT = ("id",)      # mostly distinct in a log: its values stay in Arrow until asked for


def text_column(col: pa.ChunkedArray, lazy: bool = False) -> TextColumn:
    """The cells are dictionary-encoded as read; stripping and dropping the empty cell then
    work on the distinct values only (a value's first appearance is that of the earliest cell
    that strips to it, so the order of first appearance stays).

    `lazy` (a column of mostly distinct values, the ids): a column whose cells are all
    distinct, none empty and none with white space around it is its own dictionary, with
    codes 0, 1, 2, ...; that is found by sorting the cells (a third of the time of Arrow's
    hashing of a million ids), and any other column is encoded as above."""
    if lazy:
        own = _distinct_as_written(col)
        if own is not None:
            return TextColumn(np.arange(len(own), dtype=np.int64), own, TextValues(own))
    return encoded_text(*_dictionary_encode(col), lazy=lazy)


def encoded_text(codes: np.ndarray, dictionary: pa.Array, lazy: bool = False) -> TextColumn:
    """`text_column` of a column already dictionary-encoded: `codes` (int64, written in place)
    into `dictionary`, its distinct cells as read in order of first appearance."""
    trimmed = pc.utf8_trim(dictionary, characters=_WHITESPACE)
    if not trimmed.equals(dictionary):
        again = pc.dictionary_encode(trimmed)
        codes = numpy_of(again.indices).astype(np.int64)[codes]
        dictionary = again.dictionary
    blank = np.flatnonzero(numpy_of(pc.binary_length(dictionary)) == 0)
    empty = int(blank[0]) if len(blank) else -1
    if empty >= 0:
        gone = codes == empty
        codes -= codes > empty
        codes[gone] = -1
        dictionary = pa.concat_arrays([dictionary[:empty], dictionary[empty + 1:]])
    if lazy:
        return TextColumn(codes, dictionary, TextValues(dictionary))
    return TextColumn(codes, dictionary, python_strings(dictionary))


FEW_VALUES = 1 << 16    # a column with at most this many distinct cells is encoded by `kernels.compiled.few_codes`


def _dictionary_encode(col: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """`(codes, dictionary)`: Arrow's `dictionary_encode` of the column (the definition), its
    indices as one int64 array (written in place, no int32 copy of the whole column first).

    A column of at most FEW_VALUES distinct cells and no missing one (scope, impact, category,
    severity: every cell one of a handful of words) is encoded by the compiled `few_codes`
    instead, a third of Arrow's time: it finds a value by its length and end bytes in a small
    table, where Arrow hashes every cell. It gives the same codes and dictionary (the values in
    order of first appearance, as Arrow lists them); at the first value beyond FEW_VALUES it
    stops and Arrow encodes the column (the targets, the ids)."""
    chunks = col.chunks
    compiled = kernels.compiled
    if (compiled is not None and len(col) and not col.null_count
            and (pa.types.is_string(col.type) or pa.types.is_large_string(col.type))):
        codes = np.empty(len(col), dtype=np.int64)
        firsts = np.empty(min(FEW_VALUES, len(col)), dtype=np.int64)
        bufs = tuple((offsets, data, len(ch), width) for ch in chunks for offsets, data, width in [string_buffers(ch)])
        k = compiled.few_codes(bufs, codes, firsts)
        if k >= 0:
            # the values from their chunks, chunk by chunk (the first appearances are in column
            # order): a take from the whole column would join chunks of more than 2 GiB of text
            starts = np.cumsum([0] + [len(ch) for ch in chunks])
            first = firsts[:k]
            bounds = np.searchsorted(first, starts).tolist()         # chunk c's: first[bounds[c]:bounds[c + 1]]
            parts = []
            for c, ch in enumerate(chunks):
                if bounds[c + 1] > bounds[c]:
                    local = first[bounds[c]:bounds[c + 1]] - starts[c]
                    # (the positions as an Arrow array from their buffer: `pa.array` of numpy imports pandas)
                    parts.append(pc.take(ch, pa.Array.from_buffers(pa.int64(), len(local), [None, pa.py_buffer(local)])))
            return codes, parts[0] if len(parts) == 1 else pa.concat_arrays(parts)
    enc = pc.dictionary_encode(col)
    codes = np.empty(len(col), dtype=np.int64)
    at = 0
    for ch in enc.chunks:
        codes[at:at + len(ch)] = numpy_of(ch.indices)
        at += len(ch)
    if not enc.num_chunks:      # (a column of no chunks: Arrow's empty dictionary of its type)
        return codes, pa.array([], type=col.type)
    return codes, enc.chunk(0).dictionary


def _distinct_as_written(col: pa.ChunkedArray) -> pa.Array | None:
    """The column as one array when its cells are all distinct, none is empty or missing and
    none has white space around it (what `text_column` would keep of each, in the same
    order); None otherwise (also for cells of more than 2 GiB in all, which one `string`
    array cannot hold: the dictionary encoding reads them chunk by chunk)."""
    try:
        flat = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    except (pa.ArrowInvalid, pa.ArrowCapacityError):       # the offsets of one array would overflow
        return None
    n = len(flat)
    if n < 2 or flat.null_count or not pa.types.is_string(flat.type):
        return None
    compiled = kernels.compiled
    if compiled is None:
        if (int(numpy_of(pc.binary_length(flat)).min()) == 0
                or not pc.utf8_trim(flat, characters=_WHITESPACE).equals(flat)):
            return None
    else:
        offsets, data, width = string_buffers(flat)
        # no cell empty or with white space around it, in one pass over the cells (Arrow's
        # utf8_trim copies every cell to compare: 40 ms of the log's conversions at 1M ids)
        if not compiled.plain_cells(offsets, data, n, width):
            return None
        # a 64-bit hash of each cell: no two equal hashes proves the cells distinct (a third of
        # the time of sorting the strings); two equal ones are settled by that sort
        hashes = np.empty(n, dtype=np.int64)
        compiled.hash_cells(offsets, data, n, width, hashes)
        if not _equal_hashes(hashes):
            return flat
    ordered = flat.take(pc.sort_indices(flat))
    if pc.any_true(pc.equal(ordered.slice(1), ordered.slice(0, n - 1))).as_py():
        return None
    return flat


def _equal_hashes(hashes: np.ndarray) -> bool:
    """Whether two of `hashes` (int64, reordered in place) are equal: `len(set(hashes)) <
    len(hashes)`. Only their upper 32 bits are sorted (the radix sort's three upper passes of
    six: `kernels.sort` with lo_bit 32 moves nothing by the bits below), which puts the hashes
    with equal upper bits next to each other; the few such runs (about n**2 / 2**33 pairs: 116
    at 1M ids) are compared whole."""
    if len(hashes) < 2:
        return False
    kernels.sort(hashes, 32)
    upper = hashes >> 32
    same = np.flatnonzero(upper[1:] == upper[:-1])
    if not len(same):
        return False
    at = kernels.distinct(np.concatenate([same, same + 1]))      # every member of each such run, once
    near = np.sort(hashes[at])
    return bool((near[1:] == near[:-1]).any())


def _iso_seconds(col: pa.ChunkedArray | pa.Array) -> np.ndarray | None:
    """Epoch seconds (NA where empty) of a string column whose cells are all empty or written
    2027-02-03T10:00:00Z or 2027-02-03T04:00:00-06:00, read from its buffers by the kernel;
    None for any other column (a null, another type, another form of time)."""
    compiled = kernels.compiled
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    out = np.empty(len(col), dtype=np.int64)
    at = 0
    for ch in chunks:
        if not (pa.types.is_string(ch.type) or pa.types.is_large_string(ch.type)) or ch.null_count:
            return None
        n = len(ch)
        if n:
            offsets, data, width = string_buffers(ch)
            if not compiled.iso_seconds(offsets, data, n, width, out[at:at + n], NA):
                return None
        at += n
    return out


def string_buffers(arr: pa.Array) -> tuple[memoryview, Any, int]:
    """`(offsets, data, width)` of an Arrow string or large_string array as the kernels read
    them: its len + 1 offsets from its own offset on, its value bytes (b"" where it has none),
    and the offsets' width in bytes (4 or 8)."""
    width = 8 if pa.types.is_large_string(arr.type) else 4
    _, offsets, data = arr.buffers()
    offsets = memoryview(offsets)[arr.offset * width:(arr.offset + len(arr) + 1) * width]
    return offsets, b"" if data is None else data, width


def fast_times(col: pa.ChunkedArray) -> np.ndarray | None:
    """Epoch seconds (NA where empty) of a time column whose cells are all of the forms
    2027-02-03T10:00:00Z or 2027-02-03T04:00:00-06:00 (20 and 25 characters) or empty: Arrow
    casts them and reads them as pandas does. None for any other length, or a cell Arrow
    refuses: the general parser then reads the column.

    With the compiled kernels a column of only such cells (and real dates and times within
    Arrow's range) is read in one pass over its bytes (`kernels.compiled.iso_seconds`), which
    gives what Arrow's cast gives; at the first other cell, Arrow's cast decides as before."""
    if kernels.compiled is not None:
        got = _iso_seconds(col)
        if got is not None:
            return got
    lengths = pc.binary_length(col)
    n = numpy_of(lengths)
    empty = n == 0
    if empty.all():
        return np.full(len(col), NA, dtype=np.int64)
    if not ((n == 20) | (n == 25) | empty).all():
        return None
    try:
        given = col if not empty.any() else pc.if_else(pc.invert(pc.cast(lengths, pa.bool_())),
                                                        pa.nulls(len(col), col.type), col)
        ns = pc.cast(pc.cast(given, pa.timestamp("ns", tz="UTC")), pa.int64())
    except pa.ArrowException:       # a cell Arrow cannot cast: the general parser reads the column
        return None
    out = np.floor_divide(numpy_of(ns), 1_000_000_000)
    if ns.null_count:
        out[null_mask(ns)] = NA
    return out


def convert_columns(table: pa.Table, raw_names: dict[str, str], text_columns: tuple[str, ...],
                    time_columns: tuple[str, ...], *, stop: Callable[[], bool] | None = None
                    ) -> dict[tuple[str, str], Any]:
    """`{("text", c): TextColumn, ("times", c): array or None}` for the columns present,
    converted in two threads above 50,000 rows: Arrow's dictionary encoding and casts release
    the GIL, and after the parse a command's other core would be idle. Empty below that (each
    column is converted when first asked for). `stop`: asked before each column; once it says
    True the columns not begun are left out and the result is incomplete (the background
    reading of a command that is exiting, which discards it). The two threads are daemons,
    joined here: a process ending with `os._exit` (the `slakit` program) does not wait for
    them, as it would for a thread pool's."""
    present = [c for c in (*text_columns, *time_columns)
               if raw_names.get(c) in table.column_names and table.num_rows]
    if len(present) < 2 or table.num_rows < 50_000:
        return {}
    jobs = [(("text", c), partial(text_column, lazy=c in LAZY_TEXT)) for c in text_columns if c in present]
    jobs += [(("times", c), fast_times) for c in time_columns if c in present]
    import threading

    todo = list(reversed(jobs))
    got: dict[tuple[str, str], Any] = {}
    failed: list[BaseException] = []

    def worker() -> None:
        while not failed and not (stop is not None and stop()):
            try:
                key, fn = todo.pop()           # list.pop is atomic: each job is taken once
            except IndexError:
                return
            try:
                got[key] = fn(table.column(raw_names[key[1]]))
            except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
                failed.append(exc)

    threads = [threading.Thread(target=worker, name="slakit-columns", daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise failed[0]
    return {key: got[key] for key, _ in jobs if key in got}
