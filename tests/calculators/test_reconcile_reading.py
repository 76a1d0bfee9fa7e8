"""`slakit reconcile` reads its two logs as `slakit credits` reads a log (`calculators.incidents`):
a log credits refuses is refused with the same problem lines (code, file, row, column, value),
with or without a contract; a log credits accepts is accepted. Without a contract the checks
that need its topology are not made, and the output says the targets were taken as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from calculators.reconcile import read_log
from slaschema.errors import InputError
from tests.hostile.conftest import cli

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"
HEADER = "id,scope,target,start,end,impact,gpus_affected,category,severity\n"
# a problem line: `FILE row R, column C: ... (got V); fix: ... [code]`
PROBLEM = re.compile(r"^\S.*\[[a-z_]+\]$")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _problem_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if PROBLEM.match(line)]


def _refused_alike(bad: Path) -> list[str]:
    """The problem lines of `credits` on `bad`, checked to be those of `reconcile` with the
    contract (either side) and without one; returned for the caller's own assertions."""
    credits = cli("credits", CONTRACT, bad, "--month", "2027-01")
    assert credits.exit_code == 1, credits.output
    want = _problem_lines(credits)
    assert want, credits.stderr
    for args in ((CONTRACT, bad, LOG), (CONTRACT, LOG, bad), (bad, LOG)):
        got = cli("reconcile", *args)
        assert got.exit_code == 1, got.output
        assert "Traceback" not in got.output
        assert _problem_lines(got) == want, (args, got.stderr)
    return want


def test_a_row_with_an_extra_cell_is_refused_as_credits_refuses_it(tmp_path):
    # the csv module read it as a row with a cell under the key None, which reconcile ignored
    bad = _write(tmp_path, "extra.csv", HEADER + "A,node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,"
                 "down,,unplanned,sev2,surplus\n")
    lines = _refused_alike(bad)
    assert len(lines) == 1 and lines[0].startswith(f"{bad} row 1:") and "(file line 2)" in lines[0] and lines[0].endswith("[csv_invalid]"), lines
    r = cli("reconcile", bad, LOG, "--format", "json")
    assert [(p["code"], p["file"]) for p in json.loads(r.stdout)["problems"]] == [("csv_invalid", str(bad))]


def test_bad_rows_have_the_loaders_codes_rows_and_columns(tmp_path):
    bad = _write(tmp_path, "rows.csv", HEADER + "".join([
        "A,node,r01-n01,2027-01-05T03:00:00,2027-01-05T04:00:00Z,down,,,\n",        # no offset
        "A,node,r01-n02,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,,,\n",       # repeated id
        "C,pod,r01-n03,2027-01-05T03:00:00Z,,down,,,\n",                           # scope
        "D,node,r01-n04,2027-01-05T03:00:00Z,,broken,,,\n",                        # impact
        "E,node,r01-n05,2027-01-05T03:00:00Z,,degraded,2.5,,\n",                   # gpus_affected
        "F,node,r01-n06,2027-01-05T03:00:00Z,,down,,,sev9\n",                      # severity
        "G,node,r01-n08,2027-01-05T05:00:00Z,2027-01-05T04:00:00Z,down,,,\n",       # end before start
    ]))
    lines = _refused_alike(bad)
    codes = [line.rsplit("[", 1)[1].rstrip("]") for line in lines]
    assert codes == ["timestamp_naive", "duplicate_id", "unknown_scope", "unknown_impact", "gpus_affected_range",
                     "unknown_severity", "end_before_start"], lines
    with pytest.raises(InputError) as err:
        read_log(bad)
    assert [(p.code, p.row, p.column) for p in err.value.problems] == [
        ("timestamp_naive", 1, "start"), ("duplicate_id", 2, "id"), ("unknown_scope", 3, "scope"),
        ("unknown_impact", 4, "impact"), ("gpus_affected_range", 5, "gpus_affected"),
        ("unknown_severity", 6, "severity"), ("end_before_start", 7, "end")]


