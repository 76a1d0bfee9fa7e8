"""The counts `slakit reconcile` prints are what a reader adds up: incidents are rows, entries
are incidents on one unit, `matched + missing_in_theirs == ours_entries` and `matched +
missing_in_ours == theirs_entries`, and the matching pairs as many entries as can be paired,
whatever the rows' order."""

from __future__ import annotations

import itertools
import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from calculators.reconcile import LogEntry, reconcile
from tests.hostile.conftest import cli

T0 = datetime(2027, 3, 1, 8, 0, tzinfo=timezone.utc)
TOL = timedelta(minutes=5)
HEADER = "id,scope,target,start,end,category\n"


def _log(tmp_path: Path, name: str, rows: list[str]) -> Path:
    p = tmp_path / name
    p.write_text(HEADER + "".join(r + "\n" for r in rows), encoding="utf-8")
    return p


def _doc(ours: Path, theirs: Path, *extra: str) -> dict:
    r = cli("reconcile", ours, theirs, "--format", "json", *extra)
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    assert doc["format"] == "slakit-reconcile/2"
    c = doc["counts"]
    assert doc["matched"] + c["missing_in_theirs"] == doc["ours_entries"], doc
    assert doc["matched"] + c["missing_in_ours"] == doc["theirs_entries"], doc
    assert max(c["start_differs"], c["category_differs"]) <= doc["matched"]
    return doc


def test_one_hostlist_row_against_one_row_per_node(tmp_path):
    ours = _log(tmp_path, "ours.csv", ["A,node,r01-n[01-03],2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,"])
    theirs = _log(tmp_path, "theirs.csv", [f"{i},node,r01-n0{n},2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,"
                                           for i, n in (("X", 1), ("Y", 2), ("Z", 3))])
    doc = _doc(ours, theirs)
    assert (doc["ours_incidents"], doc["ours_entries"], doc["theirs_incidents"], doc["theirs_entries"],
            doc["matched"]) == (1, 3, 3, 3, 3)
    r = cli("reconcile", ours, theirs)
    assert "ours 1 incident (3 entries), theirs 3 incidents (3 entries)" in r.output
    assert "matched 3, missing_in_ours 0, missing_in_theirs 0" in r.output


def test_two_rows_alike_are_two_incidents(tmp_path):
    row = "node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,"
    doc = _doc(_log(tmp_path, "ours.csv", ["A," + row, "B," + row]), _log(tmp_path, "theirs.csv", ["A," + row]))
    assert (doc["ours_incidents"], doc["theirs_incidents"], doc["matched"]) == (2, 1, 1)
    assert doc["counts"]["missing_in_theirs"] == 1


def test_a_repeated_id_is_refused_as_credits_refuses_it(tmp_path):
    row = "A,node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,"
    ours = _log(tmp_path, "ours.csv", [row, row])
    r = cli("reconcile", ours, _log(tmp_path, "theirs.csv", [row]), "--format", "json")
    assert r.exit_code == 1, r.output
    assert [(p["code"], p["row"], p["column"]) for p in json.loads(r.stdout)["problems"]] == [
        ("duplicate_id", 2, "id")]
    # two rows are counted as two incidents by `reconcile` itself (entries given by hand)
    e = LogEntry("A", "node", "r01-n01", T0, T0 + TOL, "unplanned", 1)
    got = reconcile([e, LogEntry("A", "node", "r01-n01", T0, T0 + TOL, "unplanned", 2)], [e], TOL, T0)
    assert (got.ours_count, got.theirs_count, got.matched) == (2, 1, 1)


def test_same_id_at_other_times_is_not_a_match(tmp_path):
    doc = _doc(_log(tmp_path, "ours.csv", ["A,node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,"]),
               _log(tmp_path, "theirs.csv", ["A,node,r01-n01,2027-01-05T10:00:00Z,2027-01-05T11:00:00Z,"]))
    assert doc["matched"] == 0 and doc["counts"]["missing_in_ours"] == doc["counts"]["missing_in_theirs"] == 1


