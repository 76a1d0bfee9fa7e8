"""One handling of bad input (slaschema.cli.report_input_errors / exit_on_input_error): the
problems as `file ... [code]` lines or JSON, then the notes, then the exit status; no command
prints problems and exits on its own."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from slakit.cli import main
from slaschema.cli import report_input_errors
from slaschema.errors import InputError, Problem

REPO = Path(__file__).resolve().parents[1]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
HEADER = "id,scope,target,start,end\n"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def bad_log(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text(HEADER + "a,node,r01-n07,2027-02-01T00:00:00Z,2027-02-01T01:00:00Z\n"
                            "b,node,r01-n07,yesterday,2027-02-01T01:00:00Z\n")
    return log


def test_problems_then_the_note_then_exit_1(bad_log):
    res = run("credits", CONTRACT, bad_log, "--month", "2027-02")
    assert res.exit_code == 1 and "Traceback" not in res.output
    lines = res.stderr.splitlines()
    assert f"{bad_log} row 2, column start" in lines[0] and lines[0].endswith("]")
    assert lines[-2:] == ["1 error(s)", "nothing computed: fix the rows above or pass --skip-bad-rows"]
    assert res.stdout == ""


def test_json_problems_where_the_command_writes_json(bad_log, tmp_path):
    out = tmp_path / "credits.json"
    for extra in (["--format", "json"], ["-o", out]):          # named, or chosen by -o's extension
        res = run("credits", CONTRACT, bad_log, "--month", "2027-02", *extra)
        assert res.exit_code == 1
        doc = json.loads(res.stdout)
        assert doc["ok"] is False and [p["row"] for p in doc["problems"]] == [2]
        assert "nothing computed" in res.stderr
    assert not out.exists()


def test_an_unwritable_output_is_a_coded_problem_and_nothing_is_written(tmp_path):
    events = tmp_path / "events.txt"
    events.write_text("Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n")
    out = events / "x.csv"                  # under a file: no folder can be made there
    res = run("import", "slurm-events", events, "--assume-tz", "UTC", "-o", out)
    assert res.exit_code == 1
    assert res.stderr.splitlines()[0].startswith(f"{out}: cannot be written (")
    assert res.stderr.splitlines()[0].endswith("[output_unwritable]")
    assert res.stderr.splitlines()[-1] == "nothing written"


def test_a_usage_problem_exits_2():
    res = run("accept", "run", CONTRACT, "--only", "no-such-criterion", "--out", "/nonexistent/never")
    assert res.exit_code == 2 and "[unknown_selection]" in res.output


def test_the_handler_keeps_the_exit_code_and_every_note():
    @click.command()
    @click.option("--format", "fmt", default="table")
    @report_input_errors
    def cmd(fmt):
        err = InputError([Problem("bad_thing", "is bad", file="f.yaml", line=3, col=2),
                          Problem("worse_thing", "is worse", file="f.yaml", line=4)], exit_code=2)
        err.add_note("nothing written")
        err.add_note("see docs/cli.md")
        raise err

    res = CliRunner().invoke(cmd, [])
    assert res.exit_code == 2
    assert res.stderr.splitlines() == ["f.yaml:3:2: is bad [bad_thing]", "f.yaml:4: is worse [worse_thing]",
                                       "2 error(s)", "nothing written", "see docs/cli.md"]
    res = CliRunner().invoke(cmd, ["--format", "json"])
    assert res.exit_code == 2 and [p["code"] for p in json.loads(res.stdout)["problems"]] == ["bad_thing",
                                                                                               "worse_thing"]


COMMAND_FILES = sorted({*REPO.glob("*/cli*.py"), *REPO.glob("*/*/cli*.py"), REPO / "acceptance" / "slurm_cli.py",
                        REPO / "calculators" / "claim_cli.py", REPO / "calculators" / "compare_cli.py",
                        REPO / "calculators" / "reconcile_cli.py"})
# Commands that print problems among other results (a report per contract), not as an error.
MIXED = {"slaschema/cli.py", "slaschema/lint/cli.py"}


@pytest.mark.parametrize("path", [p.relative_to(REPO).as_posix() for p in COMMAND_FILES])
def test_no_command_prints_problems_and_exits_itself(path):
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is not None and "InputError" in ast.unparse(node.type):
            body = ast.unparse(node)
            assert "sys.exit" not in body and "SystemExit" not in body, f"{path}:{node.lineno}: raise instead"
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("emit_problems"):
            assert path in MIXED, f"{path}:{node.lineno}: raise InputError (slaschema.cli.report_input_errors)"


def test_gather_reports_the_problems_of_every_input_at_once():
    from slaschema.errors import gather

    def load(name):
        if name.startswith("bad"):
            raise InputError([Problem("bad_input", "is bad", file=name)])
        return name.upper()

    assert gather(load, ["a", "b"]) == ["A", "B"]
    with pytest.raises(InputError) as exc:
        gather(load, ["bad1", "ok", "bad2"])
    assert [p.file for p in exc.value.problems] == ["bad1", "bad2"]


def test_reconcile_reports_both_bad_logs_at_once(tmp_path):
    ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
    ours.write_text(HEADER + "a,node,n1,not-a-time,\n")
    theirs.write_text(HEADER + "b,planet,n1,2027-02-01T00:00:00Z,\n")
    res = run("reconcile", ours, theirs)
    assert res.exit_code == 1
    assert "[timestamp_invalid]" in res.stderr and "[unknown_scope]" in res.stderr and "2 error(s)" in res.stderr


def test_the_coded_errors_are_one_hierarchy():
    """Every error slakit raises about what it was given, with a stable code, is a SlakitError
    (slaschema.errors), whatever else it also is."""
    from acceptance.drill import DrillError
    from calculators.claim_case import ClaimError
    from calculators.engine import EngineError
    from calculators.periods import PeriodError
    from slaschema.errors import SlakitError
    from slaschema.hostlist import HostlistError
    from slaschema.sshsig import SigningError

    for cls in (InputError, PeriodError, EngineError, HostlistError, SigningError, DrillError, ClaimError):
        assert issubclass(cls, SlakitError), cls
    assert issubclass(HostlistError, ValueError) and issubclass(DrillError, RuntimeError)
    assert issubclass(ClaimError, ValueError)


@pytest.mark.parametrize("name, text", [
    ("log.jsonl", '{"id": "A", "scope": "node", "target": "r01-n01", "start": "2027-02-03T10:00:00Z"}\n[1]\n'),
    ("log.csv", HEADER + "A,node,r01-n01,2027-02-03T10:00:00Z,,extra\n"),
])
def test_a_file_problem_with_a_row_is_not_told_to_skip_bad_rows(tmp_path, name, text):
    """json_invalid and csv_invalid stop the command even with --skip-bad-rows, so the note
    after them does not suggest it (it follows row problems only)."""
    log = tmp_path / name
    log.write_text(text)
    for extra in ((), ("--skip-bad-rows",)):
        res = run("credits", CONTRACT, log, "--month", "2027-02", *extra)
        assert res.exit_code == 1 and ("[json_invalid]" in res.stderr or "[csv_invalid]" in res.stderr)
        assert "--skip-bad-rows" not in res.stderr, res.stderr
