"""A command whose module cannot be imported (a broken or partial install) ends as one coded
line and exit 1 wherever the command is looked up: running it, its --help, `slakit --help`
(which loads every command) and shell completion. Never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROGRAM = """
import importlib, sys
real = importlib.import_module
def broken(name, *a, **k):
    if name == "calculators.reconcile_cli":
        raise ImportError("No module named 'calculators.reconcile_cli'")
    return real(name, *a, **k)
importlib.import_module = broken
sys.argv = ["slakit", *sys.argv[1:]]
from slakit.cli import run
run()
"""


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != "SLAKIT_DEBUG"} | env
    return subprocess.run([sys.executable, "-c", _PROGRAM, *args], capture_output=True, text=True, env=full)


@pytest.mark.parametrize("args", [["reconcile", "a.csv", "b.csv"], ["reconcile", "--help"], ["--help"]])
def test_an_unimportable_command_module_is_one_coded_line(args):
    got = _run(args)
    assert got.returncode == 1, got
    assert "Traceback" not in got.stderr, got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: the slakit command 'reconcile' could not be loaded")
    assert "calculators.reconcile_cli" in lines[0] and lines[0].endswith("[command_unavailable]")


def test_completion_through_an_unimportable_module_is_one_coded_line():
    got = _run([], _SLAKIT_COMPLETE="bash_complete", COMP_WORDS="slakit re", COMP_CWORD="1")
    assert "Traceback" not in got.stderr, got.stderr
    assert got.returncode == 1 and got.stderr.strip().endswith("[command_unavailable]"), got


def test_other_commands_still_run_and_debug_shows_the_traceback():
    assert _run(["validate", "--help"]).returncode == 0
    got = _run(["reconcile", "--help"], SLAKIT_DEBUG="1")
    assert "Traceback" in got.stderr and "ImportError" in got.stderr
