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
