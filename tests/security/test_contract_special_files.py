"""A contract that is a FIFO or a device: every command that opens contracts ends at once with
not_a_regular_file (validate, show and lint waited on the FIFO or read /dev/zero forever)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.hostile.conftest import assert_coded_failure, cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gb200-contract.yaml"


@pytest.mark.parametrize("command", [["validate"], ["show"], ["lint"], ["draft", "-o", "x.md"]])
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_contract_that_is_no_regular_file(tmp_path, command, special):
    if special == "fifo":
        special = tmp_path / "contract.yaml"
        os.mkfifo(special)
    t0 = time.monotonic()
    args = [command[0], special, *command[1:]]
    if command[0] == "draft":
        args = ["draft", special, "-o", tmp_path / "x.md"]
    # a FIFO is no regular file; anything under /dev is refused by its place before it is opened
    assert_coded_failure(cli(*args), "path_forbidden" if str(special).startswith("/dev/") else "not_a_regular_file")
    assert time.monotonic() - t0 < 10


def test_lint_sarif_lists_a_device_among_several_files(tmp_path):
    r = cli("lint", EXAMPLE, "/dev/zero", "--format", "sarif")
    assert r.exit_code == 1
    rules = [x.get("ruleId") for x in json.loads(r.stdout)["runs"][0]["results"]]
    assert "path_forbidden" in rules or "not_a_regular_file" in rules
