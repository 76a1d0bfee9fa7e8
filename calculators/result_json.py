"""The one JSON serializer of a credits `Result` (`slakit credits --format json`).

The document is written as text straight from the result's columns: per unit and node
record the figures are formatted column by column and joined, and the long incident-id
lists are gathered in one piece per scope and month (one Arrow take of the ids each followed
by its separator), with no dict per record in between. The document comes as UTF-8 pieces, a batch per scope and
month (`write_document`), so a file is written as it is made and no joined copy of the
whole is needed (`document_bytes` joins them for callers that want one bytes object). The text is exactly what
`json.dumps(doc, indent=2, ensure_ascii=False) + "\\n"` writes for the same document (two
spaces of indentation, non-ASCII characters as they are), except that a unit record's
`incidents` and `flags` lists are written on one line, as `json.dumps(items,
ensure_ascii=False)` writes them (`["INC-1", "INC-2"]`): the id lists are most of the
document, and one id per indented line made it half as large again (235 MB against 151 MB
for a 12,600-node quarter with a million incidents); and that the characters a terminal acts
on or a viewer hides (DEL, C1 controls, bidi and zero-width characters, separators, the BOM
and the other default-ignorable ones) are written as `\\u` escapes (`slaschema.jsontext.hidden_escaped`). tests/calculators/test_result_json.py
holds the document built as Python values next to it (`dumps_inline_lists`).

The first member is `"format": "slakit-credits/2"` (`FORMAT`): the name and version of this
document. Version 2 is version 1 (the documents written before the field existed) with that
member added; every other member is unchanged. The fields are described in
`calculators.result`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import orjson

from calculators import credits as cr
from calculators import kernels, settle
from calculators.vocabulary import FLAG_LISTS, FLAG_MASK
from slaschema.jsontext import dumps_indented, hidden_escaped
from slaschema.textsafe import HIDDEN_PAST_C0

if TYPE_CHECKING:
    import numpy as np

FORMAT = "slakit-credits/2"

# what JSON text must escape (and lone surrogates), and what slakit's JSON escapes beside it
# (`jsontext.hidden_escaped`: DEL, C1, bidi and zero-width characters, ...)
_ESCAPE = re.compile(f'["\\\\\x00-\x1f\ud800-\udfff{HIDDEN_PAST_C0}]')


def _ind(depth: int) -> str:
    return "  " * depth


def quote(text: str) -> str:
    """One JSON string, as `json.dumps(text, ensure_ascii=False)` writes it (with the
    characters `jsontext.hidden_escaped` escapes as escapes)."""
    if not _ESCAPE.search(text):
        return f'"{text}"'
    try:
        return hidden_escaped(orjson.dumps(text).decode("utf-8"))
    except TypeError:                       # a lone surrogate: orjson refuses it
        return hidden_escaped(json.dumps(text, ensure_ascii=False))


def quote_all(texts: list[str]) -> list[str]:
    """`quote` of each (one scan of all of them when none needs escaping)."""
    if not _ESCAPE.search("".join(texts)):
        return [f'"{t}"' for t in texts]
    return [quote(t) for t in texts]


def value(v: Any, depth: int) -> str:
    """Any JSON value as indented text for a place `depth` levels deep (its first line is
    not indented, the following lines are)."""
    text = dumps_indented(v)[:-1]
    return text.replace("\n", "\n" + _ind(depth)) if depth and "\n" in text else text


def inline_strings(items: list[str] | tuple[str, ...]) -> str:
    """A list of strings on one line, as `json.dumps(items, ensure_ascii=False)` writes it."""
    if not items:
        return "[]"
    if not _ESCAPE.search("".join(items)):
        return '["' + '", "'.join(items) + '"]'
    return "[" + ", ".join(quote(x) for x in items) + "]"


def _number(v: int | float | Any) -> str:
    """An int as written; a Decimal or float as Python's float repr (what json.dumps writes)."""
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def _numbers(values: Any, spec: bytes, text: Callable[[int], str], nonnegative: bool = False) -> Any:
    """A column of a record's figures as the segment `records_text` takes: `(values, spec)`,
    written by the kernel without a str per value, where every value is an int within int64
    (`_int64_column`; with `nonnegative`, none below 0: `cr.pct_text` floors a negative value);
    otherwise the list of their texts, `text(int(v))` made once per distinct value (a fleet's
    units share many figures: 100 %, equal fees, no credit), which is the same text."""
    numbers = _int64_column(values)
    if numbers is not None and not (nonnegative and len(numbers) and int(numbers.min()) < 0):
        return (kernels.as_i64(numbers), spec)
    items = values.tolist() if hasattr(values, "tolist") else list(values)
    return cr.each_once(items, lambda v: text(int(v)))


