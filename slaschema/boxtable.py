"""A plain-text table drawn as Rich draws its default `Table` (heavy head box, one space of
padding, the title centred above), for tables too long for Rich to lay out quickly: Rich
measures every cell several times, about 1 ms a row, so a 200,000-row ledger took minutes;
this takes one pass.

`box_table` returns None when the table does not fit the width, or a cell holds a line
break, so that the caller lets Rich wrap it as before. Cells are plain text (no Rich
markup), already made safe for a terminal (`slaschema.textsafe.terminal_text`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich.cells import cell_len


def _width(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def box_table(title: str | None, headers: Sequence[str], rows: Sequence[Sequence[str]], *,
              right: Collection[int] = (), width: int = 80) -> str | None:
    """The table as text (lines end with a newline), or None when Rich would have to wrap it."""
    n = len(headers)
    widths = [_width(h) for h in headers]
    for row in rows:
        for j, cell in enumerate(row):
            w = _width(cell)
            if w > widths[j]:
                widths[j] = w
    total = sum(widths) + 3 * n + 1
    if total > width or any("\n" in c for row in rows for c in row) or any("\n" in h for h in headers):
        return None
    if title is not None and (_width(title) > total or "\n" in title):
        return None

    def line(cells: Sequence[str], edge: str, sep: str) -> str:
        parts = []
        for j, cell in enumerate(cells):
            pad = " " * (widths[j] - _width(cell))
            parts.append(f" {pad}{cell} " if j in right else f" {cell}{pad} ")
        return edge + sep.join(parts) + edge + "\n"

    def rule(left: str, fill: str, cross: str, end: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + end + "\n"

    out = []
    if title is not None:
        space = total - _width(title)
        out.append(" " * (space // 2) + title + " " * (space - space // 2) + "\n")
    out.append(rule("┏", "━", "┳", "┓"))
    out.append(line(headers, "┃", "┃"))
    out.append(rule("┡", "━", "╇", "┩"))
    out.extend(line(row, "│", "│") for row in rows)
    out.append(rule("└", "─", "┴", "┘"))
    return "".join(out)
