"""`IncidentLog.coded`: the loader's codes of the text columns are those pandas would give
(same cells, ids in order of first appearance), for every reader and after skipped rows and
hostlist expansion; a log made from another frame (`with_frame`) is coded afresh."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calculators.incidents as inc
from calculators.incidents import IncidentLog, load_incidents

from .conftest import EXAMPLE_LOG

COLUMNS = ("id", "scope", "target", "impact", "category", "severity", "cause")

ROWS = ("id,scope,target,start,end,impact,category,severity\n"
        "B1,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z,,,\n"
        "B2, Node ,r01-n[02-04],2027-02-03T10:00:00Z,2027-02-03T11:00:00Z, Down ,maintenance,SEV2\n"
        "B3,node,nope,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z,,,\n"
        "B1,rack,r02,2027-02-04T10:00:00Z,,down, unplanned ,sev1\n"
        "B4,rack,r02,2027-02-05T10:00:00Z,2027-02-05T11:00:00Z,down,,sev1\n")


def assert_codes_match(log: IncidentLog) -> None:
    for c in COLUMNS:
        codes, uniques = log.coded(c)
        want_codes, want_uniques = pd.factorize(log.frame[c].to_numpy(dtype=object), use_na_sentinel=True)
        cells = np.append(uniques, None)[codes]
        want = np.append(np.asarray(want_uniques, dtype=object), None)[want_codes]
        assert cells.tolist() == want.tolist(), c
        assert len(set(uniques.tolist())) == len(uniques), c
        if c == "id":
            assert codes.tolist() == want_codes.tolist()


@pytest.mark.parametrize("fast", [True, False])
def test_codes_of_the_example_log(lc, fast, monkeypatch):
    if not fast:
        monkeypatch.setattr(inc, "_read_csv_arrow", lambda *args: None)
    log = load_incidents(EXAMPLE_LOG, lc)
    assert {"id", "scope", "impact", "category", "severity"} <= log.columns.coded_columns
    assert_codes_match(log)


def test_codes_after_skipped_rows_and_hostlists(write, lc):
    log = load_incidents(write("log.csv", ROWS), lc, skip_bad_rows=True)
    assert log.skipped_rows == [3, 4]
    assert log.frame["id"].tolist() == ["B1", "B2", "B2", "B2", "B4"]
    assert_codes_match(log)
    assert log.coded("scope")[1].tolist() == ["node", "rack"]


def test_json_lines_log(write, lc):
    log = load_incidents(write("log.jsonl", '{"id": "J1", "scope": "node", "target": "r01-n01", '
                                            '"start": "2027-02-03T10:00:00Z", "severity": "Sev3"}\n'), lc)
    assert_codes_match(log)


def test_a_replaced_column_is_coded_again(lc):
    log = load_incidents(EXAMPLE_LOG, lc)
    frame = log.frame.copy()
    frame["scope"] = pd.Series(["site"] * len(frame), dtype=str)
    other = log.with_frame(frame)
    codes, uniques = other.coded("scope")
    assert uniques.tolist() == ["site"] and (codes == 0).all()
    assert log.coded("scope")[1].tolist() == ["node", "rack", "cluster", "site"]
