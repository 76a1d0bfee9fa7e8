"""The conventions every `slakit` command keeps (docs/cli.md): one period option type, `-o/--output`
on every command that writes a file (checked against the format), the contract first, shell
completion, progress on stderr only."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from calculators.period_option import PeriodText
from slakit.cli import main
from slaschema.cliconv import Progress

REPO = Path(__file__).resolve().parents[1]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
NOW = "2027-04-01T00:00:00Z"
LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"

# Commands that write files (documents, logs, bundles).
WRITERS = {"credits", "explain", "goodput", "review", "draft", "claim letter", "simulate", "compare", "schema",
           "init", "import lanl", "import csv", "import slurm-events", "watch", "accept run", "accept burn-in",
           "accept isolate", "accept report"}
# Where a period is asked for.
PERIOD_COMMANDS = {"credits", "explain", "goodput", "review", "claim letter", "reconcile"}
# Commands whose first argument is not a contract, and why.
NOT_CONTRACT_FIRST = {
    "claim status": "reads a claims ledger; contracts after it only filter",
}


def walk(group: click.Group = main.load_all(), prefix: str = ""):
    for name, cmd in sorted(group.commands.items()):
        path = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            yield from walk(cmd, path + " ")
        else:
            yield path, cmd


COMMANDS = dict(walk())


def options(cmd: click.Command):
    return [p for p in cmd.params if isinstance(p, click.Option)]


def test_the_walk_sees_every_area():
    assert {"credits", "review", "accept run", "accept drill", "security audit", "completion", "import csv",
            "claim letter"} <= set(COMMANDS)
    assert WRITERS | PERIOD_COMMANDS <= set(COMMANDS)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_period_options_share_one_type(path):
    cmd = COMMANDS[path]
    period_opts = [o for o in options(cmd) if {"--month", "--quarter", "--period", "--history-from"} & set(o.opts)]
    for o in period_opts:
        assert isinstance(o.type, PeriodText), f"{path} {o.opts}: {type(o.type).__name__}"
    names = {n for o in period_opts for n in o.opts}
    if path in PERIOD_COMMANDS:
        assert {"--month", "--period"} <= names, path
    else:
        assert not names - {"--history-from"}, f"{path} asks for a period: list it in PERIOD_COMMANDS"


def test_period_help_is_the_same_everywhere():
    helps = {}
    for path in PERIOD_COMMANDS:
        for o in options(COMMANDS[path]):
            if "--month" in o.opts:
                helps[path] = o.help.split(" Repeatable")[0]
    assert len(set(helps.values())) == 1, helps


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_writing_commands_have_dash_o_output(path):
    cmd = COMMANDS[path]
    outs = [o for o in options(cmd) if "-o" in o.opts or "--output" in o.opts or "--out" in o.opts]
    if path in WRITERS:
        assert outs, f"{path} writes a file but has no -o/--output"
    for o in outs:
        assert "-o" in o.opts and "--output" in o.opts, f"{path}: {o.opts}"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_the_contract_is_the_first_argument(path):
    cmd = COMMANDS[path]
    args = [p for p in cmd.params if isinstance(p, click.Argument)]
    visible_contract_opts = [o for o in options(cmd) if "--contract" in o.opts and not o.hidden]
    if path in NOT_CONTRACT_FIRST:
        return
    assert not visible_contract_opts, f"{path}: --contract must be the first argument"
    if any(a.name in ("contract", "contracts") for a in args):
        assert args[0].name in ("contract", "contracts"), f"{path}: {[a.name for a in args]}"
    ctx = click.Context(cmd)
    shown = " ".join(a.make_metavar(ctx) for a in args)
    if "CONTRACT" in shown:            # also one argument holding `[CONTRACT] OURS THEIRS`
        assert shown.lstrip("[").startswith("CONTRACT"), f"{path}: {shown}"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_review_refuses_an_output_of_another_format(tmp_path):
    res = run("review", CONTRACT, LOG, "--quarter", "2027-Q1", "-o", tmp_path / "r.docx")
    assert res.exit_code == 2 and "[output_extension]" in res.output and "r.docx" in res.output
    res = run("review", CONTRACT, LOG, "--quarter", "2027-Q1", "--format", "pdf", "-o", tmp_path / "r.md")
    assert res.exit_code == 2 and "--format md" in res.output
    assert list(tmp_path.iterdir()) == []


def test_credits_refuses_json_into_a_csv_file_and_infers_from_the_extension(tmp_path):
    res = run("credits", CONTRACT, LOG, "--month", "2027-02", "--format", "json", "-o", tmp_path / "out.csv")
    assert res.exit_code == 2 and "[output_extension]" in res.output and "name it *.json" in res.output
    assert not (tmp_path / "out.csv").exists()
    res = run("credits", CONTRACT, LOG, "--month", "2027-02", "-o", tmp_path / "out.json")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "out.json").read_text())["periods"][0]["period"] == "2027-02"
    res = run("credits", CONTRACT, LOG, "--month", "2027-02", "-o", tmp_path / "out.pdf")
    assert res.exit_code == 2 and "does not write .pdf" in res.output


def test_explain_writes_with_dash_o(tmp_path):
    out = tmp_path / "e.json"
    res = run("explain", CONTRACT, LOG, "--unit", "r01-n07", "--period", "2027-02", "--format", "json",
              "-o", out)
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["unit"] == "r01-n07"


@pytest.mark.parametrize("args, code", [
    (["--month", "2027-13"], "[period_invalid]"),
    (["--quarter", "2027-Q5"], "[period_invalid]"),
    (["--month", "2027-01", "--quarter", "2027-Q1"], "[period_conflict]"),
    ([], "[period_missing]"),
])
def test_period_errors_are_usage_errors_with_one_code(tmp_path, args, code):
    for cmd in (["review", CONTRACT, LOG, "-o", tmp_path / "r.pdf"], ["goodput", CONTRACT, "--sacct", LOG],
                ["claim", "letter", CONTRACT, LOG, "-o", tmp_path / "c.pdf"]):
        res = run(*cmd, *args)
        assert res.exit_code == 2 and code in res.output, (cmd, res.output)


def test_period_and_quarter_name_the_same_months():
    a = run("credits", CONTRACT, LOG, "--quarter", "2027-Q1", "--format", "json")
    b = run("credits", CONTRACT, LOG, "--period", "2027-q1", "--format", "json")
    c = run("credits", CONTRACT, LOG, "--month", "2027-01", "--month", "2027-02", "--period", "2027-03",
            "--format", "json")
    assert a.exit_code == b.exit_code == c.exit_code == 0, a.output
    assert a.stdout == b.stdout == c.stdout


def test_deprecated_contract_option_still_works_with_a_notice(tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    old = CliRunner().invoke(main, ["security", "audit", "--contract", str(CONTRACT), "--only", "access", "--root",
                                    str(root), "--format", "json", "--now", NOW])
    new = CliRunner().invoke(main, ["security", "audit", str(CONTRACT), "--only", "access", "--root", str(root),
                                    "--format", "json", "--now", NOW])
    assert old.stdout == new.stdout and json.loads(new.stdout)
    assert "--contract is deprecated" in old.stderr and len(old.stderr.strip().splitlines()) == 1
    assert "deprecated" not in new.stderr
    both = run("security", "audit", CONTRACT, "--contract", CONTRACT, "--root", root)
    assert both.exit_code == 2 and "[contract_twice]" in both.output
    drill = run("accept", "drill", "--help")
    assert "[CONTRACT]" in drill.output and "--contract" not in drill.output.split("Options:")[1]


def test_bash_completion_completes_a_subcommand():
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    script = run("completion", "bash").stdout
    assert "_SLAKIT_COMPLETE=bash_complete" in script
    exe_dir = Path(sys.executable).parent
    assert (exe_dir / "slakit").exists(), "the slakit script is installed beside python"
    shell = ('eval "$(slakit completion bash)"\n'
             'COMP_WORDS=(slakit cre); COMP_CWORD=1; _slakit_completion slakit\n'
             'printf "%s\\n" "${COMPREPLY[@]}"\n'
             'COMP_WORDS=(slakit accept dr); COMP_CWORD=2; COMPREPLY=(); _slakit_completion slakit\n'
             'printf "%s\\n" "${COMPREPLY[@]}"\n')
    env = {"PATH": f"{exe_dir}:/usr/bin:/bin", "HOME": "/nonexistent"}
    got = subprocess.run([bash, "--norc", "--noprofile", "-c", shell], capture_output=True, text=True, env=env,
                         timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["credits", "drill"]


@pytest.mark.parametrize("shell, marker", [("zsh", "#compdef slakit"), ("fish", "complete --no-files --command slakit")])
def test_zsh_and_fish_scripts(shell, marker):
    res = run("completion", shell)
    assert res.exit_code == 0 and marker in res.stdout
    assert run("completion", "tcsh").exit_code == 2


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_progress_lines_with_eta_when_piped():
    stream, clock = io.StringIO(), FakeClock()
    p = Progress("accept run", 4, every_step=True, stream=stream, clock=clock)
    for k in range(4):
        clock.t += 10
        p.step(note=f"C{k} pass")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "accept run: 1/4 (25%), 10s elapsed, ETA 30s - C0 pass"
    assert lines[-1] == "accept run: 4/4 (100%), 40s elapsed - C3 pass"
    quiet = io.StringIO()
    Progress("x", 5, enabled=False, stream=quiet).step()
    assert quiet.getvalue() == ""
    sparse, clock = io.StringIO(), FakeClock()
    p = Progress("simulate", 100, stream=sparse, clock=clock)
    for _ in range(100):
        clock.t += 1
        p.step()
    assert len(sparse.getvalue().splitlines()) == 11          # every tenth and the end, not every run


def test_progress_never_reaches_stdout():
    res = CliRunner().invoke(main, ["simulate", str(CONTRACT), "--runs", "3", "--months", "1", "--format", "json"],
                             env={"SLAKIT_NO_PROGRESS": ""})
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["runs"] == 3


def test_docs_cli_md_holds_the_current_command_table():
    from slakit.clitable import command_table

    table = command_table(main)
    assert table in (REPO / "docs" / "cli.md").read_text(encoding="utf-8"), \
        "docs/cli.md is out of date: python -m slakit.clitable"
    assert all(f"`slakit {path}`" in table for path in COMMANDS)


def test_accept_run_piped_prints_a_line_per_finished_check(tmp_path):
    from tests.acceptance.conftest import contract_with

    contract = contract_with(tmp_path, """
