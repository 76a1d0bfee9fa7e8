"""Quoted cells of an incident log's CSV that run over line breaks where they must not.

A cell that opens with `"` runs on to the next lone `"`, over line breaks (RFC 4180). A stray
quote at the start of a cell therefore turns every line up to the next quote into text of that
one cell, and the incidents written on those lines are never read: the log still parses, the
merged row is usually valid (a short row is filled with empty cells), and the credits come out
smaller, with no error. `cells_over_lines` finds such cells once the log is read, so the loader
refuses the file (`csv_invalid`, also with `--skip-bad-rows`: it is the file's quoting, not a
row, that is wrong):

- a cell of a column whose values are one line (id, scope, target, the times, impact,
  gpus_affected, category, severity) that holds a line break;
- a cell of a free-text column (cause, ticket) or of a column slakit does not read, that holds
  a line break followed by a line that reads as an incident row of this header (its scope cell
  names a scope and its start cell begins with a date, in ISO 8601's extended or basic form).
  A multi-line cause without such lines is text like any other. (The count of such lines in
  the message can be short of the rows lost: the cell's last line, the start of the row that
  closes the quote, reads as a row only where it reaches the scope and start cells.)

Finding them costs three byte counts over the file where a quote character is in it (none
where there is none: no cell can then hold a line break): the file's non-blank lines, less the
header's, are its rows exactly when no cell holds a line break. When they are not, the cells
Arrow read may account for every extra line with breaks that are no problem
(`breaks_explained`: a count per column, a look at those cells only; a log of multi-line
causes); only otherwise (a break in a column Arrow did not read, one in a one-line column, a
line that reads as a row, blank lines the counts cannot tell) is the file read again with the
`csv` module to find and name the cells, about 2 s for a million rows.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from calculators.incident_reasons import Reason
from calculators.log_csv_parse import COLUMNS, csv_header
from slaschema.errors import Problem
from slaschema.textsafe import cut

FREE_TEXT = ("cause", "ticket")          # the format's columns that may be free text over lines
ONE_LINE = frozenset(COLUMNS) - set(FREE_TEXT)      # the others: one line each
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
SCOPE_WORDS = frozenset({"node", "rack", "cluster", "site"})
_DATE = re.compile(r"\s*[0-9]{4}-?[0-9]{2}-?[0-9]{2}")      # a date, extended (2027-01-20) or basic (20270120)
_SHOWN_LINES = 5              # file lines named in one message
_FIX = ("close the quote where the cell ends (a \" inside a quoted cell is written \"\"), or remove the stray \" "
        "that opens it, so that every incident starts a line of its own")


def line_breaks(data: bytes | str, lo: int = 0, hi: int | None = None) -> int:
    """Line ends in data[lo:hi]: LF, CRLF and a lone CR (as the readers split lines)."""
    if isinstance(data, str):
        return data.count("\n", lo, hi) + data.count("\r", lo, hi) - data.count("\r\n", lo, hi)
    return data.count(b"\n", lo, hi) + data.count(b"\r", lo, hi) - data.count(b"\r\n", lo, hi)


def _extra_lines(data: bytes, n_rows: int) -> int:
    """The lines of the CSV `data` (read as `n_rows` rows, blank lines skipped) beyond the
    header and one a row, less the blank lines two line ends in a row show (a lower bound of
    them: runs of three count once): 0 where no cell holds a line break, else at least the
    line breaks the cells hold."""
    k = len(data)
    while k and data[k - 1] in (10, 13):          # the line ends after the last line's text
        k -= 1
    if not k:
        return 0
    lines = line_breaks(data, 0, k) + 1
    if lines - 1 == n_rows:
        return 0
    blank = data.count(b"\n\n", 0, k) + data.count(b"\r\r", 0, k) + data.count(b"\r\n\r\n", 0, k)
    return lines - 1 - blank - n_rows


def may_hold_breaks(data: bytes, n_rows: int) -> bool:
    """False when no cell of the CSV `data` (read as `n_rows` rows, blank lines skipped) can
    hold a line break: its non-blank lines after the header are exactly its rows. True when
    they are more (a cell over lines, or blank lines two terminators in a row do not show)."""
    return _extra_lines(data, n_rows) != 0


def breaks_explained(data: bytes, n_rows: int, columns: dict[str, Any]) -> bool:
    """True when the cells Arrow read (`columns`: stripped name -> its cells) account for every
    line of the file beyond its rows and none of them is a problem: no cell of a one-line column
    holds a line break, and no line of a free-text cell reads as an incident row. Then the
    columns Arrow did not read hold none either, and `cells_over_lines` (the `csv` module over
    the whole file: 2 s a million rows) has nothing to find. False where it may: it is asked then.
    A log of many multi-line causes pays a count per column and a look at those cells only."""
    import pyarrow.compute as pc

    header = [c.strip() for c in csv_header(data) or []]
    if "scope" not in header or "start" not in header:
        return False
    at_scope, at_start = header.index("scope"), header.index("start")
    need = max(at_scope, at_start)
    total = 0
    for name, cells in columns.items():
        counts = pc.subtract(pc.add(pc.count_substring(cells, "\n"), pc.count_substring(cells, "\r")),
                             pc.count_substring(cells, "\r\n"))
        breaks = pc.sum(counts).as_py() or 0
        if not breaks:
            continue
        if name in ONE_LINE:
            return False
        for cell in pc.filter(cells, pc.greater(counts, 0)).to_pylist():
            for part in _LINE_BREAK.split(cell)[1:]:
                if part.count(",") >= need and _looks_like_row(part, at_scope, at_start):
                    return False
        total += breaks
    return total == _extra_lines(data, n_rows)


def _looks_like_row(line: str, at_scope: int, at_start: int) -> bool:
    try:
        cells = next(csv.reader([line]), [])
    except csv.Error:
        return False
    return (len(cells) > max(at_scope, at_start) and cells[at_scope].strip().lower() in SCOPE_WORDS
            and _DATE.match(cells[at_start]) is not None)


@contextmanager
def text_reader(data: bytes, **kw: Any) -> Iterator[Any]:
    """A `csv.reader` over the text of `data` (lines split at LF, CRLF and a lone CR), with the
    field size limit (131,072 characters unless raised) raised to the text's length for the
    while: a cell that swallows rows is longer."""
    text = data.decode("utf-8-sig", errors="replace")
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))
    try:
        yield csv.reader(io.StringIO(text, newline=""), **kw)
    finally:
        csv.field_size_limit(limit)


def cells_over_lines(data: bytes, fname: str) -> list[Problem]:
    """`csv_invalid` errors for the cells of the CSV `data` that run over line breaks where
    they must not (see the module), in row order; rows counted as the readers count them (the
    header and blank lines not counted), lines as an editor shows them."""
    with text_reader(data) as reader:
        return _cells_over_lines(reader, fname)


def _cells_over_lines(reader: Any, fname: str) -> list[Problem]:
    try:
        header = next(reader, None)
        if header is None:
            return []
        names = [c.strip() for c in header]
        at_scope = names.index("scope") if "scope" in names else -1
        at_start = names.index("start") if "start" in names else -1
        out: list[Problem] = []
        line = reader.line_num          # the last file line read so far
        row = 0
        for cells in reader:
            first, line = line + 1, reader.line_num
            if not cells:               # a blank line: no row
                continue
            row += 1
            if line == first:
                continue
            at = first                  # the file line each cell starts on
            for j, cell in enumerate(cells):
                n = line_breaks(cell)
                if not n:
                    continue
                name = names[j] if j < len(names) else f"cell {j + 1}"
                shown = cut(cell)
                if name in ONE_LINE:
                    out.append(Problem(
                        Reason.CSV_INVALID, f"the cell runs over file lines {at}-{at + n} (a quoted line break); "
                        f"the {name} of an incident is one line", file=fname, row=row, column=name, line=at, value=shown, fix=_FIX))
                elif at_scope >= 0 and at_start >= 0:
                    rows_in = [at + i for i, part in enumerate(_LINE_BREAK.split(cell)) if i
                               and _looks_like_row(part, at_scope, at_start)]
                    if rows_in:
                        many = len(rows_in) > 1
                        listed = ", ".join(map(str, rows_in[:_SHOWN_LINES])) + (
                            ", ..." if len(rows_in) > _SHOWN_LINES else "")
                        out.append(Problem(
                            Reason.CSV_INVALID, f"the cell runs over file lines {at}-{at + n} and holds "
                            f"{len(rows_in)} line{'s' if many else ''} that read{'' if many else 's'} as incident "
                            f"rows (file line{'s' if many else ''} {listed}): a quote opened in it is not closed "
                            "where the cell ends, so those incidents would not be read", file=fname, row=row,
                            column=name, line=at, value=shown, fix=_FIX))
                at += n
        return out
    except csv.Error:                  # quoting the readers took but this one does not: nothing said here
        return []


def unclosed_quote(data: bytes) -> tuple[int, int] | None:
    """(data row, file line) of the row whose quote is never closed (the file ends inside a
    quoted cell), counted as the readers count them; None when the file does not end so."""
    row, line = 0, 0
    with text_reader(data, strict=True) as reader:       # (strict: it says where the data ends)
        try:
            next(reader, None)
            line = reader.line_num
            for cells in reader:
                line = reader.line_num
                row += bool(cells)
            return None
        except csv.Error as e:      # (another quoting error found first: not said here)
            return (row + 1, line + 1) if "unexpected end of data" in str(e) else None
