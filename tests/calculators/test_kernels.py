"""The compiled loops (`calculators._kernels`) against their numpy and Arrow definitions.

Each kernel stands in for a numpy or Arrow form that stays in the code: the kernel must give
exactly what that form gives, on random input and on the edges (empty sets, touching and
nested intervals, times Arrow refuses), and must refuse bad buffers with an exception, never
read or write past them. Without the kernels (no C compiler at install time) the numpy forms
serve: the last tests run the credits job both ways and compare the documents.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators import engine, intervals, log_csv
from calculators import kernels as kernel_switch
from calculators.intervals import Intervals, merge

kernels = pytest.importorskip("calculators._kernels", reason="the compiled kernels were not built (no C compiler)")

I64 = np.int64


def _rows(iv: Intervals) -> list[list[int]]:
    """The unit, start and end columns of `iv` as lists, to compare two sets exactly."""
    return [iv.unit.tolist(), iv.start.tolist(), iv.end.tolist()]


ROOT = Path(__file__).resolve().parents[2]


def test_the_kernels_are_built_where_the_project_is_set_up():
    # scripts/setup installs with a C compiler at hand: a missing module there is a build failure
    # that would only show as a slower run, so it is a failure here
    assert kernel_switch.compiled is kernels


# --- overlap pairs ---------------------------------------------------------------------------

def _intervals(draw, units: int, n: int, span: int) -> Intervals:
    u = draw(st.lists(st.integers(0, units - 1), min_size=n, max_size=n))
    s = draw(st.lists(st.integers(0, span), min_size=n, max_size=n))
    ln = draw(st.lists(st.integers(0, span // 3), min_size=n, max_size=n))
    return Intervals.of(u, s, [a + b for a, b in zip(s, ln)])


@st.composite
def pair_sets(draw):
    units = draw(st.integers(1, 6))
    span = draw(st.sampled_from([5, 50, 10_000, (1 << 33) - 1 - 4_000_000_000]))
    a = _intervals(draw, units, draw(st.integers(0, 40)), span)
    b = merge(_intervals(draw, units, draw(st.integers(0, 40)), span))
    return a, b


@settings(max_examples=300, deadline=None)
@given(pair_sets())
def test_overlap_pairs_walk_gives_the_two_searches_pairs(sets):
    a, b = sets
    want = intervals._overlap_pairs(a, b)
    got = intervals.overlap_pairs(a, b)
    assert [x.tolist() for x in got] == [x.tolist() for x in want]
    assert all(x.dtype == I64 for x in got)
    # a caller's order of `a` (merge_labels' of the capped rows) gives the same pairs, both ways
    o = intervals.order_by(a.unit, a.start)
    assert [x.tolist() for x in intervals.overlap_pairs(a, b, o)] == [x.tolist() for x in want]
    assert [x.tolist() for x in intervals._overlap_pairs(a, b, o)] == [x.tolist() for x in want]
    if len(a) and all(e > s for s, e in zip(a.start.tolist(), a.end.tolist())):
        assert intervals.merge_labels(a)[0].tolist() == o.tolist()


def test_overlap_pairs_on_touching_nested_and_other_units():
    b = Intervals.of([0, 0, 1], [10, 30, 10], [20, 40, 50])
    a = Intervals.of([0, 0, 0, 1, 2, 0], [20, 5, 15, 0, 10, 0], [30, 10, 35, 100, 20, 100])
    i, j = intervals.overlap_pairs(a, b)
    # [20, 30) only touches both of unit 0's; [5, 10) touches; [15, 35) overlaps both; unit 2 has none
    assert list(zip(i.tolist(), j.tolist())) == [(5, 0), (5, 1), (2, 0), (2, 1), (3, 2)]
    assert [x.tolist() for x in intervals._overlap_pairs(a, b)] == [i.tolist(), j.tolist()]


def test_overlap_kernel_refuses_bad_buffers_without_touching_memory():
    z = np.zeros(3, dtype=I64)
    lo, cnt = np.zeros(3, dtype=I64), np.zeros(3, dtype=I64)
    with pytest.raises(IndexError):
        kernels.overlap_lo(z, z, z, np.array([0, 1, 7], dtype=I64), z, z, z, lo, cnt)
    with pytest.raises(ValueError):
        kernels.overlap_lo(z, z, z, z, z, z, np.zeros(2, dtype=I64), lo, cnt)
    with pytest.raises(TypeError):            # items other than 64-bit integers
        kernels.overlap_lo(z.astype(np.int32), z, z, z, z, z, z, lo, cnt)
    with pytest.raises((TypeError, BufferError)):     # outputs must be writable
        kernels.overlap_lo(z, z, z, z, z, z, z, bytes(24), cnt)
    with pytest.raises(ValueError):           # counts that overrun the outputs
        kernels.overlap_fill(z, z, np.array([1, 1, 5], dtype=I64), np.zeros(3, dtype=I64), np.zeros(3, dtype=I64))
    with pytest.raises(ValueError):           # or fall short of them
        kernels.overlap_fill(z, z, z, np.zeros(2, dtype=I64), np.zeros(2, dtype=I64))
    with pytest.raises(ValueError):           # a negative count
        kernels.overlap_fill(z, z, np.array([-1, 0, 0], dtype=I64), np.zeros(0, dtype=I64),
                             np.zeros(0, dtype=I64))


# --- at least k at once ----------------------------------------------------------------------

@st.composite
def rule_sets(draw):
    units = draw(st.integers(1, 5))
    span = draw(st.sampled_from([6, 60, (1 << 33) - 1 - 4_000_000_000]))
    iv = _intervals(draw, units, draw(st.integers(1, 50)), span)
    if draw(st.booleans()):        # empty and backwards intervals too, as the rules may be handed them
        iv = Intervals.of(iv.unit, iv.start, np.where(np.arange(len(iv)) % 3 == 0, iv.start - 1, iv.end))
    threshold = np.array(draw(st.lists(st.integers(-1, 6), min_size=units, max_size=units)), dtype=I64)
    weight = None
    if draw(st.booleans()):
        weight = np.array(draw(st.lists(st.integers(0, 4), min_size=len(iv), max_size=len(iv))), dtype=I64)
    return iv, threshold, weight


@settings(max_examples=400, deadline=None)
@given(rule_sets())
def test_at_least_sweep_gives_the_numpy_rules_intervals(case):
    iv, threshold, weight = case
    want = intervals._at_least_numpy(iv, threshold, weight)
    got = intervals._at_least(iv, threshold, weight)
    assert _rows(got) == _rows(want)


def test_at_least_on_a_rack_of_three_with_k_two():
    # nodes 0-2 of rack 0: two down at once from 10 to 20 and from 25 to 30 (touching 20-25: one)
    iv = Intervals.of([0, 0, 0, 0], [0, 10, 20, 25], [20, 30, 25, 40])
    got = intervals._at_least(iv, np.array([2], dtype=I64))
    assert list(zip(got.unit.tolist(), got.start.tolist(), got.end.tolist())) == [(0, 10, 30)]


def test_at_least_kernel_refuses_a_unit_without_threshold():
    k = np.sort(np.array([(3 << 33 | 5) << 1, ((3 << 33 | 9) << 1) | 1], dtype=I64))
    out = [np.zeros(2, dtype=I64) for _ in range(3)]
    with pytest.raises(IndexError):
        kernels.at_least_sorted(k, None, np.zeros(2, dtype=I64), *out)
    with pytest.raises(ValueError):        # outputs shorter than the keys
        kernels.at_least_sorted(k, None, np.zeros(4, dtype=I64), *[np.zeros(1, dtype=I64) for _ in range(3)])
    with pytest.raises(ValueError):        # deltas of another length
        kernels.at_least_sorted(k, np.zeros(3, dtype=I64), np.zeros(4, dtype=I64), *out)


# --- per unit --------------------------------------------------------------------------------

@st.composite
def unit_pieces(draw):
    units = draw(st.integers(1, 6))
    n = draw(st.integers(0, 40))
    iv = _intervals(draw, units, n, 1000)
    flags = np.array(draw(st.lists(st.integers(0, 255), min_size=n, max_size=n)), dtype=I64)
    lo = draw(st.integers(-10, 900))
    return iv, flags, lo, lo + draw(st.integers(-5, 600)), units


@settings(max_examples=300, deadline=None)
@given(unit_pieces())
def test_seconds_flags_and_selections_per_unit_are_numpys(case):
    iv, flags, lo, hi, units = case
    assert intervals.seconds_in(iv, lo, hi, units).tolist() == intervals._seconds_in(iv, lo, hi, units).tolist()
    pairs = (iv.unit, iv.start, iv.end, np.arange(len(iv), dtype=I64) * 7, flags)
    got_flags = engine._flag_bits(units, [(iv.unit, flags), (iv.unit[::-1].copy(), flags >> 1)])
    got_sel = engine._attribution(None, None, engine.RACK, lo, hi, pairs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel_switch, "compiled", None)
        want_flags = engine._flag_bits(units, [(iv.unit, flags), (iv.unit[::-1].copy(), flags >> 1)])
        want_sel = engine._attribution(None, None, engine.RACK, lo, hi, pairs)
    assert got_flags.tolist() == want_flags.tolist()
    assert [x.tolist() for x in got_sel] == [x.tolist() for x in want_sel]
    assert all(x.dtype == I64 for x in got_sel)


def test_a_unit_outside_the_table_is_left_to_numpy():
    # bincount makes a longer array for a unit past n_units; the kernel leaves that answer to it
    iv = Intervals.of([0, 3], [0, 0], [10, 5])
    assert intervals.seconds_in(iv, 0, 100, 2).tolist() == [10, 0, 0, 5]
    with pytest.raises(IndexError):            # as numpy's flag table refuses a unit past it
        engine._flag_bits(2, [(np.array([0, 3], dtype=I64), np.array([1, 1], dtype=I64))])
    out = np.zeros(2, dtype=I64)
    assert kernels.or_per_unit(np.array([0, -1], dtype=I64), np.array([1, 1], dtype=I64), 63, out) is False
    assert kernels.seconds_per_unit(np.array([5], dtype=I64), np.zeros(1, dtype=I64), np.ones(1, dtype=I64), 0, 9,
                                    out) is False
    with pytest.raises(ValueError):
        kernels.select_overlapping(np.zeros(2, dtype=I64), np.ones(2, dtype=I64), 0, 9, (np.zeros(2, dtype=I64),),
                                   (np.zeros(1, dtype=I64),))
    with pytest.raises(ValueError):
        kernels.select_overlapping(np.zeros(2, dtype=I64), np.ones(2, dtype=I64), 0, 9, (), (np.zeros(2, dtype=I64),))


# --- id lists --------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=6), min_size=1, max_size=20), st.data(),
       st.sampled_from([pa.string(), pa.large_string()]), st.integers(0, 2))
def test_join_strings_gives_arrows_take_of_the_joined_cells(names, data, type_, cut):
    import pyarrow.compute as pc

    arr = pa.array(["x"] * cut + names, type_).slice(cut)
    codes = np.array(data.draw(st.lists(st.integers(0, len(names) - 1), max_size=30)), dtype=I64)
    sep = '",\n  "'
    want = pc.binary_join_element_wise(arr, pa.scalar(sep, type_), pa.scalar("", type_)).take(pa.array(codes))
    width = 4 if type_ == pa.string() else 8
    _, offs, text = arr.buffers()
    offs = memoryview(offs)[arr.offset * width:(arr.offset + len(arr) + 1) * width]
    pos = np.empty(len(codes) + 1, dtype=I64)
    got = kernels.join_strings(offs, b"" if text is None else text, width, codes, sep.encode(), pos)
    assert bytes(got) == "".join(want.to_pylist()).encode("utf-8")
    lengths = [len(x.encode("utf-8")) for x in want.to_pylist()]
    assert pos.tolist() == np.concatenate([[0], np.cumsum(lengths, dtype=I64)]).tolist()


def test_join_strings_refuses_codes_and_offsets_outside_the_cells():
    offs = np.array([0, 2, 4], dtype=np.int32).tobytes()
    pos = np.empty(2, dtype=I64)
    with pytest.raises(IndexError):
        kernels.join_strings(offs, b"abcd", 4, np.array([2], dtype=I64), b",", pos)
    with pytest.raises(IndexError):
        kernels.join_strings(offs, b"abcd", 4, np.array([-1], dtype=I64), b",", pos)
    with pytest.raises(ValueError):        # the offsets point past the data
        kernels.join_strings(offs, b"ab", 4, np.array([1], dtype=I64), b",", pos)
    with pytest.raises(ValueError):        # positions not one more than the codes
        kernels.join_strings(offs, b"abcd", 4, np.array([1], dtype=I64), b",", np.empty(1, dtype=I64))
    assert bytes(kernels.join_strings(offs, b"abcd", 4, np.array([1, 0], dtype=I64), b",",
                                      np.empty(3, dtype=I64))) == b"cd,ab,"



# --- records of a JSON document --------------------------------------------------------------

@st.composite
def record_segments(draw):
    """(n, segments, keep, sep): constants, per-record texts (any character a str can hold
    as UTF-8), slices of one buffer and int64 numbers with a spec, as
    `result_json.unit_records` hands them over."""
    n = draw(st.integers(0, 12))
    text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=5)
    data = draw(st.binary(max_size=40))
    segments = []
    for kind in draw(st.lists(st.integers(0, 3), max_size=8)):
        if kind == 0:
            segments.append(draw(text).encode("utf-8"))
        elif kind == 1:
            segments.append(draw(st.lists(text, min_size=n, max_size=n)))
        elif kind == 3:
            values = draw(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-10**6, 10**6), min_size=n, max_size=n))
            spec = draw(st.sampled_from([b"d", b"q", b"f0", b"q2", b"q4", b"f9", b"q9"]))
            segments.append((np.array(values, dtype=I64), spec))
        else:
            bounds = [sorted(draw(st.tuples(st.integers(0, len(data)), st.integers(0, len(data)))))
                      for _ in range(n)]
            segments.append((memoryview(data), np.array([b[0] for b in bounds], dtype=I64),
                             np.array([b[1] for b in bounds], dtype=I64)))
    keep = draw(st.lists(st.integers(0, n - 1), max_size=15)) if n else []
    return n, tuple(segments), np.array(keep, dtype=I64), draw(st.binary(max_size=3))


def test_empty_bytearray_is_a_bytearray_of_its_size_to_read_into():
    got = kernels.empty_bytearray(1 << 20)
    assert type(got) is bytearray and len(got) == 1 << 20
    got[:3] = b"abc"
    assert got[:3] == b"abc" and kernels.empty_bytearray(0) == bytearray()
    with pytest.raises(ValueError):
        kernels.empty_bytearray(-1)


@settings(max_examples=300, deadline=None)
@given(record_segments())
def test_concat_records_gives_the_joined_segments_of_the_definition(case):
    from calculators.result_json import concat_records

    n, segments, keep, sep = case
    assert kernels.concat_records(n, segments, keep, sep) == concat_records(n, segments, keep, sep)


@settings(max_examples=300, deadline=None)
@given(st.integers(-2**63, 2**63 - 1) | st.integers(-10**7, 10**7))
def test_number_segments_write_money_counts_and_percentages_as_the_formatters_do(v):
    from calculators import credits as cr
    from calculators.result_json import number_text

    one = np.array([v], dtype=I64)
    keep = np.array([0], dtype=I64)
    for spec, want in ((b"d", str(v)), (b"q2", f'"{cr.money(v)}"')) + (((b"q4", f'"{cr.pct_text(v)}"'),) if v >= 0 else ()):
        assert number_text(v, spec) == want
        assert kernels.concat_records(1, ((one, spec),), keep, b",") == want.encode()


def test_number_and_slice_segments_read_buffers_that_are_not_aligned():
    values = np.array([-5, 1234567], dtype=I64)
    odd = np.frombuffer(b"\0" + values.tobytes(), dtype=I64, offset=1)        # 8-byte items at an odd address
    starts = np.frombuffer(b"\0" + np.array([0, 1], dtype=I64).tobytes(), dtype=I64, offset=1)
    ends = np.frombuffer(b"\0" + np.array([1, 3], dtype=I64).tobytes(), dtype=I64, offset=1)
    got = kernels.concat_records(2, ((odd, b"q2"), (b"abc", starts, ends)), np.array([0, 1], dtype=I64), b",")
    assert got == b'"-0.05"a,"12345.67"bc'


def test_number_columns_are_the_kernels_only_for_int64_values_that_fit():
    from decimal import Decimal

    from calculators.result_json import _int_column, _money_column, _pct_column

    ints = np.array([3, 0, 12], dtype=object)
    got = _int_column(ints)
    assert isinstance(got, tuple) and got[1] == b"d" and got[0].dtype == I64 and got[0].tolist() == [3, 0, 12]
    assert isinstance(_money_column(np.array([5, 7], dtype=I64)), tuple)
    # anything else is the list of texts the formatters write
    assert _int_column(np.array([1, 2**70], dtype=object)) == ["1", str(2**70)]      # past int64
    assert _money_column(np.array([Decimal("1.5"), 2], dtype=object)) == ['"0.01"', '"0.02"']
    assert _int_column(np.array([True, 2], dtype=object)) == ["1", "2"]             # a bool is no count
    assert _pct_column(np.array([-1, 10000], dtype=I64)) == ['"-1.9999"', '"1.0000"']    # pct_text's floor
    assert _int_column([4, 5]) == ["4", "5"]                                          # not an array


def test_concat_records_refuses_what_it_cannot_join_before_writing():
    one = (np.array([0], dtype=I64), np.array([2], dtype=I64))
    keep = np.array([0], dtype=I64)
    assert kernels.concat_records(1, (b"{", ["\u00e9"], (b"abc", *one), b"}"), keep, b",") == "{\u00e9ab}".encode()
    with pytest.raises(ValueError):                     # a list of another length than n
        kernels.concat_records(2, (["a"],), np.array([0], dtype=I64), b",")
    with pytest.raises(TypeError):                      # an item that is no str
        kernels.concat_records(1, ([b"a"],), keep, b",")
    with pytest.raises(UnicodeEncodeError):             # a lone surrogate, as str.encode refuses it
        kernels.concat_records(1, (["\ud800"],), keep, b",")
    with pytest.raises(ValueError):                     # a slice past its data
        kernels.concat_records(1, ((b"ab", *one[:1], np.array([3], dtype=I64)),), keep, b",")
    with pytest.raises(ValueError):                     # a slice ending before it starts
        kernels.concat_records(1, ((b"abc", np.array([2], dtype=I64), np.array([1], dtype=I64)),), keep, b",")
    with pytest.raises(IndexError):                     # a record that is not there
        kernels.concat_records(1, (b"x",), np.array([1], dtype=I64), b",")
    with pytest.raises(TypeError):                      # a segment of another kind
        kernels.concat_records(1, ((1, 2),), keep, b",")
    with pytest.raises(TypeError):                      # a number spec it does not know
        kernels.concat_records(1, ((np.array([1], dtype=I64), b"x2"),), keep, b",")
    with pytest.raises(TypeError):                      # numbers that are not int64
        kernels.concat_records(1, ((np.array([1], dtype=np.int32), b"d"),), keep, b",")
    with pytest.raises(ValueError):                     # numbers of another length than n
        kernels.concat_records(1, ((np.array([1, 2], dtype=I64), b"d"),), keep, b",")
    with pytest.raises(TypeError):                      # starts that are not int64
        kernels.concat_records(1, ((b"ab", np.array([0], dtype=np.int32), one[1]),), keep, b",")
    assert kernels.concat_records(0, (b"x",), np.array([], dtype=I64), b",") == b""


# --- id lists of a unit and its parents ----------------------------------------------------------

@st.composite
def id_hierarchies(draw):
    """Rows (unit, id row) of nodes, and up to two parent tables (racks, clusters) with their
    own rows and each node's parent (or none)."""
    n_ids = draw(st.integers(1, 40))
    nodes = draw(st.integers(1, 8))

    def rows(units):
        k = draw(st.integers(0, 30))
        return (np.array(draw(st.lists(st.integers(0, units - 1), min_size=k, max_size=k)), dtype=I64),
                np.array(draw(st.lists(st.integers(0, n_ids - 1), min_size=k, max_size=k)), dtype=I64))

    parents = []
    for _ in range(draw(st.integers(1, 2))):
        units = draw(st.integers(1, 4))
        owner = np.array(draw(st.lists(st.integers(-1, units - 1), min_size=nodes, max_size=nodes)), dtype=I64)
        parents.append((units, owner, rows(units)))
    return n_ids, nodes, rows(nodes), parents


