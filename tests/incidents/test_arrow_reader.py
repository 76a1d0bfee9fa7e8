"""The pyarrow CSV path gives exactly what the general (pandas) reader gives: the same frame
for good logs, the same problems for bad ones; files pyarrow refuses go to the pandas reader."""

from __future__ import annotations

import pandas as pd
import pytest

import calculators.incidents as inc
from calculators import log_csv
from slaschema.errors import InputError

HEADER = "id,scope,target,start,end,impact,gpus_affected,category,severity,notice_at,detected_at,cause\n"
ROWS = [
    "A1,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z,,,,,,,",
    "A2,node,r01-n02,2027-02-03T04:00:00-06:00,2027-02-03T17:30:00+05:30,degraded,2,,sev2,,,fan",
    "A3,rack,r02,2027-02-28T23:59:59Z,,down,,maintenance,SEV1,2027-02-20T00:00:00Z,2027-02-28T23:59:59Z,",
    ("A4,node,r01-n[03-05],2027-03-01T00:00:00Z,2027-03-01T02:00:00Z,,,security_patch,,,,"
     "a cause text that is longer than thirty-two characters"),
    "A5, node , r01-n06 ,2027-03-02T00:00:00Z,2027-03-02T00:10:00Z, Down ,,unplanned, sev3 ,,,",
    "A6,cluster,c1,2027-03-03T00:00:00Z,2027-03-03T00:05:00Z,,,customer_caused,,,,",
    "A7,site,dfw1,2027-01-31T23:00:00Z,2027-02-01T01:00:00Z,,,unknown_kind,,,,",
]


def frames(path, lc, **kw):
    """(log read the default way, log read by pandas only, whether the fast reader was used)."""
    used = []
    real = inc._read_csv_arrow

    def spy(*args):
        got = real(*args)
        used.append(got is not None)
        return got

    inc._read_csv_arrow = spy
    try:
        fast = inc.load_incidents(path, lc, **kw)
    finally:
        inc._read_csv_arrow = real
    inc._read_csv_arrow = lambda *args: None
    try:
        slow = inc.load_incidents(path, lc, **kw)
    finally:
        inc._read_csv_arrow = real
    return fast, slow, used == [True]


def same(a, b) -> None:
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert a.skipped == b.skipped and a.warnings == b.warnings


@pytest.mark.parametrize("text, fast_used", [
    (HEADER + "\n".join(ROWS) + "\n", True),
    (HEADER + "\n".join(ROWS), True),                                    # no final newline
    ("\ufeff" + HEADER + "\n".join(ROWS) + "\n\n", True),                 # BOM, blank line at the end
    (HEADER + ROWS[0] + "\n\n" + ROWS[1] + "\n", True),                   # blank line between rows
    (HEADER.replace("cause", "cause,extra") + "\n".join(r + ",x" for r in ROWS) + "\n", True),  # unknown column
    (" id , scope ,target,start\nB1,node,r01-n01,2027-02-03T10:00:00Z\n", True),  # padded header names
    (HEADER + "\n".join(ROWS).replace("\n", "\r\n"), True),               # CRLF
    ("\ufeff" + (HEADER + "\n".join(ROWS)).replace("\n", "\r\n") + "\r\n", True),   # BOM and CRLF
    (HEADER + '"Q1",node,r01-n01,2027-02-03T10:00:00Z,,,,,,,,"a, b"\n', True),    # quoting
    (HEADER + '"Q2",node,r01-n01,2027-02-03T10:00:00Z,,,,,,,,"say ""hi""\non two lines"\n', True),
    (HEADER + "Ü1,node,r01-n01,2027-02-03T10:00:00Z,,,,,,,,Lüfter defekt\n", True),   # UTF-8
    (HEADER + "W1\u2003,node,r01-n01\u3000,2027-02-03T10:00:00Z,,,,,,,,\u00a0fan\n", True),   # Unicode spaces
])
def test_good_logs_read_the_same(write, lc, text, fast_used):
    path = write("log.csv", text)
    fast, slow, used = frames(path, lc)
    assert used is fast_used
    same(fast, slow)
    assert len(fast.frame) >= 1