def _int64_column(values: Any) -> Any:
    """`values` as an int64 array where the kernels were built and it is one: an int64 array,
    or an object array of Python ints each within int64 (the engine's exact figures); None
    otherwise."""
    import numpy as np

    if kernels.compiled is None or not isinstance(values, np.ndarray) or values.ndim != 1:
        return None
    if values.dtype != object:
        return values if values.dtype == np.int64 else None
    items = values.tolist()
    if set(map(type, items)) - {int}:
        return None
    try:
        return np.array(items, dtype=np.int64)
    except OverflowError:
        return None


def _int_column(values: Any) -> Any:
    return _numbers(values, b"d", str)


def _money_column(cents: Any) -> Any:
    return _numbers(cents, b"q2", lambda c: f'"{cr.money(c)}"')


def _pct_column(e4: Any) -> Any:
    return _numbers(e4, b"q4", lambda v: f'"{cr.pct_text(v)}"', nonnegative=True)


def downtime_texts(lnum: list[int], dn: list[int]) -> list[str]:
    """The JSON text of each unit's `downtime_seconds` (`cr.downtime_value` of lnum / dn,
    written as `_number` writes it), in whole columns instead of a Decimal per unit: a whole
    number of seconds is the quotient; otherwise the value rounded half-even to 3 decimals
    is m / 1000 for an integer m, and the float repr of that quotient is the text (m is
    exact as a float, so the division rounds once, correctly, as `float()` converts the
    Decimal). Where the figures are large (lnum of 2**53 / 1000 or more, a divisor of 10**6
    or more: m would not be exact, or the Decimal division's 28 digits could round across a
    half) each unit goes through the Decimal."""
    import numpy as np

    try:
        lv = np.asarray(lnum, dtype=np.int64)
        dv = np.asarray(dn, dtype=np.int64)
    except OverflowError:
        lv = dv = None
    if lv is None or not len(lv) or np.abs(lv).max() >= 2**53 // 1000 or dv.min() <= 0 or dv.max() >= 10**6:
        return [_number(cr.downtime_value(int(x), int(d))) for x, d in zip(lnum, dn)]
    q, r = np.divmod(lv, dv)
    m, r3 = np.divmod(1000 * lv, dv)
    m += (2 * r3 > dv) | ((2 * r3 == dv) & (m % 2 == 1))        # half-even
    return [str(w) if e == 0 else repr(f) for w, e, f in zip(q.tolist(), r.tolist(), (m / 1000).tolist())]


# the depths inside the document: {periods: [ {units: [ {incidents: [...]} ]} ]}
_PERIOD = 2            # a period object is an item of the top-level "periods" list
_RECORD = 4            # a unit or node object is an item of a period's "units" / "nodes" list
_M = "\n" + _ind(_RECORD + 1)             # before a member of a unit or node record
_END = "\n" + _ind(_RECORD) + "}"
_RECORD_SEP = ",\n" + _ind(_RECORD)      # between two records of a list
_FLAG_TEXT = [inline_strings(FLAG_LISTS[b]) for b in range(FLAG_MASK + 1)]


def _pct(value: Any) -> str:
    return format(value.normalize(), "f")


def number_text(v: int, spec: bytes) -> str:
    """An int64 as a number segment `(values, spec)` writes it: b"d" the integer, b"fS" with S
    digits after a point, b"q" and b"qS" the same quoted; below 0, "-" and the text of its
    magnitude (`cr.money` for b"q2", str() for b"d", `cr.pct_text` for b"q4" where v >= 0)."""
    scale = int(spec[1:]) if len(spec) == 2 else 0
    m = abs(int(v))
    text = ("-" if v < 0 else "") + (f"{m // 10 ** scale}.{m % 10 ** scale:0{scale}d}" if scale else str(m))
    return f'"{text}"' if spec[:1] == b"q" else text


def concat_records(n: int, segments: tuple[Any, ...], keep: Any, sep: bytes) -> bytes:
    """Records `keep[0], keep[1], ...` (of n) as UTF-8, `sep` between two of them, each the
    concatenation of `segments` in order: bytes (the same in every record), a list of n str
    (record k's is item k), `(data, starts, ends)` (record k's is data[starts[k]:ends[k]]) or
    `(values, spec)` (record k's is `number_text(values[k], spec)`). The definition of the
    kernel `concat_records`, which does it in two passes over the records with no string
    object per record (`records_text`)."""
    def text(seg: Any, k: int) -> bytes:
        if isinstance(seg, bytes):
            return seg
        if isinstance(seg, list):
            return seg[k].encode("utf-8")
        if len(seg) == 2:
            return number_text(int(seg[0][k]), seg[1]).encode("utf-8")
        data, starts, ends = seg
        return bytes(memoryview(data)[int(starts[k]):int(ends[k])])

    return sep.join(b"".join(text(g, int(k)) for g in segments) for k in keep)