def _id_index(n_ids, nodes, own, parents):
    codes = engine.IdCodes(None)
    codes._done = (np.arange(n_ids, dtype=I64), np.array([f"I{i}" for i in range(n_ids)], dtype=object))
    extra = []
    for units, owner, (pu, pr) in parents:
        kids = np.flatnonzero(owner >= 0)
        ptr, children = intervals.csr(owner[kids], units)
        extra.append((ptr, kids[children], engine.IdIndex(pu, pr, codes, units)))
    return engine.IdIndex(own[0], own[1], codes, nodes, tuple(extra))


@settings(max_examples=400, deadline=None)
@given(id_hierarchies())
def test_merge_lists_gives_the_sorted_distinct_pairs_of_numpy(case):
    n_ids, nodes, own, parents = case
    got = _id_index(n_ids, nodes, own, parents)
    bounds, code = got.lists_csr()
    kernel_switch.compiled = None
    try:
        want = _id_index(n_ids, nodes, own, parents)
        wb, wc = want.lists_csr()
        want.pairs()
    finally:
        kernel_switch.compiled = kernels
    assert bounds.tolist() == wb.tolist() and code.tolist() == wc.tolist()
    assert [x.tolist() for x in got.pairs()] == [x.tolist() for x in want.pairs()]
    # each node's list: its own ids and its parents', ascending, each once
    for u in range(nodes):
        ids = set(own[1][own[0] == u].tolist())
        for _units, owner, (pu, pr) in parents:
            if owner[u] >= 0:
                ids |= set(pr[pu == owner[u]].tolist())
        assert code[bounds[u]:bounds[u + 1]].tolist() == sorted(ids)