@pytest.mark.parametrize("block", [256, 1000, 1 << 22])
def test_blocks_give_the_same_log(write, lc, block, monkeypatch):
    """pyarrow parses a block at a time (in threads); any block size gives the same log and
    the same codes, and a line with a comma too many is still noticed."""
    monkeypatch.setattr(inc, "_BLOCK_SIZE", block)
    text = HEADER + "\n".join(r.replace("A", f"A{i}-", 1) for i in range(3) for r in ROWS) + "\n"
    fast, slow, used = frames(write("log.csv", text), lc)
    assert used
    same(fast, slow)
    assert len(fast.frame) == 3 * (len(ROWS) + 2)          # A4 names three nodes
    ragged = text + "Z1,node,r01-n01,2027-02-03T10:00:00Z,,,,,,,,,\n"
    assert inc._read_csv_arrow(write("ragged.csv", ragged).read_bytes()) is None


@pytest.mark.parametrize("cell", [
    "2027-02-03T10:00:00.5Z",            # fractions
    "2027-02-03 10:00:00Z",              # space separator
    "2027-02-03T10:00:00+0530",          # offset without colon
    "2027-02-03T10:00Z",                 # no seconds
    "2024-02-29T10:00:00Z",              # leap day
])
def test_other_time_forms_are_parsed_the_general_way(write, lc, cell):
    text = HEADER + f"C1,node,r01-n01,{cell},2027-02-04T00:00:00Z,,,,,,,\n" + ROWS[0] + "\n"
    fast, slow, used = frames(write("log.csv", text), lc)
    assert used
    same(fast, slow)


def test_times_are_exact_epoch_seconds(write, lc):
    text = (HEADER + "T1,node,r01-n01,2027-03-14T01:59:59-06:00,2027-03-14T03:00:00-05:00,,,,,,,\n"
            "T2,node,r01-n02,2000-02-29T00:00:00Z,2100-03-01T00:00:00+00:00,,,,,,,\n")
    fast, slow, used = frames(write("log.csv", text), lc)
    assert used
    same(fast, slow)
    f = fast.frame.set_index("id")
    assert int(f.loc["T1", "start"]) == int(pd.Timestamp("2027-03-14T07:59:59Z").timestamp())
    assert int(f.loc["T1", "end"]) == int(pd.Timestamp("2027-03-14T08:00:00Z").timestamp())
    assert int(f.loc["T2", "start"]) == 951782400
    assert int(f.loc["T2", "end"]) == 4107542400


@pytest.mark.parametrize("bad", [
    ",node,r01-n01,2027-02-03T10:00:00Z,,,,,,,,",                        # missing id
    "A1,node,r01-n09,2027-02-03T10:00:00Z,,,,,,,,",                       # duplicate id
    "X,node,r01-n01,2027-02-30T10:00:00Z,,,,,,,,",                        # no such day
    "X,node,r01-n01,2027-02-03T24:00:00Z,,,,,,,,",                        # no such hour
    "X,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T09:00:00Z,,,,,,,",    # end before start
    "X,node,r01-n01,2027-02-03T10:00:00,,,,,,,,",                         # naive
    "X,node,r99-n01,2027-02-03T10:00:00Z,,,,,,,,",                        # unknown target
    "X,node,r01-n01,2027-02-03T10:00:00Z,,degraded,9,,,,,",               # too many GPUs
    "X,node,r01-n01,2027-02-03T10:00:00Z,,,,,sev9,,,",                    # unknown severity
])
def test_bad_logs_report_the_same_problems(write, lc, bad):
    path = write("log.csv", HEADER + "\n".join(ROWS) + "\n" + bad + "\n")
    got = []
    for force_slow in (False, True):
        real = inc._read_csv_arrow
        if force_slow:
            inc._read_csv_arrow = lambda *args: None
        try:
            with pytest.raises(InputError) as ei:
                inc.load_incidents(path, lc)
        finally:
            inc._read_csv_arrow = real
        got.append([p.to_json() for p in ei.value.problems])
    assert got[0] == got[1]
    assert any(p["severity"] == "error" for p in got[0])
    fast, slow, _ = frames(path, lc, skip_bad_rows=True)
    same(fast, slow)
    assert fast.skipped and fast.frame["id"].nunique() == len(ROWS)


