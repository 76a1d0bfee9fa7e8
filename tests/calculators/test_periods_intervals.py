"""Months in a zone, and the vectorised interval operations."""

from __future__ import annotations

import itertools
from decimal import Decimal

import numpy as np
import pytest

from calculators.intervals import (
    Intervals,
    a_minus_b,
    at_least,
    concat,
    drop_short,
    intersect,
    merge,
    merge_sorted,
    minus_parent,
    overlap_pairs,
    seconds_in,
    sweep,
)
from calculators.periods import PeriodError, month, parse_periods


def test_dst_months_have_743_and_745_hours():
    assert month(2027, 3, "America/Chicago").hours == Decimal(743)
    assert month(2027, 11, "America/Chicago").hours == Decimal(721)      # 30 days + 1 h
    assert month(2027, 10, "America/Chicago").hours == Decimal(744)
    assert month(2027, 3, "Europe/Berlin").hours == Decimal(743)
    assert month(2027, 10, "Europe/Berlin").hours == Decimal(745)
    assert month(2027, 2, "UTC").hours == Decimal(672)
    feb = month(2027, 2, "America/Chicago")
    assert feb.start == 1801461600            # 2027-02-01T06:00:00Z


def test_quarters_and_labels():
    ps = parse_periods(["2027-Q1"], "UTC")
    assert [p.label for p in ps] == ["2027-01", "2027-02", "2027-03"]
    assert ps[0].end == ps[1].start
    assert [p.label for p in parse_periods(["2027-03", "2027-01", "2027-03"], "UTC")] == ["2027-01", "2027-03"]
    with pytest.raises(PeriodError):
        parse_periods(["2027-13"], "UTC")
    with pytest.raises(PeriodError):
        parse_periods(["2027-Q0"], "UTC")


def iv(*rows):
    u, s, e = zip(*rows) if rows else ((), (), ())
    return Intervals.of(u, s, e)


def rows(x: Intervals):
    return sorted(zip(x.unit.tolist(), x.start.tolist(), x.end.tolist()))


def test_merge_joins_overlapping_and_touching_per_unit():
    x = iv((0, 10, 20), (0, 20, 30), (0, 25, 26), (0, 40, 50), (1, 15, 16), (1, 5, 5))
    assert rows(merge(x)) == [(0, 10, 30), (0, 40, 50), (1, 15, 16)]


def test_min_outage_applies_to_merged_intervals():
    kept, dropped = drop_short(merge(iv((0, 0, 200), (0, 200, 400), (1, 0, 299))), 300)
    assert rows(kept) == [(0, 0, 400)]
    assert rows(dropped) == [(1, 0, 299)]


def test_at_least_counts_units_down_at_once():
    nodes = iv((0, 0, 100), (0, 50, 150), (0, 60, 70), (1, 0, 10))
    assert rows(at_least(nodes, np.array([2, 2]))) == [(0, 50, 100)]
    assert rows(at_least(nodes, np.array([3, 1]))) == [(0, 60, 70), (1, 0, 10)]


def test_seconds_overlap_and_difference():
    a = merge(iv((0, 0, 100), (1, 10, 20)))
    b = merge(iv((0, 50, 60), (0, 90, 200)))
    assert seconds_in(a, 0, 1000, 2).tolist() == [100, 10]
    assert seconds_in(a, 95, 1000, 2).tolist() == [5, 0]
    assert rows(intersect(a, b)) == [(0, 50, 60), (0, 90, 100)]
    assert rows(a_minus_b(a, b)) == [(0, 0, 50), (0, 60, 90), (1, 10, 20)]
    i, j = overlap_pairs(iv((0, 55, 95)), b)
    assert sorted(zip(i.tolist(), j.tolist())) == [(0, 0), (0, 1)]


