"""Vectorised operations on half-open integer intervals grouped by unit.

An interval set is three equal-length int64 arrays `(unit, start, end)`. Times are
non-negative integer seconds below 2**33 (the engine shifts epoch seconds to a local
origin first), units are non-negative ints below 2**30, so `(unit << 33) | time` is one
sortable int64 key. Every function is a handful of numpy passes: no Python loop per
interval or per unit. `at_least` and `minus_parent` work out a large set (`SPLIT_FROM`) as
two halves of its units on two threads, which gives the same arrays as one piece.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np

from calculators import kernels

SHIFT = 33
MASK = (1 << SHIFT) - 1
MAX_TIME = 1 << SHIFT
I64 = np.int64


@dataclass(frozen=True)
class Intervals:
    unit: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __len__(self) -> int:
        return len(self.start)

    @staticmethod
    def empty() -> Intervals:
        z = np.zeros(0, dtype=I64)
        return Intervals(z, z.copy(), z.copy())

    @staticmethod
    def of(unit, start, end) -> Intervals:
        return Intervals(np.asarray(unit, dtype=I64), np.asarray(start, dtype=I64), np.asarray(end, dtype=I64))

    def take(self, idx) -> Intervals:
        ix = positions(idx, len(self))
        return Intervals(self.unit.take(ix), self.start.take(ix), self.end.take(ix))

    def lengths(self) -> np.ndarray:
        return self.end - self.start

    @staticmethod
    def first(out: list[np.ndarray], m: int) -> Intervals:
        """The first `m` rows of a kernel's three output columns (unit, start, end), copied to
        their own arrays unless they are all of them."""
        return Intervals(*(x if m == len(x) else x[:m].copy() for x in out))

    def relabel(self, mapping: np.ndarray) -> Intervals:
        """Same intervals, units replaced by `mapping[unit]` (e.g. node -> rack)."""
        return Intervals(mapping[self.unit], self.start, self.end)


def positions(idx, n: int) -> np.ndarray:
    """`idx` (a boolean mask of `n` rows, positions, or a slice) as the positions `ndarray.take` reads:
    `a.take(positions(idx, len(a)))` is `a[idx]`. numpy's `a[mask]` takes 4-5 times as long as
    finding the positions once and taking them (and several columns share the one search); its
    `a[positions]` a fifth longer than `a.take(positions)`."""
    if isinstance(idx, slice):
        return np.arange(n, dtype=I64)[idx]
    idx = np.asarray(idx)
    if idx.dtype == np.bool_:
        if idx.shape != (n,):
            raise IndexError(f"boolean index of shape {idx.shape} does not match {n} rows")
        return np.flatnonzero(idx)
    if idx.dtype.kind not in "iu" and idx.size == 0:
        return np.zeros(0, dtype=I64)          # an empty list
    return idx


def concat(*parts: Intervals) -> Intervals:
    parts = tuple(p for p in parts if len(p))
    if not parts:
        return Intervals.empty()
    return Intervals(np.concatenate([p.unit for p in parts]), np.concatenate([p.start for p in parts]),
                     np.concatenate([p.end for p in parts]))


def key(unit: np.ndarray, t: np.ndarray) -> np.ndarray:
    return (unit.astype(I64, copy=False) << SHIFT) | t.astype(I64, copy=False)


def order_by(unit: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The positions that sort `(unit, t)` (ties in position order): `argsort(key(unit, t))`.

    numpy sorts plain int64 arrays several times faster than it argsorts them, so when the
    unit, the time and the position fit in 63 bits together (a quarter's times from the run's
    origin take 24 bits, 12,600 units 14, a few million positions 22) they are packed into
    one key, sorted, and the positions read back from the low bits."""
    n = len(t)
    if n < 2:
        return np.arange(n, dtype=I64)
    k = kernels.compiled
    if k is not None and k.keys_sorted(kernels.as_i64(unit), kernels.as_i64(t)):
        return np.arange(n, dtype=I64)        # in order already (the widened node pieces of step 4)
    got = sorted_packed(unit, t)
    if got is None:
        return np.argsort(key(unit, t), kind="stable")
    packed, _, ib = got
    packed &= (1 << ib) - 1
    return packed


