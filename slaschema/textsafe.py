"""Text from inputs made safe for what people open: spreadsheets, Markdown, terminals.

Incident causes, ids, titles and node names come from files the other party wrote. Each
output neutralises what its reader would run rather than show:

- CSV (`csv_cell`, `csv_rows`): characters a terminal or a spreadsheet would act on rather
  than show (C0 and C1 controls other than TAB and newline, DEL, bidi overrides and
  isolates, zero-width characters, line/paragraph separators, the BOM) are written as
  visible `<U+hhhh>` (hhhh: the code point in hex; ESC is `<U+001B>`); CRLF becomes LF.
  Then a cell starting with `=`, `+`, `-`, `@`, TAB or CR is a formula to Excel, LibreOffice
  and Google Sheets (OWASP "CSV injection"); such a cell gets a leading `'`. Numbers (`-1.5`, `+3`) are left alone. Both
  steps are idempotent (a neutralised cell stays as it is); `csv_uncell` undoes them for a
  file slakit reads back. `slakit --raw-csv` (or SLAKIT_RAW_CSV=1) writes cells as they are.
- Markdown (`md_text`): `<`, `>` and `&` become entities, so raw HTML (`<script>`,
  `<img onerror=...>`) shows as text; links other than http(s)/mailto lose their target.
- Terminal (`terminal_text`, `rich_text`): control characters, ANSI/OSC escape sequences
  and other C0/C1 codes are removed; `rich_text` also escapes Rich markup (`[/bold]`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

_raw_csv: bool | None = None
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?%?\Z")  # \Z: "$" would allow a final newline


def set_raw_csv(raw: bool | None) -> None:
    """True: write CSV cells as they are for this process; None: back to the default/environment."""
    global _raw_csv
    _raw_csv = raw


def raw_csv() -> bool:
    if _raw_csv is not None:
        return _raw_csv
    return os.environ.get("SLAKIT_RAW_CSV", "") in ("1", "true", "yes")


# what a terminal runs (ESC starts a sequence, BEL rings, CR moves the cursor back over text)
# or a viewer reorders or hides: C0 but TAB and LF, DEL, C1, Arabic letter mark, zero-width
# and bidi marks, line/paragraph separators, bidi embeddings/overrides and isolates, word
# joiner and invisible operators, BOM, interlinear annotation
# joiner and invisible operators, BOM, interlinear annotation, and the rest of Unicode's
# default-ignorable code points (soft hyphen, combining grapheme joiner, Hangul fillers,
# Khmer inherent vowels, Mongolian variation selectors and vowel separator, variation
# selectors, the tag characters that can spell invisible ASCII, ...)
# (those past C0 are also what JSON documents write as \u escapes: `jsontext.hidden_escaped`)
HIDDEN_PAST_C0 = ("\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e"
                  "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3"
                  "\U0001d173-\U0001d17a\U000e0000-\U000e0fff")
_HIDDEN_RANGES = "\x00-\x08\x0b-\x1f" + HIDDEN_PAST_C0
_CSV_HIDDEN = re.compile(f"[{_HIDDEN_RANGES}]")


def has_hidden(text: str) -> bool:
    """Whether `text` holds a character CSV cells show as `<U+hhhh>` (C0 but TAB and LF, DEL,
    C1, bidi, zero-width and the other default-ignorable characters)."""
    return _CSV_HIDDEN.search(text) is not None
_CSV_SHOWN = re.compile(r"<U\+([0-9A-F]{4})>")


def _formula_like(text: str) -> bool:
    """A non-empty text a spreadsheet would run: it starts like a formula and is not a plain number."""
    return text[0] in _FORMULA_START and not _NUMBER.match(text)


def _shown(m: re.Match[str]) -> str:
    return f"<U+{ord(m.group(0)):04X}>"


def _visible(value: str) -> str:
    """`value` with every `_CSV_HIDDEN` character as `<U+hhhh>` (CRLF as LF first)."""
    if "\r\n" in value:
        value = value.replace("\r\n", "\n")
    return _CSV_HIDDEN.sub(_shown, value)


def csv_cell(value: Any) -> Any:
    """One CSV cell: hidden characters as `<U+hhhh>`, then a text starting like a formula gets
    a leading `'`; other values unchanged."""
    if not isinstance(value, str) or not value or raw_csv():
        return value
    if _CSV_HIDDEN.search(value):
        value = _visible(value)
    if _formula_like(value):
        return "'" + value
    return value


def _unshown(m: re.Match[str]) -> str:
    c = chr(int(m.group(1), 16))
    return c if c == "<" or _CSV_HIDDEN.match(c) else m.group(0)


def _guarded(text: str) -> bool:
    """True when the leading `'` of `text` is one a CSV rule added (`csv_uncell` drops it)."""
    return (len(text) > 1 and text[0] == "'"
            and (_formula_like(text[1:]) or text[1] == "'"))


def csv_exact(value: Any) -> Any:
    """One cell of a CSV slakit reads back (the claims ledger): as `csv_cell`, but every text
    comes back unchanged through `csv_uncell`, including texts that look like what the rule
    writes. A literal `<U+hhhh>` that `csv_uncell` would turn into a character starts with
    `<U+003C>` (the `<`), a CR is `<U+000D>` (also in CRLF), and a text starting with `'`
    that `csv_uncell` would shorten gets one more `'`. Texts without such look-alikes are
    written as `csv_cell` writes them. Not idempotent (an escape is escaped again), which
    is why the other CSV outputs keep `csv_cell`; `--raw-csv` does not apply to this file."""
    if not isinstance(value, str) or not value:
        return value
    if "<U+" in value:
        value = _CSV_SHOWN.sub(lambda m: "<U+003C>" + m.group(0)[1:] if _unshown(m) != m.group(0) else m.group(0),
                               value)
    value = _CSV_HIDDEN.sub(_shown, value)
    if _formula_like(value) or _guarded(value):
        return "'" + value
    return value


def csv_uncell(text: str) -> str:
    """What `csv_cell` or `csv_exact` wrote back to the text it was given, for files slakit
    writes and reads again (the claims ledger): the `'` before a formula start (or before
    another `'`) is dropped and `<U+hhhh>` of a hidden character (or of `<`) is that
    character. A text neither would have written (a `'` before a plain letter, `<U+0041>`)
    is returned as it is."""
    if not text:
        return text
    if _guarded(text):
        text = text[1:]
    if "<U+" in text:
        text = _CSV_SHOWN.sub(_unshown, text)
    return text


def csv_column(values: Iterable[Any]) -> list[Any]:
    """`csv_cell` over one column's values (the fast path for large tables): the column's
    texts are joined with newlines (not a hidden character) and searched in one go, for a
    hidden character and for a cell start that could begin a formula; only a column with
    either goes through the cells one by one. A million-row incident register's fifteen
    columns took 9.5 s cell by cell (a Python test per cell), 0.6 s so."""
    values = list(values)
    if raw_csv() or not values:
        return values
    kinds = set(map(type, values))
    if kinds <= {str, type(None)}:
        texts = list(filter(None, values))           # (an empty text needs nothing)
    elif any(issubclass(k, str) for k in kinds):
        texts = [v for v in values if isinstance(v, str)]
    else:
        return values                                 # numbers, None: no text to guard
    joined = "\n".join(texts)
    # every hidden character is one str.isprintable() refuses (a control, a format character,
    # a line or paragraph separator): a column printable but for the joining newlines has none
    if not joined.replace("\n", " ").isprintable() and _CSV_HIDDEN.search(joined) is not None:
        return [csv_cell(v) for v in values]
    if joined[:1] not in _FORMULA_START and not any(("\n" + c) in joined for c in _FORMULA_START):
        return values                                 # no cell starts like a formula
    return [("'" + v) if isinstance(v, str) and v and _formula_like(v) else v for v in values]


def csv_rows(rows: Iterable[Iterable[Any]]) -> Iterable[list[Any]]:
    """`csv_cell` over every cell of every row (for csv.writer.writerows)."""
    for row in rows:
        yield [csv_cell(v) for v in row]


def csv_frame(frame: Any) -> Any:
    """A pandas DataFrame with `csv_cell` applied to its text columns (for DataFrame.to_csv)."""
    if raw_csv():
        return frame
    out = None
    for col in frame.columns:
        series = frame[col]
        if series.dtype == object or str(series.dtype) in ("string", "str"):
            mapped = series.map(csv_cell)
            if not mapped.equals(series):
                if out is None:
                    out = frame.copy()
                out[col] = mapped
    header = [csv_cell(c) if isinstance(c, str) else c for c in frame.columns]
    result = frame if out is None else out
    if header != list(frame.columns):
        result = result.copy()
        result.columns = header
    return result


# ------------------------------------------------------------------ terminal

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), other ESC sequences, then C0/C1 controls
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?|\x9b[0-?]*[ -/]*[@-~]"
                   r"|\x9d[^\x07\x9c]*[\x07\x9c]?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


# a file name on one line: the CSV rule's hidden characters, and a tab, a newline and a
# name's undecodable bytes (surrogate escapes) too
_NAME_HIDDEN = re.compile(f"[{_HIDDEN_RANGES}\t\n\ud800-\udfff]")


def cut(text: str, width: int = 60) -> str:
    """`text` as it is up to `width` characters, else its first `width - 3` and "...": a value
    from a file shown in a message (a cell or a header name may be megabytes long)."""
    return text if len(text) <= width else text[:width - 3] + "..."


def shown_name(path: Any) -> str:
    """A file name for a one-line message (`wrote FILE`): what a terminal would run, reorder or
    hide, a newline or a tab included, and the undecodable bytes of a name, as `<U+hhhh>`;
    any other name as it is."""
    return _NAME_HIDDEN.sub(_shown, str(path))


def unicode_name(path: Any) -> str | None:
    """A file name as text any UTF-8 document can hold: each undecodable byte of the name (a
    surrogate escape, which no UTF-8 output takes) as `<U+hhhh>`, as `shown_name` writes it;
    any other character as it is. None stays None."""
    if path is None:
        return None
    return _LONE_SURROGATE.sub(_shown, str(path))


def terminal_text(text: Any, *, keep_newlines: bool = True) -> str:
    """Text without escape sequences and control characters (newlines kept, tabs as spaces)."""
    s = _ANSI.sub("", str(text))
    s = s.replace("\t", " ")
    s = _CONTROL.sub("", s)
    if not keep_newlines:
        s = s.replace("\r", " ").replace("\n", " ")
    return s


def rich_text(text: Any) -> str:
    """`terminal_text`, then Rich markup escaped: safe inside a string Rich renders as markup.
    (Text without a `[` or a backslash at its end is what Rich's `escape` returns as it is:
    Rich's markup module, 13 ms to import, is then not needed.)"""
    s = terminal_text(text)
    if "[" not in s and not s.endswith("\\"):
        return s
    from rich.markup import escape

    return escape(s)


def deep(obj: Any, fn: Any = terminal_text) -> Any:
    """`fn` over every string value in nested dicts/lists/tuples (keys are kept)."""
    if isinstance(obj, str):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: deep(v, fn) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(deep(v, fn) for v in obj) if isinstance(obj, list) else tuple(deep(v, fn) for v in obj)
    return obj


# ------------------------------------------------------------------ Markdown

_MD_LINK = re.compile(r"\[([^\]]*)\]\(\s*([^)\s]*)[^)]*\)")
_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*):")
_SAFE_SCHEMES = {"http", "https", "mailto"}