def test_merge_lists_refuses_lists_bounds_and_owners_it_cannot_take():
    b = np.array([0, 2], dtype=I64)
    out_b = np.empty(2, dtype=I64)
    pb, pc = np.array([0, 1], dtype=I64), np.array([5], dtype=I64)
    ok = kernels.merge_lists(b, np.array([1, 7], dtype=I64), (np.array([0], dtype=I64),), (pb,), (pc,), out_b,
                             np.empty(3, dtype=I64))
    assert ok == 3 and out_b.tolist() == [0, 3]
    with pytest.raises(ValueError, match="ascending"):          # a list with a code twice
        kernels.merge_lists(b, np.array([4, 4], dtype=I64), (), (), (), out_b, np.empty(4, dtype=I64))
    with pytest.raises(ValueError, match="too small"):
        kernels.merge_lists(b, np.array([1, 7], dtype=I64), (np.array([0], dtype=I64),), (pb,), (pc,), out_b,
                            np.empty(2, dtype=I64))
    with pytest.raises(ValueError, match="out of range"):       # an owner past the parents
        kernels.merge_lists(b, np.array([1, 7], dtype=I64), (np.array([1], dtype=I64),), (pb,), (pc,), out_b,
                            np.empty(3, dtype=I64))
    with pytest.raises(ValueError, match="own bounds"):         # bounds past the codes
        kernels.merge_lists(np.array([0, 3], dtype=I64), np.array([1, 7], dtype=I64), (), (), (), out_b,
                            np.empty(3, dtype=I64))
    with pytest.raises(ValueError, match="parent bounds"):
        kernels.merge_lists(b, np.array([1, 7], dtype=I64), (np.array([0], dtype=I64),),
                            (np.array([1, 0], dtype=I64),), (pc,), out_b, np.empty(3, dtype=I64))
    with pytest.raises(TypeError):                              # not int64
        kernels.merge_lists(b.astype(np.int32), np.array([1, 7], dtype=I64), (), (), (), out_b, np.empty(3, dtype=I64))


