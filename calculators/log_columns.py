"""The columns of an incident log as the calculators read them: numpy arrays and codes.

The engine and the support figures read a log's times as int64 arrays and its text columns as
codes into their distinct values (`coded`). A log read from a file hands over what the loader
checked (`LoadedColumns`) without making a pandas frame; `IncidentLog.frame`, for the
commands that work on the frame (review, explain, reconcile, ...), is made from the same
arrays on first use, and pandas is imported then. `slakit credits` on a CSV log thus does not
import pandas (a third of the command's imports) when Arrow reads the file and its cells are in
the common forms: times as `...Z` or `...+hh:mm` to the second, empty or not, and
`gpus_affected` as digits (`8`, or `8.0` with zero decimals). pandas is still imported, as
before, by what reads the other forms: times with fractions, `+hhmm`, padding or no offset
(`--assume-tz`), and a time cell that is not a timestamp; a `gpus_affected` in another form
(`+2`, `1e1`, `x`); a CSV with a short row (the general reader); a JSON log; and a contract
with performance levels (its log is remade without the performance incidents). Other bad rows
(an unknown target, a repeated id, ...) are reported, or skipped with `--skip-bad-rows`,
without it.

A log made from a frame (`IncidentLog.with_frame`, and objects of the calculators' own with a
`frame` attribute) is read through `FrameColumns`, which answers the same questions from the
frame itself.
"""

from __future__ import annotations

from collections.abc import Callable
import threading
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


class Columns(Protocol):
    """What the calculators ask of a log's columns."""

    def __len__(self) -> int: ...

    def __contains__(self, name: object) -> bool: ...

    def ints(self, name: str, na: int) -> np.ndarray:
        """An integer column (times, `row`, `gpus_affected`) as int64, `na` where missing; a
        column the log does not have is all `na`. Read-only where it is the log's own array."""
        ...

    def coded(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(codes, distinct values) of a text column, -1 where the cell is missing; values
        numbered in order of first appearance (as `pandas.factorize` numbers them)."""
        ...

    def frame(self) -> pd.DataFrame: ...


class FrameColumns:
    """The columns of a pandas frame (codes made on first use, once per column)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame
        self._codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self._frame)

    def __contains__(self, name: object) -> bool:
        return name in self._frame

    def ints(self, name: str, na: int) -> np.ndarray:
        import pandas as pd

        frame = self._frame
        if name not in frame:
            return np.full(len(frame), na, dtype=np.int64)
        col = frame[name]
        if isinstance(col.dtype, pd.api.extensions.ExtensionDtype):
            return col.to_numpy(dtype="int64", na_value=na)
        return np.where(col.isna().to_numpy(), na, col.fillna(na).to_numpy()).astype(np.int64)

    def coded(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        got = self._codes.get(name)
        if got is None:
            import pandas as pd

            codes, uniques = pd.factorize(self._frame[name].to_numpy(dtype=object), use_na_sentinel=True)
            got = self._codes[name] = (codes.astype(np.int64), np.asarray(uniques, dtype=object))
        return got

    def frame(self) -> pd.DataFrame:
        return self._frame


class LoadedColumns:
    """The columns the loader checked: `ints` (int64, `missing` where a cell is missing),
    `codes` of the text columns it coded, and `make_frame`, which builds the frame from them
    (called once, by `IncidentLog.frame`). A column without codes here is coded from the frame."""

    def __init__(self, n: int, names: tuple[str, ...], ints: dict[str, np.ndarray], missing: int,
                 codes: dict[str, tuple[np.ndarray, np.ndarray]], make_frame: Callable[[], Any],
                 positions: tuple[Any, np.ndarray] | None = None) -> None:
        self._n = n
        self._positions = positions
        self._names = frozenset(names)
        self._ints = ints
        self._missing = missing
        self._codes = codes
        self._make_frame = make_frame
        self._frame: Any = None
        self._lock = threading.Lock()      # the support figures read the log in a thread beside the engine

    def __len__(self) -> int:
        return self._n

    def __contains__(self, name: object) -> bool:
        return name in self._names

    @property
    def coded_columns(self) -> frozenset[str]:
        """The text columns whose codes the loader handed over."""
        return frozenset(self._codes)

    def ints(self, name: str, na: int) -> np.ndarray:
        a = self._ints.get(name)
        if a is None:
            if name in self._names:
                return FrameColumns(self.frame()).ints(name, na)
            return np.full(self._n, na, dtype=np.int64)
        if na == self._missing:
            out = a.view()
            out.flags.writeable = False
            return out
        return np.where(a == self._missing, na, a)

    def unit_positions(self, topology: Any) -> np.ndarray | None:
        """Each row's target as a position among its scope's units of `topology`, -1 where the
        loader found none, as the loader looked them up while checking the targets (a hostlist
        row's repeats: the positions of its nodes); None for any other topology object than the
        one the log was checked against."""
        if self._positions is None or self._positions[0] is not topology:
            return None
        out = self._positions[1].view()
        out.flags.writeable = False
        return out

    def coded(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        got = self._codes.get(name)
        if got is None:        # a column the loader did not code (cause, ticket)
            got = self._codes[name] = FrameColumns(self.frame()).coded(name)
        return got

    def frame(self) -> pd.DataFrame:
        with self._lock:
            if self._frame is None:
                self._frame = self._make_frame()
                self._make_frame = None      # let what only the frame needed go
            return self._frame


def columns_of(log: Any) -> Columns:
    """The log's columns: a loaded log's own, or those of the frame of any other object with
    one (logs made by hand)."""
    cols = getattr(log, "columns", None)
    return cols if cols is not None else FrameColumns(log.frame)


def first_rows(codes: np.ndarray) -> np.ndarray:
    """True at the first row of each code (as `pandas.Series.duplicated(keep="first")` negated)."""
    first = np.zeros(len(codes), dtype=bool)
    first[np.unique(codes, return_index=True)[1]] = True
    return first
