"""Indented JSON text, fast: the bytes of `json.dumps(doc, indent=2, ensure_ascii=False)`.

The standard library writes indented JSON with its pure-Python encoder (its C encoder only
serves the compact form): the credits document of a 12,600-node quarter (about 230 MB)
took 9-11 s. orjson writes the same text several times faster. The two agree on str (any
Unicode, control characters escaped alike), int, bool, None, lists and tuples, dicts with
str keys, and floats from 1e-4 up (both write Python's `repr` there). They differ below
1e-4 (`1e-05` against `0.00001`, `1e-07` against `1e-7`): when orjson's text has such a
number, or orjson refuses the document (an int beyond 64 bits, a non-str key, a lone
surrogate, another type), the standard library writes it. Floats must be finite: orjson
writes NaN and infinities as `null` where the standard library writes `NaN` (not JSON);
slakit's documents hold none. tests/test_jsontext.py checks that the text is the standard
library's.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def _small_float(data: bytes) -> bool:
    """Whether orjson's text has a number below 1e-4 (`0.00001`, `1e-7`): the one place its
    floats differ from Python's `repr` (`1e-05`, `1e-07`). A number is a token after `: `,
    `[` or an indentation; the same characters inside a string only cost the slower path."""
    for needle in (b"0.0000", b"e-"):
        i = data.find(needle)
        while i >= 0:
            j = i
            if needle == b"e-":           # back to the start of the token: digits, '.', '-'
                while j > 0 and data[j - 1] in b"0123456789.":
                    j -= 1
                if j == i:                # no digit before the 'e': text, not a number
                    i = data.find(needle, i + 2)
                    continue
            if j > 0 and data[j - 1] == 45:          # '-'
                j -= 1
            if j == 0 or data[j - 1] in b" [\n":
                return True
            i = data.find(needle, i + len(needle))
    return False


def _orjson_text(doc: Any) -> bytes | None:
    """orjson's indented text where it is the standard library's, else None."""
    try:
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return None
    return None if _small_float(data) else data


def dumps_indented(doc: Any) -> str:
    """`json.dumps(doc, indent=2, ensure_ascii=False) + "\\n"`, the same text."""
    data = _orjson_text(doc)
    return data.decode("utf-8") if data is not None else json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def dumps_indented_utf8(doc: Any) -> bytes:
    """The same text as UTF-8 bytes, for writing to a file (no decoding and encoding again
    of a document of hundreds of megabytes)."""
    data = _orjson_text(doc)
    return data if data is not None else (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def dumps_indented_ascii(doc: Any) -> str:
    """`json.dumps(doc, indent=2)` (non-ASCII escaped, no final newline), the same text:
    orjson's where that is all ASCII, else the standard library's."""
    data = _orjson_text(doc)
    if data is not None and data.isascii():
        return data[:-1].decode("ascii")
    return json.dumps(doc, indent=2)
