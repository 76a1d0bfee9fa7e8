"""The int64 forms of the month figures' arithmetic (calculators.credits) give what the object
forms give: the same booleans, the same Python ints, and the same errors, for operands drawn up
to and beyond the bounds where the int64 forms hand over to the object forms."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators import credits as cr

# magnitudes around the bounds: small, month-sized, near 2**62 / 10**6 and 2**62 / 200, beyond int64
_INTS = st.one_of(st.integers(0, 3_000_000), st.integers(-5, 5), st.integers(0, (1 << 62) // 10**6 + 10),
                  st.integers(0, (1 << 62) // 200 + 10), st.integers(1 << 62, 1 << 70), st.integers(-(1 << 63), 1 << 63))


def _obj(values) -> np.ndarray:
    values = list(values)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _same(got, want) -> None:
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.tolist() == want.tolist()
    assert [type(x) for x in got.tolist()] == [type(x) for x in want.tolist()]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_INTS, _INTS), min_size=1, max_size=20), st.one_of(_INTS, st.just("array")),
       st.builds(lambda n, k: Decimal(n).scaleb(-k), st.integers(0, 100 * 10**7), st.integers(0, 7)))
def test_below_is_the_object_forms(pairs, month, threshold):
    lnum, dn = _obj(p[0] for p in pairs), _obj(p[1] for p in pairs)
    m = _obj(abs(p[0]) + 1 for p in pairs) if month == "array" else month
    p, q = cr.ratio(threshold)
    try:
        total = dn * m
        want = np.asarray((100 * q) * (total - lnum) < p * total, dtype=bool)
    except OverflowError:           # (an int beyond int64 in an int64 product: not the object form's)
        return
    _same(cr.below(lnum, dn, m, threshold), want)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_INTS, _INTS), min_size=1, max_size=20), st.one_of(_INTS, st.just("array")))
def test_availability_is_the_object_forms(pairs, month):
    lnum, dn = _obj(p[0] for p in pairs), _obj(p[1] for p in pairs)
    m = _obj(abs(p[1]) + 3 for p in pairs) if month == "array" else month
    try:
        total = dn * m
        want = (10**6 * (total - lnum)) // total
    except ZeroDivisionError:
        with pytest.raises(ZeroDivisionError):
            cr.availability_e4(lnum, dn, m)
        return
    _same(cr.availability_e4(lnum, dn, m), want)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_INTS, _INTS), min_size=1, max_size=20), st.booleans())
def test_cents_half_up_is_the_object_forms(pairs, one_den):
    num = _obj(p[0] for p in pairs)
    den = pairs[0][1] if one_den else _obj(p[1] for p in pairs)
    try:
        want = (200 * num + den) // (2 * den)
    except ZeroDivisionError:
        with pytest.raises(ZeroDivisionError):
            cr.cents_half_up(num, den)
        return
    _same(cr.cents_half_up(num, den), want)


def test_the_int64_forms_are_taken_where_they_fit_and_not_beyond():
    # a fleet-sized month: the int64 form (no object arithmetic) gives the object form's ints
    rng = np.random.default_rng(5)
    lnum = _obj(rng.integers(0, 2_678_400, 12_600).tolist())
    dn = _obj([1] * 12_600)
    assert cr._below_i64(lnum, dn, 2_678_400, *cr.ratio(Decimal("99.95"))) is not None
    big = lnum.copy()
    big[7] = 1 << 64                                   # beyond int64: the object form
    assert cr._below_i64(big, dn, 2_678_400, 1999, 20) is None
    assert cr.below(big, dn, 2_678_400, Decimal("99.95"))[7] == (2000 * (2_678_400 - (1 << 64)) < 1999 * 2_678_400)
    assert cr.cents_half_up(_obj([1 << 61]), 3).tolist() == [(200 * (1 << 61) + 3) // 6]      # 200 x 2**61: object form
    assert cr.cents_half_up(1234, 100) == 1234         # scalars: Python's ints as before