- id: sw
  check: software.versions
  expect: {kernel: ">=3"}
- id: sw2
  check: software.versions
  expect: {kernel: ">=2"}
""")
    env = {k: v for k, v in __import__("os").environ.items() if k != "SLAKIT_NO_PROGRESS"}
    got = subprocess.run([sys.executable, "-m", "slakit", "accept", "run", str(contract), "-o", str(tmp_path / "b")],
                         capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert got.returncode == 0, got.stderr
    lines = [ln for ln in got.stderr.splitlines() if ln.startswith("accept run: ")]
    assert [ln.split(" - ")[1] for ln in lines] == ["sw (software.versions) pass", "sw2 (software.versions) pass"]
    assert lines[0].startswith("accept run: 1/2 (50%)") and "ETA" in lines[0] and "ETA" not in lines[1]
    assert "accept run:" not in got.stdout
    quiet = subprocess.run([sys.executable, "-m", "slakit", "accept", "run", str(contract), "--out",
                            str(tmp_path / "c"), "--no-progress"], capture_output=True, text=True, timeout=300,
                           env=env, cwd=REPO)
    assert quiet.returncode == 0 and "accept run:" not in quiet.stderr


def test_single_format_writers_check_the_extension(tmp_path):
    res = run("import", "csv", LOG, "--map", REPO / "examples" / "ticket-map.yaml", "-o", tmp_path / "log.json")
    assert res.exit_code == 2 and "[output_extension]" in res.output
    assert run("schema", "-o", tmp_path / "s.yaml").exit_code == 2
    assert run("schema", "-o", tmp_path / "s.json").exit_code == 0 and json.loads((tmp_path / "s.json").read_text())
    assert not (tmp_path / "log.json").exists() and not (tmp_path / "s.yaml").exists()


@pytest.mark.parametrize("args", [
    ["draft", str(CONTRACT)],
    ["review", str(CONTRACT), str(LOG), "--quarter", "2027-Q1", "--no-progress"],
    ["claim", "letter", str(CONTRACT), str(LOG), "--quarter", "2027-Q1", "--as-of", NOW],
    ["init", "--template", "gb200", "--provider", "P", "--customer", "C", "--nodes", "4"],
])
def test_a_required_output_left_out_is_a_usage_error(args):
    """`-o` of a command that must write a file, not given: exit 2 naming the option (the
    option's default must not count as a value given)."""
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert "Missing option '-o' / '--output'" in r.output and "unexpected_error" not in r.output


def test_watch_output_must_be_a_csv_file(tmp_path):
    """`watch` writes a CSV incident log: `-o log.json` (which `slakit credits` would read as
    JSON) is refused before Slurm is polled, as for every single-format writer."""
    for name in ("log.json", "log.pdf"):
        res = run("watch", "--slurm", "-o", tmp_path / name, "--once")
        assert res.exit_code == 2 and "[output_extension]" in res.output and "name it *.csv" in res.output
        assert not (tmp_path / name).exists() and not (tmp_path / f"{name}.state.json").exists()


AS_OF_COMMANDS = {
    "credits": ["credits", str(CONTRACT), str(LOG), "--month", "2027-02"],
    "explain": ["explain", str(CONTRACT), str(LOG), "--unit", "r01-n01", "--month", "2027-02"],
    "review": ["review", str(CONTRACT), str(LOG), "--month", "2027-02", "-o", "r.pdf"],
    "claim letter": ["claim", "letter", str(CONTRACT), str(LOG), "--month", "2027-02", "-o", "c.pdf"],
    "claim status": ["claim", "status", "ledger.csv"],
}


@pytest.mark.parametrize("value, says", [
    ("soon", "'soon' is not an ISO 8601 timestamp (e.g. 2027-04-01T00:00:00Z)"),
    ("2027-04-01T00:00:00", "give an offset or Z (2027-04-01T00:00:00Z)"),
])
@pytest.mark.parametrize("command", sorted(AS_OF_COMMANDS))
def test_as_of_is_read_the_same_by_every_command(tmp_path, monkeypatch, command, value, says):
    """One reading of --as-of (calculators.cli.read_as_of): the same value is refused with the
    same usage error (exit 2) by every command that takes an instant."""
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, [*AS_OF_COMMANDS[command], "--as-of", value])
    assert res.exit_code == 2 and "Invalid value for --as-of: " in res.output and says in res.output, res.output


