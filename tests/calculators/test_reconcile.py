"""`slakit reconcile`: the buyer's incident log against the provider's."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from calculators.reconcile import LogEntry, read_log, reconcile
from slakit.cli import main

T0 = datetime(2027, 3, 1, 8, 0, tzinfo=timezone.utc)
TOL = timedelta(minutes=5)


def e(id_, unit, start_min, end_min=None, scope="node", category="unplanned"):
    end = None if end_min is None else T0 + timedelta(minutes=end_min)
    return LogEntry(id_, scope, unit, T0 + timedelta(minutes=start_min), end, category, 1)


def kinds(result):
    return [(f.kind, f.unit, f.ours, f.theirs) for f in result.findings]


def test_identical_logs_agree():
    log = [e("a", "n1", 0, 60), e("b", "n2", 10, None)]
    r = reconcile(log, log, TOL, T0 + timedelta(hours=2))
    assert r.agree and r.matched == 2


@pytest.mark.parametrize("shift_s,differs", [(300, False), (301, True), (-301, True)])
def test_start_tolerance_is_inclusive(shift_s, differs):
    ours = [e("a", "n1", 0, 60)]
    theirs = [LogEntry("T", "node", "n1", T0 + timedelta(seconds=shift_s), T0 + timedelta(minutes=60),
                       "unplanned", 1)]
    r = reconcile(ours, theirs, TOL, T0)
    assert kinds(r) == ([("start_differs", "n1", "a", "T")] if differs else [])
    if differs:
        assert r.findings[0].delta_s == shift_s


def test_short_incidents_within_tolerance_match_without_overlapping():
    r = reconcile([e("a", "n1", 0, 1)], [e("T", "n1", 3, 4)], TOL, T0)
    assert r.matched == 1 and r.agree


def test_missing_on_each_side_and_one_to_one_matching():
    ours = [e("a1", "n1", 0, 10), e("a2", "n1", 20, 30), e("a3", "n3", 0, 5)]
    theirs = [e("T1", "n1", 1, 30), e("T9", "n2", 0, 5)]
    r = reconcile(ours, theirs, TOL, T0)
    assert sorted(kinds(r)) == sorted([
        ("end_differs", "n1", "a1", "T1"),
        ("missing_in_theirs", "n1", "a2", None),
        ("missing_in_ours", "n2", None, "T9"),
        ("missing_in_theirs", "n3", "a3", None),
    ])


def test_open_versus_closed_and_category_disagreements():
    r = reconcile([e("a", "n1", 0, None)], [e("T", "n1", 0, 90, category="maintenance")], TOL,
                  T0 + timedelta(hours=3))
    got = {f.kind: f for f in r.findings}
    assert got["end_differs"].details == {"open_on": "ours"}
    assert got["category_differs"].details == {"ours": "unplanned", "theirs": "maintenance"}


def test_other_scopes_compare_by_target():
    r = reconcile([e("a", "r01", 0, 60, scope="rack")], [e("T", "r01", 0, 60, scope="node")], TOL, T0)
    assert sorted(k for k, *_ in kinds(r)) == ["missing_in_ours", "missing_in_theirs"]


def test_provider_hostlist_row_covers_each_node(tmp_path):
    ours = tmp_path / "ours.csv"
    theirs = tmp_path / "theirs.jsonl"
    ours.write_text("id,scope,target,start,end\n"
                    "o1,node,gpu-01,2027-03-01T08:00:00Z,2027-03-01T09:00:00Z\n"
                    "o2,node,gpu-02,2027-03-01T08:00:30Z,2027-03-01T09:00:00Z\n")
    theirs.write_text(json.dumps({"id": "T-7", "scope": "node", "target": "gpu-[01-03]",
                                  "start": "2027-03-01T08:01:00+00:00", "end": "2027-03-01T09:02:00+00:00"}) + "\n")
    res = CliRunner().invoke(main, ["reconcile", str(ours), str(theirs), "--format", "json"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.output)
    assert doc["matched"] == 2 and doc["counts"]["missing_in_ours"] == 1
    assert [(f["kind"], f["unit"]) for f in doc["findings"]] == [("missing_in_ours", "gpu-03")]
    assert doc["credit_difference"] == {"available": False, "reason": "no_contract"}


def test_agreeing_logs_exit_zero(tmp_path):
    log = tmp_path / "a.csv"
    log.write_text("id,scope,target,start,end\nx,node,n1,2027-03-01T08:00:00Z,2027-03-01T08:10:00Z\n")
    res = CliRunner().invoke(main, ["reconcile", str(log), str(log)])
    assert res.exit_code == 0, res.output
    assert "matched 1" in res.output


def test_bad_rows_are_all_reported_with_row_and_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,scope,target,start,end\n"
                   "a,node,n1,2027-03-01T08:00:00,\n"
                   "b,pod,n1,2027-03-01T08:00:00Z,\n"
                   "c,node,n1,2027-03-01T09:00:00Z,2027-03-01T08:00:00Z\n"
                   ",node,n1,2027-03-01T09:00:00Z,\n")
    from slaschema.errors import InputError

    with pytest.raises(InputError) as err:
        read_log(bad)
    assert [(p.code, p.row, p.column) for p in err.value.problems] == [
        ("timestamp_naive", 1, "start"), ("unknown_scope", 2, "scope"), ("end_before_start", 3, "end"),
        ("missing_id", 4, "id"),
    ]
    good = tmp_path / "good.csv"
    good.write_text("id,scope,target,start\n")
    res = CliRunner().invoke(main, ["reconcile", str(bad), str(good), "--format", "json"])
    assert res.exit_code == 1
    assert "warning: " in res.stderr and "[empty_log]" in res.stderr     # the other log is read, and said to be empty
    assert [p["code"] for p in json.loads(res.stdout)["problems"]] == [
        "timestamp_naive", "unknown_scope", "end_before_start", "missing_id"]


def test_credit_difference_under_the_contract(tmp_path):
    from tests.slurm._contract import CONTRACT

    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT.replace("DETECTION", "2m") + "exclusions:\n  maintenance: {}\n")
    ours = tmp_path / "ours.csv"
    theirs = tmp_path / "theirs.csv"
    # 30 h down in March 2027 (744 h): availability 95.97% < 99% -> 10% of the node's fee
    ours.write_text("id,scope,target,start,end\nw1,node,gpu-04,2027-03-03T00:00:00Z,2027-03-04T06:00:00Z\n")
    theirs.write_text("id,scope,target,start,end,category\n"
                      "T-2,node,gpu-04,2027-03-03T00:00:00Z,2027-03-04T06:00:00Z,maintenance\n")
    res = CliRunner().invoke(main, ["reconcile", str(contract), str(ours), str(theirs),
                                    "--as-of", "2027-04-01T00:00:00Z", "--format", "json"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.output)
    assert [f["kind"] for f in doc["findings"]] == ["category_differs"]
    credit = doc["credit_difference"]
    # fee = 8 GPUs x 2.50 x 744 h = 14,880.00; 10% = 1,488.00 on our log; the provider's
    # row is maintenance, an exclusion without a notice rule in this contract: no credit
    assert [m["period"] for m in credit["months"]] == ["2027-03"]
    assert (credit["months"][0]["ours"], credit["months"][0]["theirs"]) == ("1488.00", "0.00")
    assert credit["months"][0]["nodes"] == [
        {"node": "gpu-04", "ours": "1488.00", "theirs": "0.00", "difference": "1488.00"}]
    assert credit["difference"] == "1488.00"
    # The older spelling `--contract C` gives the same document, with one notice on stderr.
    old = CliRunner().invoke(main, ["reconcile", str(ours), str(theirs), "--contract", str(contract),
                                    "--as-of", "2027-04-01T00:00:00Z", "--format", "json"])
    assert old.exit_code == 1 and json.loads(old.stdout) == doc
    assert old.stderr.startswith("slakit: --contract is deprecated") and "slakit reconcile CONTRACT" in old.stderr


def test_the_contract_is_given_once_and_the_logs_are_two(tmp_path):
    from tests.slurm._contract import CONTRACT

    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT.replace("DETECTION", "2m"))
    log = tmp_path / "log.csv"
    log.write_text("id,scope,target,start,end\nw1,node,gpu-04,2027-03-03T00:00:00Z,2027-03-04T06:00:00Z\n")
    twice = CliRunner().invoke(main, ["reconcile", str(contract), str(log), str(log), "--contract", str(contract)])
    assert twice.exit_code == 2 and "[contract_twice]" in twice.output
    for paths in ([log], [contract, log, log, log]):
        res = CliRunner().invoke(main, ["reconcile", *map(str, paths)])
        assert res.exit_code == 2 and "[CONTRACT] OURS THEIRS" in res.output and "[reconcile_arguments]" in res.output


def test_times_without_an_offset_take_the_zone_of_assume_tz(tmp_path):
    """A provider's export written in local time: refused without --assume-tz (as credits
    refuses it), read in that zone with it, and then the same incident as our UTC log's."""
    ours = tmp_path / "ours.csv"
    theirs = tmp_path / "theirs.csv"
    ours.write_text("id,scope,target,start,end\no1,node,gpu-01,2027-03-01T14:00:00Z,2027-03-01T15:00:00Z\n")
    theirs.write_text("id,scope,target,start,end\nT-1,node,gpu-01,2027-03-01T08:00:00,2027-03-01T09:00:00\n")
    bare = CliRunner().invoke(main, ["reconcile", str(ours), str(theirs), "--format", "json"])
    assert bare.exit_code == 1 and "timestamp_naive" in bare.output and "--assume-tz" in bare.output, bare.output
    got = CliRunner().invoke(main, ["reconcile", str(ours), str(theirs), "--assume-tz", "America/Chicago",
                                    "--as-of", "2027-03-01T10:00:00", "--format", "json"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.output)
    assert doc["agree"] and doc["matched"] == 1 and doc["as_of"] == "2027-03-01T16:00:00+00:00"
    wrong = CliRunner().invoke(main, ["reconcile", str(ours), str(theirs), "--assume-tz", "Mars/Olympus"])
    assert wrong.exit_code == 2 and "not an IANA time zone" in wrong.output