# --- blocks a piece touches ------------------------------------------------------------------

@st.composite
def pieces_and_blocks(draw):
    racks = draw(st.integers(1, 4))
    blocks = merge(_intervals(draw, racks, draw(st.integers(0, 12)), 200))
    n = draw(st.integers(1, 30))
    rack = np.array(draw(st.lists(st.integers(0, racks - 1), min_size=n, max_size=n)), dtype=I64)
    s = np.array(draw(st.lists(st.integers(0, 220), min_size=n, max_size=n)), dtype=I64)
    e = s + np.array(draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)), dtype=I64)
    if draw(st.booleans()):       # sorted by rack and start, as _lift hands them (the walk's fast case)
        o = np.lexsort((s, rack))
        rack, s, e = rack[o], s[o], e[o]
    return rack, s, e, blocks, racks


@settings(max_examples=400, deadline=None)
@given(pieces_and_blocks())
def test_touched_blocks_walk_gives_the_two_searches(case):
    rack, s, e, blocks, racks = case
    got = engine._touched_blocks(rack, s, e, blocks, racks)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel_switch, "compiled", None)
        want = engine._touched_blocks(rack, s, e, blocks, racks)
    assert [x.tolist() for x in got] == [x.tolist() for x in want]


def test_touched_blocks_refuses_bounds_and_units_it_does_not_have():
    z = np.zeros(1, dtype=I64)
    lo, hi = np.zeros(1, dtype=I64), np.zeros(1, dtype=I64)
    with pytest.raises(IndexError):
        kernels.touched_blocks(np.array([1], dtype=I64), z, z, np.array([0, 1], dtype=I64), z, z, lo, hi)
    with pytest.raises(ValueError):       # bounds past the blocks
        kernels.touched_blocks(z, z, z, np.array([0, 5], dtype=I64), z, z, lo, hi)
    with pytest.raises(ValueError):       # bounds going back
        kernels.touched_blocks(z, z, z, np.array([1, 0], dtype=I64), z, z, lo, hi)
    with pytest.raises(ValueError):       # no bounds at all
        kernels.touched_blocks(z, z, z, np.zeros(0, dtype=I64), z, z, lo, hi)