def sorted_take(iv: Intervals, at: np.ndarray) -> tuple[np.ndarray, Intervals]:
    """`(at[o], iv.take(at[o]))` for `o = order_by(unit, start)` of the intervals at `at`:
    where the keys pack (`sorted_packed`), each interval's unit and start are read back from
    its sorted key and only its end and position are gathered (two gathers of a million
    items instead of four: step 4's node pieces, about 15 ms)."""
    unit, start = iv.unit[at], iv.start[at]
    k = kernels.compiled
    if len(at) < 2 or (k is not None and k.keys_sorted(kernels.as_i64(unit), kernels.as_i64(start))):
        return at, Intervals(unit, start, iv.end[at])        # in order already
    got = sorted_packed(unit, start)
    if got is None:
        o = order_by(unit, start)
        at = at[o]
        return at, Intervals(unit[o], start[o], iv.end[at])
    packed, tb, ib = got
    at = at[packed & ((1 << ib) - 1)]
    start = (packed >> ib) & ((1 << tb) - 1)
    packed >>= tb + ib
    return at, Intervals(packed, start, iv.end[at])


def sorted_packed(unit: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, int, int] | None:
    """`(packed, tb, ib)`: `((unit << tb | t) << ib) | position` of each item, sorted, with the
    fewest bits that hold the times (tb) and the positions (ib); None where unit, time and
    position do not fit in 63 bits, or a unit or time is negative (`order_by`)."""
    n = len(t)
    ub = max(int(unit.max()), 0).bit_length()
    tb = max(int(t.max()), 0).bit_length()
    ib = max(n - 1, 0).bit_length()
    if ub + tb + ib > 63 or int(unit.min()) < 0 or int(t.min()) < 0:
        return None
    packed = (((unit.astype(I64, copy=False) << tb) | t.astype(I64, copy=False)) << ib) | np.arange(n, dtype=I64)
    kernels.sort(packed, ib)           # the positions are in order: only the bits above them are sorted
    return packed, tb, ib


def merge_labels(iv: Intervals) -> tuple[np.ndarray, np.ndarray, Intervals]:
    """Merge overlapping or touching intervals per unit.

    Returns `(order, block, merged)`: `order` sorts the non-empty input intervals by
    (unit, start) — indices into the input —, `block[i]` is the merged interval that
    `order[i]` belongs to, and `merged` is sorted by (unit, start), disjoint per unit.
    Empty intervals (end <= start) are left out of `order`.
    """
    valid = iv.end > iv.start
    if valid.all():
        ok = np.arange(len(iv), dtype=I64)
        sub = iv
    else:
        ok = np.flatnonzero(valid)
        sub = iv.take(ok)
    if len(ok) == 0:
        return ok, ok.copy(), Intervals.empty()
    o = order_by(sub.unit, sub.start)
    k = kernels.compiled
    if k is not None:          # the pass after the sort, compiled (`merge_walk`)
        i64 = kernels.as_i64
        block = np.empty(len(o), dtype=I64)
        out = [np.empty(len(o), dtype=I64) for _ in range(3)]
        m = k.merge_walk(i64(sub.unit), i64(sub.start), i64(sub.end), i64(o), block, *out)
        return ok[o], block, Intervals.first(out, m)
    ks = key(sub.unit[o], sub.start[o])
    order = ok[o]
    # running maximum of the end keys: a start key above it opens a new interval (a new
    # unit's keys are above all of the previous unit's, so units never merge)
    run = np.maximum.accumulate(key(sub.unit[o], sub.end[o]))
    new = np.empty(len(ks), dtype=bool)
    new[0] = True
    np.greater(ks[1:], run[:-1], out=new[1:])
    firsts = np.flatnonzero(new)
    block = np.cumsum(new) - 1
    lasts = np.append(firsts[1:] - 1, len(ks) - 1)
    first_keys = ks[firsts]
    merged = Intervals(first_keys >> SHIFT, first_keys & MASK, run[lasts] & MASK)
    return order, block, merged


def merge(iv: Intervals) -> Intervals:
    """Merged intervals, as `merge_labels` returns them (starts and ends sorted apart)."""
    return merge_sorted(iv)