def records_text(n: int, segments: list[Any], keep: Any, sep: bytes = _RECORD_SEP.encode()) -> bytes:
    """`concat_records`, by the kernel where it was built. Neighbouring constant segments
    (str or bytes) are joined first."""
    import numpy as np

    joined: list[Any] = []
    for g in segments:
        if isinstance(g, str):
            g = g.encode("utf-8")
        if isinstance(g, bytes) and joined and isinstance(joined[-1], bytes):
            joined[-1] += g
        else:
            joined.append(g)
    keep = kernels.as_i64(np.arange(n) if keep is None else np.asarray(keep))
    compiled = kernels.compiled
    if compiled is None:
        return concat_records(n, tuple(joined), keep, sep)
    return compiled.concat_records(n, tuple(joined), keep, sep)


def unit_records(sm: Any, pr: Any, names_info: NamesInfo | None = None) -> list[bytes | memoryview]:
    """A scope's unit records in one month (`calculators.result.ScopeMonth`) as UTF-8 pieces,
    the records separated as items of a list. The figures are formatted column by column
    (each distinct value once) into a list per member, and the records are put together
    from those lists, the members' names and the incident ids (slices of one buffer,
    `_incident_text`) in one call (`records_text`)."""
    names_info = names_info or NamesInfo()
    n = len(sm.ids)
    if not n:
        return []
    ids = quote_all(list(sm.ids))
    dn = sm.dn.tolist()
    if all(int(d) == 1 for d in dn):
        down = _int_column(sm.lnum)
    else:
        down = downtime_texts(sm.lnum.tolist(), dn)
    avail = _pct_column(sm.avail_e4)
    credit_pct = cr.each_once(sm.credit_pct, lambda v: f'"{_pct(v)}"' if v is not None else None)
    for i, v in enumerate(sm.credit_pct):
        if v is None:                           # pro rata: the unit's own share
            credit_pct[i] = f'"{format(sm.credit_pct_value(i), "f")}"'
    fees = _money_column(cr.cents_half_up(sm.fee_num, sm.fee_den))
    credit_cents = sm.credit_cents.tolist()
    credits = _money_column(sm.credit_cents)
    after = cr.each_once(credit_cents, lambda c: f'"{cr.money(settle.scaled_cents(int(c), pr))}"')
    flags = cr.each_once(sm.flags.tolist(), lambda b: _FLAG_TEXT[int(b) & FLAG_MASK])
    excluded = _int_column(sm.excluded)
    met = ["true" if x else "false" for x in sm.met.tolist()]
    service = sm.service.tolist() if sm.service is not None else None
    keep: range | list[int] = range(n)
    if service is not None:
        keep = [i for i in range(n) if service[i] != 0]     # no unit-month out of service (rev 1.1, 8.1)
        if not keep:
            return []
    bulk = names_info.incident_text(sm, _RECORD + 1)
    if bulk is None:
        lists = sm.incidents.take_lists() if hasattr(sm.incidents, "take_lists") else \
            [list(sm.incidents.get(i, ())) for i in range(n)]
        incidents: list[Any] = [[inline_strings(x) for x in lists]]
        del lists
    else:
        data, starts, ends, counts = bulk
        incidents = [['["' if c else "[]" for c in counts], (data, starts, ends), ['"]' if c else "" for c in counts]]
    segments: list[Any] = [
        "{" + _M + '"scope": ' + quote(sm.scope) + "," + _M + '"id": ', ids,
        f',{_M}"downtime_seconds": ', down, f',{_M}"excluded_seconds": ', excluded,
        f',{_M}"availability_pct": ', avail, f',{_M}"target_pct": "{_pct(sm.target)}",{_M}"met": ', met,
        f',{_M}"credit_pct": ', credit_pct, f',{_M}"fee": ', fees, f',{_M}"credit": ', credits,
        f',{_M}"incidents": ', *incidents, f',{_M}"flags": ', flags, ","]
    # after the flags: [lost_gpu_seconds], [service_seconds, charged_fee], the credits
    if sm.proportional:
        segments += [f'{_M}"lost_gpu_seconds": ', _int_column(sm.lnum), ","]
    if service is not None:
        charged = _money_column(cr.cents_half_up(sm.charged_num, sm.fee_den)) \
            if sm.charged_num is not None else fees
        segments += [f'{_M}"service_seconds": ', _int_column(sm.service), f',{_M}"charged_fee": ', charged, ","]
    segments += [f'{_M}"credit_before_cap": ', credits, f',{_M}"credit_after_cap_and_minimum": ', after, _END]
    return [records_text(n, segments, keep)]


