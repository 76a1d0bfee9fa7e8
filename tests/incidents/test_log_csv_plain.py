"""The one-pass split of a log of plain cells (`calculators.log_csv_plain.read_plain`) against
its definition, Arrow's CSV reader and the column conversions (`read_csv_arrow`, `text_column`,
`fast_times`): on every file it reads it gives the same rows, codes, dictionaries and seconds,
in one thread or in two halves; every file it does not read (quotes, ragged rows, lone carriage
returns, other times, bytes that are not UTF-8) it leaves to Arrow with None; and the loader
reports the same problems, with the cells as written, whichever of the two read the file."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calculators.incidents as inc
from calculators import log_csv_plain
from calculators.log_csv import TIME_COLUMNS, fast_times, read_csv_arrow, text_column
from calculators.log_csv_plain import read_plain
from slaschema.errors import InputError

from .test_arrow_reader import HEADER, ROWS, same

pytest.importorskip("calculators._kernels", reason="the compiled kernels were not built (no C compiler)")


def _arrow_columns(data: bytes) -> tuple[int, dict] | None:
    """(rows, {column: codes and dictionary, or seconds}) as Arrow's reading gives them."""
    got = read_csv_arrow(data)
    if got is None:
        return None
    table, raw_names, names, _ = got
    out = {}
    for c in names:
        if c not in log_csv_plain.COLUMNS:
            continue
        col = table.column(raw_names[c])
        if c in TIME_COLUMNS:
            out[c] = fast_times(col)
        else:
            t = text_column(col, lazy=c == "id")
            out[c] = (t.codes.tolist(), t.dictionary.to_pylist(), list(np.asarray(t.uniques)))
    return table.num_rows, out


def _plain_columns(plain) -> tuple[int, dict]:
    out = {}
    for (kind, c), v in plain.converted.items():
        out[c] = v if kind == "times" else (v.codes.tolist(), v.dictionary.to_pylist(), list(np.asarray(v.uniques)))
    return plain.n, out


def _agree(data: bytes) -> bool:
    """Whether read_plain read `data` (asserting it read what Arrow reads)."""
    plain = read_plain(data)
    if plain is None:
        return False
    want = _arrow_columns(data)
    assert want is not None, "read in one pass, refused by Arrow"
    n, cols = _plain_columns(plain)
    assert n == want[0]
    assert set(cols) == set(want[1])
    for c, v in want[1].items():
        if c in TIME_COLUMNS:
            if v is None:           # a form Arrow's cast reads and the pass does not: it must have refused
                raise AssertionError(f"{c}: read in one pass where the fast times are not")
            assert cols[c].tolist() == v.tolist(), c
        else:
            assert cols[c] == v, c
    # the ids' column kept as text is Arrow's column
    if "id" in plain.raw_names:
        assert plain.table.column(plain.raw_names["id"]).to_pylist() == \
            read_csv_arrow(data)[0].column(plain.raw_names["id"]).to_pylist()
    return True


@pytest.fixture(params=["one thread", "two halves"])
def halves(request, monkeypatch):
    if request.param == "two halves":
        monkeypatch.setattr(log_csv_plain, "TWO_THREADS_FROM", 0)
    return request.param


def test_the_example_rows_are_read_as_arrow_reads_them(halves):
    data = (HEADER + "\n".join(ROWS) + "\n").encode()
    assert _agree(data)


CELLS = {
    "id": ["A1", "A2", "A1", " A3 ", "", "Ä4", "INC-\u200b5", "x" * 40],
    "scope": ["node", "rack", "NODE", " node", "", "site", "cluster"],
    "target": ["r01-n01", "r01-n02", "r01-n[01-03]", "r02", "", "r01-n01 ", "c1", "zółw", "节点-1"],
    "start": ["2027-02-03T10:00:00Z", "2027-02-03T04:00:00-06:00", "2027-02-28T23:59:59+05:30", ""],
    "end": ["2027-02-03T11:00:00Z", "", "2027-03-01T00:00:00Z", "2027-02-03T17:30:00+05:30"],
    "impact": ["", "down", "degraded", "Degraded "],
    "gpus_affected": ["", "2", "02", " 1", "x"],
    "cause": ["", "fan", "psu", "fan ", "ventilátor", "a" * 20, "\t"],
}
ODD_TIMES = ["2027-02-03 10:00:00Z", "2027-02-03T10:00:00.5Z", "2027-02-30T10:00:00Z", "2027-02-03t10:00:00z",
             "2027-02-03T10:00:00", "1600-01-01T00:00:00Z", "2027-02-03T24:00:00Z", "x"]