def _merged_from_keys(ks: np.ndarray, ke: np.ndarray) -> Intervals:
    """Merged intervals from the start and end keys of non-empty intervals, sorted apart:
    a merged interval ends after the i-th end exactly when that end is before the (i+1)-th
    start (a unit's keys all sort below the next unit's)."""
    kernels.sort(ks)
    kernels.sort(ke)
    gap = np.flatnonzero(ke[:-1] < ks[1:])
    first = np.concatenate([[0], gap + 1])
    last = np.concatenate([gap, [len(ke) - 1]])
    s = ks[first]
    return Intervals(s >> SHIFT, s & MASK, ke[last] & MASK)


def merge_sorted(*parts: Intervals) -> Intervals:
    """`merge(concat(*parts))` without concatenating the parts themselves (only their keys);
    fastest when each part is sorted by (unit, start), as `merge` returns it."""
    parts = tuple(p if (p.end > p.start).all() else p.take(p.end > p.start) for p in parts)
    parts = tuple(p for p in parts if len(p))
    if not parts:
        return Intervals.empty()
    ks = [key(p.unit, p.start) for p in parts]
    ke = [key(p.unit, p.end) for p in parts]
    return _merged_from_keys(ks[0] if len(ks) == 1 else np.concatenate(ks),
                             ke[0] if len(ke) == 1 else np.concatenate(ke))


def drop_short(iv: Intervals, min_len: int) -> tuple[Intervals, Intervals]:
    """(kept, dropped): intervals shorter than `min_len` seconds are dropped whole."""
    if min_len <= 0 or not len(iv):
        return iv, Intervals.empty()
    keep = (iv.end - iv.start) >= min_len
    return iv.take(keep), iv.take(~keep)