_ID_SEP = '", "'          # between two strings of a list written on one line
_ID_SEP_UTF8 = _ID_SEP.encode("utf-8")


class NamesInfo:
    """The engine's incident-id table (`IdCodes` names) as an Arrow string array of each id
    followed by the separator of an id list inside a unit record, made once per document;
    None when an id needs JSON escaping (the ids are then quoted one by one).

    With `order` (the document's scope-months, as they are written), the first one's gather
    of ids begins in a worker thread at once, and `incident_text` of one queues all the later
    ones for two workers: the gathers release the GIL, so they run while the records are
    formatted, the next month's beside this one's, and a node month's gather does not wait for
    the main thread to ask for it (two workers: the document phase of the benchmark 0.30 s
    against 0.37 s with one). The tables the gathers share (`plain`, an index's merged lists)
    are made once, under a lock. The buffers gathered ahead are in memory until their records
    are written (at most the document's id text, 150 MB on the benchmark fleet). `close()`
    ends the workers."""

    def __init__(self, order: Iterable[Any] = ()) -> None:
        self._seen: dict[int, tuple[Any, Any]] = {}
        self._joined: dict[int, tuple[Any, Any]] = {}
        self._order = list(order)
        self._pos = {id(sm): i for i, sm in enumerate(self._order)}
        self._ahead: dict[int, Any] = {}
        self._pool: Any = None
        self._lock = threading.Lock()           # the shared tables, made once
        # the first gather (which also makes the shared tables) begins at once: the document's
        # other members (the support figures, the termination, ...) are made while it runs
        self._begin(0)

    def incident_text(self, sm: Any, depth: int) -> tuple[memoryview, np.ndarray, np.ndarray, list[int]] | None:
        """`_incident_text(sm, depth, self)`, begun ahead where `order` names `sm`."""
        i = self._pos.get(id(sm))
        if i is None or depth != _RECORD + 1 or self._order[i] is not sm:
            return _incident_text(sm, depth, self)
        job = self._ahead.pop(i, None)
        if job is None:
            # not begun ahead: done here (the shared tables, the ids with separators and the
            # engine's id codes, are made by the first gather, in the worker or here)
            got = _incident_text(sm, depth, self)
            self._begin_rest(i + 1)
            return got
        self._begin_rest(i + 1)
        return job.result()

    def _begin_rest(self, start: int) -> None:
        for k in range(start, len(self._order)):
            self._begin(k)

    def _begin(self, i: int) -> None:
        if i >= len(self._order) or i in self._ahead:
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="slakit-ids")
        self._ahead[i] = self._pool.submit(_incident_text, self._order[i], _RECORD + 1, self)

    def close(self) -> None:
        """Stop the worker (a gather under way is finished, those not begun are dropped)."""
        self._ahead.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def get(self, names: Any) -> Any:
        """The ids each followed by the list separator (Arrow), for the gather without kernels."""
        plain = self.plain(names)
        with self._lock:
            return self._joined_of(names, plain)

    def _joined_of(self, names: Any, plain: Any) -> Any:
        import pyarrow.compute as pc

        from calculators.log_csv import string_scalar

        got = self._joined.get(id(names))
        if got is None or got[0] is not names:
            arrow = None
            if plain is not None:
                sep = string_scalar(_ID_SEP)      # (not pa.scalar, which imports pandas)
                arrow = pc.binary_join_element_wise(plain, sep, string_scalar(""))
            got = self._joined[id(names)] = (names, arrow)
        return got[1]

    def plain(self, names: Any) -> Any:
        """The ids as one Arrow large_string array; None where one needs escaping (or is no str)."""
        with self._lock:
            return self._plain_of(names)

    def _plain_of(self, names: Any) -> Any:
        import pyarrow as pa

        from calculators.log_csv import arrow_strings

        got = self._seen.get(id(names))
        if got is None or got[0] is not names:
            try:
                arrow = arrow_strings(names)
            except (pa.ArrowException, UnicodeError, TypeError):    # a lone surrogate, not a str
                arrow = None
            if arrow is None or arrow.null_count != 0 or _needs_escape(arrow):
                arrow = None
            got = self._seen[id(names)] = (names, arrow)
        return got[1]


# the first UTF-8 byte of every character of `textsafe.HIDDEN_PAST_C0` (DEL itself; C2: C1
# and U+00AD; CD: U+034F; D8: U+061C; E1: U+115F-U+180F; E2: U+2000-U+2FFF; E3: U+3164; EF:
# U+FE00-U+FFFB; F0: U+1BCA0-U+1D17A; F3: the tags), checked by tests/calculators/test_result_json.py
_HIDDEN_LEADS = (0x7F, 0xC2, 0xCD, 0xD8, 0xE1, 0xE2, 0xE3, 0xEF, 0xF0, 0xF3)