# --- the whole engine on the reference scenarios -----------------------------------------------

def _trace_arrays(tr) -> dict:
    out = {name: getattr(tr, name) for name in ("rack_rule", "rack_down", "cluster_rule", "cluster_down",
                                                "site_rule", "site_down")}
    if tr.lift is not None:
        out["rest"] = tr.lift.rest
        out["attribution"] = tr.lift.attribution
    out["layers"] = [iv for _, iv in tr.node_layers]
    flat = {}
    for k, v in out.items():
        parts = v if isinstance(v, (list, tuple)) else [v]
        flat[k] = [[x.tolist() for x in (p.unit, p.start, p.end)] if isinstance(p, Intervals) else p.tolist()
                   for p in parts]
    return flat


def _scenarios():
    from tests.calculators.test_engine_vs_reference import scenarios

    return scenarios(max_incidents=16)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.deferred(_scenarios))
def test_the_engine_with_and_without_kernels_gives_the_same_trace_and_result(scenario):
    from tests.calculators.test_engine_vs_reference import run_traced

    _, _, result, tr, _ = run_traced(scenario)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel_switch, "compiled", None)
        _, _, want, tr_want, _ = run_traced(scenario)
    assert _trace_arrays(tr) == _trace_arrays(tr_want)
    assert result.dumps_utf8() == want.dumps_utf8()


# --- time outside the parent's -----------------------------------------------------------------

@st.composite
def children_and_parents(draw):
    parents = draw(st.integers(1, 3))
    children = draw(st.integers(1, 6))
    owner = np.array(draw(st.lists(st.integers(0, parents - 1), min_size=children, max_size=children)), dtype=I64)
    iv = merge(_intervals(draw, children, draw(st.integers(0, 30)), 300))
    if draw(st.booleans()) and len(iv) > 1:      # not sorted: numpy answers
        o = np.array(draw(st.permutations(range(len(iv)))), dtype=I64)
        iv = iv.take(o)
    parent = merge(_intervals(draw, parents, draw(st.integers(0, 12)), 300))
    return iv, owner, parent


@settings(max_examples=400, deadline=None)
@given(children_and_parents())
def test_minus_parent_walk_gives_the_numpy_parts(case):
    iv, owner, parent = case
    got = intervals.minus_parent(iv, owner, parent)
    want = intervals._minus_parent(iv, owner, parent) if len(iv) and len(parent) else iv
    key = lambda x: sorted(zip(x.unit.tolist(), x.start.tolist(), x.end.tolist()))  # noqa: E731
    assert key(got) == key(want)
    if bool((iv.unit[1:] >= iv.unit[:-1]).all()) and len(parent):      # sorted input: sorted, as numpy
        assert _rows(got) == _rows(want)


def test_minus_parent_walk_leaves_what_it_cannot_take_to_numpy():
    z = np.zeros(1, dtype=I64)
    bounds = np.array([0, 1], dtype=I64)
    one = np.ones(1, dtype=I64)
    # an empty interval, a child without a parent, a child past the owner table: -1
    assert kernels.minus_parent_sorted(z, z, z, z, bounds, z, one, None, None, None) == -1
    assert kernels.minus_parent_sorted(z, z, one, np.array([3], dtype=I64), bounds, z, one, None, None, None) == -1
    assert kernels.minus_parent_sorted(one, z, one, z, bounds, z, one, None, None, None) == -1
    with pytest.raises(ValueError):       # outputs shorter than the parts
        kernels.minus_parent_sorted(z, z, np.array([9], dtype=I64), z, bounds, np.array([3], dtype=I64),
                                    np.array([4], dtype=I64), *[np.zeros(1, dtype=I64) for _ in range(3)])


# --- merging -------------------------------------------------------------------------------------

@settings(max_examples=400, deadline=None)
@given(rule_sets())
def test_merge_walk_gives_numpys_labels_and_merged_intervals(case):
    iv = case[0]
    got = intervals.merge_labels(iv)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel_switch, "compiled", None)
        want = intervals.merge_labels(iv)
    assert [got[0].tolist(), got[1].tolist()] == [want[0].tolist(), want[1].tolist()]
    assert _rows(got[2]) == _rows(want[2])
    assert got[1].dtype == want[1].dtype == I64


def test_merge_walk_refuses_an_order_outside_the_intervals():
    z = np.zeros(2, dtype=I64)
    with pytest.raises(IndexError):
        kernels.merge_walk(z, z, z + 1, np.array([0, 2], dtype=I64), np.empty(2, dtype=I64),
                           *[np.empty(2, dtype=I64) for _ in range(3)])
    with pytest.raises(ValueError):        # outputs shorter than the order
        kernels.merge_walk(z, z, z + 1, np.array([0, 1], dtype=I64), np.empty(2, dtype=I64),
                           *[np.empty(1, dtype=I64) for _ in range(3)])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(-2, 5)), max_size=12), st.booleans())
def test_order_by_of_sorted_or_any_keys_is_the_stable_argsort(pairs, sort_first):
    if sort_first:
        pairs = sorted(pairs)
    unit = np.array([u for u, _ in pairs], dtype=I64)
    t = np.array([x for _, x in pairs], dtype=I64)
    want = np.argsort(intervals.key(unit, t), kind="stable").tolist()       # the definition
    assert intervals.order_by(unit, t).tolist() == want
    if min(t.tolist(), default=0) >= 0:       # times as the engine has them: (unit, time) order
        assert want == sorted(range(len(pairs)), key=lambda i: (pairs[i], i))
    assert kernels.keys_sorted(unit, t) is (want == list(range(len(pairs))))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 50), st.integers(0, 9)), max_size=20),
       st.sampled_from(["any", "sorted", "wide units", "no kernels"]), st.data())
