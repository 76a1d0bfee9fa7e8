"""`log_csv.TextValues`: the incident ids of a CSV log stay an Arrow array until a Python
string of each is needed; indexing answers as the object array of the same values would."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import calculators.incidents as inc
from calculators import log_csv
from calculators.engine import compute
from calculators.periods import parse_periods
from calculators.result import incident_ids
from tests.calculators.helpers import EXAMPLE_CONTRACT, contract

WORDS = ["INC-1", "INC-2", "Ü-3", "", "INC-10", "a b", "INC-7"] * 8       # 56 values (not distinct: no matter)


def pair():
    return log_csv.TextValues(pa.array(WORDS)), np.asarray(WORDS, dtype=object)


@pytest.mark.parametrize("key", [
    0, 3, 55, -1, -56, np.int64(2),
    slice(None), slice(1, 5), slice(None, None, -2), slice(60, 62),
    [4, 0, 0, 6], np.array([], dtype=np.int64), np.array([[1, 2], [3, -1]]), np.array([-56, -1, 5], dtype=np.int32),
    np.arange(56) % 7 == 0, np.arange(56) % 2 == 0,                      # 8 and 28 values
    np.arange(40), np.array([[5] * 10, [-3] * 10]),                    # more than a quarter of them
])
def test_indexing_gives_what_the_object_array_gives(key):
    lazy, objects = pair()
    got, want = lazy[key], objects[key]
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == object and got.shape == want.shape
        assert got.tolist() == want.tolist()
    else:
        assert type(got) is str and got == want
    few = isinstance(key, slice) or np.asarray(want).size <= len(WORDS) // 4
    assert (lazy._objects is None) == few        # many: the strings are made once, for all gathers


@pytest.mark.parametrize("size", [1, 16, 17, 40])
def test_a_few_values_and_a_gather_give_the_same_strings(size):
    """Up to 16 values are read one by one, more with Arrow's take (below a quarter of all):
    the same strings, shape and errors either way."""
    values = [f"INC-{i}" if i % 11 else f"Ü-{i}" for i in range(400)]
    lazy, objects = log_csv.TextValues(pa.array(values)), np.asarray(values, dtype=object)
    key = (np.arange(size, dtype=np.int64) * 37) % 400 - 200          # negative ones too
    for k in (key, key.reshape(1, -1), key.astype(np.int32)):
        got = lazy[k]
        assert got.dtype == object and got.shape == k.shape and got.tolist() == objects[k].tolist()
    assert lazy._objects is None
    with pytest.raises(IndexError):
        lazy[np.append(key, 400)]


@pytest.mark.parametrize("key", [56, -57, [0, 56], np.array([-57]), np.array([True, False]), np.array([0.5])])
def test_bad_indexes_are_refused_as_the_object_array_refuses_them(key):
    lazy, objects = pair()
    with pytest.raises(IndexError):
        objects[key]
    with pytest.raises(IndexError):
        lazy[key]


def test_the_whole_is_made_once_and_then_used():
    lazy, objects = pair()
    assert len(lazy) == len(WORDS)
    assert list(lazy) == WORDS and lazy.tolist() == WORDS
    whole = np.asarray(lazy)
    assert whole.dtype == object and whole.tolist() == WORDS and np.asarray(lazy) is whole
    assert np.append(lazy, None)[np.array([1, -1])].tolist() == ["INC-2", None]
    assert lazy[np.array([2, 0])].tolist() == ["Ü-3", "INC-1"] and lazy[np.arange(30)][7] is whole[7]
    assert np.asarray(lazy, dtype=str).tolist() == WORDS


def test_arrow_strings_keeps_the_arrow_values():
    lazy, objects = pair()
    a, b = log_csv.arrow_strings(lazy), log_csv.arrow_strings(objects)
    assert a.type == b.type == pa.large_string() and a.equals(b)
    assert lazy._objects is None
    lazy.objects()
    assert log_csv.arrow_strings(lazy).equals(b)     # (from the Arrow values still)


def test_text_column_is_lazy_only_when_asked():
    col = pa.chunked_array([pa.array([" x", "y", "", "x"]), pa.array(["z ", "y"])])
    plain, lazy = log_csv.text_column(col), log_csv.text_column(col, lazy=True)
    assert isinstance(plain.uniques, np.ndarray) and isinstance(lazy.uniques, log_csv.TextValues)
    assert plain.codes.tolist() == lazy.codes.tolist() == [0, 1, -1, 0, 2, 1]
    assert plain.uniques.tolist() == list(lazy.uniques) == ["x", "y", "z"]


def _forty_node_log(tmp_path, rows):
    """The example contract with 40 nodes a rack, a log of `rows(node names)` read from a CSV,
    its id values, and its February credits."""
    lc = contract(EXAMPLE_CONTRACT.replace("n[1-4]", "n[1-40]"))
    path = tmp_path / "log.csv"
    path.write_text("id,scope,target,start,end\n" + "\n".join(rows(lc.topology.units("node"))) + "\n")
    log = inc.load_incidents(path, lc)
    _, names = log.coded("id")
    assert names._objects is None
    return lc, path, log, names, compute(lc, log, parse_periods(["2027-02"], lc.model.contract.timezone),
                                         support=False)


def test_a_csv_logs_ids_are_not_made_into_python_strings_for_the_table(tmp_path):
    """Reading the log, computing the credits and the ids of a few units as a table shows them
    gathers only those ids; the duplicate check and the open incidents still work on them."""
    def rows(nodes):
        return [f"I{k},node,{nodes[k % len(nodes)]},2027-02-0{1 + k % 5}T10:00:00Z,"
                f"{'' if k == 3 else f'2027-02-0{1 + k % 5}T12:00:00Z'}" for k in range(400)]

    lc, path, log, names, result = _forty_node_log(tmp_path, rows)
    assert isinstance(names, log_csv.TextValues) and names._objects is None
    lines = rows(lc.topology.units("node"))
    assert result.open_incidents == ("I3",)
    month = result.periods[0].scopes["node"]
    shown = [0, 2, 3]
    got = incident_ids(month.incidents, shown)
    assert names._objects is None
    assert all(got[i] == tuple(f"I{k}" for k in range(i, 400, 40)) for i in shown)
    # the same log with a repeated id: refused, naming the first row of the id
    path.write_text("id,scope,target,start,end\n" + "\n".join(lines + [lines[5]]) + "\n")
    with pytest.raises(inc.InputError) as e:
        inc.load_incidents(path, lc)
    assert [(p.code, p.row, p.value) for p in e.value.problems] == [("duplicate_id", 401, "I5")]
    assert "row 6" in e.value.problems[0].message


def _same_answer(lazy, objects, key):
    try:
        want = objects[key]
    except IndexError:
        with pytest.raises(IndexError):
            lazy[key]
        return
    got = lazy[key]
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == object and got.shape == want.shape
        assert got.tolist() == want.tolist()
    else:
        assert type(got) is str and got == want


@pytest.mark.parametrize("key", [
    [], (), [[]], np.array(3), np.array(-1), np.array(56), (4,), (slice(None),), (np.array([1, 2]),),
    None, Ellipsis, True, False, np.bool_(True), np.array(True),
    np.zeros((2, 0), dtype=np.int64), np.zeros((56, 1), dtype=bool), [True] * 56, [[True] * 56],
    np.uint64(3), np.array([3, 4], dtype=np.uint8), range(3), range(55, -1, -1),
])
def test_every_other_key_is_answered_as_numpy_answers_it(key):
    """Keys no command uses still get numpy's answer (an empty list is an empty gather, a 0-d
    integer array a value, a bool is a new axis, a tuple a multi-dimensional index)."""
    _same_answer(*pair(), key)


@pytest.mark.parametrize("n", [0, 1, 3])
@pytest.mark.parametrize("key", [0, -1, [], [0], np.array([], dtype=np.int64), slice(None), np.ones(3, dtype=bool)])
def test_small_arrays_answer_as_numpy(n, key):
    """A log of no, one or three distinct ids."""
    words = WORDS[:n]
    _same_answer(log_csv.TextValues(pa.array(words, type=pa.string())), np.asarray(words, dtype=object), key)


def test_a_tables_rows_read_only_the_ids_they_show(tmp_path):
    """A table shows a unit's first four ids and the count of the others: `incident_preview`
    makes strings of those four only, and so does the table; `records` gives every record's
    ids as a plain tuple (json.dumps takes it), and `records(..., incidents=False)` none."""
    import json

    from calculators.cli import render_table

    _, _, _, names, result = _forty_node_log(tmp_path, lambda nodes: [
        f"I{k},node,{nodes[k % 2]},2027-02-{1 + k // 40:02d}T{k % 20:02d}:00:00Z,"
        f"2027-02-{1 + k // 40:02d}T{k % 20:02d}:30:00Z" for k in range(800)])
    pr = result.periods[0]
    month = pr.scopes["node"]
    want = tuple(f"I{k}" for k in range(0, 800, 2))
    assert month.incident_preview([0, 5], 4) == {0: (want[:4], 400), 5: ((), 0)}
    assert names._objects is None                       # 4 ids read: no string made for the other 796
    (bare,) = month.records(pr, [0], incidents=False)
    assert bare.incidents is None and bare.id == month.ids[0] and names._objects is None
    text = render_table(result)
    assert "I0, I2, I4, I6 +396" in text and names._objects is None
    (first,) = month.records(pr, [0])
    assert type(first.incidents) is tuple and first.incidents == want
    assert json.loads(json.dumps(first.incidents)) == list(want)
    # the same unit's record among every unit's is equal to it
    every = {u.id: u for u in month.records(pr)}
    assert every[first.id] == first and type(every[first.id].incidents) is tuple
    assert month.records(pr, [5])[0].incidents == ()      # a unit without incidents


@pytest.mark.parametrize("cells", [
    ["INC-1", "INC-2", "INC-3"],                        # all distinct: the column is its own dictionary
    ["b", "a", "c", "d"] * 1 + ["Ü-1", "汉字"],
    ["INC-1", "INC-2", "INC-1"],                        # a repeat
    ["INC-1", "", "INC-2"],                             # an empty cell
    ["INC-1", " INC-2", "INC-3"],                       # white space around one
    ["INC-1", "INC-2\u3000", "INC-3"],                  # Unicode white space
    ["INC-1", None, "INC-2"],                           # a missing cell
    ["x"],
    ["a", "b\u00a0", "b"],                              # strips to a repeat
])
@pytest.mark.parametrize("chunks", [1, 2])
def test_lazy_text_column_codes_are_the_dictionary_encodings(cells, chunks):
    """`text_column(lazy=True)` (the ids) takes a column of distinct, non-empty, stripped
    cells as its own dictionary: the codes, dictionary and values are those of the
    dictionary encoding in every case."""
    half = max(len(cells) // 2, 1)
    col = pa.chunked_array([pa.array(cells[:half], pa.string()), pa.array(cells[half:], pa.string())][:chunks]
                           if chunks == 2 else [pa.array(cells, pa.string())])
    lazy, plain = log_csv.text_column(col, lazy=True), log_csv.text_column(col)
    assert lazy.codes.dtype == plain.codes.dtype == np.int64
    assert lazy.codes.tolist() == plain.codes.tolist()
    assert lazy.dictionary.to_pylist() == plain.dictionary.to_pylist() == plain.uniques.tolist()
    assert list(lazy.uniques) == plain.uniques.tolist()
    distinct = len(set(cells)) == len(cells) and all(c and c.strip() == c for c in cells) and len(cells) > 1
    assert (log_csv._distinct_as_written(col) is not None) == distinct     # the sort's shortcut, only there


def test_lazy_text_column_of_more_than_2_gib_of_cells_is_encoded_chunk_by_chunk():
    """A column whose cells hold more than 2 GiB of text in all cannot be one `string` array
    (its 32-bit offsets would overflow): the lazy text column gives the dictionary encoding's
    codes and values, as for any other column, instead of Arrow's overflow error. The 40
    chunks here share one 64 MiB array, so the column takes 64 MiB of memory."""
    chunk = pa.array([f"INC-{i:02d}-" + "x" * (1 << 20) for i in range(64)], pa.string())
    col = pa.chunked_array([chunk] * 40)
    assert sum(len(v) for v in chunk.to_pylist()) * 40 > 2**31
    lazy, plain = log_csv.text_column(col, lazy=True), log_csv.text_column(col)
    assert lazy.codes.tolist() == plain.codes.tolist() == list(range(64)) * 40
    assert lazy.dictionary.equals(plain.dictionary) and len(lazy.dictionary) == 64
    assert lazy.uniques[63] == plain.uniques[63] == "INC-63-" + "x" * (1 << 20)