def _needs_escape(arrow: Any) -> bool:
    """Whether a string of the Arrow array may need escaping in JSON: a byte of its UTF-8 data
    is a control character, a quote, a backslash, DEL, or the first byte of a character that
    `jsontext.hidden_escaped` escapes (`_HIDDEN_LEADS`; a character that shares its first byte
    with one of those only costs the slower path). Vector comparisons over the data, no Python
    string per id; past the first three, only where a byte is 0x7F or more (the ids of most
    logs are ASCII)."""
    import numpy as np

    data = arrow.buffers()[2]
    if data is None:
        return False
    b = np.frombuffer(data, dtype=np.uint8)
    if (b < 0x20).any() or (b == 0x22).any() or (b == 0x5C).any():
        return True
    if not len(b) or int(b.max()) < 0x7F:
        return False
    return bool(np.isin(b, _HIDDEN_LEADS).any())


def _incident_text(sm: Any, depth: int, info: NamesInfo
                   ) -> tuple[memoryview, np.ndarray, np.ndarray, list[int]] | None:
    """Every unit's incident ids of a scope, each unit's joined by the list separator, in one
    UTF-8 buffer (one Arrow gather of the ids each followed by the separator, without a Python
    string per id): (buffer, starts, ends, counts): unit i's counts[i] ids are
    buffer[starts[i]:ends[i]]. None where the engine's index offers no id codes or an id needs escaping."""
    import numpy as np

    from calculators.log_csv import int64_array, string_buffers

    index = sm.incidents
    if depth != _RECORD + 1:
        return None
    try:
        bounds, code = index.lists_csr()
        names = index.names()
    except AttributeError:
        return None
    if len(bounds) != len(sm.ids) + 1:
        return None
    compiled = kernels.compiled
    if compiled is not None:
        # one pass copying each id and its separator (an Arrow take of the joined ids, below, is
        # the definition: the same bytes and offsets)
        plain = info.plain(names)
        if plain is None:
            return None
        positions = np.empty(len(code) + 1, dtype=np.int64)
        joined = compiled.join_strings(*string_buffers(plain), kernels.as_i64(code), _ID_SEP_UTF8,
                                       positions)
        offsets = positions[bounds]
        data = memoryview(joined)
    else:
        arrow = info.get(names)
        if arrow is None:
            return None
        taken = arrow.take(int64_array(code))
        buffers = taken.buffers()
        offsets = np.frombuffer(buffers[1], dtype=np.int64)[taken.offset:taken.offset + len(taken) + 1][bounds]
        data = memoryview(buffers[2]) if buffers[2] is not None else memoryview(b"")
    starts = kernels.as_i64(offsets[:-1])
    ends = np.maximum(offsets[1:] - len(_ID_SEP_UTF8), starts)    # without the last separator
    return data, starts, ends, np.diff(bounds).tolist()


def node_records(pr: Any) -> bytes:
    """A month's node records (`calculators.result.NodeMonth`) as UTF-8, separated as items of
    a list (b"" for none), put together as `unit_records` puts its records."""
    nm = pr.nodes
    n = len(nm.ids)
    if not n:
        return b""
    ids = quote_all(list(nm.ids))
    fees = _money_column(nm.fee_cents)
    credits = _money_column(nm.credit_cents)
    settled = _money_column(settle.settled_node_cents(pr))
    basis = cr.each_once(nm.basis.tolist(), lambda b: quote(str(b) or "none"))
    segments: list[Any] = ["{" + _M + '"id": ', ids, f',{_M}"fee": ', fees, f',{_M}"credit": ', credits,
                           f',{_M}"basis": ', basis, ","]
    keep: range | list[int] = range(n)
    if nm.service is not None:
        service = nm.service.tolist()
        keep = [i for i in range(n) if service[i] > 0]
        if not keep:
            return b""
        nc = _money_column(nm.not_charged_cents)
        segments += [f'{_M}"service_seconds": ', _int_column(nm.service), f',{_M}"not_charged": ', nc, ","]
    segments += [f'{_M}"credit_before_cap": ', credits, f',{_M}"credit_after_cap_and_minimum": ', settled, _END]
    return records_text(n, segments, keep)


def _money_or_null(cents: int | None) -> str:
    return f'"{cr.money(cents)}"' if cents is not None else "null"