@pytest.mark.parametrize("text, code", [
    ("", "empty_log"),
    ("id,scope,start\nA,node,2027-01-05T03:00:00Z\n", "missing_column"),
    ('{"id": "A", "scope": "node"\n', "json_invalid"),
])
def test_file_problems_are_refused_alike(tmp_path, text, code):
    bad = _write(tmp_path, "log.jsonl" if text.startswith("{") else "log.csv", text)
    lines = _refused_alike(bad)
    assert lines[0].endswith(f"[{code}]"), lines


def test_targets_are_checked_only_under_a_contract(tmp_path):
    log = _write(tmp_path, "ours.csv", HEADER + "A,node,zz-99,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,,,\n"
                 "B,rack,r77,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,,,\n"
                 "C,node,r01-n[01-02],2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,degraded,,,\n")
    credits = cli("credits", CONTRACT, log, "--month", "2027-01")
    under = cli("reconcile", CONTRACT, log, LOG)
    assert under.exit_code == 1 and _problem_lines(under) == _problem_lines(credits)
    assert [line.rsplit("[", 1)[1] for line in _problem_lines(under)] == [
        "unknown_target]", "unknown_target]", "missing_value]"]          # gpus_affected: degraded: proportional
    # no contract: no topology to look the targets up in, no GPUs per node, no `degraded` rule
    alone = cli("reconcile", log, log, "--format", "json")
    assert alone.exit_code == 0, alone.output
    doc = json.loads(alone.stdout)
    assert doc["agree"] and (doc["ours_incidents"], doc["ours_entries"], doc["matched"]) == (3, 4, 4)
    table = cli("reconcile", log, log)
    assert "targets taken as written: with no contract they are not checked against a topology" in table.output


def test_a_bad_hostlist_without_a_contract_is_unknown_target_with_its_fix(tmp_path):
    log = _write(tmp_path, "ours.csv", HEADER + "A,node,r01-n[05-01],2027-01-05T03:00:00Z,,down,,,\n")
    r = cli("reconcile", log, LOG, "--format", "json")
    assert r.exit_code == 1, r.output
    (p,) = json.loads(r.stdout)["problems"]
    assert (p["code"], p["row"], p["column"], p["value"]) == ("unknown_target", 1, "target", "r01-n[05-01]")
    assert "not a valid hostlist" in p["message"] and "topology" not in p.get("fix", "")


def test_a_log_credits_accepts_is_accepted(tmp_path):
    assert cli("credits", CONTRACT, LOG, "--month", "2027-01").exit_code == 0
    for args in ((LOG, LOG), (CONTRACT, LOG, LOG)):
        r = cli("reconcile", *args, "--format", "json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert doc["agree"] and doc["ours_incidents"] == 64 and doc["matched"] == doc["ours_entries"]
    # the offsets as written are read as the loader reads them: the findings' times are UTC
    first = read_log(LOG)[0]
    assert first.start.isoformat() == "2027-01-05T09:12:00+00:00" and first.row == 1


def test_a_log_reconciled_against_itself_has_its_warnings_and_errors_printed_once(tmp_path):
    row = b"A,node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,,unplanned,sev2,caf\xe9\n"
    text = HEADER.replace("severity", "severity,cause").encode() + row
    log = tmp_path / "latin1.csv"
    log.write_bytes(text)
    twin = tmp_path / "twin.csv"
    twin.write_bytes(text)
    same = cli("reconcile", log, log)
    assert same.exit_code == 0, same.output
    warned = [line for line in same.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and f"{log}:2:" in warned[0] and warned[0].endswith("[not_utf8]")
    two = cli("reconcile", log, twin)             # two files: each one's warning
    warned = [line for line in two.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 2 and f"{log}:2:" in warned[0] and f"{twin}:2:" in warned[1]
    bad = tmp_path / "bad.csv"
    bad.write_bytes(text.replace(b"sev2", b"sev9"))
    refused = cli("reconcile", bad, bad)
    assert refused.exit_code == 1
    assert [line for line in _problem_lines(refused) if "[unknown_severity]" in line] == [
        line for line in _problem_lines(cli("reconcile", bad, LOG)) if "[unknown_severity]" in line]
    assert len([line for line in _problem_lines(refused) if "[unknown_severity]" in line]) == 1
