"""The Arrow compute functions the log's loading calls, without importing `pyarrow.compute`.

`import pyarrow.compute` builds a Python wrapper, with a signature and a docstring, for each of
Arrow's ~300 compute functions: 40-50 ms on the 2-core machines measured here, in the thread
that starts `slakit credits` (`calculators.log_prefetch.start` imports the loader there), for
the few functions below. Each calls the same function of Arrow's registry through
`call_function` (from `pyarrow._compute`, the compiled module `pyarrow.compute` itself
re-exports; where a pyarrow release moved it, from `pyarrow.compute`), with the options
`pyarrow.compute`'s wrapper would pass: same kernels, same results, same errors.
"""

from __future__ import annotations

from typing import Any

try:
    from pyarrow._compute import CastOptions, SortOptions, TakeOptions, TrimOptions, call_function
except ImportError:  # pragma: no cover - a pyarrow without the private module: the public one
    from pyarrow.compute import CastOptions, SortOptions, TakeOptions, TrimOptions, call_function


def dictionary_encode(values: Any) -> Any:
    """`pyarrow.compute.dictionary_encode(values)` (nulls encoded as null)."""
    return call_function("dictionary_encode", [values])


def utf8_trim(values: Any, characters: str) -> Any:
    """`pyarrow.compute.utf8_trim(values, characters=characters)`."""
    return call_function("utf8_trim", [values], TrimOptions(characters))


def binary_length(values: Any) -> Any:
    """`pyarrow.compute.binary_length(values)`."""
    return call_function("binary_length", [values])


def sort_indices(values: Any) -> Any:
    """`pyarrow.compute.sort_indices(values)`: ascending, nulls at the end, stable."""
    return call_function("sort_indices", [values], SortOptions([("", "ascending")]))


def equal(left: Any, right: Any) -> Any:
    """`pyarrow.compute.equal(left, right)`."""
    return call_function("equal", [left, right])


def any_true(values: Any) -> Any:
    """`pyarrow.compute.any(values)` (nulls skipped)."""
    return call_function("any", [values])


def cast(values: Any, target_type: Any) -> Any:
    """`pyarrow.compute.cast(values, target_type)`: a safe cast (an overflow or a cell that does
    not parse raises `pyarrow.ArrowInvalid`)."""
    return call_function("cast", [values], CastOptions.safe(target_type))


def invert(values: Any) -> Any:
    """`pyarrow.compute.invert(values)`."""
    return call_function("invert", [values])


def if_else(cond: Any, left: Any, right: Any) -> Any:
    """`pyarrow.compute.if_else(cond, left, right)`."""
    return call_function("if_else", [cond, left, right])


def take(values: Any, indices: Any) -> Any:
    """`pyarrow.compute.take(values, indices)` (`values.take(indices)`): bounds checked."""
    return call_function("take", [values, indices], TakeOptions(boundscheck=True))
