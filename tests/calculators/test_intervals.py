"""`Intervals.take` and `positions`: rows taken by mask, positions or slice as numpy's indexing
takes them (the engine's pieces are taken a mask or a list of positions at a time)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators.intervals import Intervals


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=0, max_size=30), st.data())
def test_take_by_mask_positions_or_slice_is_numpys_indexing(values, data):
    n = len(values)
    iv = Intervals.of(values, [v + 1 for v in values], [v + 2 for v in values])
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    pos = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=20)) if n else [], dtype=np.int64)
    cut = slice(data.draw(st.integers(0, n + 1)), None, data.draw(st.integers(1, 3)))
    for idx in (mask, pos, cut, []):
        got = iv.take(idx)
        want = [iv.unit[idx], iv.start[idx], iv.end[idx]]
        assert [got.unit.tolist(), got.start.tolist(), got.end.tolist()] == [w.tolist() for w in want]
    with pytest.raises(IndexError):               # a mask of another length, as numpy refuses it
        iv.take(np.ones(n + 1, dtype=bool))
    if n:
        with pytest.raises(IndexError):
            iv.take(np.array([n]))
