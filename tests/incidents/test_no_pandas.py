"""`slakit credits` on a CSV log never imports pandas (a third of the command's imports): the
engine reads the loader's columns (`calculators.log_columns`), the frame is made only for the
commands that use it, and Arrow arrays are made and read through their buffers (pyarrow
imports pandas on its first `pa.array`, `pa.scalar` or `to_numpy`). The helpers that do so
give what pyarrow's own conversions give."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from calculators import log_csv
from calculators.incidents import load_incidents

from .conftest import EXAMPLE_CONTRACT, EXAMPLE_LOG, REPO


def _big_log(tmp_path, rows: int = 60_000):
    """The example log's incidents repeated under new ids: enough rows for the background
    reading's column conversions (in threads above 50,000 rows)."""
    with open(EXAMPLE_LOG, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        body = list(reader)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for k in range(rows):
        row = list(body[k % len(body)])
        row[0] = f"{row[0]}-{k}"
        w.writerow(row)
    path = tmp_path / "big.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def _imported(args: list[str]) -> tuple[int, set[str], str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "slakit", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return proc.returncode, modules, proc.stdout + proc.stderr


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
@pytest.mark.parametrize("big", [False, True], ids=["example", "60k-rows"])
def test_credits_on_a_csv_log_does_not_import_pandas(tmp_path, fmt, big):
    log = _big_log(tmp_path) if big else EXAMPLE_LOG
    out = tmp_path / f"out.{ {'table': 'txt'}.get(fmt, fmt)}"
    rc, modules, text = _imported(["credits", str(EXAMPLE_CONTRACT), str(log), "--quarter", "2027-Q1",
                                   "--format", fmt, "-o", str(out)])
    assert rc == 0, text[-2000:]
    assert out.stat().st_size > 1000
    assert "pyarrow" in modules and "numpy" in modules      # the check sees the imports
    assert not {m for m in modules if m == "pandas" or m.startswith("pandas.")}


def test_credits_with_skipped_rows_does_not_import_pandas(tmp_path):
    """--skip-bad-rows: the rows reported (an unknown target, a repeated id) are left out
    without pandas, and listed in the output."""
    with open(EXAMPLE_LOG, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    rows[4][2] = "r01-n19"                 # no such node
    rows[9][0] = rows[2][0]                 # an id used before
    log = tmp_path / "bad.csv"
    with open(log, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    out = tmp_path / "out.json"
    rc, modules, text = _imported(["credits", str(EXAMPLE_CONTRACT), str(log), "--quarter", "2027-Q1",
                                   "--skip-bad-rows", "--format", "json", "-o", str(out)])
    assert rc == 0, text[-2000:]
    skipped = json.loads(out.read_text(encoding="utf-8"))["skipped_rows"]
    assert [(p["row"], p["code"]) for p in skipped] == [(4, "unknown_target"), (9, "duplicate_id")]
    assert "pyarrow" in modules and not {m for m in modules if m == "pandas" or m.startswith("pandas.")}

def test_review_still_has_its_frame(tmp_path):
    """A command that works on the frame gets it, and then pandas."""
    rc, modules, text = _imported(["review", str(EXAMPLE_CONTRACT), str(EXAMPLE_LOG), "--quarter", "2027-Q1",
                                   "-o", str(tmp_path / "r.pdf")])
    assert rc == 0, text[-2000:]
    assert "pandas" in modules


@pytest.mark.parametrize("type_", [pa.int8(), pa.int32(), pa.int64(), pa.uint16(), pa.float64()])
def test_numpy_of_reads_the_buffer_as_to_numpy_does(type_):
    values = pa.array([3, 0, 7, 1, 9, 4, 2], type_)
    chunked = pa.chunked_array([values.slice(1, 3), values.slice(5)])
    for arr in (values, values.slice(2, 4), chunked, pa.chunked_array([values.slice(3)])):
        got = log_csv.numpy_of(arr)
        want = arr.to_numpy()
        assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_numpy_of_and_null_mask_of_booleans_and_nulls():
    flags = pa.array([True, False, None, True, True, False, False, True, None, True])
    for arr in (flags, flags.slice(3), flags.slice(1, 8), pa.chunked_array([flags.slice(0, 3), flags.slice(5)])):
        mask = log_csv.null_mask(arr)
        assert mask.tolist() == arr.is_null().to_numpy(zero_copy_only=False).tolist()
        got = log_csv.numpy_of(arr)
        want = arr.fill_null(False).to_numpy(zero_copy_only=False)
        assert got[~mask].tolist() == want[~mask].tolist()
    assert log_csv.null_mask(pa.array([1, 2])).tolist() == [False, False]


def test_the_made_arrays_and_scalars_are_pyarrows():
    a = np.array([5, -1, 2**40], dtype=np.int64)
    assert log_csv.int64_array(a).equals(pa.array(a))
    assert log_csv.int64_array(a[::2]).to_pylist() == [5, 2**40]        # not contiguous: copied
    for text in ("", "\x1f", "unit 7, ok", "żółw 東京"):
        assert log_csv.string_scalar(text).equals(pa.scalar(text, pa.large_string()))
        assert log_csv.string_scalar(text, pa.string()).equals(pa.scalar(text, pa.string()))
    strings = log_csv.python_strings(pa.array(["a", None, "ü"]))
    assert strings.dtype == object and strings.tolist() == ["a", None, "ü"]


@pytest.mark.parametrize("words", [["INC-1", "", "żółw 東京", "x" * 300], [], [""]])
def test_arrow_strings_of_python_strings_are_pyarrows(words):
    values = np.array([*words, None], dtype=object)[:-1]
    for type_ in (pa.large_string(), pa.string()):
        got = log_csv.arrow_strings(values, type_)
        assert got.type == type_ and got.equals(pa.array(values, type=type_))
    with pytest.raises(UnicodeEncodeError):                 # as pa.array raises for a lone surrogate
        log_csv.arrow_strings(np.array(["ok", "\ud800"], dtype=object))
    assert log_csv.arrow_strings(np.array(["a", None], dtype=object)).null_count == 1

def test_fast_times_reads_empty_and_both_forms_as_pandas_does():
    cells = ["2027-02-03T10:00:00Z", "", "2027-02-03T04:00:00-06:00", "", "1970-01-01T00:00:00Z",
             "2027-12-31T23:59:59+05:30"]
    col = pa.chunked_array([pa.array(cells[:3]), pa.array(cells[3:])])
    got = log_csv.fast_times(col)
    want = [log_csv.NA if not c else int(pd.Timestamp(c).timestamp()) for c in cells]
    assert got.tolist() == want
    assert log_csv.fast_times(pa.chunked_array([pa.array(["", ""])])).tolist() == [log_csv.NA] * 2
    assert log_csv.fast_times(pa.chunked_array([pa.array(["2027-02-03 10:00"])])) is None


def test_the_frame_is_made_on_first_use_and_kept(lc):
    log = load_incidents(EXAMPLE_LOG, lc)
    assert log.columns._frame is None                   # noqa: SLF001 - not made by loading
    frame = log.frame
    assert log.frame is frame and log.columns.frame() is frame
    assert len(frame) == len(log.columns) and frame["id"].iloc[0] == "INC-27001"
    own = log.columns.ints("end", log_csv.NA)            # the loader's array itself: not to be changed
    assert own.flags.writeable is False
    end = log.columns.ints("end", -1)
    assert ((end == -1) == frame["end"].isna().to_numpy()).all()
    assert (end[end != -1] == frame["end"].dropna().to_numpy()).all()


def test_credits_on_a_log_without_incidents_does_not_import_pandas(tmp_path, lc):
    """A quarter without incidents: a header only. The log's frame, when a command asks for
    it, is the empty frame with the log's dtypes."""
    log_path = tmp_path / "none.csv"
    log_path.write_text("id,scope,target,start,end,impact,gpus_affected,category\n", encoding="utf-8")
    out = tmp_path / "out.json"
    rc, modules, text = _imported(["credits", str(EXAMPLE_CONTRACT), str(log_path), "--quarter", "2027-Q1",
                                   "--format", "json", "-o", str(out)])
    assert rc == 0, text[-2000:]
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert [p["credit_total"] for p in doc["periods"]] == ["0.00"] * 3 and doc["open_incidents"] == []
    assert "pyarrow" in modules and not {m for m in modules if m == "pandas" or m.startswith("pandas.")}
    log = load_incidents(log_path, lc)
    assert [w.code for w in log.warnings] == ["empty_log"] and len(log.columns) == 0
    assert log.columns.ints("end", log_csv.NA).tolist() == [] and log.coded("id")[0].tolist() == []
    from calculators.incidents import empty_frame

    pd.testing.assert_frame_equal(log.frame, empty_frame(), check_dtype=True)