def test_ids_on_one_side_only(tmp_path):
    doc = _doc(_log(tmp_path, "ours.csv", ["A,node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,",
                                           "B,rack,r02,2027-01-06T03:00:00Z,2027-01-06T04:00:00Z,"]),
               _log(tmp_path, "theirs.csv", ["T1,node,r01-n01,2027-01-05T03:01:00Z,2027-01-05T04:00:00Z,"]))
    assert (doc["matched"], doc["counts"]["missing_in_theirs"], doc["counts"]["missing_in_ours"]) == (1, 1, 0)


def test_one_long_incident_does_not_leave_two_others_unmatched(tmp_path):
    # ours: 03:00-05:00 and 03:10-03:20; theirs: 03:00-04:00 and 04:30-05:00. Closest start first
    # pairs 03:00 with 03:00 and left both others alone; each has a partner.
    ours = _log(tmp_path, "ours.csv", ["a1,node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T05:00:00Z,",
                                       "a2,node,r01-n01,2027-01-05T03:10:00Z,2027-01-05T03:20:00Z,"])
    theirs = _log(tmp_path, "theirs.csv", ["b1,node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,",
                                           "b2,node,r01-n01,2027-01-05T04:30:00Z,2027-01-05T05:00:00Z,"])
    doc = _doc(ours, theirs)
    assert doc["matched"] == 2 and doc["counts"]["missing_in_ours"] == doc["counts"]["missing_in_theirs"] == 0
    assert {(f["ours"], f["theirs"]) for f in doc["findings"]} >= {("a1", "b2"), ("a2", "b1")}


def test_open_incident_starting_after_as_of_matches_what_overlaps_its_start(tmp_path):
    ours = _log(tmp_path, "ours.csv", ["a,node,r01-n01,2027-01-05T10:00:00Z,,"])
    theirs = _log(tmp_path, "theirs.csv", ["T,node,r01-n01,2027-01-05T09:50:00Z,2027-01-05T10:20:00Z,"])
    doc = _doc(ours, theirs, "--as-of", "2027-01-05T09:00:00Z")
    assert doc["matched"] == 1
    assert sorted(f["kind"] for f in doc["findings"]) == ["end_differs", "start_differs"]


def test_row_order_does_not_change_the_counts(tmp_path):
    rows_o = [f"o{i},node,r01-n0{1 + i % 3},2027-01-05T0{i % 5}:00:00Z,2027-01-05T0{i % 5}:40:00Z," for i in range(9)]
    rows_t = [f"t{i},node,r01-n0{1 + i % 3},2027-01-05T0{(i + 1) % 5}:20:00Z,2027-01-05T0{(i + 1) % 5}:50:00Z,"
              for i in range(8)]
    first = None
    rnd = random.Random(7)
    for k in range(4):
        rnd.shuffle(rows_o)
        rnd.shuffle(rows_t)
        doc = _doc(_log(tmp_path, f"o{k}.csv", rows_o), _log(tmp_path, f"t{k}.csv", rows_t))
        got = (doc["matched"], doc["counts"], doc["ours_incidents"], doc["theirs_incidents"])
        assert first is None or got == first
        first = got


def _entry(side: str, i: int, unit: str, start: int, length: int | None) -> LogEntry:
    end = None if length is None else T0 + timedelta(minutes=start + length)
    return LogEntry(f"{side}{i}", "node", unit, T0 + timedelta(minutes=start), end, "unplanned", i + 1)


def _best(ours: list[LogEntry], theirs: list[LogEntry], as_of: datetime) -> int:
    """The largest one-to-one matching, by trying every assignment (small inputs only)."""
    def ok(a, b):
        a_end, b_end = a.end or max(as_of, a.start), b.end or max(as_of, b.start)
        return (a.scope, a.unit) == (b.scope, b.unit) and \
            max((b.start - a_end).total_seconds(), (a.start - b_end).total_seconds(), 0.0) <= TOL.total_seconds()
    best = 0
    for k in range(min(len(ours), len(theirs)), 0, -1):
        for chosen in itertools.combinations(range(len(ours)), k):
            for perm in itertools.permutations(range(len(theirs)), k):
                if all(ok(ours[a], theirs[b]) for a, b in zip(chosen, perm)):
                    return k
    return best


