"""Hostile inputs of `slakit goodput` and `slakit import slurm-events`: sacct files, training
logs and event files from the other party end in coded problems, never an unexpected error
or a hang on a FIFO."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.contracts import small_contract
from tests.hostile.conftest import assert_coded_failure, cli

HEADER = "JobID|State|ExitCode|NodeList|NNodes|AllocTRES|Start|End|Elapsed|Reason|Comment\n"
JOB = "1|COMPLETED|0:0|gpu-01|1|billing=8,gres/gpu=8,node=1|2027-02-01T00:00:00|2027-02-01T10:00:00|10:00:00|None|\n"
EVENTS = "Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"


@pytest.fixture
def contract(tmp_path) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(small_contract("goodput-test", {"r1": "gpu-[01-02]", "r2": "gpu-[03-04]"}))
    return p


def _goodput(contract: Path, sacct: Path, *extra):
    return cli("goodput", contract, "--sacct", sacct, "--month", "2027-02", "--assume-tz", "UTC", *extra)


def test_goodput_command_runs(tmp_path, contract):
    """The command itself starts (it once imported a helper under an old name)."""
    (tmp_path / "s.txt").write_text(HEADER + JOB)
    r = _goodput(contract, tmp_path / "s.txt", "--format", "json")
    assert r.exit_code == 0, r.output
    assert '"paid_gpu_hours"' in r.output or "paid" in r.output


def test_end_in_year_9999_is_a_coded_time_problem(tmp_path, contract):
    (tmp_path / "s.txt").write_text(HEADER + JOB.replace("2027-02-01T10:00:00", "9999-12-31T23:59:59"))
    assert_coded_failure(_goodput(contract, tmp_path / "s.txt"), "sacct_time_invalid")


def test_absurd_gpu_count_in_alloctres_is_not_an_overflow(tmp_path, contract):
    (tmp_path / "s.txt").write_text(HEADER + JOB.replace("gres/gpu=8", "gres/gpu=" + "9" * 30))
    r = _goodput(contract, tmp_path / "s.txt")
    assert r.exit_code in (0, 1) and "Traceback" not in r.output and "unexpected_error" not in r.output, r.output


def test_as_of_in_year_one_is_a_usage_error(tmp_path, contract):
    (tmp_path / "s.txt").write_text(HEADER)
    r = _goodput(contract, tmp_path / "s.txt", "--as-of", "0001-01-01T00:00:00+14:00")
    assert r.exit_code == 2 and "[as_of_out_of_range]" in r.output


@pytest.mark.parametrize("where", ["sacct", "train-log", "profiles"])
def test_fifo_inputs_are_refused_not_waited_on(tmp_path, contract, where):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "s.txt").write_text(HEADER + JOB)
    args = {"sacct": (fifo,), "train-log": (tmp_path / "s.txt", "--train-log", f"1={fifo}"),
            "profiles": (tmp_path / "s.txt", "--profiles", fifo, "--train-log", f"1={tmp_path / 's.txt'}")}[where]
    t0 = time.monotonic()
    assert_coded_failure(_goodput(contract, *args), "not_a_regular_file")
    assert time.monotonic() - t0 < 10


def test_slurm_events_from_a_fifo_or_into_an_unwritable_place(tmp_path):
    fifo = tmp_path / "events.txt"
    os.mkfifo(fifo)
    assert_coded_failure(cli("import", "slurm-events", fifo, "--assume-tz", "UTC"), "not_a_regular_file")
    ok = tmp_path / "ok.txt"
    ok.write_text(EVENTS + "c1|gpu-01|2027-02-01T00:00:00|2027-02-01T02:00:00|DOWN|bad gpu|root\n")
    assert_coded_failure(cli("import", "slurm-events", ok, "--assume-tz", "UTC", "-o", "/proc/self/x.csv"), "output_unwritable")
