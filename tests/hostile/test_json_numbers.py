"""Numbers and strings in a JSON incident log that JSON readers disagree on, or that do not
fit the columns: NaN and Infinity (not JSON, but Python reads them), epoch seconds far outside
the years a timestamp can write, integers of thousands of digits and lone UTF-16 surrogates.
Each is the row's coded problem (or, for a surrogate, U+FFFD as in a CSV), never a silently
open incident, a wrapped time or [unexpected_error]."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile.conftest import assert_coded_failure, cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
START = '"2027-01-05T03:12:00Z"'


def _log(tmp_path: Path, name: str, **cells: str) -> Path:
    fields = {"id": '"X1"', "scope": '"node"', "target": '"r01-n07"', "start": START, **cells}
    obj = "{" + ",".join(f'"{k}":{v}' for k, v in fields.items()) + "}"
    p = tmp_path / name
    p.write_text(f"[{obj}]" if name.endswith(".json") else obj + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("name", ["log.json", "log.jsonl"])
@pytest.mark.parametrize("start", [START, "1800000000"])      # a string start, or every time a number
@pytest.mark.parametrize("end", ["NaN", "Infinity", "-Infinity", "1e30", "-1e30", "1" + "0" * 29,
                                 "-9223372036854775808", "253402300800"])
def test_a_time_that_is_no_instant_is_timestamp_invalid(tmp_path, name, start, end):
    # NaN was a missing end (an open incident, credited to the month's end); ±Infinity and 1e30
    # wrapped in the cast to int64 (a RuntimeWarning, then also a missing end); 10^29 was
    # OverflowError [unexpected_error]
    log = _log(tmp_path, name, start=start, end=end)
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "json")
    assert_coded_failure(r, "timestamp_invalid")
    (p,) = json.loads(r.stdout)["problems"]
    assert (p["row"], p["column"]) == (1, "end"), p
    assert "RuntimeWarning" not in r.output


def test_epoch_seconds_inside_the_years_are_still_read(tmp_path):
    log = _log(tmp_path, "log.json", start="1800000000", end="1.8000036e9")
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["open_incidents"] == []


@pytest.mark.parametrize("cell,code", [("NaN", "gpus_affected_range"), ("Infinity", "gpus_affected_range"),
                                       ("1" + "0" * 5000, "gpus_affected_range")])
def test_not_a_gpu_count(tmp_path, cell, code):
    # 5,001 digits: Python's int() refused it (ValueError, [unexpected_error])
    log = _log(tmp_path, "log.json", impact='"degraded"', gpus_affected=cell)
    r = cli("credits", CONTRACT, log, "--period", "2027-01")
    assert_coded_failure(r, code)
    assert "log.json row 1, column gpus_affected" in r.output and "unexpected_error" not in r.output


@pytest.mark.parametrize("name", ["log.json", "log.jsonl"])
def test_lone_surrogate_is_read_as_replacement_character(tmp_path, name):
    # "\ud800" decodes to a str no UTF-8 writer takes: UnicodeEncodeError [unexpected_error]
    log = _log(tmp_path, name, id='"X\\ud800"', cause='"\\udc00 and \\ud83d\\ude00"',
               end='"2027-01-05T05:57:00Z"')
    out = tmp_path / "credits.csv"
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "csv", "-o", out)
    assert r.exit_code == 0, r.output
    assert "X\ufffd" in out.read_text(encoding="utf-8")
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    ids = {i for p in doc["periods"] for u in p["units"] for i in u["incidents"]}
    assert ids == {"X\ufffd"}
