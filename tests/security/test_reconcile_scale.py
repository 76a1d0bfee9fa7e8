"""Reconciling large logs: the pairs within the tolerance are found without comparing every
entry of one log with every entry of the other on the same unit."""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta, timezone

import acceptance.reconcile as rec
from acceptance.reconcile import LogEntry, reconcile

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


def test_candidate_pairs_are_every_pair_within_the_tolerance():
    rng = random.Random(3)
    as_of = T0 + timedelta(days=3)
    for _ in range(40):
        n = rng.randint(0, 60)
        a = [e for e in _log("o", n, rng, rng.choice([10, 300, 2000]), open_every=rng.choice([0, 5]))
             if e.unit == "n1"]
        b = [e for e in _log("t", n, rng, rng.choice([10, 300, 2000]), open_every=rng.choice([0, 7]))
             if e.unit == "n1"]
        tol = rng.choice([0.0, 60.0, 300.0, 7200.0])
        got = {(ai, bi) for ai, bi, *_ in rec._candidates(a, b, timedelta(seconds=tol), as_of)}
        assert got == _all_pairs(a, b, tol, as_of)


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
