"""A JSON incident log whose object gives a key twice (or two keys the same but for white
space around them) is refused with [json_duplicate_key] naming the file and row, for credits
(also with --skip-bad-rows) and reconcile: readers disagree on which of the two values counts,
so neither is taken. Never [unexpected_error]."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile.conftest import assert_coded_failure, cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
OURS = "id,scope,target,start,end\nI1,node,r01-n07,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z\n"
GOOD = '"id": "{i}", "scope": "node", "target": "r01-n0{i}", "start": "2027-01-05T03:00:00Z"'
LATE, EARLY = '"2027-01-05T09:00:00Z"', '"2027-01-05T03:10:00Z"'

LOGS = {   # name: (text, rows refused, the key named)
    "twice.jsonl": ("{" + GOOD.format(i=1) + "}\n{" + GOOD.format(i=2) + f', "end": {LATE}, "end": {EARLY}' + "}\n",
                    [2], "end"),
    "twice.json": ("[{" + GOOD.format(i=1) + f', "end": {LATE}' + "}, {" + GOOD.format(i=2)
                   + f', "target": "r01-n09", "end": {LATE}' + "}]", [2], "target"),
    "spaced.jsonl": ("{" + GOOD.format(i=1) + f', "end": {LATE}, " end ": {EARLY}' + "}\n{" + GOOD.format(i=2)
                     + "}\n{" + GOOD.format(i=3) + f', "end ": {LATE}, "end": {EARLY}' + "}\n", [1, 3], "end"),
    "spaced.json": ("[{" + GOOD.format(i=1) + f', "\\tend": {LATE}, "end": {EARLY}' + "}]", [1], "end"),
    "null.jsonl": ("{" + GOOD.format(i=1) + f', "end": null, " end": {EARLY}' + "}\n", [1], "end"),
}


@pytest.mark.parametrize("name", sorted(LOGS))
def test_a_key_given_twice_is_refused(tmp_path, name):
    text, rows, key = LOGS[name]
    log = tmp_path / name
    log.write_text(text, encoding="utf-8")
    ours = tmp_path / "ours.csv"
    ours.write_text(OURS, encoding="utf-8")
    for args in (("credits", CONTRACT, log, "--period", "2027-01"),
                 ("credits", CONTRACT, log, "--period", "2027-01", "--skip-bad-rows"),
                 ("reconcile", ours, log), ("reconcile", CONTRACT, ours, log)):
        r = cli(*args)
        assert_coded_failure(r, "json_duplicate_key")
        assert "unexpected_error" not in r.output and "Traceback" not in r.output
        for row in rows:
            assert f"{name} row {row}" in r.output and f"'{key}'" in r.output, r.output
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "json")
    doc = json.loads(r.output)
    assert doc["format"] == "slakit-problems/1"
    assert [(p["code"], p["row"], p["value"]) for p in doc["problems"]] == [("json_duplicate_key", row, key)
                                                                             for row in rows]


def test_one_key_spelled_two_ways_in_different_objects_is_a_column_named_twice(tmp_path):
    """`end` in one object and ` end` in another are one column given two names: the column
    check reports it, as for a CSV header naming a column twice."""
    log = tmp_path / "split.jsonl"
    log.write_text("{" + GOOD.format(i=1) + f', "end": {LATE}' + "}\n{" + GOOD.format(i=2) + f', " end": {LATE}'
                   + "}\n", encoding="utf-8")
    r = cli("credits", CONTRACT, log, "--period", "2027-01")
    assert_coded_failure(r, "duplicate_column")
    assert "'end'" in r.output and "unexpected_error" not in r.output


def test_distinct_keys_and_nested_values_read_as_before(tmp_path):
    """Objects with distinct keys are read as they were; a key given twice inside a nested
    value is refused as that value is (a cell must be a plain value), not as a duplicate key."""
    log = tmp_path / "ok.jsonl"
    log.write_text("{" + GOOD.format(i=1) + f', "end": {LATE}' + "}\n", encoding="utf-8")
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["open_incidents"] == []
    nested = tmp_path / "nested.jsonl"
    nested.write_text("{" + GOOD.format(i=1) + ', "end": {"a": 1, "a": 2}}\n', encoding="utf-8")
    r = cli("credits", CONTRACT, nested, "--period", "2027-01")
    assert r.exit_code == 1 and "json_duplicate_key" not in r.output and "unexpected_error" not in r.output
    assert "timestamp_invalid" in r.output, r.output