def test_ragged_rows_are_left_to_pandas(write, lc):
    """pyarrow refuses a row with another number of cells; pandas fills a short row with
    empty cells and refuses a long one (csv_invalid)."""
    short = write("short.csv", HEADER + ROWS[0] + "\nX,node,r01-n01,2027-02-03T10:00:00Z,,,,,,,\n")
    fast, slow, used = frames(short, lc)          # a cell short: pandas reads it as empty
    assert not used
    same(fast, slow)
    long = write("long.csv", HEADER + ROWS[0] + "\nX,node,r01-n01,2027-02-03T10:00:00Z,,,,,,,,,\n")
    with pytest.raises(InputError) as ei:
        inc.load_incidents(long, lc)
    assert [p.code for p in ei.value.problems] == ["csv_invalid"]


def test_assume_tz_applies_to_naive_columns_only(write, lc):
    text = HEADER + "N1,node,r01-n01,2027-02-03T10:00:00,2027-02-03T17:00:00Z,,,,,,,\n"
    fast, slow, used = frames(write("log.csv", text), lc, assume_tz="America/Chicago")
    assert used
    same(fast, slow)
    assert int(fast.frame["start"].iloc[0]) == int(pd.Timestamp("2027-02-03T16:00:00Z").timestamp())


def test_bytes_that_are_not_utf8_are_read_by_pandas_with_replacement(tmp_path, lc):
    path = tmp_path / "latin1.csv"
    path.write_bytes((HEADER + ROWS[0] + "\n").encode() + b"L1,node,r01-n02,2027-02-03T10:00:00Z,,,,,,,,L\xfcfter\n")
    fast, slow, used = frames(path, lc)
    assert not used
    same(fast, slow)
    assert fast.frame["cause"].iloc[1] == "L\ufffdfter"


def test_whitespace_is_what_str_strip_removes():
    assert set(log_csv._WHITESPACE) == {chr(c) for c in range(0x110000) if chr(c).isspace()}


def test_a_repeated_column_is_reported_by_the_general_reader(write, lc):
    path = write("log.csv", "id,scope,target,start,scope\nA,node,r01-n01,2027-02-03T10:00:00Z,node\n")
    assert inc._read_csv_arrow(path.read_bytes()) is None
    with pytest.raises(InputError) as ei:
        inc.load_incidents(path, lc)
    assert [(p.code, p.column) for p in ei.value.problems] == [("duplicate_column", "scope")]


@pytest.mark.parametrize("extra, skip", [
    ("", False),
    ("\nA2,node,r01-n03,2027-02-04T00:00:00Z,2027-02-04T03:00:00Z,,,,,,,"      # a repeated id, skipped
     "\nX,node,r99-n01,2027-02-03T10:00:00Z,,,,,,,,", True),                       # an unknown target, skipped
])
def test_the_credits_are_the_same_from_either_reader(write, lc, extra, skip):
    """The Arrow reader's ids stay Arrow strings (`log_csv.TextValues`) through skipped rows,
    hostlists and the engine; the whole credits document (incident lists included) is the
    same as from logs read by pandas."""
    from calculators.engine import compute
    from calculators.periods import parse_periods

    path = write("log.csv", HEADER + "\n".join(ROWS) + extra + "\n")
    fast, slow, used = frames(path, lc, skip_bad_rows=skip)
    assert used and bool(fast.skipped) == skip
    fast_ids, slow_ids = fast.coded("id")[1], slow.coded("id")[1]
    assert isinstance(fast_ids, log_csv.TextValues) != skip       # (skipping rows makes a subset of strings)
    assert list(fast_ids) == list(slow_ids)
    periods = parse_periods(["2027-Q1"], lc.model.contract.timezone)
    docs = [compute(lc, log, periods).dumps() for log in (fast, slow)]
    assert docs[0] == docs[1]
    assert '"A4"' in docs[0]
