"""A small declarative column validator: a spec says what each column is, one backend runs it.

In the spirit of pandera's split between the API (what is checked) and the backend (how):

    spec = (Column("id", parse=text, checks=(Check(Reason.MISSING_ID, missing, "incident id is empty"),)),
            Column("start", parse=timestamps, checks=(...)), ...)
    ctx = Context(source, rows, file=...)
    validate(spec, ctx)            # ctx.values[name]: each parsed column; ctx.problems, ctx.bad

A `Column` names a parser (cells -> a parsed column, which may itself report the cells it
cannot read, e.g. a timestamp that does not exist) and checks. A `Check` is a reason code, a
test giving the rows that fail as a boolean mask over whole columns (numpy, never a loop
over rows), the message and the fix (text, or a function of the row and the value shown),
and which cells to show as the value. Parsers and checks see the columns parsed before
them through the `Context`, so a check of `end` can compare it with `start`; the spec's
order is the order of evaluation.

Problems are created only for the failing rows, each with its 1-based row number, column,
value and code; `validate` never stops at the first one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import sys
from typing import Any

import numpy as np

from slaschema.errors import Problem

Message = str | Callable[["Context", int, Any], str] | None


@dataclass(frozen=True)
class Check:
    """Rows failing `test` get a problem with `code` on the column being checked.

    `show`: which cells are reported as the value -- "raw" (the column's cells as read,
    before normalising, e.g. `Node` for a scope read as `node`), "parsed" (the parsed text),
    the name of another column's raw cells, a function of the `Context` giving the cells
    (asked only when some row fails), or None (nothing: the cell is empty)."""

    code: str
    test: Callable[[Context], np.ndarray]
    message: Message
    fix: Message = None
    show: str | Callable[[Context], Any] | None = "raw"


@dataclass(frozen=True)
class Column:
    """A column of the input: how its cells are parsed, then what is checked."""

    name: str
    parse: Callable[[Context, str], Any]
    checks: tuple[Check, ...] = ()
    required: bool = False
    default: str | None = None      # what an empty cell becomes once the checks have run


class Context:
    """What parsers and checks see: the cells (`source`), the parsed columns so far
    (`values`), their raw text (`raw`), derived data a parser leaves for later checks
    (`derived`), settings (`options`), and the problems found."""

    def __init__(self, source: Any, rows: np.ndarray, *, file: str | None,
                 options: dict[str, Any] | None = None) -> None:
        self.source = source
        self.rows = rows
        self.n = len(rows)
        self.file = file
        self.options = options or {}
        self.values: dict[str, Any] = {}
        self.raw: dict[str, Any] = {}
        self.derived: dict[str, Any] = {}
        self.problems: list[Problem] = []
        self.bad = np.zeros(self.n, dtype=bool)
        self.flagged: dict[str, np.ndarray] = {}      # column -> rows with a problem there

    def report(self, mask: np.ndarray, code: str, column: str, shown: Any, message: Message,
               fix: Message = None) -> None:
        """A problem for every row of `mask`; `shown`: the cells reported as values (an
        object with `take(idx)`, a Series, an array, or None)."""
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            return
        self.bad |= mask
        self.flagged[column] = self.flagged.get(column, np.zeros(len(mask), dtype=bool)) | mask
        # a Series only where pandas is imported already (a CSV log Arrow read has none: the
        # rows skipped with --skip-bad-rows do not import it)
        pd = sys.modules.get("pandas")
        series = pd is not None and isinstance(shown, pd.Series)

        idx = np.flatnonzero(mask)
        if shown is None:
            vals: Sequence[Any] = [None] * len(idx)
        elif hasattr(shown, "take") and not series and not isinstance(shown, np.ndarray):
            vals = shown.take(idx)
        elif series:
            vals = shown.to_numpy(dtype=object)[idx]
        else:
            vals = np.asarray(shown, dtype=object)[idx]
        for i, v in zip(idx.tolist(), vals):
            v = None if is_missing(v) else v
            msg = message(self, i, v) if callable(message) else message
            self.problems.append(Problem(code, msg, file=self.file, row=int(self.rows[i]), column=column,
                                         value=v, fix=fix(self, i, v) if callable(fix) else fix))


def validate(spec: Sequence[Column], ctx: Context) -> Context:
    """Parse and check every column of `spec` in order; problems collect in `ctx`."""
    for col in spec:
        ctx.values[col.name] = col.parse(ctx, col.name)
        for check in col.checks:
            mask = check.test(ctx)
            if mask is None or not np.asarray(mask).any():
                continue
            if check.show is None:
                shown = None
            elif callable(check.show):
                shown = check.show(ctx)
            elif check.show == "raw":
                shown = ctx.raw.get(col.name, ctx.values[col.name])
            elif check.show == "parsed":
                shown = ctx.values[col.name]
            else:
                shown = ctx.raw.get(check.show, ctx.values.get(check.show))
            ctx.report(mask, check.code, col.name, shown, check.message, check.fix)
        if col.default is not None:
            ctx.values[col.name] = ctx.values[col.name].fill(col.default)
    return ctx


def is_missing(v: Any) -> bool:
    """Whether a cell is missing: None, NaN, pandas' NA or NaT (never a string)."""
    if v is None:
        return True
    if isinstance(v, str):
        return False
    import pandas as pd

    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False

