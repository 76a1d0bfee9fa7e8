"""The compiled loops of `slakit credits`, or None where they were not built.

`compiled` is the C module `calculators._kernels` (`calculators/_kernels.c`, built by
`pip install` through setup.py), or None where no C compiler was at hand: every caller then
runs the numpy or Arrow form it keeps beside the kernel, which is the definition the kernel is
tested against (tests/calculators/test_kernels.py). Callers look `compiled` up at each use,
so setting it to None here runs the numpy forms everywhere (as the tests do).
"""

from __future__ import annotations

import numpy as np

try:
    from calculators import _kernels as compiled
except ImportError:  # pragma: no cover - the tests run the job with compiled = None as well
    compiled = None


def as_i64(a: np.ndarray) -> np.ndarray:
    """`a` as a C-contiguous int64 array (itself when it is one), as the kernels read it."""
    return np.ascontiguousarray(a, dtype=np.int64)


def sort(a: np.ndarray, lo_bit: int = 0) -> np.ndarray:
    """`a` (int64) sorted in place and returned: `a.sort()` (the definition, and what numpy does
    without the kernels) by the compiled radix sort (`sort_i64`), several times faster than
    numpy's sort on these machines. `lo_bit` > 0 promises that the bits below it are in
    ascending order already among values equal above them (positions packed in the low bits):
    only the bits above are sorted then, which gives the same array."""
    if compiled is None or a.dtype != np.int64 or not a.flags.c_contiguous or not a.flags.writeable:
        a.sort()
    else:
        compiled.sort_i64(a, lo_bit)
    return a


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of an integer array, ascending, as int64: `np.unique(values)` (the
    definition), by a sort of a copy (`sort`) and a look at neighbours. A plain `np.unique`
    imports numpy.ma at its first call, to ask whether its argument is masked: 11 ms of a
    `slakit credits` run, which needs nothing else of numpy.ma."""
    return distinct_sorted(sort(np.array(values, dtype=np.int64)))


def distinct_sorted(s: np.ndarray) -> np.ndarray:
    """The distinct values of an ascending array (the first of each run of equal ones), for a
    caller that sorted an array of its own (`distinct` sorts a copy)."""
    return s[np.concatenate([[True], s[1:] != s[:-1]])] if len(s) > 1 else s


def split(cls: np.ndarray, n_classes: int, columns: list[np.ndarray]) -> list[list[np.ndarray]]:
    """For each class 0 .. n_classes - 1, each column's values at the rows of that class, in row
    order: `[[col[cls == c] for col in columns] for c in range(n_classes)]` (the definition, and
    what numpy does without the kernels), in one pass over the rows with them (`split_rows`).
    The columns are int64 of one length; a row of another class goes nowhere."""
    cls = as_i64(cls)
    if compiled is None or not 0 < len(columns) <= 8 or not 0 < n_classes <= 8 \
            or any(c.dtype != np.int64 for c in columns):
        return [[col[cls == c] for col in columns] for c in range(n_classes)]
    counts = np.bincount(cls[(cls >= 0) & (cls < n_classes)], minlength=n_classes)
    out = [[np.empty(int(counts[c]), dtype=np.int64) for _ in columns] for c in range(n_classes)]
    compiled.split_rows(cls, tuple(as_i64(col) for col in columns), tuple(x for group in out for x in group))
    return out
