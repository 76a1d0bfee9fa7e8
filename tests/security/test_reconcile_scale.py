"""Reconciling large logs: the pairs within the tolerance are found without comparing every
entry of one log with every entry of the other on the same unit, and taken as the matching
needs them, most preferred first, so that neither time nor memory grows with the number of
pairs (open entries overlap every later one: millions of pairs); the matching is the one
that sorting all pairs at once gives."""

from __future__ import annotations

import random
import time
import tracemalloc
from collections import defaultdict
from datetime import datetime, timedelta, timezone

import calculators.reconcile as rec
from calculators.reconcile import LogEntry, reconcile

T0 = datetime(2027, 2, 1, tzinfo=timezone.utc)


def _log(side: str, n: int, rng: random.Random, spacing: int, open_every: int = 0) -> list[LogEntry]:
    out = []
    for i in range(n):
        start = T0 + timedelta(seconds=i * spacing + rng.randint(-30, 30))
        length = rng.choice([0, 60, 600, 3600, 86400]) if rng.random() < 0.2 else 600
        end = None if open_every and i % open_every == 0 else start + timedelta(seconds=length)
        out.append(LogEntry(f"{side}{i}", "node", rng.choice(["n1", "n1", "n2"]), start, end, "unplanned", i + 1))
    return out


def _all_pairs(a_list, b_list, tol, as_of):
    """Every pair within the tolerance, by comparing all of them (the definition)."""
    got = set()
    for ai, a in enumerate(a_list):
        for bi, b in enumerate(b_list):
            a_end, b_end = rec._end(a, as_of), rec._end(b, as_of)
            if max((b.start - a_end).total_seconds(), (a.start - b_end).total_seconds(), 0.0) <= tol:
                got.add((ai, bi))
    return got


def _random_logs(rng: random.Random, n: int):
    a = [e for e in _log("o", n, rng, rng.choice([10, 300, 2000]), open_every=rng.choice([0, 5])) if e.unit == "n1"]
    b = [e for e in _log("t", n, rng, rng.choice([10, 300, 2000]), open_every=rng.choice([0, 7])) if e.unit == "n1"]
    if rng.random() < 0.3:                       # entries alike in all but their row: ties to the rows' order
        a += [LogEntry(f"d{i}", e.scope, e.unit, e.start, e.end, e.category, 900 + i)
              for i, e in enumerate(rng.sample(a, min(len(a), 3)))]
        b += rng.sample(b, min(len(b), 3))
    return a, b


def test_each_entrys_pairs_are_every_pair_within_the_tolerance_most_preferred_first(monkeypatch):
    """Walking the entries by start, grouped by duration or (a few) not, and found at once."""
    rng = random.Random(3)
    as_of = T0 + timedelta(days=3)
    for _ in range(40):
        a, b = _random_logs(rng, rng.randint(0, 60))
        tol = rng.choice([0.0, 60.0, 300.0, 7200.0])
        for few in (0, 64):
            monkeypatch.setattr(rec, "_FEW", few)
            partners = rec._Partners(a, b, timedelta(seconds=tol), as_of)
            got = {ai: list(partners.preferred(ai)) for ai in range(len(a))}
            assert {(p[-2], p[-1]) for pairs in got.values() for p in pairs} == _all_pairs(a, b, tol, as_of)
            for ai, pairs in got.items():
                assert pairs == sorted(partners.pair(ai, bi) for bi in range(len(b)) if partners.pair(ai, bi))
                assert partners.has_pair(ai) == bool(pairs)


def _matching_of_all_pairs(partners, order):
    """The matching by its definition: every pair built and sorted, taken greedily in that
    order, then an augmenting path (Kuhn, searched depth first trying the partners in the same
    order) for each entry left over in `order`."""
    pairs = sorted(p for ai in range(len(partners.a_list)) for bi in range(len(partners.b_list))
                   if (p := partners.pair(ai, bi)))
    adj = defaultdict(list)
    a_of, b_of = {}, {}
    for *_, a, b in pairs:
        adj[a].append(b)
        if a not in b_of and b not in a_of:
            b_of[a], a_of[b] = b, a
    for start in order:
        if start in b_of or start not in adj:
            continue
        parent, seen, stack, end = {}, set(), [(start, None)], None
        while stack and end is None:
            a, via = stack.pop()
            for b in adj[a]:
                if b not in seen:
                    seen.add(b)
                    parent[b] = (a, via)
                    if b not in a_of:
                        end = b
                        break
                    stack.append((a_of[b], b))
        while end is not None:
            a, prev = parent[end]
            b_of[a], a_of[end] = end, a
            end = prev
    return b_of


