"""Inputs that printed a traceback: each now ends with exit 1 (2 for a bad command-line
value, the usage-error status) and a coded problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile.conftest import assert_coded_failure, cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"
HEADER = LOG.read_text(encoding="utf-8").splitlines()[0]


def _edit(tmp_path: Path, old: str, new: str) -> Path:
    text = CONTRACT.read_text(encoding="utf-8")
    assert old in text
    p = tmp_path / "c.yaml"
    p.write_text(text.replace(old, new, 1), encoding="utf-8")
    return p


def test_huge_duration(tmp_path):
    assert_coded_failure(cli("validate", _edit(tmp_path, "min_outage: 5m", "min_outage: 99999999999d")),
                         "duration_too_large")


@pytest.mark.parametrize("value,code", [("1e99999999", "number_too_large"), ("'1e99999999'", "money_too_large"),
                                        ("1e-99999999", "number_too_large"), ("'1e-99999999'", "money_invalid"),
                                        ("0." + "1" * 60, "money_invalid")])
def test_absurd_money(tmp_path, value, code):
    c = _edit(tmp_path, "per_gpu_hour: 3.25", f"per_gpu_hour: {value}")
    assert_coded_failure(cli("validate", c), code)
    assert_coded_failure(cli("credits", c, LOG, "--period", "2027-01"), code)


def test_json_log_with_an_object_as_scope(tmp_path):
    log = tmp_path / "log.json"
    log.write_text(json.dumps([{"id": "a", "scope": {}, "target": ["r01-n01"], "start": "2027-01-05T03:00:00Z",
                                "end": "2027-01-05T04:00:00Z"}]), encoding="utf-8")
    assert_coded_failure(cli("credits", CONTRACT, log, "--period", "2027-01"), "unknown_scope")


def test_json_lines_log_with_nested_values(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": {"x": 1}, "scope": "node", "target": "r01-n01",
                               "start": {"t": 1}, "end": "2027-01-05T04:00:00Z"}) + "\n", encoding="utf-8")
    assert_coded_failure(cli("credits", CONTRACT, log, "--period", "2027-01"))


def _usage_error(result, code: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and f"[{code}]" in result.output


def test_period_beyond_year_9998():
    _usage_error(cli("credits", CONTRACT, LOG, "--period", "9999-12"), "period_out_of_range")
    _usage_error(cli("review", CONTRACT, LOG, "--quarter", "9999-Q4", "-o", "/nonexistent/x.pdf"),
                 "period_out_of_range")


def test_history_from_year_one():
    _usage_error(cli("credits", CONTRACT, LOG, "--period", "2027-01", "--history-from", "0001-01"),
                 "period_out_of_range")


def test_open_incident_starting_after_year_9999_begins_is_left_out_quietly(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text(HEADER + "\nI1,node,r01-n01,9999-12-31T23:59:59-12:00,,,,,,,,,,,x,\n", encoding="utf-8")
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "json")
    assert r.exit_code == 0 and "Traceback" not in r.output


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00-12:00"])
def test_incident_in_year_one(tmp_path, when):
    log = tmp_path / "log.csv"
    log.write_text(HEADER + f"\nI1,node,r01-n01,{when},,,,,,,,,,,x,\n", encoding="utf-8")
    out = tmp_path / "credits.json"
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "json", "-o", out)
    assert_coded_failure(r)
    assert "[log_out_of_range]" in r.output or "[timestamp_invalid]" in r.output or "timestamp" in r.output
    assert not out.exists()
    assert_coded_failure(cli("review", CONTRACT, log, "--quarter", "2027-Q1", "-o", tmp_path / "r.pdf"))
    assert not (tmp_path / "r.pdf").exists()


def test_incident_time_out_of_range_names_file_row_column_and_value(tmp_path):
    # the engine's refusal said only "incident times before 1970-01-02 or after 9997-12-31"
    # (no file, row or column), and with --format json was no problems document
    log = tmp_path / "log.csv"
    rows = ["I1,node,r01-n01,2027-01-05T00:00:00Z,2027-01-05T01:00:00Z,,,,,,,,,,x,",
            "I2,node,r01-n02,2027-01-06T00:00:00Z,9999-12-31T23:59:59Z,,,,,,,,,,x,",
            "I3,node,r01-n03,0000-01-01T00:00:00Z,2027-01-06T00:00:00Z,,,,,,,,,,x,"]
    log.write_text(HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    r = cli("credits", CONTRACT, log, "--period", "2027-01")
    assert_coded_failure(r, "log_out_of_range")
    assert f"{log} row 2, column end:" in r.output and "'9999-12-31T23:59:59Z'" in r.output, r.output
    assert "1 more such row" in r.output and "fix:" in r.output
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "json")
    assert r.exit_code == 1, r.output
    (p,) = json.loads(r.stdout)["problems"]
    assert (p["code"], p["file"], p["row"], p["column"], p["value"]) == (
        "log_out_of_range", str(log), 2, "end", "9999-12-31T23:59:59Z")
    log.write_text(HEADER + "\n" + rows[2] + "\n", encoding="utf-8")
    r = cli("explain", CONTRACT, log, "--period", "2027-01", "--unit", "r01-n03")
    assert_coded_failure(r, "log_out_of_range")
    assert "row 1, column start:" in r.output and "'0000-01-01T00:00:00Z'" in r.output, r.output
    from calculators.engine import EngineError, compute
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    lc = load_contract(CONTRACT)
    with pytest.raises(EngineError):         # still an EngineError to Python callers
        compute(lc, load_incidents(log, lc), ["2027-01"], support=False)


def test_import_csv_map_with_an_unknown_strptime_directive(tmp_path):
    m = (REPO / "examples" / "ticket-map.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "map.yaml"
    bad.write_text(m.replace('format: "%m/%d/%Y %H:%M"', 'format: "%Q"'), encoding="utf-8")
    export = tmp_path / "export.csv"
    export.write_text("Number,Level,Configuration item,Fault start,Restored,Type,Priority,Short description\n"
                      "INC1,Node,r01-n01,01/05/2027 03:00,01/05/2027 04:00,Incident,P1 - Critical,x\n")
    out = tmp_path / "out.csv"
    assert_coded_failure(cli("import", "csv", export, "--map", bad, "-o", out), "map_invalid")
    assert not out.exists()


def test_watch_with_a_reason_time_in_year_one(tmp_path, monkeypatch):
    from calculators.watch import parse_sinfo

    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    obs = parse_sinfo("gpu01|drained|0001-01-01T00:00:00|bad dimm\ngpu02|down|9999-12-31T23:59:59|x\n")
    assert obs["gpu01"].since is None and obs["gpu02"].since is None


def test_simulate_with_a_huge_rate(tmp_path):
    model = (REPO / "examples" / "failure-model.yaml").read_text(encoding="utf-8")
    for rate in ("1e300", "100000000"):
        p = tmp_path / f"m{rate}.yaml"
        p.write_text(model.replace("rate_per_1000_unit_days: 33 ", f"rate_per_1000_unit_days: {rate} "),
                     encoding="utf-8")
        # 1e300 is refused as a number already (number_too_large); 1e8 by the simulation budget
        r = cli("simulate", CONTRACT, "--failure-model", p, "--runs", "2", "--months", "1")
        assert_coded_failure(r, "number_too_large" if rate == "1e300" else "simulation_too_large")
        assert f"{p}:" in r.output and "<input>" not in r.output, r.output      # the model's file is named


def test_an_unknown_failure_model_names_the_option():
    r = cli("simulate", CONTRACT, "--failure-model", "nope", "--runs", "2")
    assert_coded_failure(r, "failure_model_unknown")
    assert r.output.startswith("--failure-model: unknown failure model 'nope'") and "<input>" not in r.output


def test_unexpected_errors_end_as_one_coded_line(monkeypatch):
    """The last guard: an exception no command turned into a problem is one line, exit 1."""
    import slaschema.summary

    def boom(*a, **kw):
        raise RuntimeError("boom\x1b[31m")

    monkeypatch.setattr(slaschema.summary, "summary", boom)
    r = cli("show", CONTRACT)
    assert_coded_failure(r, "unexpected_error")
    assert "\x1b" not in r.output


def test_an_empty_yaml_file_gets_the_fix_of_its_own_kind(tmp_path):
    # every empty YAML file was told to start from a contract template (slakit init)
    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")
    export = REPO / "tests" / "fixtures" / "tickets" / "servicedesk_export.csv"
    for args, fix in ((("validate", empty), "slakit init --template"),
                      (("import", "csv", export, "--map", empty, "-o", tmp_path / "o.csv"), "ticket-map.yaml"),
                      (("simulate", CONTRACT, "--failure-model", empty, "--runs", "1"), "--show-model"),
                      (("accept", "evaluate", CONTRACT, tmp_path, "--waivers", empty), "waivers:")):
        r = cli(*args)
        assert_coded_failure(r, "empty_file")
        assert fix in r.output, r.output
        assert args[0] == "validate" or "slakit init" not in r.output, r.output
