"""The loader's columns (`IncidentLog.columns`, what `slakit credits` reads) say what the log's
frame says, cell for cell, on the logs where the two are made apart: hostlist rows repeated,
rows skipped, empty time columns, a log read in the background in several Arrow pieces with
its columns converted in threads; and the pandas-free helpers the loader uses answer as the
pandas calls they replace."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calculators.incidents as inc
from calculators import log_csv, log_csv_plain, log_prefetch
from calculators.incidents import load_incidents
from calculators.log_columns import FrameColumns

TIMES = ("start", "end", "notice_at", "detected_at", "reported_at", "responded_at", "resolved_at")
TEXTS = ("id", "scope", "target", "impact", "category", "severity", "cause")
HEADER = ("id,scope,target,start,end,impact,gpus_affected,category,notice_at,severity,detected_at,"
          "reported_at,responded_at,resolved_at,cause,ticket\n")


def _row(k: int) -> str:
    node = f"r0{k % 4 + 1}-n{k % 17 + 1:02d}"
    target = f"r0{k % 4 + 1}-n[{k % 15 + 1:02d}-{k % 15 + 3:02d}]" if k % 7 == 0 else node
    impact, gpus = ("degraded", ("1", "02", "3")[k % 3]) if k % 5 == 0 else ("", "")
    day, hour = k % 80 // 28 + 1, k % 24
    at = f"2027-0{day}-{k % 28 + 1:02d}T{hour:02d}"
    resolved = "" if k % 3 == 0 else f"{at}:50:00Z"
    return (f"L{k},node,{target},{at}:00:00Z,{at}:40:00+00:00,{impact},{gpus},,,sev{k % 3 + 1},{at}:01:00Z,,"
            f"{at}:05:00+00:00,{resolved},{('fan', 'psu', '')[k % 3]},T{k}\n")


def assert_columns_match_frame(log) -> None:
    frame = log.frame
    want = FrameColumns(frame)
    assert len(log.columns) == len(frame)
    for c in (*TIMES, "row", "gpus_affected"):
        assert log.columns.ints(c, log_csv.NA).tolist() == want.ints(c, log_csv.NA).tolist(), c
    for c in TEXTS:
        codes, values = log.columns.coded(c)
        want_codes, want_values = want.coded(c)
        assert codes.tolist() == want_codes.tolist(), c
        assert values.tolist() == want_values.tolist(), c


@pytest.fixture
def big_log(tmp_path):
    """Over 50,000 rows (the column conversions run in threads), no quote character (the
    background read parses it in pieces), hostlists every seventh row, a time column empty."""
    path = tmp_path / "big.csv"
    path.write_text(HEADER + "".join(_row(k) for k in range(50_400)), encoding="utf-8")
    return path


def test_a_log_read_in_pieces_and_threads(big_log, lc, monkeypatch):
    # Arrow's reading (the one-pass split of plain cells is the test below)
    monkeypatch.setattr(log_csv_plain, "read_plain", lambda data: None)
    monkeypatch.setattr(inc, "read_plain", lambda data: None)
    monkeypatch.setitem(log_csv.read_csv_arrow.__kwdefaults__, "piece_size", 1 << 20)     # several Arrow chunks
    pieces = []
    real = log_csv.convert_columns

    def convert(table, *args, **kwargs):
        pieces.append(table.column("id").num_chunks)
        return real(table, *args, **kwargs)

    monkeypatch.setattr(log_csv, "convert_columns", convert)
    log_prefetch.start(big_log)
    log = load_incidents(big_log, lc)
    assert pieces and pieces[0] > 1                    # the background read made several chunks
    assert len(log.columns) > 50_400                   # hostlist rows repeated, one per node
    assert_columns_match_frame(log)
    assert log.frame["reported_at"].isna().all() and log.frame["resolved_at"].isna().any()
    assert log.frame["target"].iloc[:3].tolist() == ["r01-n01", "r01-n02", "r01-n03"]


def test_a_log_split_in_one_pass_in_two_halves(big_log, lc, monkeypatch):
    """The same log split by `read_plain` in the background, in two threads (one per half)."""
    monkeypatch.setattr(log_csv_plain, "TWO_THREADS_FROM", 1 << 16)
    halves = []
    real = log_csv_plain.kernels.compiled.split_plain

    def split(data, lo, hi, *a):
        halves.append((lo, hi))
        return real(data, lo, hi, *a)

    monkeypatch.setattr(log_csv_plain.kernels.compiled, "split_plain", split, raising=False)
    log_prefetch.start(big_log)
    log = load_incidents(big_log, lc)
    assert len(halves) == 2 and halves[0][1] == halves[1][0]
    assert len(log.columns) > 50_400
    assert_columns_match_frame(log)
    assert log.frame["target"].iloc[:3].tolist() == ["r01-n01", "r01-n02", "r01-n03"]


def test_skipped_rows_and_hostlists(write, lc):
    rows = [_row(k) for k in range(60)]
    rows[7] = rows[7].replace("2027-", "20x7-", 1)     # a hostlist row (k % 7 == 0) that is bad
    rows[10] = rows[10].replace(",02,", ",x,")          # a bad gpus_affected
    log = load_incidents(write("log.csv", HEADER + "".join(rows)), lc, skip_bad_rows=True)
    assert log.skipped_rows == [8, 11]
    assert_columns_match_frame(log)


@pytest.mark.parametrize("cell", ["8", "08", " 8 ", "8.0", "1e1", "-1", "inf", "nan", "x", "+2", "0x2", "１",
                                  "٣", "1_0", "9" * 15, "9" * 16, "1" * 400, "", "8.", "08.000", "0.0", ".0", "8.01",
                                  "8.0e0", "8.0 0", "9" * 15 + ".0", "9" * 16 + ".0"])
def test_gpu_counts_read_as_pandas_reads_them(cell):
    values = np.array([cell.strip(), "2", "3"], dtype=object)
    want = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    got = inc._numbers(values)      # noqa: SLF001 - the helper replacing pd.to_numeric
    assert np.array_equal(got, want, equal_nan=True)


def test_whole_decimal_gpu_counts_need_no_pandas(write, lc):
    """`2.0` (a count from a float column) is read as 2 without pandas' parser."""
    import sys

    log = load_incidents(write("log.csv", HEADER + _row(0).replace(",1,", ",1.0,", 1) + _row(5)), lc)
    assert log.frame["gpus_affected"].tolist() == [1, 1, 1, 3]      # (row 0 names three nodes)
    real = sys.modules["pandas"]
    try:
        sys.modules["pandas"] = None        # an import of pandas fails
        assert inc._numbers(np.array(["2.0", "08", "3.000"], dtype=object)).tolist() == [2.0, 8.0, 3.0]  # noqa: SLF001
    finally:
        sys.modules["pandas"] = real


def test_first_seen_and_unit_lookups_as_pandas():
    values = np.array(["b", None, "a", "b", float("nan"), "c", "a"], dtype=object)
    codes, uniques = inc._first_seen(values)      # noqa: SLF001
    want_codes, want_uniques = pd.factorize(values, use_na_sentinel=True)
    assert codes.tolist() == want_codes.tolist() and uniques.tolist() == list(want_uniques)
    units = ["r01-n01", "r01-n02", "r02-n01"]
    asked = np.array(["r01-n02", "nope", "r02-n01", None, "R01-N01"], dtype=object)
    got = inc.UnitIds(units).get_indexer(asked)
    assert got.tolist() == pd.Index(units).get_indexer(asked).tolist() == [1, -1, 2, -1, -1]
