"""calculators.slurm_client: the one reading of Slurm's time strings and the one way a
Slurm client command (sacct, sacctmgr) is run."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from calculators.goodput.sacct import sacct_live
from calculators.importers.slurm_events import sacctmgr_events
from calculators.slurm_client import format_time, parse_time, run_client
from slaschema.errors import InputError

DENVER = ZoneInfo("America/Denver")


def test_local_wall_clock_in_the_named_zone_to_utc_and_back():
    t = parse_time("2027-01-05T03:12:00", DENVER)
    assert t == datetime(2027, 1, 5, 10, 12, tzinfo=timezone.utc)
    assert parse_time("2027-01-05T03:12:00+00:00", DENVER) == datetime(2027, 1, 5, 3, 12, tzinfo=timezone.utc)
    assert format_time(int(t.timestamp()), "America/Denver") == "2027-01-05T03:12:00"


@pytest.mark.parametrize("text", ["Unknown", "yesterday", "1899-06-30T00:00:00", "9999-12-31T23:00:00",
                                  "0001-01-01T00:00:00"])
def test_what_slurm_never_writes_is_refused(text):
    with pytest.raises(ValueError):
        parse_time(text, ZoneInfo("Asia/Tokyo") if text.startswith("0001") else DENVER)


def test_a_client_that_cannot_run_or_fails_is_a_coded_problem(tmp_path):
    env = {"PATH": str(tmp_path)}                 # no sacct, no sacctmgr there
    for call, code in ((lambda: sacct_live("2027-01-01T00:00:00", "2027-02-01T00:00:00", env=env), "sacct_failed"),
                       (lambda: sacctmgr_events("2027-01-01T00:00:00", env=env), "events_failed")):
        with pytest.raises(InputError) as exc:
            call()
        (p,) = exc.value.problems
        assert p.code == code and "cannot run" in p.message and p.fix
    with pytest.raises(InputError) as exc:
        run_client([sys.executable, "-c", "import sys; sys.exit('slurmdbd unreachable')"], code="x_failed",
                   timeout_s=30)
    (p,) = exc.value.problems
    assert p.code == "x_failed" and "exit 1" in p.message and "slurmdbd unreachable" in p.message
    assert run_client([sys.executable, "-c", "print('ok')"], code="x_failed", timeout_s=30) == "ok\n"
