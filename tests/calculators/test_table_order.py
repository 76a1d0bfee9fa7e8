"""The credits table's units in order: largest credit first, then by id, the first `max_rows`."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators.cli import _first_by_credit, _positive


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["a", "b", "c", "r01-n02", "r01-n10", "é"])),
                max_size=120), st.integers(0, 8), st.booleans(), st.data())
def test_the_first_units_are_those_of_the_full_sort(units, k, as_objects, data):
    cents = np.array([c for c, _ in units], dtype=object if as_objects else np.int64)
    ids = [f"{u}-{i}" for i, (_, u) in enumerate(units)]
    hit = sorted(data.draw(st.sets(st.integers(0, max(len(units) - 1, 0)), max_size=len(units)))) if units else []
    want = sorted(hit, key=lambda i: (-int(cents[i]), ids[i]))[:k]
    assert _first_by_credit(hit, cents, ids, k) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", "c"])), min_size=1, max_size=200),
       st.integers(1, 8))
def test_ties_on_credit_and_id_keep_the_order_of_the_full_sort(units, k):
    """Many units on the k-th largest credit (the first ids of them taken by `heapq.nsmallest`),
    and ids that repeat: still the full sort's first k, in its (stable) order."""
    cents = np.array([c for c, _ in units], dtype=np.int64)
    ids = [u for _, u in units]
    hit = list(range(len(units)))
    assert _first_by_credit(hit, cents, ids, k) == sorted(hit, key=lambda i: (-int(cents[i]), ids[i]))[:k]


def test_credits_beyond_int64_are_sorted_as_python_ints():
    cents = np.array([2**70, 5, 2**70 + 1] + [1] * 30, dtype=object)
    ids = [str(i) for i in range(len(cents))]
    assert _first_by_credit(list(range(len(cents))), cents, ids, 2) == [2, 0]
    assert _positive(np.array([2**70, 0, -(2**70)], dtype=object)).tolist() == [True, False, False]
    assert _positive(np.array([3, 0, -1])).tolist() == [True, False, False]
