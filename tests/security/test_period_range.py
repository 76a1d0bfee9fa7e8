"""A period outside what the engine computes is the period's error, not the log's.

`--month 1970-01` on a 2027 log said the *incident times* were out of range: 1970-01 starts
before the engine's earliest instant (1970-01-02 UTC, `engine.EARLIEST_S`). Every option that
names a period refuses such a value as a usage error (exit 2) naming the option, the value,
the computed range and the fix, with the code `period_out_of_range`."""

from __future__ import annotations

from pathlib import Path

import pytest

from calculators.engine import EARLIEST_S, LATEST_S, EngineError, compute
from calculators.periods import FIRST_MONTH, LAST_MONTH, month
from tests.hostile.conftest import cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"
RANGE = f"months {FIRST_MONTH} to {LAST_MONTH}"

COMMANDS = {
    "credits": ["credits", CONTRACT, LOG],
    "explain": ["explain", CONTRACT, LOG, "--unit", "r01-n07"],
    "review": ["review", CONTRACT, LOG, "-o", "/nonexistent/review.pdf"],
    "claim": ["claim", CONTRACT, LOG, "-o", "/nonexistent/claim.pdf"],
    "reconcile": ["reconcile", CONTRACT, LOG, LOG],
    "goodput": ["goodput", CONTRACT, "--sacct", "/nonexistent/sacct.txt", "--incidents", LOG],
}


def _refused(result, option: str, value: str) -> None:
    text = result.output
    assert result.exit_code == 2, text
    assert "[period_out_of_range]" in text and "Traceback" not in text
    assert option in text and repr(value) in text and RANGE in text
    assert "incident times" not in text


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("option,value", [("--month", "1970-01"), ("--period", "1970-01"), ("--month", "9997-12"),
                                          ("--period", "9999-12")])
def test_every_period_option_names_itself_the_value_and_the_range(command, option, value):
    _refused(cli(*COMMANDS[command], option, value), option, value)


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"explain"}))     # explain takes one month
@pytest.mark.parametrize("value", ["1970-Q1", "9997-Q4"])
def test_quarters_reaching_outside(command, value):
    _refused(cli(*COMMANDS[command], "--quarter", value), "--quarter", value)


def test_history_from_and_simulate_start():
    _refused(cli("credits", CONTRACT, LOG, "--period", "2027-01", "--history-from", "1970-01"), "--history-from",
             "1970-01")
    _refused(cli("simulate", CONTRACT, "--runs", "1", "--start", "1970-01"), "--start", "1970-01")
    r = cli("simulate", CONTRACT, "--runs", "1", "--start", "9997-06", "--months", "12")
    assert r.exit_code == 2 and "[period_out_of_range]" in r.output and "9998-05" in r.output, r.output