_spans = st.lists(st.tuples(st.sampled_from(["n1", "n2"]), st.integers(0, 120), st.one_of(st.none(),
                                                                                            st.integers(0, 60))),
                  max_size=4)


@settings(max_examples=400, deadline=None)
@given(_spans, _spans, st.integers(0, 200))
def test_matching_is_maximum_and_counts_add_up(o, t, as_of_min):
    ours = [_entry("o", i, u, s, n) for i, (u, s, n) in enumerate(o)]
    theirs = [_entry("t", i, u, s, n) for i, (u, s, n) in enumerate(t)]
    as_of = T0 + timedelta(minutes=as_of_min)
    r = reconcile(ours, theirs, TOL, as_of)
    c = r.counts()
    assert r.matched == _best(ours, theirs, as_of)
    assert r.matched + c["missing_in_theirs"] == r.ours_entries == len(ours)
    assert r.matched + c["missing_in_ours"] == r.theirs_entries == len(theirs)
    assert r.ours_count == len(ours) and r.theirs_count == len(theirs)
    assert reconcile(list(reversed(ours)), list(reversed(theirs)), TOL, as_of).counts() == c
    shuffled_o, shuffled_t = ours[1:] + ours[:1], theirs[1:] + theirs[:1]
    assert reconcile(shuffled_o, shuffled_t, TOL, as_of).counts() == c


def test_an_open_entry_pairs_with_the_open_one_of_two_alike():
    # found by the property test: theirs open at 0 and closed 0-0, ours open at 0, as_of 0
    ours = [_entry("o", 0, "n2", 0, None)]
    for theirs in ([_entry("t", 0, "n2", 0, None), _entry("t", 1, "n2", 0, 0)],
                   [_entry("t", 1, "n2", 0, 0), _entry("t", 0, "n2", 0, None)]):
        r = reconcile(ours, theirs, TOL, T0)
        assert r.counts()["end_differs"] == 0 and r.counts()["missing_in_ours"] == 1


def test_node_differences_add_up_to_the_month_when_the_cap_applies(tmp_path):
    from decimal import Decimal

    repo = Path(__file__).resolve().parents[2]
    text = (repo / "examples" / "gb200-contract.yaml").read_text(encoding="utf-8")
    assert "\n  cap: 50%\n" in text
    capped = tmp_path / "capped.yaml"
    capped.write_text(text.replace("\n  cap: 50%\n", "\n  cap: 0.1%\n"), encoding="utf-8")
    full = repo / "examples" / "gb200-incidents-2027Q1.csv"
    lines = full.read_text(encoding="utf-8").splitlines()
    half = tmp_path / "half.csv"
    half.write_text("\n".join([lines[0], *lines[1::2]]) + "\n", encoding="utf-8")
    r = cli("reconcile", capped, full, half, "--format", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    months = doc["credit_difference"]["months"]
    assert any(m["nodes"] and Decimal(m["difference"]) != 0 for m in months)
    for m in months:                  # before: node credits before the cap, 3336.04 under a difference of 0.00
        assert sum((Decimal(n["difference"]) for n in m["nodes"]), Decimal(0)) == Decimal(m["difference"]), m["period"]
        assert Decimal(m["ours"]) - Decimal(m["theirs"]) == Decimal(m["difference"])


def test_ids_from_the_logs_are_shown_not_run_in_the_table(tmp_path):
    ours = _log(tmp_path, "ours.csv", ['"[/bold]\x1b]0;pwn\x07",node,r01-n01,2027-01-05T09:00:00Z,2027-01-05T10:00:00Z,'])
    theirs = _log(tmp_path, "theirs.csv", ["[red]T,node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,"])
    r = cli("reconcile", ours, theirs)
    assert r.exit_code == 1 and "unexpected_error" not in r.output, r.output       # it was a MarkupError
    assert "[/bold]" in r.output and "[red]T" in r.output and "\x1b" not in r.output and "\x07" not in r.output
