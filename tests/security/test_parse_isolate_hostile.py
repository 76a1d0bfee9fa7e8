"""`slakit parse FILE` on devices and FIFOs ends at once with a coded problem (it read
/dev/zero until the memory ran out); `accept isolate --out` into a place that cannot be
created is a coded problem, not an unexpected error."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.hostile.conftest import assert_coded_failure, cli

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("tool", [None, "fio"])
@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom", "fifo"])
def test_parse_refuses_devices_and_fifos(tmp_path, tool, special):
    if special == "fifo":
        special = tmp_path / "out.txt"
        os.mkfifo(special)
    t0 = time.monotonic()
    r = cli("parse", *([tool] if tool else []), special, "--format", "json")
    assert_coded_failure(r, "not_a_regular_file")
    assert json.loads(r.stdout)["problems"][0]["code"] == "not_a_regular_file"
    assert time.monotonic() - t0 < 10


def test_isolate_out_that_cannot_be_created(tmp_path):
    r = cli("accept", "isolate", REPO / "examples" / "gb200-contract.yaml", "--criterion", "gpu-inventory",
            "--out", "/proc/self/isolation", "--executor", "local", "--timeout", "5")
    assert_coded_failure(r, "out_unwritable")