def test_sorted_take_is_order_by_then_take(rows, case, data):
    # what step 4 does with the nodes' pieces: the chosen ones sorted by (unit, start), their
    # positions in that order (the definition: order_by of the chosen ones, then take)
    if case == "sorted":
        rows = sorted(rows)
    unit = np.array([u for u, _, _ in rows], dtype=I64)
    if case == "wide units":             # unit, time and position do not pack into 63 bits
        unit = unit << 50
    start = np.array([t for _, t, _ in rows], dtype=I64)
    iv = Intervals(unit, start, start + np.array([d for _, _, d in rows], dtype=I64))
    at = np.array(sorted(data.draw(st.sets(st.integers(0, max(len(rows) - 1, 0)), max_size=len(rows)))
                         if rows else []), dtype=I64)
    o = intervals.order_by(iv.unit[at], iv.start[at])
    want = at[o]
    with pytest.MonkeyPatch.context() as mp:
        if case == "no kernels":
            mp.setattr(kernel_switch, "compiled", None)
        got_at, got = intervals.sorted_take(iv, at)
    assert got_at.tolist() == want.tolist()
    assert _rows(got) == _rows(iv.take(want))
    assert got.unit.dtype == got.start.dtype == got.end.dtype == I64


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(1 << 62), 1 << 62), max_size=60), st.booleans(), st.booleans())
def test_distinct_is_np_unique(values, sort_first, compiled):
    a = np.array(sorted(values) if sort_first else values, dtype=I64)
    with pytest.MonkeyPatch.context() as mp:
        if not compiled:
            mp.setattr(kernel_switch, "compiled", None)
        got = kernel_switch.distinct(a)
    assert got.tolist() == np.unique(a).tolist() and got.dtype == I64      # the definition
    assert a.tolist() == (sorted(values) if sort_first else values)          # the argument left as it was


# --- sorting 64-bit integers ------------------------------------------------------------------

_WIDE = st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-3, 3), st.integers(0, 1 << 40),
                  st.sampled_from([-(1 << 63), (1 << 63) - 1, 0, -1, 1 << 62]))


@settings(max_examples=400, deadline=None)
@given(st.lists(_WIDE, max_size=300), st.booleans())
def test_sort_i64_gives_numpys_sort(values, sort_first):
    a = np.array(sorted(values) if sort_first else values, dtype=I64)
    want = np.sort(a)                                # the definition
    got = a.copy()
    kernels.sort_i64(got, 0)
    assert got.tolist() == want.tolist()
    assert kernel_switch.sort(a.copy()).tolist() == want.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(0, (1 << 24) - 1)), max_size=400),
       st.sampled_from([(1 << 11) - 1, 2, 0]))
def test_sort_of_packed_keys_from_their_position_bits_up_is_the_full_sort(pairs, spread):
    # the keys of intervals.sorted_packed: (unit, time) above the positions, which are in order
    unit = np.array([u & spread if spread else u for u, _ in pairs], dtype=I64)
    t = np.array([x for _, x in pairs], dtype=I64)
    got = intervals.sorted_packed(unit, t) if len(pairs) else None
    if got is None:
        return
    packed, tb, ib = got
    want = np.sort((((unit << tb) | t) << ib) | np.arange(len(t), dtype=I64))
    assert packed.tolist() == want.tolist()
    assert intervals.order_by(unit, t).tolist() == np.argsort(intervals.key(unit, t), kind="stable").tolist()


def test_sort_of_a_large_array_of_each_kind_is_numpys():
    # large enough for every digit of the radix sort to be used; the digits where all values agree skipped
    rng = np.random.default_rng(7)
    for a in (rng.integers(-(1 << 63), (1 << 63) - 1, 100_000, dtype=I64, endpoint=True),
              (rng.integers(0, 12_600, 100_000) << 33) | rng.integers(0, 1 << 23, 100_000),
              np.full(50_000, -5, dtype=I64), np.arange(100_000, dtype=I64)[::-1].copy(),
              rng.integers(0, 4, 100_000) << 40):
        got = a.copy()
        kernels.sort_i64(got, 0)
        assert got.tolist() == np.sort(a).tolist()


def test_sort_of_what_the_kernel_cannot_take_is_numpys_or_refused():
    a = np.array([3, 1, 2, 9, 0], dtype=I64)
    view = a[::2]                                   # not contiguous: numpy sorts it
    assert kernel_switch.sort(view).tolist() == [0, 2, 3]
    assert a.tolist() == [0, 1, 2, 9, 3]
    f = np.array([2.0, 1.0])
    assert kernel_switch.sort(f).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        kernels.sort_i64(f, 0)
    with pytest.raises(ValueError):
        kernels.sort_i64(a, 64)
    with pytest.raises(ValueError):
        kernels.sort_i64(a, -1)
    with pytest.raises(ValueError):             # read-only: the kernel writes in place
        kernels.sort_i64(np.frombuffer(a.tobytes(), dtype=I64), 0)


# --- rows by class -----------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-1, 4), max_size=40), st.integers(1, 4), st.integers(1, 8))
def test_split_gives_each_classes_rows_in_order(cls, n_classes, n_columns):
    cls = np.array(cls, dtype=I64)
    columns = [np.arange(len(cls), dtype=I64) * (c + 1) - c for c in range(n_columns)]
    got = kernel_switch.split(cls, n_classes, columns)
    want = [[col[cls == c] for col in columns] for c in range(n_classes)]
    assert [[x.tolist() for x in g] for g in got] == [[x.tolist() for x in g] for g in want]


def test_split_rows_refuses_outputs_that_do_not_fit_their_class():
    cls = np.array([0, 1, 1], dtype=I64)
    col = np.arange(3, dtype=I64)
    with pytest.raises(ValueError):
        kernels.split_rows(cls, (col,), (np.empty(1, dtype=I64), np.empty(1, dtype=I64)))
    with pytest.raises(ValueError):        # a column of another length
        kernels.split_rows(cls, (col[:2],), (np.empty(1, dtype=I64), np.empty(2, dtype=I64)))
    with pytest.raises(ValueError):        # outputs not a whole number of classes
        kernels.split_rows(cls, (col, col), (np.empty(1, dtype=I64),))
    with pytest.raises(TypeError):
        kernels.split_rows(cls, (col.astype(np.float64),), (np.empty(1, dtype=I64), np.empty(2, dtype=I64)))


# --- distinct ids -----------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=9), min_size=0, max_size=30), st.integers(1, 3))
def test_distinct_ids_are_found_as_the_sort_finds_them(ids, pieces):
    size = max(-(-len(ids) // pieces), 1)
    col = pa.chunked_array([pa.array(ids[i:i + size], pa.string()) for i in range(0, len(ids), size)],
                           type=pa.string())
    got = log_csv._distinct_as_written(col)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel_switch, "compiled", None)
        want = log_csv._distinct_as_written(col)
    assert (got is None) == (want is None)
    if got is not None:
        assert got.to_pylist() == want.to_pylist() == ids


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(0, 3).map(lambda hi: hi << 32),
                          st.builds(lambda hi, lo: (hi << 32) | lo, st.integers(0, 5), st.integers(0, 9))),
                max_size=200))
