"""Shared pieces of the tool-output parsers: the parse error, the record base, text helpers.

Every parser is a pure function `parse_<tool>(text: str) -> Record`. It either returns a
frozen record or raises `ParseError` (an `InputError` whose single problem has the code
`unparseable_output`); it raises nothing else, whatever the input.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Iterator

from slaschema.errors import InputError, Problem
from slaschema.textsafe import no_lone_surrogates

UNPARSEABLE = "unparseable_output"


class ParseError(InputError):
    """The text holds no output of `tool` that the parser recognises (code `unparseable_output`),
    or output it will not read because any reading could be wrong (its own code, e.g.
    `topo_matrix_misaligned`)."""

    def __init__(self, tool: str, reason: str, file: str | None = None, code: str = UNPARSEABLE,
                 fix: str | None = None) -> None:
        self.tool = tool
        self.reason = reason
        self.file = file
        self.code = code
        self.fix = fix
        super().__init__(
            [
                Problem(
                    code=code,
                    message=f"cannot parse {tool} output: {reason}",
                    file=file,
                    fix=fix or f"pass the unmodified output of {tool}",
                )
            ]
        )

    def with_file(self, file: str) -> "ParseError":
        return ParseError(self.tool, self.reason, file, self.code, self.fix)


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value) if not f.name.startswith("_")}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass(frozen=True)
class Record:
    """Base of every parsed record: frozen, JSON via `to_json()` (field names are the keys)."""

    def to_json(self) -> dict[str, Any]:
        return _plain(self)


@dataclass(frozen=True)
class Notice(Record):
    """A status line the tool printed besides its data ("WARNING: infoROM is corrupted ...",
    "No devices were found", `ibpanic: ... failed`): a stable `code`, the line as printed,
    the device it names (PCI bus id, CA name) and its 1-based line in the parsed text."""

    code: str
    message: str
    device: str | None = None
    line: int | None = None


# --------------------------------------------------------------------------- text helpers

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Prefixes added by launchers and pastes: "[1,0]<stdout>:" (Open MPI --tag-output),
# " 0: " (srun --label), "> " (markdown quote).
_MPI_TAG = re.compile(r"^\s*\[\d+,\d+\]<std(?:out|err)>:")
_SRUN_LABEL = re.compile(r"^\s*\d+: ?")
_QUOTE = re.compile(r"^\s*> ?")


def clean_text(text: str) -> str:
    """Normalise line ends and drop ANSI escape sequences."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _ANSI.sub("", text)


def strip_line_prefix(line: str) -> str:
    """Remove a launcher tag (`[1,0]<stdout>:`, `0: `) or markdown quote from one line."""
    m = _MPI_TAG.match(line)
    if m:
        return line[m.end():]
    m = _QUOTE.match(line)
    if m:
        return line[m.end():]
    return line


def iter_json_objects(text: str) -> Iterator[tuple[int, Any]]:
    """Yield (offset, value) for every JSON object embedded in `text`, outermost first.

    Scans for `{` and tries to decode from there; on success, continues after the object.
    Text around the objects (notes, prompts, fences) is ignored.

    A document that does not decode is not tried again at every `{` inside it (that was one
    decode to its end per `{`: minutes for a few MB of objects cut off part way): the text
    before the point where it failed is valid JSON, so an object it opened that is still open
    there fails there too and is skipped; the objects that close before it, and a `{` inside
    one of its strings, are tried as before. Nothing inside a document nested too deep to
    decode is tried.
    """
    decoder = json.JSONDecoder()
    clean = no_lone_surrogates if "\\u" in text else (lambda v: v)     # a lone surrogate escaped: U+FFFD
    i = text.find("{")
    inner: list[int] = []         # in a document that failed: its `{` that close before the failure, last first
    failed_at = -1                # where that document failed (-1: not inside one)
    while i != -1:
        nxt = i + 1
        try:
            value, end = decoder.raw_decode(text, i)
        except (ValueError, RecursionError) as exc:
            if failed_at < 0:
                failed_at, inner = _failure(text, i, exc)
        else:
            if isinstance(value, dict):
                yield i, clean(value)
                nxt = end
        if failed_at >= 0:
            while inner and inner[-1] < nxt:
                inner.pop()
            if inner:
                i = inner.pop()
                continue
            nxt, failed_at = max(nxt, failed_at), -1
        i = text.find("{", nxt)


