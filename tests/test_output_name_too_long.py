"""An -o whose name is longer than the file system takes is [output_unwritable] with the fix
that helps (a shorter name), nothing written; a name of exactly 255 bytes is written."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from slakit.cli import main

REPO = Path(__file__).resolve().parents[1]
ARGS = ["credits", str(REPO / "examples" / "gb200-contract.yaml"),
        str(REPO / "examples" / "gb200-incidents-2027Q1.csv"), "--period", "2027-01"]


def test_a_name_too_long_says_to_shorten_it(tmp_path):
    out = tmp_path / ("x" * 300 + ".json")
    r = CliRunner().invoke(main, [*ARGS, "-o", str(out)])
    assert r.exit_code == 1, r.output
    assert '"code": "output_unwritable"' in r.output and "shorter name" in r.output, r.output
    assert os.listdir(tmp_path) == []


def test_a_name_of_255_bytes_is_written(tmp_path):
    out = tmp_path / ("\u00e9" * 125 + "x.json")          # 250 + 6 = 256 bytes: one too many
    r = CliRunner().invoke(main, [*ARGS, "-o", str(out)])
    assert r.exit_code == 1 and "shorter name" in r.output, r.output
    out = tmp_path / ("\u00e9" * 124 + "xx.json")         # 248 + 7 = 255 bytes
    r = CliRunner().invoke(main, [*ARGS, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert os.listdir(tmp_path) == [out.name] and out.read_text(encoding="utf-8").startswith("{")


def test_an_empty_name_says_that_it_is_empty():
    r = CliRunner().invoke(main, [*ARGS, "-o", ""])
    assert r.exit_code == 1, r.output
    assert "-o/--output: names no file (the name is empty)" in r.output and "[output_unwritable]" in r.output


def test_a_fifo_nobody_reads_says_so(tmp_path):
    fifo = tmp_path / "out.txt"
    os.mkfifo(fifo)
    r = CliRunner().invoke(main, [*ARGS, "-o", str(fifo)])
    assert r.exit_code == 1, r.output
    assert "nothing reads that FIFO" in r.output and "[output_unwritable]" in r.output
