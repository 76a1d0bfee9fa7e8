"""How long chosen arrays of a JSON text are, found without parsing the text.

`long_arrays(data, limits)` gives every array at one of the paths in `limits` (for example
`("criteria", ANY, "verdicts")`) that holds more items than that path's limit. It reads the
bytes a chunk at a time with numpy and keeps nothing per value: the strings are marked by
their unescaped quotes, then the brackets, braces and commas outside strings give each
container's depth and the number of items of each array. A results.json of 335 MB is
scanned in 0.9 s of CPU with about 65 MB beside its bytes, where building it (pydantic's
parser and validation) took 24 s and 6.5 GB. The cost grows with the brackets and commas in
the text: one made of nothing else takes about 65 ns a byte.

The scan speaks only of text whose brackets balance (and are closed by their own kind at the
depths of the paths), whose strings are closed and whose lists and objects hold no empty item:
a comma right after `[`, `{` or another comma, or a `]` or `}` right after a comma (nothing
but whitespace between, outside strings: `[,1]`, `[1,,2]`, `[1,]`), at any depth, since
counting commas would take each empty place for an item. Otherwise it answers None and leaves
the judgment to the parser, which names the error and where it is. Whitespace here is any
byte up to 0x20: in JSON the others below it may stand nowhere, so text holding one is not
JSON either way. An item that is there but is no JSON value (`[x, y]`) is counted as written.
An array is identified by its path of object keys (escapes decoded) and list indices; with a
key given twice, each of its values is counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

ANY: Final = int                     # in a path: any index of a list
CHUNK = 1 << 23                      # bytes scanned at a time

_QUOTE, _COMMA, _OPEN_LIST, _CLOSE_LIST, _OPEN_OBJECT, _CLOSE_OBJECT = 0x22, 0x2C, 0x5B, 0x5D, 0x7B, 0x7D
_BACKSLASH = 0x5C
_WHITESPACE = b" \t\n\r"
_LONGEST_KEY = 256                   # bytes of a key's JSON text searched for its opening quote
_BLANK = 0x20                        # bytes up to this one are whitespace between tokens

Path = tuple[str | int, ...]


def long_arrays(data: bytes, limits: Mapping[tuple[str | type[int], ...], int]) -> list[tuple[Path, int, int]] | None:
    """(path, items, limit) of each array whose path matches a key of `limits` and which holds
    more items than the limit, in the order they end in the text; None when the text is not
    well formed enough to tell."""
    import numpy as np

    if not limits:
        return []
    max_depth = 1 + max(len(p) for p in limits)          # the root object is depth 1
    floor = min(limits.values())
    keys = {k for p in limits for k in p if isinstance(k, str)}

    step = np.zeros(256, np.int64)                        # by byte: +1 opens a container, -1 closes one
    step[[_OPEN_LIST, _OPEN_OBJECT]] = 1
    step[[_CLOSE_LIST, _CLOSE_OBJECT]] = -1
    whole = np.frombuffer(data, np.uint8)                 # the text itself, not a copy
    last_pos, last_kind = -1, _OPEN_LIST                  # the token before the chunk (the text's start as `[`)

    found: list[tuple[int, Path, int, int]] = []           # (where the array ends, path, items, limit)
    in_string = 0                                         # the text so far ends inside a string
    odd_backslashes = 0                                   # ... after an odd run of backslashes
    depth = 0
    commas = [0] * (max_depth + 1)                        # commas seen so far at each depth
    # the container open at each depth when the chunk starts: (position, kind, commas at its
    # depth before it, commas at its parent's depth before it)
    carried: dict[int, tuple[int, int, int, int]] = {}
    view = memoryview(data)
    # buffers used for every chunk (fresh 8 MB arrays cost page faults each time)
    size = min(CHUNK, len(data))
    quote_buf, mark_buf, other_buf = np.empty(size, bool), np.empty(size, bool), np.empty(size, bool)
    folded_buf = np.empty(size, np.uint8)
    for start in range(0, len(data), CHUNK):
        b = np.frombuffer(view[start:start + CHUNK], np.uint8)
        n = b.size
        quote, mark, other, folded = quote_buf[:n], mark_buf[:n], other_buf[:n], folded_buf[:n]
        np.equal(b, _QUOTE, out=quote)
        if odd_backslashes or data.find(b"\\", start, start + n) >= 0:
            odd_backslashes = _unescaped(b, quote, odd_backslashes, mark)
        inside = _prefix_xor(quote, in_string)            # bit i: byte i is inside a string (or its quote)
        in_string = int(inside[(n - 1) >> 3] >> ((n - 1) & 7) & 1)
        # brackets and braces (`[` and `{` differ by 0x20, as do `]` and `}`) and commas
        np.bitwise_or(b, 0x20, out=folded)
        np.equal(folded, _OPEN_OBJECT, out=mark)
        np.equal(folded, _CLOSE_OBJECT, out=other)
        mark |= other
        np.equal(b, _COMMA, out=other)
        mark |= other
        at = np.flatnonzero(mark)
        at = at[(inside[at >> 3] >> (at & 7).astype(np.uint8) & 1) == 0]
        if not at.size:
            continue
        kind = b[at]
        if _empty_item(whole, b, at, kind, start, last_pos, last_kind):
            return None
        last_pos, last_kind = int(at[-1]) + start, int(kind[-1])
        after = np.cumsum(step[kind], dtype=np.int64)     # the depth after each token
        after += depth
        if int(after.min()) < 0:
            return None
        depth = int(after[-1])
        shallow = np.flatnonzero(after <= max_depth)      # (a closer at max_depth is dropped below)
        pos, kind, level = at[shallow] + start, kind[shallow], after[shallow]
        level += (kind == _CLOSE_LIST) | (kind == _CLOSE_OBJECT)   # the depth of the container each token is in
        if level.size and int(level.max()) > max_depth:
            keep = level <= max_depth
            pos, kind, level = pos[keep], kind[keep], level[keep]
        if not kind.size:
            continue
        # the tokens grouped by depth (a stable sort keeps each group in text order)
        order = np.argsort(level.astype(np.int8), kind="stable")
        pos, kind = pos[order], kind[order]
        bounds = np.searchsorted(level[order], np.arange(1, max_depth + 2))
        comma_at: dict[int, Any] = {}
        shut: dict[int, tuple[Any, Any, Any]] = {}
        opens: dict[int, tuple] = {}
        for d in range(1, max_depth + 1):
            p_d, k_d = pos[bounds[d - 1]:bounds[d]], kind[bounds[d - 1]:bounds[d]]
            is_comma = k_d == _COMMA
            before = np.cumsum(is_comma) + commas[d]      # commas at this depth up to each token, from the start
            comma_at[d] = p_d[is_comma]
            other = np.flatnonzero(~is_comma)
            p_d, k_d, before = p_d[other], k_d[other], before[other]
            closing = (k_d == _CLOSE_LIST) | (k_d == _CLOSE_OBJECT)
            shut[d] = (p_d[closing], k_d[closing], before[closing])
            opening = ~closing
            o_pos, o_kind, o_self = p_d[opening], k_d[opening], before[opening]
            o_parent = None                               # commas at the depth above: worked out when asked
            if d in carried:
                p, k, cs, cp = carried.pop(d)
                o_pos, o_kind, o_self = np.r_[p, o_pos], np.r_[k, o_kind], np.r_[cs, o_self]
                o_parent = cp
            opens[d] = (o_pos, o_kind, o_self, o_parent)
        chunk = _Chunk(opens, comma_at, list(commas))
        for d in range(1, max_depth + 1):
            o_pos, o_kind, o_self, _ = opens[d]
            c_pos, c_kind, c_before = shut[d]
            n = c_pos.size
            if not (o_pos.size == n or o_pos.size == n + 1):
                return None
            if np.any((o_kind[:n] == _OPEN_LIST) != (c_kind == _CLOSE_LIST)):
                return None                               # `[` closed by `}` or `{` by `]`
            if o_pos.size == n + 1:
                carried[d] = (int(o_pos[-1]), int(o_kind[-1]), int(o_self[-1]), chunk.parent_commas(d, o_pos.size - 1))
            items = c_before - o_self[:n] + 1             # the commas inside, plus one
            for i in np.flatnonzero((o_kind[:n] == _OPEN_LIST) & (items > floor)):
                count = int(items[i])
                if count == 1 and not data[int(o_pos[i]) + 1:int(c_pos[i])].strip(_WHITESPACE):
                    continue                              # `[]`
                path = _path(data, chunk, d, int(i), keys)
                limit = _limit(path, limits) if path is not None else None
                if limit is not None and count > limit:
                    found.append((int(c_pos[i]), path, count, limit))
        for d in range(1, max_depth + 1):
            commas[d] += int(comma_at[d].size)
    if in_string or depth:
        return None
    return [(path, count, limit) for _, path, count, limit in sorted(found, key=lambda f: f[0])]


def _empty_item(whole: Any, b: Any, at: Any, kind: Any, start: int, last_pos: int, last_kind: int) -> bool:
    """Whether a token of chunk `b` (`at`: the tokens' offsets in it, `kind`: their bytes)
    makes an empty item with the token before it (for the first, the last of the chunks
    before: `last_pos` in the text, `last_kind`), nothing but whitespace between: a comma
    after `[`, `{` or a comma, or a closer after a comma. `whole`: the text. In JSON the byte
    right before a token is mostly that of a value or of another token, which settles it; a
    token after whitespace is looked at further only where the token before it and it would
    make an empty item: two bytes back, then the rest of the space between at once."""
    import numpy as np

    if start:
        pb = whole[start - 1:start - 1 + b.size][at]      # the byte right before each token
    else:
        pb = b[at - 1]
        if at[0] == 0:
            pb[0] = _OPEN_LIST                            # the text's start counts as a `[`
    # `[`, `{` or `,` right before a token outside strings is a token itself (a string ends in a quote)
    if np.any(_follows_badly(pb, kind)):
        return True
    spaced = np.flatnonzero(pb <= _BLANK)
    if not spaced.size:
        return False
    before = kind[spaced - 1]
    if spaced[0] == 0:
        before[0] = last_kind
    spaced = spaced[_follows_badly(before, kind[spaced])]
    if not spaced.size:
        return False
    p = at[spaced] + start                                # the second token of each such pair, in the text
    for back in (2, 3):
        here = p - back
        if here[0] < 0:                                   # only whitespace back to the text's start
            return True
        found = whole[here]
        if np.any(_is_open_or_comma(found)):              # ... or back to the token before
            return True
        keep = found <= _BLANK                            # (any other byte is part of a value)
        p, spaced = p[keep], spaced[keep]
        if not p.size:
            return False
    q = at[spaced - 1] + start                            # the token before each one left
    if spaced[0] == 0:
        q[0] = last_pos
    # the largest byte between each pair left (the spans between pairs are reduced too, and dropped)
    lo = int(q[0]) + 1
    bounds = np.empty(2 * p.size - 1, np.intp)
    bounds[0::2] = q + 1 - lo
    bounds[1::2] = p[:-1] - lo
    top = np.maximum.reduceat(whole[lo:int(p[-1])], bounds)[0::2]
    return bool(np.any(top <= _BLANK))


def _is_open_or_comma(found: Any) -> Any:
    return (found == _COMMA) | ((found | 0x20) == _OPEN_OBJECT)


def _follows_badly(first: Any, second: Any) -> Any:
    """By pair of tokens (bytes): whether `second` right after `first` leaves an empty item
    (a comma after `[`, `{` or a comma; `]` or `}` after a comma)."""
    after_comma = first == _COMMA
    after_open = (first | 0x20) == _OPEN_OBJECT           # `[` or `{`
    second_open = (second | 0x20) == _OPEN_OBJECT
    after_comma &= ~second_open                           # a comma, `]` or `}` after a comma
    after_open &= second == _COMMA
    return after_comma | after_open


def _unescaped(b: Any, quote: Any, odd_before: int, scratch: Any) -> int:
    """Clears in `quote` the quotes of chunk `b` that a backslash escapes (one after an odd run
    of backslashes; `odd_before`: the chunk starts right after one). Returns whether the
    chunk ends in an odd run. `scratch`: a bool array of b's size to use."""
    import numpy as np

    if odd_before and quote[0]:
        quote[0] = False
    bs = np.flatnonzero(np.equal(b, _BACKSLASH, out=scratch))
    if not bs.size:
        return 0
    n = b.size
    before_quote = bs[quote[np.minimum(bs + 1, n - 1)] & (bs + 1 < n)]   # backslashes right before a quote
    if not before_quote.size:
        if bs[-1] != n - 1:
            return 0
        tail = int(np.argmax(b[::-1] != _BACKSLASH)) if bs.size < n else n   # the run the chunk ends in
        return (tail + (odd_before if tail == n else 0)) % 2
    first = np.ones(bs.size, bool)
    first[1:] = bs[1:] != bs[:-1] + 1
    idx = np.arange(bs.size)
    run = idx - np.maximum.accumulate(np.where(first, idx, 0)) + 1   # backslashes so far in each one's run
    if odd_before and bs[0] == 0:
        later = np.flatnonzero(first[1:])
        run[: later[0] + 1 if later.size else bs.size] += 1
    odd = run[np.searchsorted(bs, before_quote)] % 2 == 1
    quote[before_quote[odd] + 1] = False
    return int(bs[-1] == n - 1 and run[-1] % 2 == 1)


def _prefix_xor(flags: Any, odd_before: int) -> Any:
    """Bit i (of byte i // 8, least significant first): whether an odd number of the flags up
    to and including position i are set, plus `odd_before`. 64 positions per machine word: 6
    shifts within each, then a carry from the words before."""
    import numpy as np

    packed = np.packbits(flags, bitorder="little")
    words = np.zeros((packed.size + 7) // 8 * 8, np.uint8)
    words[:packed.size] = packed
    x = words.view("<u8")
    for shift in (1, 2, 4, 8, 16, 32):
        x ^= x << np.uint64(shift)
    odd = np.bitwise_xor.accumulate((x >> np.uint64(63)).astype(np.uint8))
    carry = np.empty(x.size, np.uint64)
    carry[0] = odd_before
    carry[1:] = odd[:-1] ^ odd_before
    x ^= np.uint64(0) - carry                               # all ones where the words before hold an odd count
    return words


class _Chunk:
    """The containers opened at each depth in one chunk (the one carried in from before
    first) and where its commas are, to work out paths."""

    def __init__(self, opens: dict[int, tuple], comma_at: dict[int, Any], commas_before: list[int]) -> None:
        self.opens, self.comma_at, self.commas_before = opens, comma_at, commas_before

    def parent_commas(self, d: int, i: int) -> int:
        """Commas at depth d - 1 before the i-th container opened at depth d."""
        import numpy as np

        o_pos, _, _, carried_parent = self.opens[d]
        if i == 0 and carried_parent is not None:
            return int(carried_parent)
        if d == 1:
            return 0
        return self.commas_before[d - 1] + int(np.searchsorted(self.comma_at[d - 1], o_pos[i]))


def _path(data: bytes, chunk: _Chunk, d: int, i: int, keys: set[str]) -> Path | None:
    """The path of the i-th container opened at depth d in this chunk (the one carried in
    first), from its parents; None where a key is not one of `keys` or the root is no object."""
    import numpy as np

    out: list[str | int] = []
    while d > 1:
        o_pos = chunk.opens[d][0]
        p_pos, p_kind, p_self, _ = chunk.opens[d - 1]
        here = int(o_pos[i])
        j = int(np.searchsorted(p_pos, here)) - 1
        if j < 0:
            return None
        if p_kind[j] == _OPEN_LIST:
            out.append(chunk.parent_commas(d, i) - int(p_self[j]))
        else:
            key = _key_before(data, here, int(p_pos[j]))
            if key is None or key not in keys:
                return None
            out.append(key)
        d, i = d - 1, j
    if chunk.opens[1][1][i] != _OPEN_OBJECT:
        return None
    return tuple(reversed(out))


def _key_before(data: bytes, here: int, lo: int) -> str | None:
    """The key whose value opens at `here` inside the object opened at `lo`: `"key" : [`."""
    k = here - 1
    while k > lo and data[k] in _WHITESPACE:
        k -= 1
    if data[k] != 0x3A:                                   # ":"
        return None
    k -= 1
    while k > lo and data[k] in _WHITESPACE:
        k -= 1
    if data[k] != 0x22:
        return None
    close = k
    floor = max(lo, close - _LONGEST_KEY)
    k = close
    while True:
        k = data.rfind(b'"', floor, k)
        if k < 0:
            return None
        run = 0
        while data[k - 1 - run] == _BACKSLASH:
            run += 1
        if run % 2 == 0:
            break
    try:
        key = json.loads(data[k:close + 1])
    except ValueError:
        return None
    return key if isinstance(key, str) else None


def _limit(path: Path, limits: Mapping[tuple[str | type[int], ...], int]) -> int | None:
    for pattern, limit in limits.items():
        if len(pattern) == len(path) and all(
                (isinstance(p, int) and not isinstance(p, bool)) if want is ANY else p == want
                for want, p in zip(pattern, path)):
            return limit
    return None
