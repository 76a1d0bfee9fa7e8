"""The incident register CSV's times and cells: the vectorised paths write what strftime and
the cell rule write one by one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calculators.periods import LATEST_S as LATEST         # the latest instant the engine computes
from calculators.reports.review_model import local_minutes

ZONES = ["America/Chicago", "Europe/Warsaw", "Asia/Shanghai", "UTC", "Australia/Lord_Howe", "Asia/Kathmandu",
         "America/St_Johns", "Pacific/Chatham"]


def strftime(epoch_s: np.ndarray, zone: str) -> list[str]:
    return list(pd.to_datetime(epoch_s, unit="s", utc=True).tz_convert(zone).strftime("%Y-%m-%d %H:%M"))


@pytest.mark.parametrize("zone", ZONES)
def test_local_minutes_are_strftime_of_the_local_time(zone):
    rng = np.random.default_rng(7)
    times = np.concatenate([
        rng.integers(0, LATEST, 3000),                              # 1970 .. 9997, the instants computed
        rng.integers(1_790_000_000, 1_830_000_000, 3000),           # around the contracts' terms
        np.array([0, 59, 60, 61, LATEST]),
    ])
    # every instant a few seconds either side of this zone's offset changes in 2027
    changes = pd.date_range("2027-01-01", "2028-01-01", freq="1h", tz="UTC").tz_convert(zone)
    offsets = np.array([t.utcoffset().total_seconds() for t in changes])
    at = changes[1:][offsets[1:] != offsets[:-1]].asi8 // 10**9
    times = np.concatenate([times, *(at + d for d in (-3601, -61, -1, 0, 1, 59, 3599))])
    got = local_minutes(times, zone)
    assert got.dtype == object and {type(t) for t in got} == {str}
    assert got.tolist() == strftime(times, zone)


def test_a_year_past_9999_is_written_by_strftime():
    far = np.array([253402300800, 300000000000])
    assert local_minutes(far, "UTC").tolist() == strftime(far, "UTC")