def sweep(iv: Intervals, weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Piecewise-constant sum of `weight` (default 1) over each unit's intervals.

    Returns `(unit, t0, t1, level)`: consecutive segments between event times of the
    same unit, with the level that holds on `[t0, t1)` (segments of level 0 included).
    """
    n = len(iv)
    if n == 0:
        z = np.zeros(0, dtype=I64)
        return z, z.copy(), z.copy(), z.copy()
    if weight is None and int(iv.unit.max()) < (1 << (62 - SHIFT)):
        # +1/-1 events: the sign rides in the key's lowest bit, so a plain sort (no argsort
        # and gather) orders them; only the level after a key's last event is used
        k = np.concatenate([key(iv.unit, iv.start) << 1, (key(iv.unit, iv.end) << 1) | 1])
        kernels.sort(k)
        level = np.cumsum(1 - 2 * (k & 1))
        k >>= 1
    else:
        w = np.ones(n, dtype=I64) if weight is None else np.asarray(weight, dtype=I64)
        units = np.concatenate([iv.unit, iv.unit])
        times = np.concatenate([iv.start, iv.end])
        d = np.concatenate([w, -w])
        # the events of one key may come in any order: only the level after a key's last is used
        o = order_by(units, times)
        k = key(units[o], times[o])
        level = np.cumsum(d[o])
    last = np.empty(len(k), dtype=bool)
    last[-1] = True
    last[:-1] = k[1:] != k[:-1]
    k = k[last]
    level = level[last]
    u = k >> SHIFT
    t = k & MASK
    same = u[1:] == u[:-1]
    return u[:-1][same], t[:-1][same], t[1:][same], level[:-1][same]


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# intervals from which a per-unit step runs as two halves on two threads (with one core to run
# on, never: the second thread would only take turns with the first)
SPLIT_FROM = 200_000 if _cores() > 1 else 1 << 62
_pool = None
_pool_made = threading.Lock()     # two threads asking for the first split at once make one pool
_WORKER = "slakit-halves"


def _forget_pool() -> None:
    global _pool, _pool_made
    _pool = None                # a forked child has no worker thread: it makes its own
    _pool_made = threading.Lock()     # (and the lock may have been held by a thread it lacks)


os.register_at_fork(after_in_child=_forget_pool)


def _split_unit(unit: np.ndarray) -> int | None:
    """A unit that splits `unit` into two parts of about the same size (those below it and
    the rest), from a sample; None when there is no such split (one unit)."""
    sample = np.sort(unit[::max(len(unit) // 4096, 1)])
    pivot = int(sample[len(sample) // 2])
    if pivot <= int(sample[0]):
        pivot = int(sample[0]) + 1
    return pivot if pivot <= int(unit.max()) else None


class _Done:
    """A result worked out at once, with the `result()` of a future."""

    def __init__(self, fn, args: tuple) -> None:
        self._value = fn(*args)

    def result(self):
        return self._value


def beside(fn, *args):
    """`fn(*args)` begun on the other thread (numpy's sorts, searches and whole-array
    operations release the GIL, so it runs on the other core while the caller goes on); its
    `result()` waits for it and gives it (or raises what it raised). Called on that thread
    itself, it is worked out at once (waiting for itself would never end)."""
    global _pool
    if threading.current_thread().name.startswith(_WORKER):
        return _Done(fn, args)
    pool = _pool
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor

        with _pool_made:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_WORKER)
            pool = _pool
    return pool.submit(fn, *args)


def _both(fn, first: tuple, second: tuple):
    """`fn(*first)` here and `fn(*second)` on the other thread (`beside`); both results."""
    other = beside(fn, *second)
    mine = fn(*first)
    return mine, other.result()


def at_least(iv: Intervals, threshold: np.ndarray, weight: np.ndarray | None = None) -> Intervals:
    """Merged times where at least `threshold[unit]` of the unit's intervals are active
    (each counting `weight`, default 1).

    Used for "rack down while >= k of its nodes are down" (nodes' intervals relabelled
    to their rack, each node's own intervals already disjoint). A threshold <= 0 makes
    the unit down only where it has any event segment; units without intervals are
    never returned, so callers handle "always down" thresholds themselves.

    Each unit's answer is its own: from `SPLIT_FROM` intervals the units below a middle
    one and the others are worked out on two threads, and the two answers (each sorted by
    unit and start, the first's units all below the second's) are one after the other.
    """
    pivot = _split_unit(iv.unit) if len(iv) >= SPLIT_FROM else None
    if pivot is None:
        return _at_least(iv, threshold, weight)
    low = iv.unit < pivot
    high = ~low
    w = None if weight is None else np.asarray(weight, dtype=I64)
    a, b = _both(_at_least, (iv.take(low), threshold, None if w is None else w[low]),
                 (iv.take(high), threshold, None if w is None else w[high]))
    return concat(a, b)


def _at_least(iv: Intervals, threshold: np.ndarray, weight: np.ndarray | None = None) -> Intervals:
    """`at_least` of one piece: with the compiled kernels, the sorted events are swept once
    (`at_least_sorted`), else `_at_least_numpy`, the definition."""
    k_ = kernels.compiled
    if k_ is None or not len(iv):
        return _at_least_numpy(iv, threshold, weight)
    thr = kernels.as_i64(threshold)
    packed: tuple[int, ...] = ()          # (tb, ib) where the keys are order_by's packed ones
    if weight is None and int(iv.unit.max()) < (1 << (62 - SHIFT)) and int(iv.unit.min()) >= 0:
        k = np.concatenate([key(iv.unit, iv.start) << 1, (key(iv.unit, iv.end) << 1) | 1])
        kernels.sort(k)
        d = None
    else:
        w = np.ones(len(iv), dtype=I64) if weight is None else np.asarray(weight, dtype=I64)
        units = np.concatenate([iv.unit, iv.unit])
        times = np.concatenate([iv.start, iv.end])
        d = np.concatenate([w, -w])
        got = sorted_packed(units, times)
        if got is not None:           # the kernel reads unit, time and position from the sorted keys
            k, *packed = got
        else:
            o = order_by(units, times)
            k = key(units[o], times[o])
            d = np.ascontiguousarray(d[o])
    out = [np.empty(len(k), dtype=I64) for _ in range(3)]
    return Intervals.first(out, k_.at_least_sorted(k, d, thr, *out, *packed))


def _at_least_numpy(iv: Intervals, threshold: np.ndarray, weight: np.ndarray | None = None) -> Intervals:
    u, t0, t1, lv = sweep(iv, weight)
    if len(u) == 0:
        return Intervals.empty()
    hit = lv >= threshold[u]
    return merge(Intervals(u[hit], t0[hit], t1[hit]))


def a_minus_b(a: Intervals, b: Intervals) -> Intervals:
    """Per unit, the parts of the union of `a` that are not covered by `b`."""
    if not len(a):
        return Intervals.empty()
    if not len(b):
        return merge(a)
    both = concat(a, b)
    w = np.concatenate([np.ones(len(a), dtype=I64), np.full(len(b), 1 << 32, dtype=I64)])
    u, t0, t1, lv = sweep(both, w)
    hit = ((lv & 0xFFFFFFFF) > 0) & ((lv >> 32) == 0)
    return merge(Intervals(u[hit], t0[hit], t1[hit]))


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """Overlaps of `a` (any intervals) with `b` (merged); disjoint per unit when `a` is merged."""
    i, j = overlap_pairs(a, b)
    return Intervals(a.unit[i], np.maximum(a.start[i], b.start[j]), np.minimum(a.end[i], b.end[j]))


def minus_parent(iv: Intervals, owner: np.ndarray, parent: Intervals) -> Intervals:
    """Per child unit, the parts of its intervals `iv` (disjoint per child) not covered by its
    parent's intervals (`owner[child]` is the parent; `parent` sorted by (unit, start) and
    merged, as `merge` returns it). Returned sorted by (child, start), disjoint per child.

    From `SPLIT_FROM` intervals, where the children are numbered in their parents' order
    (`owner` never decreases) and `iv` is in child order, the children of the parents below
    a middle one and the others are worked out on two threads (see `at_least`)."""
    if not len(iv) or not len(parent):
        return iv
    k = kernels.compiled
    if k is not None:        # one walk of each child's parent intervals, when iv is sorted
        got = _minus_parent_walk(k, iv, owner, parent)
        if got is not None:
            return got
    if (len(iv) >= SPLIT_FROM and bool((owner[1:] >= owner[:-1]).all())
            and bool((iv.unit[1:] >= iv.unit[:-1]).all())):
        pivot = _split_unit(parent.unit)
        if pivot is not None:
            low = owner[iv.unit] < pivot
            cut = int(np.searchsorted(parent.unit, pivot))
            a, b = _both(_minus_parent, (iv.take(low), owner, parent.take(slice(0, cut))),
                         (iv.take(~low), owner, parent.take(slice(cut, None))))
            return concat(a, b)
    return _minus_parent(iv, owner, parent)


def _minus_parent_walk(k, iv: Intervals, owner: np.ndarray, parent: Intervals) -> Intervals | None:
    """`minus_parent` by the compiled walk (`minus_parent_sorted`), for `iv` sorted by (child,
    start) with positive intervals; None otherwise (numpy then answers)."""
    i64 = kernels.as_i64
    owner = i64(owner)
    if not len(owner):
        return None
    n_parents = max(int(owner.max()), int(parent.unit.max())) + 1
    bounds = np.searchsorted(parent.unit, np.arange(n_parents + 1, dtype=I64)).astype(I64)
    args = (i64(iv.unit), i64(iv.start), i64(iv.end), owner, bounds, i64(parent.start), i64(parent.end))
    n = k.minus_parent_sorted(*args, None, None, None)
    if n < 0:
        return None
    out = [np.empty(n, dtype=I64) for _ in range(3)]
    k.minus_parent_sorted(*args, *out)
    return Intervals(*out)


def _minus_parent(iv: Intervals, owner: np.ndarray, parent: Intervals) -> Intervals:
    if not len(iv) or not len(parent):
        return iv
    a = iv.relabel(owner)
    i, j = overlap_pairs(a, parent)
    if not len(i):
        return iv
    # pairs come grouped by interval, its parent intervals in order: the pieces are the gaps
    first = np.ones(len(i), dtype=bool)
    first[1:] = i[1:] != i[:-1]
    last = np.ones(len(i), dtype=bool)
    last[:-1] = first[1:]
    gap_s = np.where(first, iv.start[i], parent.end[j - 1 + first])
    gap_e = parent.start[j]
    tail_s = parent.end[j[last]]
    ti = i[last]
    touched = np.zeros(len(iv), dtype=bool)
    touched[i] = True
    whole = np.flatnonzero(~touched)
    unit = np.concatenate([iv.unit[whole], iv.unit[i], iv.unit[ti]])
    start = np.concatenate([iv.start[whole], gap_s, tail_s])
    end = np.concatenate([iv.end[whole], gap_e, iv.end[ti]])
    keep = end > start
    # disjoint per child: starts and ends sorted apart stay paired
    ks = key(unit[keep], start[keep])
    ke = key(unit[keep], end[keep])
    kernels.sort(ks)
    kernels.sort(ke)
    return Intervals(ks >> SHIFT, ks & MASK, ke & MASK)


def seconds_in(iv: Intervals, lo: int, hi: int, n_units: int) -> np.ndarray:
    """Per unit (0..n_units-1), total seconds of `iv` inside `[lo, hi)` (intervals disjoint per unit).

    With the compiled kernels, one pass adding each clipped length to its unit
    (`seconds_per_unit`); `_seconds_in` is the numpy definition, which also answers
    a unit outside 0..n_units-1 (bincount's longer array)."""
    k = kernels.compiled
    if k is not None and len(iv):
        out = np.zeros(n_units, dtype=I64)
        i64 = kernels.as_i64
        if k.seconds_per_unit(i64(iv.unit), i64(iv.start), i64(iv.end), int(lo), int(hi), out):
            return out
    return _seconds_in(iv, lo, hi, n_units)


def _seconds_in(iv: Intervals, lo: int, hi: int, n_units: int) -> np.ndarray:
    s = np.maximum(iv.start, lo)
    e = np.minimum(iv.end, hi)
    ln = np.maximum(e - s, 0)
    if not len(ln):
        return np.zeros(n_units, dtype=I64)
    # float64 sums are exact below 2**53 seconds
    return np.bincount(iv.unit, weights=ln, minlength=n_units).astype(I64)


def overlap_pairs(a: Intervals, b: Intervals, a_order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All `(i, j)` with a[i] and b[j] of the same unit overlapping (positive length), grouped
    by `i` in (unit, start) order, `j` ascending within.

    `b` must be sorted by (unit, start) and disjoint per unit (as `merge` returns it). With the
    compiled kernels (`calculators.kernels`) the sorted `a` walks `b` once; `_overlap_pairs`
    is the same in numpy (two searches), and the definition the tests hold the kernel to.
    `a_order`: `order_by(a.unit, a.start)` where the caller has it already (not sorted again).
    """
    if not len(a) or not len(b):
        z = np.zeros(0, dtype=I64)
        return z, z.copy()
    k = kernels.compiled
    if k is None:
        return _overlap_pairs(a, b, a_order)
    o = order_by(a.unit, a.start) if a_order is None else a_order     # sorted intervals: b is walked once
    args = [kernels.as_i64(x) for x in (a.unit, a.start, a.end, o, b.unit, b.start, b.end)]
    lo = np.empty(len(o), dtype=I64)
    cnt = np.empty(len(o), dtype=I64)
    total = k.overlap_lo(*args, lo, cnt)
    ai = np.empty(total, dtype=I64)
    bj = np.empty(total, dtype=I64)
    k.overlap_fill(args[3], lo, cnt, ai, bj)
    return ai, bj


def _overlap_pairs(a: Intervals, b: Intervals, a_order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`overlap_pairs` in numpy: the definition of the compiled walk."""
    if not len(a) or not len(b):
        z = np.zeros(0, dtype=I64)
        return z, z.copy()
    b_start = key(b.unit, b.start)
    b_end = key(b.unit, b.end)
    o = order_by(a.unit, a.start) if a_order is None else a_order     # sorted needles: much faster searches
    lo = np.searchsorted(b_end, key(a.unit[o], a.start[o]), side="right")
    hi = np.searchsorted(b_start, key(a.unit[o], a.end[o]), side="left")
    cnt = np.maximum(hi - lo, 0)
    total = int(cnt.sum())
    if total == 0:
        z = np.zeros(0, dtype=I64)
        return z, z.copy()
    ai = np.repeat(o.astype(I64), cnt)
    offs = np.arange(total, dtype=I64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    bj = np.repeat(lo, cnt) + offs
    return ai, bj


def expand(parent: np.ndarray, ptr: np.ndarray, children: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR expansion: for each `parent[i]`, one row per child. Returns (row index, child)."""
    cnt = ptr[parent + 1] - ptr[parent]
    total = int(cnt.sum())
    rows = np.repeat(np.arange(len(parent), dtype=I64), cnt)
    offs = np.arange(total, dtype=I64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return rows, children[np.repeat(ptr[parent], cnt) + offs]


def csr(owner: np.ndarray, n_parents: int) -> tuple[np.ndarray, np.ndarray]:
    """Children grouped by owner: `(ptr, children)` with children of p in ptr[p]:ptr[p+1]."""
    owner = np.asarray(owner, dtype=I64)
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=n_parents)
    ptr = np.zeros(n_parents + 1, dtype=I64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, order.astype(I64)