def test_equal_hashes_says_whether_two_are_equal(values):
    # the upper 32 bits sorted, the runs of equal upper bits compared whole: set() as the definition
    got = log_csv._equal_hashes(np.array(values, dtype=I64))
    assert got == (len(set(values)) < len(values))


# --- codes of a column of few values ------------------------------------------------------------

# short values (found by length and end bytes), long ones differing only inside (compared
# whole), prefixes of each other, the empty cell, non-ASCII, and a value equal to another's ends
_FEW = st.sampled_from(["", "node", "rack", "nodes", "down", "sev1", "sev2", "a", "ab", "é", "\u3001",
                        "x" * 17, "x" * 8 + "y" + "x" * 8, "x" * 8 + "z" + "x" * 8, "0123456789abcdef",
                        "0123456789abcdeF", "0123456789abcdef0", "maintenance", "customer_caused", "security_patch"])


def _encode_with_arrow(col):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel_switch, "compiled", None)
        return log_csv._dictionary_encode(col)


@settings(max_examples=400, deadline=None)
@given(st.lists(_FEW, max_size=60), st.integers(1, 4), st.booleans(), st.integers(0, 3))
def test_few_codes_are_arrows_dictionary_encoding(cells, pieces, large, skip):
    # chunks of a column (from their own offsets: each a slice of a larger array), string or
    # large_string: the same codes and dictionary (first appearance order) as Arrow's
    typ = pa.large_string() if large else pa.string()
    size = max(-(-len(cells) // pieces), 1)
    chunks = [pa.array(["pad"] * skip + cells[i:i + size], typ).slice(skip) for i in range(0, len(cells), size)]
    col = pa.chunked_array(chunks, type=typ)
    codes, dictionary = log_csv._dictionary_encode(col)
    want_codes, want_dictionary = _encode_with_arrow(col)
    assert codes.dtype == I64 and codes.tolist() == want_codes.tolist()
    assert dictionary.type == want_dictionary.type and dictionary.to_pylist() == want_dictionary.to_pylist()
    assert log_csv.text_column(col).uniques.tolist() == list(dict.fromkeys(c.strip() for c in cells if c.strip()))


def test_few_codes_hands_a_column_of_many_values_to_arrow():
    values = [f"v{i}" for i in range(50)]
    col = pa.chunked_array([pa.array(values[:20]), pa.array(values[20:] + values[:5])])
    offsets = [log_csv.string_buffers(ch) for ch in col.chunks]
    chunks = tuple((o, d, len(ch), w) for (o, d, w), ch in zip(offsets, col.chunks))
    out = np.empty(len(col), dtype=I64)
    assert kernels.few_codes(chunks, out, np.empty(49, dtype=I64)) == -1      # one value too many
    firsts = np.empty(50, dtype=I64)
    assert kernels.few_codes(chunks, out, firsts) == 50
    assert out.tolist() == list(range(50)) + [0, 1, 2, 3, 4] and firsts.tolist() == list(range(50))
    # more values than FEW_VALUES: Arrow encodes them (the same result)
    many = pa.chunked_array([pa.array([f"id-{i}" for i in range(log_csv.FEW_VALUES + 3)] + ["id-7"])])
    codes, dictionary = log_csv._dictionary_encode(many)
    assert codes[-1] == 7 and len(dictionary) == log_csv.FEW_VALUES + 3


def test_few_codes_refuses_what_it_cannot_read():
    out, firsts = np.empty(1, dtype=I64), np.empty(4, dtype=I64)
    good = (np.array([0, 3], dtype=np.int32).tobytes(), b"abc", 1, 4)
    assert kernels.few_codes((good,), out, firsts) == 1 and out[0] == 0
    with pytest.raises(ValueError):                              # an offset outside the data
        kernels.few_codes(((np.array([0, 9], dtype=np.int32).tobytes(), b"abc", 1, 4),), out, firsts)
    with pytest.raises(ValueError):                              # fewer offsets than cells
        kernels.few_codes(((np.array([0, 1], dtype=np.int32).tobytes(), b"abc", 2, 4),), np.empty(2, dtype=I64),
                          firsts)
    with pytest.raises(ValueError):                              # out of another length
        kernels.few_codes((good,), np.empty(2, dtype=I64), firsts)
    with pytest.raises(ValueError):
        kernels.few_codes((good[:3] + (3,),), out, firsts)
    with pytest.raises(ValueError):                              # no room for a value
        kernels.few_codes((good,), out, np.empty(0, dtype=I64))
    with pytest.raises(TypeError):
        kernels.few_codes((good[:2],), out, firsts)
    with pytest.raises(TypeError):
        kernels.few_codes((good,), out.astype(np.int32), firsts)


# white space str.strip() removes, its look-alikes that it keeps (U+2020, U+200B, U+00A1, U+1681,
# U+205E, U+3001, U+2030) and plain letters: each cell's first and last characters matter
_EDGE_CHARS = log_csv._WHITESPACE + "\u2020\u200b\u00a1\u1681\u205e\u3001\u2030\u00e9ab"


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(alphabet=_EDGE_CHARS, min_size=0, max_size=4), min_size=1, max_size=6), st.booleans())
def test_plain_cells_says_what_str_strip_says(cells, large):
    arr = pa.array(cells, pa.large_string() if large else pa.string())
    offsets, data, width = log_csv.string_buffers(arr)
    want = all(c != "" and c.strip() == c for c in cells)
    assert kernels.plain_cells(offsets, data, len(cells), width) is want
    for i, c in enumerate(cells):          # each cell alone, from its own offset on
        one = arr.slice(i, 1)
        assert kernels.plain_cells(*log_csv.string_buffers(one)[:2], 1, width) is (c != "" and c.strip() == c)


def test_plain_cells_refuses_offsets_outside_the_data():
    with pytest.raises(ValueError):
        kernels.plain_cells(np.array([0, 9], dtype=np.int32).tobytes(), b"abc", 1, 4)
    with pytest.raises(ValueError):
        kernels.plain_cells(np.array([0, 1], dtype=np.int32).tobytes(), b"abc", 2, 4)
    with pytest.raises(ValueError):
        kernels.plain_cells(np.array([0, 1], dtype=np.int32).tobytes(), b"abc", 1, 3)
    assert kernels.plain_cells(np.array([0, 3], dtype=np.int32).tobytes(), b"abc", 1, 4) is True
    assert kernels.plain_cells(np.array([0], dtype=np.int32).tobytes(), b"", 0, 4) is True


