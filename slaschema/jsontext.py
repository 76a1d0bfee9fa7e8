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

One difference from the standard library, on purpose: the characters JSON lets through as
they are but a terminal acts on or a viewer hides or reorders (DEL, C1 controls such as
U+009B, which starts an escape sequence, bidi marks, embeddings, overrides and isolates,
zero-width characters, line and paragraph separators, the BOM: `textsafe.HIDDEN_PAST_C0`)
are written as `\\u` escapes of four hex digits, U+009B as `\\u009b` (`hidden_escaped`), as
the standard library writes control characters. A document written to a terminal
(`--format json` without `-o`) then shows an incident id such as `INC-\\u009b31m` instead of
acting on it; the text reads back the same.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from slaschema.textsafe import HIDDEN_PAST_C0

_HIDDEN = re.compile(f"[{HIDDEN_PAST_C0}]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    if c < 0x10000:
        return f"\\u{c:04x}"
    c -= 0x10000                  # past the BMP: a surrogate pair, as JSON writes such a character
    return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"


def hidden_escaped(text: str) -> str:
    """JSON `text` with each `textsafe.HIDDEN_PAST_C0` character as a `\\u` escape of four hex
    digits, past U+FFFF a surrogate pair of them (they can only be inside its strings: JSON's own
    syntax is ASCII). O(1) for text of ASCII only but DEL, which is most of it."""
    if text.isascii() and "\x7f" not in text:
        return text
    return _HIDDEN.sub(_escape, text)


def hidden_escaped_utf8(data: bytes) -> bytes:
    """`hidden_escaped` of UTF-8 JSON text."""
    if data.isascii() and b"\x7f" not in data:
        return data
    return hidden_escaped(data.decode("utf-8", errors="surrogatepass")).encode("utf-8", errors="surrogatepass")


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
    """`json.dumps(doc, indent=2, ensure_ascii=False) + "\\n"`, the same text (but for the
    characters `hidden_escaped` escapes)."""
    data = _orjson_text(doc)
    return hidden_escaped(data.decode("utf-8") if data is not None
                          else json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def dumps_indented_utf8(doc: Any) -> bytes:
    """The same text as UTF-8 bytes, for writing to a file (no decoding and encoding again
    of a document of hundreds of megabytes where it holds only ASCII)."""
    data = _orjson_text(doc)
    if data is None:
        return hidden_escaped(json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return hidden_escaped_utf8(data)


def dumps_indented_ascii(doc: Any) -> str:
    """`json.dumps(doc, indent=2)` (non-ASCII escaped, no final newline), the same text:
    orjson's where that is all ASCII, else the standard library's (DEL, the one character
    of `hidden_escaped` that is ASCII, escaped too)."""
    data = _orjson_text(doc)
    if data is not None and data.isascii():
        text = data[:-1].decode("ascii")
    else:
        text = json.dumps(doc, indent=2)
    return text.replace("\x7f", "\\u007f")