@pytest.mark.parametrize("seed", range(20))
def test_merge_sorted_equals_merge_of_both(seed):
    rng = np.random.default_rng(seed)

    def sorted_set(n):
        unit = rng.integers(0, 6, n)
        start = rng.integers(0, 200, n)
        end = start + rng.integers(-3, 40, n)          # some empty intervals
        iv = Intervals.of(unit, start, end)
        order = np.lexsort((iv.start, iv.unit))
        return iv.take(order)

    a, b = sorted_set(int(rng.integers(0, 60))), sorted_set(int(rng.integers(0, 60)))
    got, want = merge_sorted(a, b), merge(concat(a, b))
    for field in ("unit", "start", "end"):
        assert getattr(got, field).tolist() == getattr(want, field).tolist()


@pytest.mark.parametrize("seed", range(20))
def test_sweep_counts_the_same_with_and_without_explicit_unit_weights(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    start = rng.integers(0, 100, n)
    iv = Intervals.of(rng.integers(0, 4, n), start, start + rng.integers(1, 30, n))
    plain, weighted = sweep(iv), sweep(iv, np.ones(n, dtype=np.int64))
    for got, want in zip(plain, weighted):
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("seed", range(20))
def test_merge_equals_merge_labels_blocks(seed):
    from calculators.intervals import merge_labels

    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(0, 80))
    start = rng.integers(0, 150, n)
    iv = Intervals.of(rng.integers(0, 5, n), start, start + rng.integers(-3, 30, n))   # some empty
    got, want = merge(iv), merge_labels(iv)[2]
    for field in ("unit", "start", "end"):
        assert getattr(got, field).tolist() == getattr(want, field).tolist()


@pytest.mark.parametrize("seed", range(30))
def test_minus_parent_is_each_childs_time_outside_its_parents(seed):
    rng = np.random.default_rng(200 + seed)
    owner = rng.integers(0, 3, 7)                       # 7 children, 3 parents

    def merged(n_units, n):
        start = rng.integers(0, 150, n)
        return merge(Intervals.of(rng.integers(0, n_units, n), start, start + rng.integers(1, 30, n)))

    child, parent = merged(7, int(rng.integers(0, 40))), merged(3, int(rng.integers(0, 12)))
    got = minus_parent(child, owner, parent)
    # per child, second by second
    for c in range(7):
        mine = {t for u, s, e in zip(child.unit, child.start, child.end) if u == c for t in range(s, e)}
        cover = {t for u, s, e in zip(parent.unit, parent.start, parent.end) if u == owner[c] for t in range(s, e)}
        pieces = [(s, e) for u, s, e in zip(got.unit, got.start, got.end) if u == c]
        assert {t for s, e in pieces for t in range(s, e)} == mine - cover
        assert pieces == sorted(pieces) and all(e > s for s, e in pieces)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(pieces))     # disjoint


@pytest.mark.parametrize("seed", range(10))
def test_weighted_at_least_counts_weights(seed):
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(1, 40))
    start = rng.integers(0, 100, n)
    iv = Intervals.of(rng.integers(0, 3, n), start, start + rng.integers(1, 30, n))
    w = rng.integers(1, 4, n)
    got = at_least(iv, np.array([3, 4, 5]), w)
    for u in range(3):
        level = np.zeros(140, dtype=np.int64)
        for uu, s, e, ww in zip(iv.unit, iv.start, iv.end, w):
            if uu == u:
                level[s:e] += ww
        want = {t for t in range(140) if level[t] >= [3, 4, 5][u]}
        assert {t for uu, s, e in zip(got.unit, got.start, got.end) if uu == u for t in range(s, e)} == want


def test_parse_instant_is_the_one_as_of_reader():
    from datetime import UTC, datetime

    from calculators.periods import PeriodError, parse_instant

    want = datetime(2027, 4, 1, 5, 0, tzinfo=UTC)
    assert parse_instant("2027-04-01T05:00:00Z") == want
    assert parse_instant("2027-04-01T00:00:00-05:00") == want
    assert parse_instant("2027-04-01T00:00:00", "America/Chicago") == want      # CDT, UTC-5
    with pytest.raises(PeriodError, match="offset or Z"):
        parse_instant("2027-04-01T00:00:00")
    with pytest.raises(PeriodError, match="--assume-tz"):
        parse_instant("2027-04-01T00:00:00", zone_option="--assume-tz")
    with pytest.raises(PeriodError, match="not an ISO 8601"):
        parse_instant("next tuesday")


