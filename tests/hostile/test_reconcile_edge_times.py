"""reconcile with incident times at the edges of what a datetime holds (year 1, year 9999):
matched as any others without a contract; with a contract and no --period, the logs' times
that the credits cannot be computed for are the logs' coded problem, with file and row."""

from __future__ import annotations

import json
from pathlib import Path

from tests.hostile.conftest import assert_coded_failure, cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
HEADER = "id,scope,target,start,end,impact,category\n"


def _log(tmp_path: Path, name: str, *rows: str) -> Path:
    p = tmp_path / name
    p.write_text(HEADER + "".join(r + "\n" for r in rows), encoding="utf-8")
    return p


def test_year_one_and_year_9999_are_matched_without_a_contract(tmp_path):
    ours = _log(tmp_path, "ours.csv", "A1,node,r01-n07,0001-01-01T00:00:00Z,0001-01-01T01:00:00Z,down,unplanned",
                "A2,node,r01-n07,9999-12-31T22:00:00Z,,down,unplanned")
    theirs = _log(tmp_path, "theirs.csv", "B1,node,r01-n07,0001-01-01T00:02:00Z,0001-01-01T01:00:00Z,down,unplanned",
                  "B2,node,r01-n07,9999-12-31T22:01:00Z,,down,unplanned")
    for tolerance in ("5m", "36500d"):
        r = cli("reconcile", ours, theirs, "--tolerance", tolerance, "--format", "json")
        assert "Traceback" not in r.output, r.output
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
        doc = json.loads(r.stdout)
        assert doc["matched"] == 2 and doc["counts"]["missing_in_ours"] == 0, doc
        assert r.exit_code == 0, r.output


def test_a_year_one_entry_with_nothing_to_match_is_missing(tmp_path):
    ours = _log(tmp_path, "ours.csv", "A1,node,r01-n07,0001-01-01T00:00:00Z,0001-01-01T01:00:00Z,down,unplanned")
    theirs = _log(tmp_path, "theirs.csv", "B1,node,r01-n07,9999-12-31T23:00:00Z,,down,unplanned")
    r = cli("reconcile", ours, theirs, "--format", "json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)["counts"]["missing_in_ours"] == 1


def test_with_a_contract_and_no_period_a_log_time_out_of_range_is_the_logs_coded_problem(tmp_path):
    ours = _log(tmp_path, "ours.csv", "A1,node,r01-n07,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,unplanned")
    early = _log(tmp_path, "early.csv", "B1,node,r01-n07,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,unplanned",
                 "B2,node,r01-n08,0001-01-01T00:00:00Z,0001-01-01T01:00:00Z,down,unplanned")
    late = _log(tmp_path, "late.csv", "C1,node,r01-n07,9999-12-31T23:00:00Z,,down,unplanned")
    r = cli("reconcile", CONTRACT, ours, early)
    assert_coded_failure(r, "log_out_of_range")
    assert "early.csv row 2, column start" in r.output and "--period" in r.output, r.output
    r = cli("reconcile", CONTRACT, early, late, "--format", "json")     # both logs' problems at once
    assert_coded_failure(r, "log_out_of_range")
    problems = json.loads(r.stdout)["problems"]
    assert [(Path(p["file"]).name, p["row"]) for p in problems] == [("early.csv", 2), ("late.csv", 1)], problems
    # not an option's fault: no usage error blaming --as-of/--month/--quarter/--period
    assert "Invalid value for --as-of" not in r.output
    # a month named: the difference is computed for it (the engine's own check still applies)
    r = cli("reconcile", CONTRACT, ours, ours, "--period", "2027-01")
    assert r.exit_code == 0, r.output