def test_the_first_and_last_computed_months_compute(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text(LOG.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    for label in (FIRST_MONTH, LAST_MONTH):
        r = cli("credits", CONTRACT, empty, "--month", label, "--format", "json")
        assert r.exit_code == 0, r.output
    assert cli("credits", CONTRACT, LOG, "--quarter", "1970-Q2").exit_code == 0


ZONES = ["UTC", "Etc/GMT-14", "Etc/GMT+12", "Pacific/Kiritimati", "Pacific/Pago_Pago", "America/Denver"]


def test_the_range_is_what_every_zone_computes():
    # FIRST_MONTH .. LAST_MONTH lie inside EARLIEST_S .. LATEST_S in every zone (UTC-12 .. UTC+14)
    assert all(month(1970, 2, z).start >= EARLIEST_S and month(9997, 11, z).end <= LATEST_S for z in ZONES)
    # and the months beyond do not in some zone (1970-01 in none, 9997-12 not in UTC)
    assert all(month(1970, 1, z).start < EARLIEST_S for z in ZONES)
    assert month(9997, 12, "UTC").end > LATEST_S


def test_as_of_after_the_last_instant_is_not_blamed_on_the_log():
    r = cli("credits", CONTRACT, LOG, "--month", "2027-01", "--as-of", "9998-06-01T00:00:00Z")
    assert r.exit_code == 2, r.output
    assert "[period_out_of_range]" in r.output and "--as-of" in r.output and "incident times" not in r.output


def test_a_period_far_from_the_log_names_the_periods():
    r = cli("credits", CONTRACT, LOG, "--month", "2400-01")
    assert r.exit_code == 1, r.output
    assert "[period_out_of_range]" in r.output and "2400-01" in r.output and "incident times span" not in r.output
    assert "[log_out_of_range]" not in r.output


@pytest.mark.parametrize("row, cell", [(3, "9997-12-30T00:00:00Z"), (5, "2400-01-01T00:00:00Z")])
def test_a_log_spanning_more_than_the_engine_computes_names_the_row(tmp_path, row, cell):
    """An end within 1970..9997 but 270 years or more after the log's other times: the row and
    column of the end of the span farther from the period, the value in UTC, the other end in
    the message; with --format json the problems document on stdout."""
    import csv
    import json

    rows = list(csv.reader(LOG.open(encoding="utf-8")))
    rows[row][rows[0].index("end")] = cell
    log = tmp_path / "log.csv"
    with log.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    r = cli("credits", CONTRACT, log, "--month", "2027-01")
    assert r.exit_code == 1, r.output
    assert f"log.csv row {row}, column end: incident times span" in r.output
    assert f"(got '{cell}')" in r.output and "start of row 1 (2027-01-05T09:12:00Z)" in r.output
    assert "[log_out_of_range]" in r.output
    r = cli("credits", CONTRACT, log, "--month", "2027-01", "--format", "json")
    (p,) = json.loads(r.stdout)["problems"]
    assert (p["code"], p["row"], p["column"], p["value"]) == ("log_out_of_range", row, "end", cell)


def test_engine_called_directly_names_the_period():
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    lc = load_contract(CONTRACT)
    with pytest.raises(EngineError, match=r"period 1970-01 starts before 1970-01-02.*\[period_out_of_range\]"):
        compute(lc, load_incidents(LOG, lc), ["1970-01"], support=False)


def test_simulated_months_from_a_late_effective_date(tmp_path):
    text = CONTRACT.read_text(encoding="utf-8")
    assert "effective: {from: 2027-01-01, to: 2028-12-31}" in text
    late = tmp_path / "late.yaml"
    late.write_text(text.replace("effective: {from: 2027-01-01, to: 2028-12-31}",
                                 "effective: {from: 9997-06-01, to: 9998-12-31}"), encoding="utf-8")
    for r in (cli("simulate", late, "--runs", "1"), cli("compare", late, CONTRACT, "--runs", "1")):
        assert r.exit_code == 2, r.output
        assert r.output.rstrip().endswith("[period_out_of_range]") and "9997-06 to 9998-05" in r.output
    assert cli("compare", late, CONTRACT, "--runs", "0").exit_code == 0


def test_simulated_months_that_reach_past_year_9999(tmp_path):
    # 9997-06 + 119 months is 10007-05: as text it sorted before 9997-11 and the run reached
    # year 9999 in the engine's months ([unexpected_error]); a late effective date likewise
    r = cli("simulate", CONTRACT, "--runs", "1", "--start", "9997-06", "--months", "120")
    assert r.exit_code == 2 and "[period_out_of_range]" in r.output and "10007-05" in r.output, r.output
    assert "unexpected_error" not in r.output
    late = tmp_path / "late.yaml"
    late.write_text(CONTRACT.read_text(encoding="utf-8").replace(
        "effective: {from: 2027-01-01, to: 2028-12-31}", "effective: {from: 9999-12-01, to: 9999-12-31}"),
        encoding="utf-8")
    for r in (cli("simulate", late, "--runs", "1"), cli("compare", late, CONTRACT, "--runs", "1")):
        assert r.exit_code == 2, r.output
        assert r.output.rstrip().endswith("[period_out_of_range]") and "9999-12 to 10000-11" in r.output


@pytest.mark.parametrize("command", ["credits", "reconcile", "review"])
def test_as_of_before_the_first_instant_is_a_usage_error(command):
    # it was taken: the documents wrote it as "1-01-01T00:00:00Z" (no ISO 8601) and open
    # incidents ended before they began
    fmt = ["--format", "json"] if command != "review" else []
    r = cli(*COMMANDS[command], "--quarter", "2027-Q1", "--as-of", "0001-01-01T00:00:00Z", *fmt)
    assert r.exit_code == 2, r.output
    assert "[period_out_of_range]" in r.output and "--as-of" in r.output and "1970-01-02" in r.output
    assert '"as_of"' not in r.output