def md_text(text: Any) -> str:
    """Input text for a Markdown document: no raw HTML, no javascript:/data: links, no
    control characters; a `|` is escaped so a table cell stays one cell."""
    s = terminal_text(text, keep_newlines=False)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    def link(m: re.Match[str]) -> str:
        scheme = _SCHEME.match(m.group(2))
        if scheme is None or scheme.group(1).lower() in _SAFE_SCHEMES:
            return m.group(0)
        return f"{m.group(1)} (link removed)"

    s = _MD_LINK.sub(link, s)
    s = re.sub(r"(?i)\b(javascript|vbscript|data):", r"\1&#58;", s)
    return s.replace("|", "\\|")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def no_lone_surrogates(value: Any) -> Any:
    """`value` (a str, or the lists and dicts JSON decodes to) with each lone UTF-16 surrogate
    as U+FFFD: JSON may escape one (`"\\ud800"`, not in a pair), which decodes to a str no
    UTF-8 output takes; bytes that are not UTF-8 are read the same way. Lists and dicts (and a
    dict's attributes) are cleaned in place, as fresh from a decoder, with a stack instead of
    recursion: a document nested as deep as the decoder takes is cleaned too. Key order stays."""
    return lone_surrogates_replaced(value)[0]


def lone_surrogates_replaced(value: Any) -> tuple[Any, int]:
    """`(no_lone_surrogates(value), how many surrogates it replaced)`: for a reader that says
    where it read one as U+FFFD (an incident log's warning)."""
    count = 0

    def clean(text: str) -> str:
        nonlocal count
        out, n = _LONE_SURROGATE.subn("\ufffd", text)
        count += n
        return out

    if isinstance(value, str):
        return clean(value), count
    todo = [value]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, str):
                    node[i] = clean(v)
                elif isinstance(v, (list, dict)):
                    todo.append(v)
        elif isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, str):
                    node[k] = clean(v)
                elif isinstance(v, (list, dict)):
                    todo.append(v)
            if any(isinstance(k, str) and _LONE_SURROGATE.search(k) for k in node):
                items = list(node.items())
                node.clear()
                node.update((clean(k) if isinstance(k, str) else k, v) for k, v in items)
            for name, attr in getattr(node, "__dict__", {}).items():
                if isinstance(attr, str):
                    setattr(node, name, clean(attr))
                elif isinstance(attr, (list, dict)):
                    todo.append(attr)
    return value, count