def test_accept_as_of_reads_times_as_the_other_commands_do():
    """`accept run/evaluate --as-of` also takes a bare date (midnight UTC); a time is read as
    every other command reads it (a lowercase z included)."""
    from datetime import datetime, timezone

    from acceptance.cli import _as_of
    from calculators.cli import parse_as_of
    from slaschema.errors import InputError

    for text in ("2027-01-15T09:00:00z", "2027-01-15T09:00:00Z", "2027-01-15T10:00:00+01:00"):
        assert _as_of(text) == parse_as_of(text) == datetime(2027, 1, 15, 9, tzinfo=timezone.utc)
    assert _as_of("2027-01-15") == datetime(2027, 1, 15, tzinfo=timezone.utc)
    for bad in ("2027-01-15T09:00:00", "soon"):
        with pytest.raises(InputError) as ei:
            _as_of(bad)
        assert ei.value.codes == ["bad_as_of"]


@pytest.mark.parametrize("argv, option, want", [
    (["review", CONTRACT, LOG, "--quarter", "2027-Q1", "-o", "r.pdf", "--json-out", "r.pdf.pdf"], "--json-out", "json"),
    (["claim", "letter", CONTRACT, LOG, "--month", "2027-03", "--as-of", "2027-04-03T00:00:00Z", "-o", "c.md",
      "--ledger", "ledger.json"], "--ledger", "csv"),
    (["import", "lanl", LOG, "-o", "log.csv", "--inventory-out", "inventory.yaml"], "--inventory-out", "csv"),
])
def test_extra_outputs_check_their_extension_too(tmp_path, monkeypatch, argv, option, want):
    """The extra files beside -o (`review --json-out`, `claim letter --ledger`, `import lanl
    --inventory-out`) each hold one format: another format's extension is refused before any
    work is done, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    res = run(*argv)
    assert res.exit_code == 2 and "[output_extension]" in res.output and option in res.output, res.output
    assert f"name it *.{want}" in res.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, name", [
    (["credits", CONTRACT, LOG, "--month", "2027-02"], "credits.docx"),
    (["credits", CONTRACT, LOG, "--month", "2027-02", "--format", "table"], "credits.xlsx"),
    (["credits", CONTRACT, LOG, "--month", "2027-02", "--format", "json"], "credits.zip"),
    (["explain", CONTRACT, LOG, "--unit", "r01-n07", "--month", "2027-02"], "e.rtf"),
    (["review", CONTRACT, LOG, "--quarter", "2027-Q1", "--format", "md"], "r.odt"),
    (["import", "csv", LOG, "--map", REPO / "examples" / "ticket-map.yaml"], "log.csv.gz"),
    (["credits", CONTRACT, LOG, "--month", "2027-02"], "credits.JPEG"),
    (["review", CONTRACT, LOG, "--quarter", "2027-Q1", "--format", "pdf"], "r.docx"),
])
def test_a_text_output_is_refused_into_a_binary_or_office_file(tmp_path, argv, name):
    """A text table may go to any name that is not another slakit format's (.log, .out), but
    not to a file whose extension names a well-known binary or office format (.docx, .zip, ...):
    a usage error [output_extension] before any work, nothing written; nor is any other format
    (a PDF named r.docx)."""
    res = run(*argv, "-o", tmp_path / name)
    assert res.exit_code == 2 and "[output_extension]" in res.output and name in res.output, res.output
    assert list(tmp_path.iterdir()) == []


def test_a_certificate_into_an_office_file_is_the_same_usage_error(tmp_path):
    res = run("accept", "report", tmp_path, "-o", tmp_path / "cert.docx")
    assert res.exit_code == 2 and "[output_extension]" in res.output and "cert.docx" in res.output, res.output
    assert list(tmp_path.iterdir()) == []


def test_an_extra_text_output_is_refused_into_an_office_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run("import", "lanl", LOG, "-o", "log.csv", "--inventory-out", "inventory.xlsx")
    assert res.exit_code == 2 and "[output_extension]" in res.output and "--inventory-out" in res.output, res.output
    assert "name it *.csv" in res.output and list(tmp_path.iterdir()) == []


def test_a_text_table_still_goes_to_a_name_of_no_known_format(tmp_path):
    res = run("credits", CONTRACT, LOG, "--month", "2027-02", "-o", tmp_path / "credits.log")
    assert res.exit_code == 0, res.output
    assert "2027-02" in (tmp_path / "credits.log").read_text()


# the one name of the zone for timestamps written without an offset
ZONE_COMMANDS = {"credits", "explain", "review", "claim letter", "goodput", "import lanl", "import slurm-events"}


@pytest.mark.parametrize("path", sorted(ZONE_COMMANDS))
def test_the_zone_of_naive_timestamps_is_assume_tz_everywhere(path):
    """`--assume-tz ZONE` on every command that reads timestamps written without an offset;
    `--tz`, its older name on goodput and import, is a hidden deprecated alias (listed in the
    command table as "(deprecated: `--tz`)")."""
    names = {o: opt.hidden for opt in options(COMMANDS[path]) for o in opt.opts}
    assert names.get("--assume-tz") is False, path
    assert "--tz" not in names or names["--tz"] is True, path
    if path in ("goodput", "import lanl", "import slurm-events"):
        assert names.get("--tz") is True, path


def test_no_visible_option_is_named_tz():
    assert [p for p, cmd in COMMANDS.items() for o in options(cmd) if "--tz" in o.opts and not o.hidden] == []


EVENTS = ("Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"
          "c1|gpu-04|2026-12-01T10:00:00|2026-12-01T10:20:00|DRAIN|bad fan|root(0)\n")


def test_tz_still_works_with_a_notice_and_both_names_are_refused(tmp_path):
    events = tmp_path / "events.txt"
    events.write_text(EVENTS)
    new = CliRunner().invoke(main, ["import", "slurm-events", str(events), "--assume-tz", "Europe/Berlin"])
    old = CliRunner().invoke(main, ["import", "slurm-events", str(events), "--tz", "Europe/Berlin"])
    assert new.exit_code == old.exit_code == 0, (new.output, old.output)
    assert new.stdout == old.stdout and "2026-12-01T09:00:00Z" in new.stdout
    assert "deprecated" not in new.stderr
    assert "slakit: --tz is deprecated; use --assume-tz" in old.stderr
    both = CliRunner().invoke(main, ["import", "slurm-events", str(events), "--tz", "UTC", "--assume-tz", "UTC"])
    assert both.exit_code == 2 and "[option_twice]" in both.output, both.output
    bad = CliRunner().invoke(main, ["import", "slurm-events", str(events), "--assume-tz", "Mars/Olympus"])
    assert bad.exit_code == 2 and "--assume-tz" in bad.output and "Mars/Olympus" in bad.output


def test_import_lanl_reads_its_local_times_in_assume_tz(tmp_path):
    lanl = REPO / "tests" / "fixtures" / "lanl" / "lanl_sample.csv"
    runs = {opt: CliRunner().invoke(main, ["import", "lanl", str(lanl), *opt]) for opt in
            ((), ("--assume-tz", "America/Denver"), ("--tz", "America/Denver"), ("--assume-tz", "UTC"))}
    assert all(r.exit_code == 0 for r in runs.values()), [r.output for r in runs.values()]
    assert runs[()].stdout == runs[("--assume-tz", "America/Denver")].stdout == runs[("--tz", "America/Denver")].stdout
    assert runs[("--assume-tz", "UTC")].stdout != runs[()].stdout


def test_clicks_path_checks_are_usage_errors_with_a_code(tmp_path):
    """A folder where a file is asked for, a file that must exist and does not: click's own
    checks of a path (exit 2), with a code as slakit's usage errors have."""
    root = Path(__file__).resolve().parents[1]
    contract, log = root / "examples" / "gb200-contract.yaml", root / "examples" / "gb200-incidents-2027Q1.csv"
    folder = tmp_path / "a-folder"
    folder.mkdir()
    runner = CliRunner()
    for args in (["credits", str(contract), str(folder), "--quarter", "2027-Q1"],
                 ["credits", str(contract), str(log), "--quarter", "2027-Q1", "-o", str(folder)],
                 ["credits", str(folder), str(log), "--quarter", "2027-Q1"]):
        r = runner.invoke(main, args)
        assert r.exit_code == 2 and r.output.rstrip().endswith("is a directory. [not_a_file]"), r.output
    r = runner.invoke(main, ["import", "csv", str(tmp_path / "no-such.csv"), "-o", str(tmp_path / "x.csv")])
    assert r.exit_code == 2 and "does not exist. [file_not_found]" in r.output, r.output