class _Out:
    """The document as UTF-8 chunks: small pieces of text gathered, long lists encoded as
    they come (one copy of the text, not one per level of nesting). `flush` hands the
    chunks made so far to `sink` (a file being written while the rest is made)."""

    def __init__(self, sink: Callable[[list[bytes | memoryview]], None]) -> None:
        self.sink = sink
        self.chunks: list[bytes | memoryview] = []
        self.pieces: list[str] = []

    def add(self, text: str) -> None:
        self.pieces.append(text)

    def add_pieces(self, data: list[bytes | memoryview]) -> None:
        if self.pieces:
            self.chunks.append("".join(self.pieces).encode("utf-8"))
            self.pieces = []
        self.chunks.extend(data)

    def flush(self) -> None:
        self.add_pieces([])
        if self.chunks:
            chunks, self.chunks = self.chunks, []
            self.sink(chunks)


def _write_obj(out: _Out, members: list[tuple[str, Any]], depth: int) -> None:
    """An object from (key, value) pairs: a value is its text, or a function writing it."""
    if not members:
        out.add("{}")
        return
    ind = "\n" + _ind(depth + 1)
    out.add("{")
    for k, (key, v) in enumerate(members):
        out.add(("," if k else "") + ind + quote(key) + ": ")
        if callable(v):
            v(out)
        else:
            out.add(v)
    out.add("\n" + _ind(depth) + "}")


def _write_records(out: _Out, groups: Iterable[list[bytes | memoryview]], depth: int) -> None:
    """One list of the records of several groups (each the UTF-8 pieces of its records),
    each group handed on (`_Out.flush`) as soon as it is made."""
    first = True
    for g in groups:
        if not g:
            continue
        out.add(("[" if first else ",") + "\n" + _ind(depth + 1))
        first = False
        out.add_pieces(g)
        out.flush()
    out.add("[]" if first else "\n" + _ind(depth) + "]")


def period_members(pr: Any, include_units: bool, claim: Any, names_info: NamesInfo | None = None
                   ) -> list[tuple[str, Any]]:
    from calculators.result_records import iso

    d = _PERIOD + 1
    members: list[tuple[str, Any]] = [
        ("period", quote(pr.period.label)), ("start", quote(iso(pr.period.start))),
        ("end", quote(iso(pr.period.end))), ("hours", quote(_pct(pr.period.hours))),
        ("fee_total", _money_or_null(pr.fee_total_cents)),
        ("credit_uncapped", _money_or_null(pr.credit_uncapped_cents)),
        ("credit_total", _money_or_null(pr.credit_total_cents))]
    rev11 = pr.not_charged_cents is not None
    if rev11:
        members += [("not_charged_total", _money_or_null(pr.not_charged_cents)),
                    ("remedy_total", _money_or_null(pr.remedy_cents))]
    members += [("cap_amount", _money_or_null(pr.cap_cents)), ("cap_applied", value(pr.cap_applied, d)),
                ("minimum", quote(_pct(pr.minimum))), ("minimum_applied", value(pr.minimum_applied, d))]
    if rev11:
        members.append(("minimum_rule", quote("more_than" if pr.minimum_strict else "at_least")))

    def units(out: _Out) -> None:
        groups = (unit_records(sm, pr, names_info) for sm in pr.scopes.values()) if include_units else ()
        _write_records(out, groups, d)

    def nodes(out: _Out) -> None:
        nodes = node_records(pr) if include_units else b""
        _write_records(out, [[nodes]] if nodes else [], d)

    members += [("units", units), ("nodes", nodes)]
    if claim is not None:
        members.append(("claim", value({"due": iso(claim.due) if claim.due is not None else None,
                                        "status": claim.status}, d)))
    return members


def _quarters(result: Any) -> list[dict[str, Any]]:
    out = []
    for q in result.quarter_totals():
        d: dict[str, Any] = {"quarter": q.quarter, "months": list(q.months), "fee_total": format(q.fee_total, "f"),
                             "credit_total": format(q.credit_total, "f")}
        if q.not_charged_total is not None:
            d["not_charged_total"] = format(q.not_charged_total, "f")
            d["remedy_total"] = format(q.remedy_total, "f")
        out.append(d)
    return out


def _figure_json(f: Any, ids: Callable[[Any], Any] = lambda f: list(f.breach_ids)) -> dict[str, Any]:
    return {"target_seconds": f.target_seconds, "count": f.count, "measured": f.measured, "open": f.open,
            "breaches": f.breaches, "met": f.met, "p50_seconds": f.p50_seconds, "p95_seconds": f.p95_seconds,
            "max_seconds": f.max_seconds, "breach_ids": ids(f)}


def support_json(s: Any, ids: Callable[[Any], Any] = lambda f: list(f.breach_ids)) -> dict[str, Any]:
    """The document's `support` member from `Result.support` (`SupportFigures`; None: `{}`).
    `ids(figure)`: what stands for a figure's `breach_ids` (the list of them)."""
    from calculators.result_records import iso

    if s is None:
        return {}
    return {"basis": s.basis, "from": iso(s.start.timestamp()), "to": iso(s.end.timestamp()),
            "as_of": iso(s.as_of.timestamp()), "percentile_method": s.percentile_method,
            "incidents": s.incidents, "planned_excluded": s.planned_excluded,
            "detection": _figure_json(s.detection, ids),
            "response": {f.group: _figure_json(f, ids) for f in s.response},
            "restore": {f.group: _figure_json(f, ids) for f in s.restore}}