@st.composite
def logs(draw, odd: bool = False) -> bytes:
    names = draw(st.lists(st.sampled_from(sorted(CELLS)), min_size=1, max_size=len(CELLS), unique=True))
    if odd and draw(st.booleans()):
        names.insert(draw(st.integers(0, len(names))), "extra")        # a column the format does not know
    rows = []
    for _ in range(draw(st.integers(1, 30))):
        cells = []
        for c in names:
            pool = CELLS.get(c, ["", "e", " e e "])
            if len(names) == 1 and not odd:
                pool = [v for v in pool if v]           # (a row of one empty cell is an empty line: no row)
            if odd and c in TIME_COLUMNS and draw(st.integers(0, 9)) == 0:
                pool = ODD_TIMES
            cells.append(draw(st.sampled_from(pool)))
        rows.append(",".join(cells))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = ",".join(names) + end + end.join(rows) + draw(st.sampled_from(["", end]))
    if odd:
        lines = text.split(end)
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.integers(1, len(lines)))
            lines.insert(at, draw(st.sampled_from(["", "\r", "a,b", ",,,,,,,,,", '"q",x', "x\ry", " "])))
        text = end.join(lines)
        if draw(st.booleans()):
            text = "\ufeff" + text
    data = text.encode()
    if odd and draw(st.integers(0, 9)) == 0:
        data += b"\xff,x\n"                     # bytes that are not UTF-8
    return data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(logs())
def test_well_formed_logs_are_read_in_one_pass_as_arrow_reads_them(halves, data):
    assert _agree(data)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(logs(odd=True))
def test_any_log_is_read_as_arrow_reads_it_or_left_to_arrow(halves, data):
    _agree(data)


@pytest.mark.parametrize("text", [
    'id,scope\n"A1",node\n',                            # a quote character
    "id,scope\nA1,node,x\n",                            # a row of more cells
    "id,scope\nA1\n",                                   # of fewer
    "id,scope\nA1,no\rde\n",                            # a carriage return inside a line
    "id,scope\rA1,node\r",                              # lines ended by carriage returns alone
    "id,start\nA1,2027-02-03T10:00:00.5Z\n",            # a time of another form
    "id,start\nA1,2027-02-30T10:00:00Z\n",              # a date that is none
    "id,scope\n",                                       # no row
    "id,scope\n\n\r\n",                                 # empty lines only
    "id,,scope\nA1,x,node\n",                           # an empty header cell
    'id,"scope\nA1,node\n',                             # a quote in the header (never closed)
    'id,"scope"\nA1,node\n',                            # (or closed)
    "id,id\nA1,A2\n",                                   # a name twice
    "extra,other\n1,2\n",                               # none of the format's columns
])
def test_what_the_pass_does_not_read_is_left_to_arrow(text):
    assert read_plain(text.encode()) is None


def test_bytes_that_are_not_utf8_in_a_kept_column_are_left_to_arrow():
    assert read_plain(b"id,scope\nA\xff1,node\n") is None
    assert read_plain(b"id,scope\nA1,no\xffde\n") is None
    assert read_csv_arrow(b"id,scope\nA1,no\xffde\n") is None          # (Arrow refuses it too)
    # a column the format does not know is not looked at, by either reader
    assert _agree(b"id,extra,scope\nA1,\xff,node\n")


def test_a_header_alone_ended_by_a_carriage_return_is_left_to_arrow():
    assert read_plain(b"id,scope\rA1,node\n") is None
    assert _agree(b"id,scope\r\nA1,node\r\n\r\nA2,rack")


def test_values_made_to_collide_in_the_hash_table_are_left_to_arrow_at_once():
    """Cells whose hashes share their upper bits (made so from the hash's constants: a log from
    the other party may be) would make each lookup walk the whole table, a million rows for
    hours; the lookup gives up after MAX_PROBES slots and Arrow reads the file."""
    import time

    k1, k2, m = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 1 << 64
    inverse, cells, i = pow(k1, -1, m), [], 0
    while len(cells) < 100_000:                 # 8-byte cells, hash i for the i-th
        i += 1
        cell = ((i ^ (8 * k2 % m)) * inverse % m).to_bytes(8, "little")
        if not any(c in cell for c in b',\n\r"'):
            cells.append(cell)
    data = b"id,scope\n" + b"".join(b"A%d,%s\n" % (k, v) for k, v in enumerate(cells))
    t0 = time.monotonic()
    assert read_plain(data) is None
    assert time.monotonic() - t0 < 10           # (a guard against the hang, not a speed target: 5 ms here)


def test_empty_lines_reserve_no_room_and_memory_not_to_be_had_leaves_the_file_to_arrow(monkeypatch):
    from calculators import _kernels as k

    data = b"id,scope\n" + b"\n" * 1000 + b"A1,node\r\n\r\n" + b"\n" * 1000 + b"A2,rack"
    assert k.line_ends(data, 0, len(data)) == 2           # the header and A1's line: no empty one
    assert _agree(data)

    def no_memory(*a, **kw):
        raise MemoryError("cannot allocate")

    monkeypatch.setattr(log_csv_plain.np, "empty", no_memory)
    assert read_plain(data) is None


def test_empty_lines_in_the_first_half_leave_no_gap(monkeypatch):
    monkeypatch.setattr(log_csv_plain, "TWO_THREADS_FROM", 0)
    rows = [f"A{i},node,r01-n0{1 + i % 3},2027-02-03T10:00:{i % 60:02d}Z" for i in range(200)]
    text = "id,scope,target,start\n" + "\n\n".join(rows[:100]) + "\n" + "\n".join(rows[100:]) + "\n"
    assert _agree(text.encode())