def _same(a: Intervals, b: Intervals) -> None:
    for field in ("unit", "start", "end"):
        assert getattr(a, field).tolist() == getattr(b, field).tolist()


@pytest.mark.parametrize("seed", range(20))
def test_at_least_and_minus_parent_in_two_halves_give_the_one_piece_answer(seed, monkeypatch):
    """From `SPLIT_FROM` intervals the units are worked out as two halves on two threads:
    the answer is the same arrays, in the same order, as in one piece (here from 1 interval,
    on logs with one unit, a few, or many; weighted; children numbered in their parents'
    order or not)."""
    import calculators.intervals as iv_mod

    rng = np.random.default_rng(900 + seed)
    n_units = int(rng.choice([1, 2, 5, 40]))
    n = int(rng.integers(1, 400))
    start = rng.integers(0, 500, n)
    iv = Intervals.of(rng.integers(0, n_units, n), start, start + rng.integers(1, 60, n))
    threshold = rng.integers(0, 4, n_units)
    weight = rng.integers(1, 4, n) if seed % 2 else None
    n_children = 3 * n_units
    owner = np.sort(rng.integers(0, n_units, n_children)) if seed % 3 else rng.integers(0, n_units, n_children)
    cs = rng.integers(0, 500, 2 * n)
    child = merge(Intervals.of(rng.integers(0, n_children, 2 * n), cs, cs + rng.integers(1, 40, 2 * n)))
    parent = merge(iv)
    monkeypatch.setattr(iv_mod, "SPLIT_FROM", 10**12)
    want = at_least(iv, threshold, weight), minus_parent(child, owner, parent)
    calls = []
    real = iv_mod._both
    monkeypatch.setattr(iv_mod, "_both", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(iv_mod, "SPLIT_FROM", 1)
    got = at_least(iv, threshold, weight), minus_parent(child, owner, parent)
    _same(got[0], want[0])
    _same(got[1], want[1])
    if n_units > 1 and len(np.unique(iv.unit)) > 1:
        assert calls                # the halves were taken


def test_halves_asked_for_on_the_worker_itself_are_worked_out_there(monkeypatch):
    """A split step called from the halves' own worker thread works out both halves there
    (it would otherwise wait for itself)."""
    import calculators.intervals as iv_mod

    monkeypatch.setattr(iv_mod, "SPLIT_FROM", 1)
    iv = Intervals.of([0, 0, 1, 1, 2], [0, 5, 0, 3, 1], [10, 9, 4, 8, 2])
    want = at_least(iv, np.array([2, 2, 1]))
    nested = iv_mod._both(lambda: at_least(iv, np.array([2, 2, 1])), (), ())
    _same(nested[0], want)
    _same(nested[1], want)


def test_two_threads_asking_for_the_first_halves_at_once_share_one_worker(monkeypatch):
    """The halves' worker is made once for the process: two threads that need it at the same
    moment both use the one made (none is left behind, idle, for the rest of the run), and
    both get their own answers."""
    import concurrent.futures
    import threading
    import time

    import calculators.intervals as iv_mod

    made = []

    class Slow(concurrent.futures.ThreadPoolExecutor):
        def __init__(self, *a, **k):
            time.sleep(0.2)                   # the other thread asks meanwhile
            super().__init__(*a, **k)
            made.append(self)

    monkeypatch.setattr(iv_mod, "_pool", None)
    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", Slow)
    start, got = threading.Barrier(2), {}

    def ask(k):
        start.wait()
        got[k] = iv_mod._both(lambda x: x * 10, (k,), (k + 1,))

    threads = [threading.Thread(target=ask, args=(k,)) for k in (1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    try:
        assert got == {1: (10, 20), 5: (50, 60)}
        assert len(made) == 1 and iv_mod._pool is made[0]
    finally:
        for pool in made:
            pool.shutdown(wait=True)
