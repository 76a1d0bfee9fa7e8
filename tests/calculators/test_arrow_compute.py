"""`calculators.arrow_compute` against `pyarrow.compute`, whose functions it calls without
importing that module (the import's 40-50 ms are in the start of `slakit credits`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as real
import pytest

from calculators import arrow_compute as ac

ROOT = Path(__file__).resolve().parents[2]

TEXT = [pa.array([" b", "a", "", None, "a", "\u00e9 ", "b"]),
        pa.chunked_array([["x ", "y"], ["", "x ", None]]),
        pa.array([], type=pa.string()),
        pa.array(["z", "a", "z"], type=pa.large_string())]


@pytest.mark.parametrize("values", TEXT)
def test_each_function_gives_what_pyarrow_compute_gives(values):
    assert ac.dictionary_encode(values).equals(real.dictionary_encode(values))
    assert ac.utf8_trim(values, " \t").equals(real.utf8_trim(values, characters=" \t"))
    assert ac.binary_length(values).equals(real.binary_length(values))
    assert ac.sort_indices(values).equals(real.sort_indices(values))
    assert ac.equal(values, values).equals(real.equal(values, values))
    assert ac.any_true(ac.equal(values, values)).equals(real.any(real.equal(values, values)))
    assert ac.cast(values, pa.large_string()).equals(real.cast(values, pa.large_string()))
    idx = pa.array(list(range(len(values)))[::-1], type=pa.int64())
    assert ac.take(values, idx).equals(real.take(values, idx))
    mask = ac.cast(ac.binary_length(values), pa.bool_())
    assert ac.invert(mask).equals(real.invert(mask))
    assert ac.if_else(mask, values, values).equals(real.if_else(mask, values, values))


def test_a_cast_or_take_arrow_refuses_raises_as_pyarrow_compute_does():
    times = pa.array(["2027-01-01T00:00:00Z", "not a time"])
    with pytest.raises(pa.ArrowInvalid):
        real.cast(times, pa.timestamp("ns", tz="UTC"))
    with pytest.raises(pa.ArrowInvalid):
        ac.cast(times, pa.timestamp("ns", tz="UTC"))
    with pytest.raises(pa.ArrowInvalid):
        ac.cast(pa.array([1 << 40]), pa.int32())          # a safe cast: no overflow
    with pytest.raises(IndexError):
        ac.take(times, pa.array([5]))


def test_the_credits_command_does_not_import_pyarrow_compute(tmp_path):
    # the point of the module: the command's start imports none of pyarrow.compute's wrappers
    code = ("import sys\n"
            "from calculators.cli import credits\n"
            "from click.testing import CliRunner\n"
            f"r = CliRunner().invoke(credits, [{str(ROOT / 'examples' / 'gb200-contract.yaml')!r}, "
            f"{str(ROOT / 'examples' / 'gb200-incidents-2027Q1.csv')!r}, '--quarter', '2027-Q1', "
            f"'--format', 'json', '-o', {str(tmp_path / 'c.json')!r}])\n"
            "assert r.exit_code == 0, r.output\n"
            "print('pyarrow.compute' in sys.modules)\n")
    got = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip().splitlines()[-1] == "False"