def _load(path, lc, *, plain: bool, monkeypatch):
    with monkeypatch.context() as m:
        if not plain:
            m.setattr(inc, "read_plain", lambda data: None)
        try:
            return inc.load_incidents(path, lc), None
        except InputError as e:
            return None, [p.to_json() for p in e.problems]


@pytest.mark.parametrize("bad", [
    "X,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T09:00:00+01:00,,,,,,,",      # end before start
    "A1,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z,,,,,,,",          # an id twice
    "X,node,nowhere,2027-02-03T10:00:00Z,,,,,,,,",                               # an unknown target
    "X,node,r01-n01,2027-02-03T10:00:00Z,,sideways,,,,,,",                       # an unknown impact
])
def test_the_loader_reports_the_same_problems_whichever_reader_read_the_log(write, lc, monkeypatch, bad):
    path = write("log.csv", HEADER + "\n".join([*ROWS, bad]) + "\n")
    assert read_plain(path.read_bytes()) is not None
    got = [_load(path, lc, plain=p, monkeypatch=monkeypatch)[1] for p in (True, False)]
    assert got[0] is not None and got[0] == got[1]
    if "09:00:00+01:00" in bad:                  # the end as the log writes it, not as the pass read it
        assert any(p.get("value") == "2027-02-03T09:00:00+01:00" for p in got[0])


def test_the_loader_reads_the_same_log_whichever_reader_read_it(write, lc, monkeypatch):
    path = write("log.csv", HEADER + "\n".join(ROWS) + "\n")
    one, _ = _load(path, lc, plain=True, monkeypatch=monkeypatch)
    other, _ = _load(path, lc, plain=False, monkeypatch=monkeypatch)
    same(one, other)


def test_the_split_kernel_refuses_bad_arguments_without_touching_memory():
    from calculators import _kernels as k

    data = b"A1,node,2027-02-03T10:00:00Z\nA2,rack,\n"
    text = (np.empty(3, dtype=np.int32), np.empty(len(data), dtype=np.uint8))
    ints = np.empty(2, dtype=np.int64)
    ok = (text, ints, np.empty(2, dtype=np.int64))
    rows, dicts = k.split_plain(data, 0, len(data), bytes([1, 2, 3]), ok, -1, 0)
    assert rows == 2 and dicts == ((2, np.array([0, 4, 8], dtype=np.int32).tobytes(), b"noderack"),)
    assert ok[2].tolist()[1] == -1 and text[0].tolist() == [0, 2, 4]
    for args, why in [
        ((data, 0, len(data) + 1, bytes([1, 2, 3]), ok, -1, 0), "hi past the data"),
        ((data, 5, 4, bytes([1, 2, 3]), ok, -1, 0), "hi before lo"),
        ((data, 0, len(data), bytes([1, 2, 4]), ok, -1, 0), "a kind that is none"),
        ((data, 0, len(data), bytes([1, 2]), ok, -1, 0), "an out too many"),
        ((data, 0, len(data), bytes([1, 2, 3]), ok[:2], -1, 0), "an out too few"),
        ((data, 0, len(data), bytes([1, 2, 3]), (text, ints, np.empty(3, dtype=np.int64)), -1, 0), "outs of two lengths"),
        ((data, 0, len(data), bytes([1, 2, 3]), (text, ints.astype(np.int32), ints), -1, 0), "32-bit codes"),
        ((data, 0, len(data), bytes([1, 2, 3]), (ints, ints, ints), -1, 0), "text out not a pair"),
        ((data, 0, len(data), bytes([1, 2, 3]), ((bytes(12), text[1]), ints, ints), -1, 0), "read-only offsets"),
        ((data, 0, len(data), bytes([1, 2, 3]), ok, -1, -1), "a negative row0"),
    ]:
        with pytest.raises((TypeError, ValueError, BufferError)):
            k.split_plain(*args)
            pytest.fail(why)
    # outs with room for fewer rows (or fewer text bytes) than there are: None, nothing past them
    assert k.split_plain(data, 0, len(data), bytes([1, 2, 3]), ok, -1, 1) is None
    small = ((np.empty(3, dtype=np.int32), np.empty(3, dtype=np.uint8)), ints, np.empty(2, dtype=np.int64))
    assert k.split_plain(data, 0, len(data), bytes([1, 2, 3]), small, -1, 0) is None
    assert k.line_ends(data, 0, len(data)) == 2 and k.line_ends(data, 3, 3) == 0
    # the kinds are read once: a writable buffer changed later changes nothing of this call
    kinds = np.array([1, 2, 3], dtype=np.uint8)
    assert k.split_plain(data, 0, len(data), kinds, ok, -1, 0)[0] == 2
    with pytest.raises(ValueError):
        k.line_ends(data, 0, len(data) + 1)
