"""What `slakit` sets before its imports (slakit/entry.py `settle_environment`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# a pydantic plugin installed as a distribution's entry point, as a user's environment has one:
# it prints when pydantic asks it about a model
PLUGIN = """
class Plugin:
    def new_schema_validator(self, *args, **kwargs):
        print("plugin called", flush=True)
        return None, None, None
plugin = Plugin()
"""
DIST = """Metadata-Version: 2.1
Name: slakit-test-plugin
Version: 1.0
"""


@pytest.mark.parametrize(("given", "called"), [(None, False), ("", True), ("1", False)])
def test_pydantic_plugins_are_not_looked_up_unless_asked_for(tmp_path, given, called):
    (tmp_path / "probe_plugin.py").write_text(PLUGIN)
    dist = tmp_path / "slakit_test_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(DIST)
    (dist / "entry_points.txt").write_text("[pydantic]\nprobe = probe_plugin:plugin\n")
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    if given is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = given
    code = ("import os, sys\n"
            "from slakit.entry import settle_environment\n"
            "settle_environment()\n"
            "print('value', repr(os.environ.get('PYDANTIC_DISABLE_PLUGINS')))\n"
            "from slaschema.loader import load_contract\n"
            f"load_contract({str(ROOT / 'examples' / 'gb200-contract.yaml')!r})\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"value {'__all__' if given is None else given!r}" in out.stdout
    assert ("plugin called" in out.stdout) is called


# --- the incident log read from the start (slakit/entry.py `early_log`) ----------------------

from slakit.entry import EARLY_LOG, GLOBAL_FLAGS, GLOBAL_VALUES, early_log  # noqa: E402


@pytest.mark.parametrize(("argv", "log"), [
    (["credits", "c.yaml", "log.csv", "--quarter", "2027-Q1"], "log.csv"),
    (["credits", "--quarter", "2027-Q1", "c.yaml", "log.csv"], "log.csv"),
    (["credits", "--format", "json", "-o", "out.json", "c.yaml", "log.csv"], "log.csv"),
    (["credits", "-oout.json", "--format=json", "c.yaml", "log.csv"], "log.csv"),
    (["credits", "c.yaml", "--skip-bad-rows", "--no-progress", "log.csv"], "log.csv"),
    (["credits", "--history", "old.json", "c.yaml", "log.csv", "--history", "older.json"], "log.csv"),
    (["--max-nodes", "5000", "--raw-csv", "--max-file-size=99", "credits", "c.yaml", "log.csv"], "log.csv"),
    (["explain", "c.yaml", "log.csv", "--unit", "n1", "--month", "2027-01"], "log.csv"),
    (["credits", "c.yaml", "--", "-log.csv"], "-log.csv"),
    (["credits", "c.yaml", "log.csv", "--help"], None),          # help: nothing is read
    (["credits", "c.yaml", "log.csv", "-ho", "x"], None),        # -h then -o: help
    (["credits", "-hoout.txt", "c.yaml", "log.csv"], None),
    (["credits", "c.yaml"], None),                               # one argument: a usage error follows
    (["credits", "c.yaml", "-"], None),
    (["--version"], None),
    (["--unknown", "credits", "c.yaml", "log.csv"], None),
    (["review", "c.yaml", "log.csv"], None),                     # not one of EARLY_LOG's commands
    ([], None),
])
def test_early_log_finds_the_log_a_command_line_names(argv, log):
    assert early_log(argv) == log


def test_early_log_knows_the_options_of_the_commands_it_reads_ahead_for():
    """`EARLY_LOG`'s options without a value are exactly those of the commands (an option added
    to a command without adding it there would make `early_log` take its neighbour for its
    value), the log is each command's second argument, and the program's own options are known."""
    import click

    from slakit.cli import main

    ctx = click.Context(main)
    for name, flags in EARLY_LOG.items():
        cmd = main.get_command(ctx, name)
        args = [p.name for p in cmd.params if isinstance(p, click.Argument)]
        assert args[:2] == ["contract", "incidents"], name
        options = [p for p in cmd.params if isinstance(p, click.Option)]
        no_value = {o for p in options if p.is_flag or p.count for o in (*p.opts, *p.secondary_opts)}
        assert no_value == set(flags), name
        assert all(p.nargs == 1 for p in options), name
    own = [p for p in main.params if isinstance(p, click.Option)]
    assert {o for p in own if p.is_flag and "--version" not in p.opts for o in p.opts} == set(GLOBAL_FLAGS)
    assert {o for p in own if not p.is_flag for o in p.opts} == set(GLOBAL_VALUES)


def test_the_log_is_read_before_click_is_imported(tmp_path):
    """`slakit credits CONTRACT LOG` begins reading LOG before the command line is parsed; the
    command then takes that reading (one job, handed out once)."""
    log = tmp_path / "log.csv"
    log.write_text("id,scope,target,start,end\nINC-1,node,n1,2027-01-01T00:00:00Z,2027-01-01T01:00:00Z\n")
    code = ("import sys\n"
            "from slakit import entry\n"
            f"entry._start_reading(['credits', 'c.yaml', {str(log)!r}, '--quarter', '2027-Q1'])\n"
            "from calculators import log_prefetch\n"
            "print('click' in sys.modules, sorted(log_prefetch._jobs))\n"
            f"got = log_prefetch.take({str(log)!r})\n"
            "print(bytes(got.data).startswith(b'id,scope'), log_prefetch.take(" + repr(str(log)) + ") is None)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"False [{str(log)!r}]", "True True"]


def test_credits_through_the_program_with_the_early_reading_matches_the_command(tmp_path):
    """The whole program (`python -m slakit`, which reads the log from its start) writes what
    the command run without the early start writes."""
    from click.testing import CliRunner

    from slakit.cli import main

    contract = ROOT / "examples" / "gb200-contract.yaml"
    log = ROOT / "examples" / "gb200-incidents-2027Q1.csv"
    out = tmp_path / "out.json"
    done = subprocess.run([sys.executable, "-m", "slakit", "credits", str(contract), str(log), "--month", "2027-02",
                           "--format", "json", "-o", str(out)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    inline = tmp_path / "inline.json"
    got = CliRunner().invoke(main, ["credits", str(contract), str(log), "--month", "2027-02", "--format", "json",
                                    "-o", str(inline)])
    assert got.exit_code == 0, got.output
    assert out.read_bytes() == inline.read_bytes()
