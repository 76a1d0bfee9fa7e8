"""`slakit reconcile` refuses what the other commands reading a log refuse, with the same codes:
a FIFO is not_a_regular_file and a device path_forbidden (they were file_not_found, "no such
incident log", for a file that is there)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.hostile.conftest import assert_coded_failure, cli

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "/proc/self/status"])
@pytest.mark.parametrize("side", ["ours", "theirs"])
def test_special_log_has_the_credits_code(tmp_path, special, side):
    if special == "fifo":
        special = tmp_path / "log.csv"
        os.mkfifo(special)
    code = "not_a_regular_file" if isinstance(special, Path) else "path_forbidden"
    logs = (special, LOG) if side == "ours" else (LOG, special)
    t0 = time.monotonic()
    for args in (logs, (CONTRACT, *logs)):
        assert_coded_failure(cli("reconcile", *args), code)
        assert_coded_failure(cli("credits", CONTRACT, special, "--month", "2027-01"), code)
    assert time.monotonic() - t0 < 30