def _support_member(s: Any, names_info: NamesInfo) -> str | Callable[[_Out], None]:
    """The `support` member (at depth 1) as `value(support_json(s), 1)` writes it. A figure's
    breach ids held as codes (`IdList`: a million of them, 20 MB of text, on the benchmark
    fleet) are gathered from the log's id table by the kernel, without a Python string per
    id and without the GIL, into the place a stand-in took in the text of the rest; where
    that cannot be done (no kernels, an id to escape) the whole member is `value`'s text."""
    compiled = kernels.compiled
    figures = [] if s is None else [s.detection, *s.response, *s.restore]
    lazy = [f.breach_ids for f in figures if len(f.breach_ids) and hasattr(f.breach_ids, "codes")]
    if compiled is None or not lazy or any(names_info.plain(x.names) is None for x in lazy):
        return value(support_json(s), 1)
    import numpy as np

    from calculators.log_csv import string_buffers

    stand_in: dict[int, int] = {}

    def ids(f: Any) -> Any:
        if len(f.breach_ids) and hasattr(f.breach_ids, "codes"):
            stand_in[len(stand_in)] = id(f)
            return f"\x00breach-ids-{len(stand_in) - 1}"
        return list(f.breach_ids)

    text = value(support_json(s, ids), 1)
    by_id = {id(f): f for f in figures}
    pieces: list[str | bytes] = []
    at = 0
    for k, fid in stand_in.items():
        mark = quote(f"\x00breach-ids-{k}")
        i = text.index(mark, at)
        line = text.rfind("\n", 0, i) + 1
        ind = " " * (len(text[line:i]) - len(text[line:i].lstrip(" ")))
        sep = f'",\n{ind}  "'.encode("utf-8")
        ids_of = by_id[fid].breach_ids
        plain = names_info.plain(ids_of.names)
        positions = np.empty(len(ids_of) + 1, dtype=np.int64)
        joined = compiled.join_strings(*string_buffers(plain), kernels.as_i64(ids_of.codes), sep, positions)
        pieces += [text[at:i] + f'[\n{ind}  "', memoryview(joined)[:len(joined) - len(sep)], f'"\n{ind}]']
        at = i + len(mark)
    pieces.append(text[at:])

    def write(out: _Out) -> None:
        for p in pieces:
            if isinstance(p, str):
                out.add(p)
            else:
                out.add_pieces([p])
    return write


def _chronic_units(units: Any) -> list[dict[str, Any]]:
    return [{"scope": u.scope, "id": u.id, "months_below_target": list(u.months_below_target)} for u in units]


def chronic_json(ch: Any) -> dict[str, Any] | None:
    """`termination.chronic` from a `ChronicTrigger` (judged with history: also
    `months_missing`, `history_months` and `near`)."""
    if ch is None:
        return None
    out: dict[str, Any] = {"months_below_target": ch.months_below_target, "within_months": ch.within_months,
                           "months_considered": list(ch.months_considered)}
    if ch.with_history:
        out["months_missing"] = list(ch.months_missing)
        out["history_months"] = list(ch.history_months or ())
    out.update({"window_complete": ch.window_complete, "note": ch.note, "termination_right": ch.termination_right,
                "triggered": _chronic_units(ch.triggered)})
    if ch.with_history:
        out["near"] = _chronic_units(ch.near or ())
    return out


def acceptance_delay_json(a: Any) -> dict[str, Any]:
    """`termination.acceptance_delay` from an `AcceptanceDelay` (dates as YYYY-MM-DD, money and
    the percentage as decimal strings)."""
    return {
        "deadline": a.deadline.isoformat() if a.deadline else None,
        "accepted_on": a.accepted_on.isoformat(),
        "days_late": a.days_late,
        "credit_per_day_pct": None if a.credit_per_day_pct is None else str(a.credit_per_day_pct),
        "monthly_fee": str(a.monthly_fee),
        "credit": str(a.credit),
        "currency": a.currency,
        "termination_right": a.termination_right,
        "termination_right_from": a.termination_right_from.isoformat() if a.termination_right_from else None,
        "monthly_fee_month": a.monthly_fee_month,
    }


def termination_json(t: Any) -> dict[str, Any]:
    """The document's `termination` member from `Result.termination` (`Termination`; None: `{}`)."""
    if t is None:
        return {}
    out: dict[str, Any] = {"chronic": chronic_json(t.chronic)}
    if t.acceptance_delay is not None:
        out["acceptance_delay"] = acceptance_delay_json(t.acceptance_delay)
    return out


