"""`IdList`: incident ids held as codes into the log's id table, read as a tuple of str.

The credits result holds many id lists (every unit's incidents, every support figure's
breaches) whose ids are mostly never read one by one: the JSON document gathers their text
from the codes in one pass (`calculators.result_json`), and a table shows a few of them.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


class IdList(Sequence[str]):
    """Incident ids (a unit's, in log order; a support figure's breaches) held as codes into
    the log's id table: a read-only sequence equal to, and hashed as, the tuple of the same
    ids. An id becomes a Python string only when it is read, so a table that shows the first
    four ids of a cluster and the count of its other hundred thousand makes four strings, not
    all of them."""

    __slots__ = ("_codes", "_names", "_tuple")

    def __init__(self, codes: np.ndarray, names) -> None:
        self._codes = codes            # positions in `names` (the engine's `IdCodes` names)
        self._names = names
        self._tuple: tuple[str, ...] | None = None

    @property
    def codes(self) -> np.ndarray:
        """The ids' positions in `names` (read-only use)."""
        return self._codes

    @property
    def names(self):
        """The log's id table the codes index (`TextValues` or an object array)."""
        return self._names

    def __len__(self) -> int:
        return len(self._codes)

    def __getitem__(self, key):
        if self._tuple is not None:
            return self._tuple[key]
        if isinstance(key, slice):
            return tuple(self._names[self._codes[key]].tolist())
        i = operator.index(key)          # what a tuple takes: an int (or bool), not a float or an array
        if not -len(self._codes) <= i < len(self._codes):
            raise IndexError("tuple index out of range")
        return str(self._names[int(self._codes[i])])

    def _all(self) -> tuple[str, ...]:
        if self._tuple is None:
            self._tuple = tuple(self._names[self._codes].tolist()) if len(self._codes) else ()
        return self._tuple

    def __iter__(self):
        return iter(self._all())

    def __contains__(self, item) -> bool:
        return item in self._all()

    def __eq__(self, other) -> bool:
        return self._all() == (other._all() if isinstance(other, IdList) else other)

    def __hash__(self) -> int:
        return hash(self._all())

    # ordered, joined and repeated as the tuple is (a tuple's operators do not take a sequence)
    def __lt__(self, other):
        return self._all() < _as_tuple(other)

    def __le__(self, other):
        return self._all() <= _as_tuple(other)

    def __gt__(self, other):
        return self._all() > _as_tuple(other)

    def __ge__(self, other):
        return self._all() >= _as_tuple(other)

    def __add__(self, other):
        return self._all() + _as_tuple(other)

    def __radd__(self, other):
        return _as_tuple(other) + self._all()

    def __mul__(self, n):
        return self._all() * n

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self):
        # pickled (a record sent to another process) as the tuple of its ids, not with the
        # log's whole id table that its codes index
        return tuple, (self._all(),)


def _as_tuple(other):
    """An `IdList` as its tuple, anything else as it is (so that a tuple's operator refuses
    what it refuses)."""
    return other._all() if isinstance(other, IdList) else other