_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|"|[{}\[\]]', re.S)


def _failure(text: str, start: int, exc: Exception) -> tuple[int, list[int]]:
    """(where the document at `start` failed, the `{` in it that may still decode, last first).
    A syntax error at `pos` means text[start:pos] is valid JSON as the decoder read it: an
    object it opened there that is still open at `pos` fails at `pos` too, decoded on its own;
    one that closes before, and a `{` inside a string (read on its own, its quotes pair up
    differently), may decode. A document too deep to decode is skipped to where its brackets
    close (or the end)."""
    deep = not isinstance(exc, json.JSONDecodeError)
    stop = len(text) if deep else max(exc.pos, start + 1)
    opened: list[int] = []
    tried: list[int] = []
    for m in _JSON_TOKEN.finditer(text, start, stop):
        tok = m.group()
        if tok[0] == '"':
            j = text.find("{", m.start(), m.end() if tok != '"' else stop)
            while j != -1:
                tried.append(j)
                j = text.find("{", j + 1, m.end() if tok != '"' else stop)
            if tok == '"':
                break                             # a string still open where the document failed
        elif tok in "{[":
            opened.append(m.start() if tok == "{" else -1)
        elif not opened:
            break
        else:
            j = opened.pop()
            if j > start:
                tried.append(j)
            if deep and not opened:
                return m.end(), []
    return (len(text), []) if deep else (stop, sorted(tried, reverse=True))     # popped from the end


def outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """(position, character) of every character of JSON text that is not inside a string;
    a final (-1, "") when the text ends inside a string."""
    in_str = esc = False
    for pos in range(start, len(text)):
        ch = text[pos]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        else:
            yield pos, ch
    if in_str:
        yield -1, ""


def close_truncated_json(text: str) -> str | None:
    """Close the brackets of a JSON document cut off part way (a pasted excerpt).

    Returns the repaired text, or None when the cut falls inside a string or the text does
    not start like a JSON object. The caller marks records built from it as incomplete.
    """
    start = text.find("{")
    if start == -1:
        return None
    stack: list[str] = []
    last_complete = start
    for pos, ch in outside_strings(text, start):
        if pos == -1:
            return None                     # cut inside a string
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack[-1] != ch:
                return None
            stack.pop()
            last_complete = pos + 1
            if not stack:
                return text[start:last_complete]
        elif ch == "," and stack:
            last_complete = pos
    if not stack:
        return None
    body = text[start:last_complete].rstrip().rstrip(",")
    # The brackets still open in the kept part.
    stack = []
    for pos, ch in outside_strings(body):
        if pos == -1:
            break
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    stripped = body.rstrip()
    if stripped.endswith(":"):
        return None
    return stripped + "".join(reversed(stack))


def load_truncated_json(text: str) -> Any:
    """The JSON value of `text` once `close_truncated_json` closed its brackets; None when it
    cannot be closed or is no JSON then."""
    repaired = close_truncated_json(text)
    if repaired is None:
        return None
    try:
        return no_lone_surrogates(json.loads(repaired))
    except (ValueError, RecursionError):
        return None


def to_float(value: Any) -> float | None:
    """Parse a number from `value`, ignoring units ("700.00 W", "41 C", "16x"); None for N/A."""
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        f = float(value)
        return f if math.isfinite(f) else None
    m = re.match(r"\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)", str(value))
    if not m:
        return None
    f = float(m.group(1))
    return f if math.isfinite(f) else None


def to_int(value: Any) -> int | None:
    """Parse an integer from `value` (decimal, or hex with 0x); None for N/A and non-numbers."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value == int(value) else None
    s = str(value).strip()
    m = re.match(r"0x([0-9a-fA-F]+)\b", s)
    if m:
        return int(m.group(1), 16)
    m = re.match(r"[-+]?\d+(?![\d.])", s)
    return int(m.group(0)) if m else None


_NA = {"", "n/a", "[n/a]", "na", "not available", "[not supported]", "not supported"}


def na_to_none(value: str | None) -> str | None:
    """None for nvidia-smi's "N/A", "[N/A]", "[Not Supported]", "[Requested functionality ...]"."""
    if value is None:
        return None
    s = value.strip()
    if s.lower() in _NA or (s.startswith("[") and s.endswith("]")):
        return None
    return s