def document_bytes(result: Any, include_units: bool = True, include_incidents: bool = False,
                   extra: dict[str, Any] | None = None) -> bytes:
    """The document as UTF-8 (ends with a newline): `document_chunks` joined."""
    return b"".join(document_chunks(result, include_units, include_incidents, extra))


def document_chunks(result: Any, include_units: bool = True, include_incidents: bool = False,
                    extra: dict[str, Any] | None = None) -> list[bytes | memoryview]:
    """The document as UTF-8 pieces, in order (the text ends with a newline): the long runs
    of incident ids are slices of Arrow buffers, not copied again; writing the pieces
    (`slaschema.fileio.write_atomic` takes the list) gives the file without a joined copy
    of the whole document in memory."""
    chunks: list[bytes | memoryview] = []
    write_document(result, chunks.extend, include_units, include_incidents, extra)
    return chunks


def write_document(result: Any, write: Callable[[list[bytes | memoryview]], None], include_units: bool = True,
                   include_incidents: bool = False, extra: dict[str, Any] | None = None) -> None:
    """The document as UTF-8 pieces handed to `write` in order, a batch at a time as it is
    made (each scope's unit records of a month, the month's node records, ...): with
    `slaschema.fileio.atomic_writer` each batch is written as it comes and then freed, so
    the whole document is never in memory at once. `include_incidents` (the result computed
    with `incidents=True`) adds per month `downtime_by_category` and `downtime_by_cause`
    and at the end `incidents` (one record per incident id) and `rack_day_downtime`;
    `extra` adds top-level members after all others."""
    from calculators.result_records import gc_paused, iso

    if include_incidents and result.figures is None:
        raise ValueError("per-incident figures were not computed; pass incidents=True to compute()")
    with gc_paused():
        claims = {m.period: m for m in result.claims.months} if result.claims is not None else {}
        f = result.figures if include_incidents else None
        names_info = NamesInfo([sm for pr in result.periods for sm in pr.scopes.values()] if include_units else ())
        try:
            def periods(out: _Out) -> None:
                if not result.periods:
                    out.add("[]")
                    return
                ind = "\n" + _ind(_PERIOD)
                out.add("[")
                for k, pr in enumerate(result.periods):
                    members = period_members(pr, include_units, claims.get(pr.period.label), names_info)
                    if f is not None:
                        members += [("downtime_by_category", value(f.breakdown_json(f.by_category[pr.period.label]),
                                                                   _PERIOD + 1)),
                                    ("downtime_by_cause", value(f.breakdown_json(f.by_cause[pr.period.label]),
                                                                _PERIOD + 1))]
                    out.add(("," if k else "") + ind)
                    _write_obj(out, members, _PERIOD)
                out.add("\n" + _ind(1) + "]")

            # the members after the periods are made first: their text (the support figures'
            # breach ids are 20 MB for a 12,600-node quarter) is made while the worker gathers
            # the first month's ids, instead of after the last month's records
            tail = [("quarters", value(_quarters(result), 1)),
                    ("support", _support_member(result.support, names_info)),
                    ("termination", value(termination_json(result.termination), 1))]
            top: list[tuple[str, Any]] = [
                ("format", quote(FORMAT)),
                ("contract", value(result.contract, 1)),
                ("contract_sha256", value(result.contract_sha256, 1)),
                ("incidents_file", value(result.incidents_file, 1)),
                ("incidents_sha256", value(result.incidents_sha256, 1)),
                ("currency", value(result.currency, 1)),
                ("timezone", value(result.timezone, 1)),
                ("as_of", quote(iso(result.as_of))),
                ("skipped_rows", value(list(result.skipped_rows), 1)),
                ("open_incidents", value(list(result.open_incidents), 1)),
                ("periods", periods),
                *tail,
            ]
            if result.claims is not None:
                top += [("claims_as_of", quote(iso(result.claims.as_of))),
                        ("claim_window", value(result.claims.window, 1)),
                        ("claimable_total", quote(cr.money(result.claims.claimable_cents)))]
            if f is not None:
                top += [("incidents", value(f.records(), 1)), ("rack_day_downtime", value(f.rack_days.to_json(), 1))]
            for k, v in (extra or {}).items():
                top.append((k, value(v, 1)))
            out = _Out(write)
            _write_obj(out, top, 0)
        finally:
            names_info.close()        # (its first gather began at once)
        out.add("\n")
        out.flush()


def document_text(result: Any, include_units: bool = True, include_incidents: bool = False,
                  extra: dict[str, Any] | None = None) -> str:
    """`document_bytes` as text."""
    return document_bytes(result, include_units, include_incidents, extra).decode("utf-8")