def test_hash_cells_refuses_offsets_outside_the_data():
    out = np.empty(1, dtype=I64)
    with pytest.raises(ValueError):
        kernels.hash_cells(np.array([0, 9], dtype=np.int32).tobytes(), b"abc", 1, 4, out)
    with pytest.raises(ValueError):
        kernels.hash_cells(np.array([0, 1], dtype=np.int32).tobytes(), b"abc", 2, 4, out)
    kernels.hash_cells(np.array([0, 3], dtype=np.int32).tobytes(), b"abc", 1, 4, out)
    other = np.empty(1, dtype=I64)
    kernels.hash_cells(np.array([0, 2], dtype=np.int32).tobytes(), b"abc", 1, 4, other)
    assert out[0] != other[0]


# --- times -----------------------------------------------------------------------------------

def _arrow_times(col, monkeypatch):
    """`fast_times` as Arrow's cast defines it (the kernel set aside)."""
    with monkeypatch.context() as m:
        m.setattr(kernel_switch, "compiled", None)
        return log_csv.fast_times(col)


@st.composite
def time_cells(draw):
    """Cells of the two forms with any digits (real dates or not), and a few other cells."""
    def two(hi: int) -> str:
        return f"{draw(st.integers(0, hi)):02d}"

    kind = draw(st.sampled_from(["Z", "offset", "empty", "other"]))
    if kind == "empty":
        return ""
    if kind == "other":
        return draw(st.sampled_from(["2027-02-03 10:00:00Z", "2027-02-03T10:00:00z", "2027-02-03T10:00:00+0600",
                                     "2027-02-03T10:00:00.5Z", "2027-02-03", "x" * 20, "2027-02-03T10:00:00Z ",
                                     "2027-02-03T1０:00:00Z", "2027-02-03T10:00:00.00005", "+2027-02-03T10:00:00Z"]))
    year = draw(st.sampled_from([1677, 1678, 1900, 1970, 2000, 2024, 2027, 2262, 2263, 9999, 0]
                                + list(range(1960, 2040)) + [2168, 2169, 2170]))     # (the kernel looks up 1970-2169)
    body = f"{year:04d}-{two(13)}-{two(31)}T{two(24)}:{two(60)}:{two(60)}"
    if kind == "Z":
        return body + "Z"
    return body + draw(st.sampled_from("+-")) + f"{two(25)}:{two(60)}"


@settings(max_examples=400, deadline=None)
@given(st.lists(time_cells(), min_size=1, max_size=12), st.integers(1, 3))
def test_iso_seconds_gives_what_arrows_cast_gives(cells, pieces):
    size = -(-len(cells) // pieces)
    col = pa.chunked_array([pa.array(cells[i:i + size], pa.string()) for i in range(0, len(cells), size)])
    got = log_csv._iso_seconds(col)
    with pytest.MonkeyPatch.context() as mp:
        want = _arrow_times(col, mp)
    if got is not None:
        # every column the kernel reads, Arrow reads the same (the reverse need not hold: the
        # kernel leaves the edges of Arrow's range and other forms to Arrow)
        assert want is not None and got.tolist() == want.tolist()
    assert (log_csv.fast_times(col) is None) == (want is None)
    if want is not None:
        assert log_csv.fast_times(col).tolist() == want.tolist()


def test_iso_seconds_reads_both_forms_and_leaves_the_rest_to_arrow(monkeypatch):
    col = pa.chunked_array([pa.array(["2027-02-03T10:00:00Z", "", "2027-02-03T04:00:00-06:00"]),
                            pa.array(["2024-02-29T23:59:59+00:30"])])
    assert log_csv._iso_seconds(col).tolist() == [1801648800, log_csv.NA, 1801648800, 1709249399]
    assert log_csv._iso_seconds(col).tolist() == _arrow_times(col, monkeypatch).tolist()
    sliced = pa.chunked_array([pa.array(["x", "2027-02-03T10:00:00Z", "2027-02-03T11:00:00Z"]).slice(1)])
    assert log_csv._iso_seconds(sliced).tolist() == [1801648800, 1801652400]
    large = pa.chunked_array([pa.array(["2027-02-03T10:00:00Z"], pa.large_string())])
    assert log_csv._iso_seconds(large).tolist() == [1801648800]
    # Arrow's decision: a leap day that is none, the edge of its range, a null
    for cells in (["2023-02-29T00:00:00Z"], ["1677-09-21T00:12:44Z"], ["2262-04-11T23:47:16Z"]):
        assert log_csv._iso_seconds(pa.chunked_array([pa.array(cells)])) is None
    assert log_csv.fast_times(pa.chunked_array([pa.array(["1677-09-21T00:12:44Z"])])).tolist() == [-9223372036]
    assert log_csv._iso_seconds(pa.chunked_array([pa.array(["2027-02-03T10:00:00Z", None])])) is None


def test_iso_kernel_refuses_offsets_that_point_outside_the_data():
    out = np.zeros(1, dtype=I64)
    bad = np.array([0, 400], dtype=np.int32).tobytes()
    assert kernels.iso_seconds(bad, b"2027-02-03T10:00:00Z", 1, 4, out, 0) is False
    backwards = np.array([10, 5], dtype=np.int32).tobytes()
    assert kernels.iso_seconds(backwards, b"2027-02-03T10:00:00Z", 1, 4, out, 0) is False
    with pytest.raises(ValueError):          # fewer offsets than cells
        kernels.iso_seconds(bytes(4), b"", 1, 4, out, 0)
    with pytest.raises(ValueError):
        kernels.iso_seconds(bytes(8), b"", 1, 3, out, 0)


# --- the job without the kernels ---------------------------------------------------------------

@pytest.mark.parametrize("which", ["example", "synthetic fleet"])
def test_credits_without_the_kernels_are_the_same_document(which, monkeypatch, tmp_path):
    from benchmarks.synthetic import make_fleet_contract, make_incidents_csv
    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from calculators.periods import parse_periods
    from slaschema.loader import load_contract

    if which == "example":
        contract, log_path = ROOT / "examples" / "gb200-contract.yaml", ROOT / "examples" / "gb200-incidents-2027Q1.csv"
    else:        # every scope, exclusions with caps, degraded time, open incidents: 20,000 rows
        contract = make_fleet_contract(tmp_path)
        log_path = make_incidents_csv(tmp_path / "log.csv", 20_000, seed=3)
    lc = load_contract(contract)
    periods = parse_periods(["2027-Q1"], lc.model.contract.timezone)

    def document() -> bytes:
        log = load_incidents(log_path, lc)
        return compute(lc, log, periods, support=True).dumps_utf8()

    with_kernels = document()
    monkeypatch.setattr(kernel_switch, "compiled", None)
    without = document()
    assert without == with_kernels
    assert json.loads(without)["format"].startswith("slakit-credits/")
