"""Terminal tables as plain text, laid out the way Rich lays out its default `Table`.

`slakit credits` prints a dozen tables of up to 25 rows; Rich renders each cell through its
segment pipeline (measure, wrap, pad, crop, shape), which took most of a second on a large
fleet. For plain text (no terminal styles) the same layout is a few string operations:
the column widths (Rich's measure and collapse rules), word wrapping (Rich's own
`divide_line`), justification and the heavy-head box. `PlainTable.text()` writes what
`rich.console.Console(width=W, color_system=None).print(table)` writes for the
equivalent `rich.table.Table` (title centred, header aligned to the bottom, cells padded
by one space, `ellipsis` overflow); tests/calculators/test_plain_table.py compares the two
on many tables.

It covers the tables built here: one line per cell, no markup and no emoji codes, which
`plain()` checks; `rich()` builds the Rich table for anything else (and for terminals).

`PlainConsole` does the same for the lines printed between the tables: a line of markup that
Rich would print as its text (a few known style tags, nothing replaced or escaped) is written
as that text, wrapped as Rich wraps it where it is wider than the console, and anything else
by a Rich console made on first need. The credits table then imports neither Rich's console
nor its markup module (30-40 ms of CPU at each start, spent while the log is parsed on both
cores).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rich._emoji_replace import _emoji_replace
from rich._ratio import ratio_reduce
from rich._wrap import divide_line
from rich.cells import cell_len, set_cell_size

_EMOJI = re.compile(r":\S*?:")                  # what Rich could take for an emoji code (if it knows the name)
_TRAILING_SPACE = re.compile(r"\s+$")
PAD = 1                                         # Rich's default cell padding, left and right


@dataclass
class _Column:
    header: str
    justify: str = "left"
    no_wrap: bool = False


@dataclass
class PlainTable:
    """A table with a title, columns (`add_column`) and rows of strings (`add_row`)."""

    title: str | None = None
    columns: list[_Column] = field(default_factory=list)
    rows: list[tuple[str, ...]] = field(default_factory=list)

    def add_column(self, header: str, justify: str = "left", no_wrap: bool = False) -> None:
        self.columns.append(_Column(header, justify, no_wrap))

    def add_row(self, *cells: str) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(tuple(cells))

    def plain(self) -> bool:
        """Whether every text is one line that Rich would print as it is (no markup, no
        emoji codes, no tabs or control characters)."""
        texts = [c.header for c in self.columns] + [x for r in self.rows for x in r] + [self.title or ""]
        return not any("[" in t or "\t" in t or _emoji_codes_in(t)
                       or not (t.isascii() and t.isprintable())
                       and any(ord(ch) < 32 or 0x7f <= ord(ch) < 0xa0 for ch in t) for t in texts)

    def rich(self):
        """The same table as a `rich.table.Table`; the texts are `Text` objects, so Rich prints
        them as they are (no markup, and no emoji put in for a `:name:` code)."""
        from rich.table import Table
        from rich.text import Text

        t = Table(title=Text(self.title) if self.title else None)
        for c in self.columns:
            t.add_column(Text(c.header), justify=c.justify, no_wrap=c.no_wrap)
        for r in self.rows:
            t.add_row(*(Text(x) for x in r))
        return t

    def print(self, console) -> None:
        """Onto a Rich console (or a `PlainConsole`): as plain text where it is (a file, no
        terminal styles), else by Rich."""
        if console.color_system is None and not console.is_terminal and self.plain():
            console.file.write(self.text(console.width))
        else:
            console.print(self.rich())

    # --- layout ---------------------------------------------------------------------------

    def _widths(self, max_width: int) -> list[int]:
        """Column widths with padding, without borders (`Table._calculate_column_widths`)."""
        widths = []
        for k, c in enumerate(self.columns):
            hi = 0
            for text in [c.header, *(r[k] for r in self.rows)]:
                hi = max(hi, _measure_max(text, max_width))
            widths.append(min(hi, max_width) or 1)
        if sum(widths) > max_width:
            from rich.table import Table

            widths = Table._collapse_widths(widths, [not c.no_wrap for c in self.columns], max_width)
            if sum(widths) > max_width:
                widths = ratio_reduce(sum(widths) - max_width, [1] * len(widths), widths, widths)
            widths = [_remeasure(self.columns[k], [r[k] for r in self.rows], w) for k, w in enumerate(widths)]
        return widths

    def text(self, width: int = 120) -> str:
        """The table as Rich prints it on a console `width` cells wide."""
        n = len(self.columns)
        widths = self._widths(width - (n + 1))
        table_width = sum(widths) + n + 1
        out: list[str] = []
        if self.title:
            out.extend(_wrap(self.title, table_width, "center", "fold"))
        out.append("┏" + "┳".join("━" * w for w in widths) + "┓")
        rows = [tuple(c.header for c in self.columns), *self.rows]
        for index, row in enumerate(rows):
            cells = [_cell(text, w, c) for text, w, c in zip(row, widths, self.columns)]
            height = max(len(c) for c in cells)
            header = index == 0
            for k, (lines, w) in enumerate(zip(cells, widths)):
                blank = [" " * w] * (height - len(lines))
                cells[k] = blank + lines if header else lines + blank
            edge = "┃" if header else "│"
            for line in range(height):
                out.append(edge + edge.join(c[line] for c in cells) + edge)
            if header:
                out.append("┡" + "╇".join("━" * w for w in widths) + "┩")
        out.append("└" + "┴".join("─" * w for w in widths) + "┘")
        if table_width > width:                 # the console crops what is wider than it
            out = [set_cell_size(x, width) if cell_len(x) > width else x for x in out]
        return "\n".join(out) + "\n"


def _width(text: str) -> int:
    return len(text) if text.isascii() and text.isprintable() else cell_len(text)


def _measure_max(text: str, max_width: int) -> int:
    """The largest width of a padded cell within `max_width` (the maximum of
    `Padding(Text).__rich_measure__` via `Measurement.get`; only the maximum is used)."""
    if max_width - 2 * PAD < 1:
        return max_width
    return min(min(_width(text), max_width) + 2 * PAD, max_width)


def _remeasure(column: _Column, cells: list[str], width: int) -> int:
    """A column's width measured again within `width` (after the collapse)."""
    if width < 1:
        return 0
    hi = max(_measure_max(t, width) for t in [column.header, *cells])
    return min(hi, width)