def test_the_matching_is_that_of_all_pairs_sorted_at_once(monkeypatch):
    """Taking the pairs as the matching needs them, and skipping the entries earlier searches
    passed in vain, finds the very pairs the definition finds, also where the augmenting paths
    change the greedy pairs, and whether the searches keep the pairs they found or not."""
    rng = random.Random(11)
    augmented = 0
    for _ in range(150):
        monkeypatch.setattr(rec, "_KEPT_PAIRS", rng.choice([0, 5, 1_000_000]))
        monkeypatch.setattr(rec, "_FEW", rng.choice([0, 5, 64]))
        a, b = _random_logs(rng, rng.randint(0, 70))
        tol = timedelta(seconds=rng.choice([0.0, 60.0, 300.0, 7200.0]))
        as_of = T0 + timedelta(seconds=rng.choice([0, 3600, 86400 * 3]))
        partners = rec._Partners(a, b, tol, as_of)
        order = sorted(range(len(a)), key=lambda i: (rec._features(a[i], as_of), i))
        want = _matching_of_all_pairs(partners, order)
        assert rec._maximum_matching(partners, order) == want
        augmented += len(want) > len(rec._maximum_matching(partners, []))     # greedy alone: fewer pairs
    assert augmented >= 10


def test_ten_thousand_incidents_on_each_side_reconcile_in_seconds():
    rng = random.Random(1)
    ours, theirs = _log("o", 10_000, rng, 1200, open_every=997), _log("t", 10_000, rng, 1200, open_every=991)
    t = time.process_time()
    r = reconcile(ours, theirs, timedelta(minutes=5), T0 + timedelta(days=200))
    spent = time.process_time() - t
    assert r.ours_entries == r.theirs_entries == 10_000
    counts = {}
    for f in r.findings:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    assert r.matched + counts.get("missing_in_theirs", 0) == 10_000
    assert r.matched + counts.get("missing_in_ours", 0) == 10_000
    assert spent < 20, f"{spent:.1f} s of CPU"       # comparing all 10^8 pairs took minutes


def test_open_incidents_overlapping_everything_take_neither_time_nor_memory_by_the_pair():
    """10,000 entries a side on one node, every 7th open until `as_of` 300 days on: each open
    entry overlaps every later one, about 14 million pairs within the tolerance. Building and
    sorting them all took a minute of CPU and 3.7 GB; taken as needed, 0.3 s and 28 MB."""
    rng = random.Random(7)
    ours, theirs = (_log(side, 10_000, rng, 1200, open_every=7) for side in "ot")
    ours = [LogEntry(e.id, e.scope, "n1", e.start, e.end, e.category, e.row) for e in ours]
    theirs = [LogEntry(e.id, e.scope, "n1", e.start, e.end, e.category, e.row) for e in theirs]
    as_of = T0 + timedelta(days=300)
    r = _bounded(ours, theirs, as_of)
    assert r.matched == 10_000 and r.counts()["end_differs"] > 1_000


def _alike_logs(rng: random.Random, n: int, m: int) -> tuple[list[LogEntry], list[LogEntry]]:
    """Entries of a few kinds only (three starts, open or one of two ends, two categories),
    all overlapping."""
    def log(side, count):
        return [LogEntry(f"{side}{i}", "node", "n1", T0 + timedelta(minutes=10 * rng.randrange(3)),
                         None if rng.random() < 0.4 else T0 + timedelta(hours=rng.choice([1, 2])),
                         rng.choice(["unplanned", "maintenance"]), i + 1) for i in range(count)]
    return log("o", n), log("t", m)


def test_entries_alike_are_paired_as_the_definition_pairs_them(monkeypatch):
    rng = random.Random(5)
    for _ in range(30):
        n = rng.randint(1, 90)
        a, b = _alike_logs(rng, n, rng.randint(n // 2, n))
        as_of = T0 + timedelta(days=2)
        monkeypatch.setattr(rec, "_FEW", rng.choice([0, 64]))
        partners = rec._Partners(a, b, timedelta(minutes=5), as_of)
        order = sorted(range(len(a)), key=lambda i: (rec._features(a[i], as_of), i))
        assert rec._maximum_matching(partners, order) == _matching_of_all_pairs(partners, order)


def test_ten_thousand_entries_alike_take_neither_time_nor_memory_by_the_pair():
    """10,000 entries a side of a few kinds, all overlapping: 100 million pairs within the
    tolerance, at three start distances. Entries alike are walked as one and their pairs
    made one at a time: about 1 s and 25 MB."""
    ours, theirs = _alike_logs(random.Random(8), 10_000, 10_000)
    as_of = T0 + timedelta(days=2)
    r = _bounded(ours, theirs, as_of)
    assert r.matched == 10_000 and r.counts()["end_differs"] > 100


def _bounded(ours, theirs, as_of):
    """`reconcile` of the two logs (5-minute tolerance), within 20 s of CPU, and again within
    300 MB of traced memory at the peak, with the same result."""
    t = time.process_time()
    r = reconcile(ours, theirs, timedelta(minutes=5), as_of)
    spent = time.process_time() - t
    assert spent < 20, f"{spent:.1f} s of CPU"
    tracemalloc.start()
    try:
        again = reconcile(ours, theirs, timedelta(minutes=5), as_of)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert again == r
    assert peak < 300 * 2**20, f"{peak / 2**20:.0f} MB at the peak"
    return r
