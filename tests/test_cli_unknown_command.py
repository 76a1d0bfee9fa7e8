"""A top-level name that is no command is a usage error (exit 2) with its code, naming the
commands it is close to; the lazily loaded group still finds them (slakit.cli.GuardedGroup)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from slakit.cli import main


@pytest.mark.parametrize("name,close", [("credit", "'credits'"), ("acept", "'accept'"), ("valdate", "'validate'"),
                                        ("impor", "'import'")])
def test_a_near_miss_names_the_command_meant(name, close):
    r = CliRunner().invoke(main, [name])
    assert r.exit_code == 2, r.output
    assert f"No such command '{name}'; did you mean {close}?" in r.output and "[unknown_command]" in r.output


@pytest.mark.parametrize("name", ["xyz", "", "cred\x1b[31m"])
def test_a_name_close_to_none_is_still_coded_and_shows_no_escape(name):
    r = CliRunner().invoke(main, [name])
    assert r.exit_code == 2 and "[unknown_command]" in r.output and "did you mean" not in r.output, r.output
    assert "\x1b" not in r.output


def test_completion_of_a_near_miss_is_quiet():
    r = CliRunner().invoke(main, [], env={"_SLAKIT_COMPLETE": "bash_complete", "COMP_WORDS": "slakit credit x",
                                          "COMP_CWORD": "2"}, prog_name="slakit")
    assert r.exit_code == 0 and r.output.strip() == "", r.output     # no completions, no error
