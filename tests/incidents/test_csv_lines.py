"""A quoted cell that runs over line breaks where it must not (`calculators.csv_lines`): a
stray quote that would hide the incident rows after it, or a one-line value over lines, is a
file-level `csv_invalid` error naming the row, the column and the file lines, on every reading
path (Arrow, pandas, the background reading) and with --skip-bad-rows; a multi-line free-text
cause is read as before."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators.incidents as inc
from calculators import log_prefetch
from calculators.csv_lines import cells_over_lines, may_hold_breaks
from slaschema.errors import InputError

from .conftest import EXAMPLE_LOG

LINES = EXAMPLE_LOG.read_text(encoding="utf-8").splitlines()


def swallowing(first: int = 10, last: int = 14) -> str:
    """The example log with a quote opened in row `first`'s cause and closed in row `last`'s:
    rows first+1 .. last-1 and the start of row `last` become text of one cause cell."""
    lines = list(LINES)
    head, cause, ticket = lines[first].rsplit(",", 2)
    lines[first] = f'{head},"Fan module {cause},{ticket}'
    head, cause, ticket = lines[last].rsplit(",", 2)
    lines[last] = f'{head},{cause}",{ticket}'
    return "\n".join(lines) + "\n"


def reading_paths(path, lc, monkeypatch, **kw):
    """The log read through Arrow, through pandas only, and from the background reading."""
    yield lambda: inc.load_incidents(path, lc, **kw)
    with monkeypatch.context() as m:
        m.setattr(inc, "_read_csv_arrow", lambda *args: None)
        yield lambda: inc.load_incidents(path, lc, **kw)

    def prefetched():
        log_prefetch.start(path)
        return inc.load_incidents(path, lc, **kw)
    yield prefetched


@pytest.mark.parametrize("skip", [False, True])
def test_a_stray_quote_that_hides_incident_rows_is_refused(write, lc, monkeypatch, skip):
    path = write("log.csv", swallowing())
    for read in reading_paths(path, lc, monkeypatch, skip_bad_rows=skip):
        with pytest.raises(InputError) as e:
            read()
        (p,) = e.value.problems
        assert (p.code, p.row, p.column, p.line) == ("csv_invalid", 10, "cause", 11)
        assert "file lines 11-15" in p.message and "4 lines that read as incident rows (file lines 12, 13, 14, 15)" \
            in p.message
        assert p.value.startswith("Fan module") and p.fix and "\"\"" in p.fix


def test_the_hidden_rows_would_change_the_credits(write, lc, monkeypatch):
    """What the check guards against: with the cells split at the line breaks the same log
    has four more incidents (the rack outage INC-27011 among them)."""
    whole = inc.load_incidents(EXAMPLE_LOG, lc)
    path = write("log.csv", swallowing())
    monkeypatch.setattr(inc, "_refuse_cells_over_lines", lambda *args: None)
    hidden = inc.load_incidents(path, lc)
    assert len(whole.frame) - len(hidden.frame) == 4
    assert "INC-27011" in set(whole.frame["id"]) - set(hidden.frame["id"])


def test_a_short_row_sends_the_file_to_pandas_and_the_quote_is_still_found(write, lc, monkeypatch):
    text = swallowing() + "X9,node,r01-n01,2027-01-20T00:00:00Z\n"       # a short row: Arrow refuses it
    path = write("log.csv", text)
    with pytest.raises(InputError) as e:
        inc.load_incidents(path, lc)
    assert [(p.code, p.row) for p in e.value.problems] == [("csv_invalid", 10)]


@pytest.mark.parametrize("column, cell", [("id", '"INC-27003\nX"'), ("target", '"r04-n15\r\n"'),
                                          ("start", '"2027-01-06T18:09:00-06:00\r"')])
def test_a_one_line_value_over_lines_is_refused(write, lc, monkeypatch, column, cell):
    lines = list(LINES)
    header = lines[0].split(",")
    cells = lines[3].split(",")
    cells[header.index(column)] = cell
    lines[3] = ",".join(cells)
    path = write("log.csv", "\n".join(lines) + "\n")
    for read in reading_paths(path, lc, monkeypatch):
        with pytest.raises(InputError) as e:
            read()
        (p,) = [p for p in e.value.problems if p.code == "csv_invalid"]
        assert (p.row, p.column, p.line) == (3, column, 4) and "file lines 4-5" in p.message


def test_a_stray_quote_at_the_start_of_a_row_is_named_where_it_opens(write, lc, monkeypatch):
    text = "\n".join(LINES[:3] + ['"' + LINES[3]] + LINES[4:]) + "\n"
    path = write("log.csv", text)
    for read in reading_paths(path, lc, monkeypatch, skip_bad_rows=True):
        with pytest.raises(InputError) as e:
            read()
        assert [(p.code, p.row, p.column, p.line) for p in e.value.problems] == [("csv_invalid", 3, "id", 4)]


def test_a_multi_line_cause_is_read_as_text(write, lc, monkeypatch):
    cause = '"GPU fell off the bus (Xid 79),\nreseated, drained, RMA opened\r\nreplaced on 2027-01-06"'
    text = EXAMPLE_LOG.read_text(encoding="utf-8").replace("GPU fell off the bus (Xid 79)", cause, 1)
    path = write("log.csv", text)
    whole = inc.load_incidents(EXAMPLE_LOG, lc)
    for read in reading_paths(path, lc, monkeypatch):
        log = read()
        assert list(log.frame["id"]) == list(whole.frame["id"])
        assert "reseated, drained" in log.frame["cause"].iloc[0]


def test_a_quoted_log_with_blank_lines_and_no_line_breaks_in_cells_reads(write, lc, monkeypatch):
    rows = ['"%s",%s' % tuple(line.split(",", 1)) if i % 5 == 0 else line
            for i, line in enumerate(LINES[1:])]                                   # some ids quoted...
    rows = [x for row in rows for x in (row, "")][:-1]                             # ...blank lines between
    path = write("log.csv", "\r\n".join([LINES[0]] + rows) + "\r\n\r\n")
    whole = inc.load_incidents(EXAMPLE_LOG, lc)
    for read in reading_paths(path, lc, monkeypatch):
        log = read()
        assert list(log.frame["id"]) == list(whole.frame["id"])


def test_a_cell_over_lines_in_a_column_slakit_does_not_read_is_checked_too(write, lc, monkeypatch):
    lines = [LINES[0] + ",notes"] + [line + "," for line in LINES[1:]]
    lines[10] += '"see the rack'
    lines[13] += 'note"'
    path = write("log.csv", "\n".join(lines) + "\n")
    for read in reading_paths(path, lc, monkeypatch):
        with pytest.raises(InputError) as e:
            read()
        (p,) = [p for p in e.value.problems if p.code == "csv_invalid"]
        assert (p.row, p.column, p.line) == (10, "notes", 11) and "3 lines that read as incident rows" in p.message


_ENDS = st.sampled_from(["\n", "\r\n", "\r"])


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["a", "b", '"q"', '"x""y"']), st.booleans(), _ENDS), max_size=12),
       head_end=_ENDS, tail=st.lists(_ENDS, max_size=3))
def test_the_byte_counts_never_miss_a_cell_over_lines(rows, head_end, tail):
    """`may_hold_breaks` says False only where no cell holds a line break: a file of cells,
    blank lines, line ends of every kind, with the row count the readers give."""
    text = "id" + head_end
    n = 0
    for cell, blank_after, end in rows:
        text += cell + end + (end if blank_after else "")
        n += 1
    text += "".join(tail)
    data = text.encode()
    assert may_hold_breaks(data, n) is False
    if n:
        broken = data.replace(b'"q"', b'"q\nr"', 1)
        if broken != data:
            assert may_hold_breaks(broken, n) is True


def test_no_check_without_a_quote_character(write, lc, monkeypatch):
    """Arrow reads a file without a quote character with line breaks ending rows, so no cell
    holds one: the counts are not even taken."""
    calls = []
    monkeypatch.setattr(inc, "may_hold_breaks", lambda *args: calls.append(args) or False)
    plain = [line for line in LINES if '"' not in line]
    inc.load_incidents(write("plain.csv", "\n".join(plain) + "\n"), lc)
    assert calls == []
    plain[1] = '"%s",%s' % tuple(plain[1].split(",", 1))
    inc.load_incidents(write("quoted.csv", "\n".join(plain) + "\n"), lc)
    assert len(calls) == 1


def test_cells_over_lines_on_text_with_broken_quoting_says_nothing():
    """Quoting the `csv` module refuses (the readers then said what is wrong) gives no problem here."""
    assert cells_over_lines(b'id,scope,start\n"a"b",node,2027-01-01\n', "x.csv") == []


def test_swallowed_rows_with_times_in_iso_basic_form_are_found(write, lc):
    """The loader reads 20270120T082300-0600 as it reads 2027-01-20T08:23:00-06:00: a swallowed
    row with its times so written reads as a row too."""
    import re

    basic = re.sub(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})([+-]\d{2}):(\d{2})", r"\1\2\3T\4\5\6\7\8",
                   swallowing())
    assert basic != swallowing() and "20270120T" in basic
    path = write("log.csv", basic)
    with pytest.raises(InputError) as e:
        inc.load_incidents(path, lc)
    (p,) = e.value.problems
    assert (p.code, p.row, p.column) == ("csv_invalid", 10, "cause") and "4 lines that read as incident rows" \
        in p.message


def test_multi_line_causes_are_cleared_without_reading_the_file_again(write, lc, monkeypatch):
    """Where the line breaks of the cells Arrow read are all the file's extra lines, and none
    is a problem, the `csv` pass over the whole file is not made; where a column Arrow did not
    read holds one, it is."""
    calls = []
    real = inc.cells_over_lines
    monkeypatch.setattr(inc, "cells_over_lines", lambda *a: calls.append(a) or real(*a))
    cause = '"GPU fell off the bus (Xid 79),\nreseated, drained\r\nreplaced"'
    text = EXAMPLE_LOG.read_text(encoding="utf-8").replace("GPU fell off the bus (Xid 79)", cause, 1)
    inc.load_incidents(write("log.csv", text), lc)
    assert calls == []
    notes = [LINES[0] + ",notes"] + [line + ',"a\nb"' for line in LINES[1:]]
    inc.load_incidents(write("notes.csv", "\n".join(notes) + "\n"), lc)
    assert len(calls) == 1