def _cell(text: str, width: int, column: _Column) -> list[str]:
    """A cell's lines, padded, each exactly `width` cells."""
    inner = width - 2 * PAD
    if inner < 1:
        return [set_cell_size(" " * width, width)]
    return [" " * PAD + line + " " * PAD for line in _wrap(text, inner, column.justify, "ellipsis", column.no_wrap)]


def _wrap(text: str, width: int, justify: str, overflow: str, no_wrap: bool = False) -> list[str]:
    """`Text.wrap` then `Lines.justify` of one line of plain text (justify "default": the lines
    as divided, neither padded nor moved)."""
    w = _width(text)
    if w <= width and (justify in ("left", "default") or not text[-1:].isspace()):     # fits: one line, justified
        if justify == "default":
            return [text]
        if justify == "left":
            return [text + " " * (width - w)]
        if justify == "center":
            left = (width - w) // 2
            return [" " * left + text + " " * (width - w - left)]
        return [" " * (width - w) + text]
    if no_wrap or _width(text) <= width:      # a line that fits is never divided
        lines = [text]
    else:
        offsets = divide_line(text, width, fold=overflow == "fold")
        bounds = [0, *offsets, len(text)]
        lines = [text[a:b] for a, b in zip(bounds, bounds[1:])] if offsets else [text]
        lines = [_rstrip_end(line, width) for line in lines]
    out = []
    for line in lines:
        if justify == "left":
            line = _pad_right(_truncate(line, width, overflow), width)
        elif justify == "default":
            pass
        elif justify == "center":
            line = _truncate(line.rstrip(), width, overflow)
            line = " " * ((width - cell_len(line)) // 2) + line
            line = line + " " * (width - cell_len(line))
        else:                                   # right
            line = _truncate(line.rstrip(), width, overflow)
            line = " " * (width - cell_len(line)) + line
        out.append(_truncate(line, width, overflow))
    return out


def _rstrip_end(line: str, size: int) -> str:
    if len(line) > size:
        m = _TRAILING_SPACE.search(line)
        if m is not None:
            return line[: len(line) - min(len(m.group(0)), len(line) - size)]
    return line


def _truncate(line: str, width: int, overflow: str) -> str:
    if _width(line) > width:
        return set_cell_size(line, width - 1) + "…" if overflow == "ellipsis" else set_cell_size(line, width)
    return line


def _pad_right(line: str, width: int) -> str:
    n = _width(line)
    return line + " " * (width - n) if n < width else line


# the style tags `PlainConsole` takes off a line itself (any other tag: Rich reads the line)
_TAG = re.compile(r"\[(?:bold|yellow|red|bold red|/)\]")


class PlainConsole:
    """A stand-in for `rich.console.Console(file=file, width=width, force_terminal=False,
    color_system=None)` (no terminal, no styles) in `print` and `PlainTable.print`.

    A string is written as Rich writes it where its text is the string without its style
    tags (`plain_line`: only `[bold]`, `[yellow]`, `[red]`, `[bold red]` and `[/]`, each closing
    one opened before, no other `[` and no backslash, printable characters only, no emoji
    code Rich knows); a text wider than the console is wrapped as Rich wraps it (Rich's own
    `divide_line`, then each line's trailing space over the width dropped and what is still
    wider folded). Any other string, and anything that is not a string, is printed by a Rich
    console on the same file, made when first needed; tests/calculators/test_plain_table.py
    compares the two."""

    color_system = None
    is_terminal = False

    def __init__(self, file, width: int = 120) -> None:
        self.file = file
        self.width = width
        self._console = None

    def print(self, obj, *, emoji: bool = True) -> None:
        line = plain_line(obj, emoji) if isinstance(obj, str) else None
        if line is not None and self.width > 0:
            self.file.write("\n".join(_wrap(line, self.width, "default", "fold")) + "\n")
            return
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.file, width=self.width, force_terminal=False, color_system=None)
        self._console.print(obj, emoji=emoji)


def plain_line(markup: str, emoji: bool = True) -> str | None:
    """The text Rich makes of `markup` (a line of console markup) when it is only the text
    with the style tags `_TAG` taken off, each closing tag after an opening one; None for
    any other line (one Rich must read: other tags or brackets, escapes, emoji codes, a line
    break, a tab or another character that is not printable)."""
    depth = 0
    parts = []
    at = 0
    for m in _TAG.finditer(markup):
        parts.append(markup[at:m.start()])
        at = m.end()
        if m.group(0) == "[/]":
            if not depth:
                return None
            depth -= 1
        else:
            depth += 1
    parts.append(markup[at:])
    text = "".join(parts)
    if "[" in text or "\\" in text or not text.isprintable():
        return None
    # (Rich puts emoji in for the codes of each piece between two tags, as this does)
    if emoji and ":" in text and any(_emoji_codes_in(x) for x in parts):
        return None
    return text


def _emoji_codes_in(text: str) -> bool:
    """Whether Rich would put an emoji in for a `:name:` code in `text` (a name it knows)."""
    return ":" in text and _EMOJI.search(text) is not None and _emoji_replace(text) != text
