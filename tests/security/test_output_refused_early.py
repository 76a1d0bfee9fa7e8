"""An output that cannot be written is refused as `-o` is read, before the log is read or
anything computed: a 2 GB log named with `-o /proc/self/x.txt` was computed for minutes and
then refused. Nothing is left behind by the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.conftest import assert_coded_failure, cli

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"


@pytest.mark.parametrize("target", ["/proc/self/credits.txt", "under-a-file/x.txt", "a-folder"])
def test_unwritable_output_is_refused_before_the_log_is_read(tmp_path, target):
    (tmp_path / "under-a-file").write_text("x", encoding="utf-8")
    (tmp_path / "a-folder").mkdir()
    out = target if target.startswith("/") else str(tmp_path / target)
    missing_log = tmp_path / "no-such-log.csv"          # never reached: the output is refused first
    r = cli("credits", CONTRACT, missing_log, "--month", "2027-01", "--format", "table", "-o", out)
    if target == "a-folder":                             # click's own check of -o (dir_okay=False)
        assert r.exit_code == 2 and "is a directory. [not_a_file]" in r.output, r.output
    else:
        assert_coded_failure(r, "output_unwritable")
        assert "no such incident log" not in r.output and "nothing written" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder", "under-a-file"]


def test_a_writable_output_in_a_folder_still_to_be_made_is_written(tmp_path):
    out = tmp_path / "new" / "deeper" / "credits.txt"
    r = cli("credits", CONTRACT, ROOT / "examples" / "gb200-incidents-2027Q1.csv", "--month", "2027-01", "-o", out)
    assert r.exit_code == 0, r.output
    assert out.read_text(encoding="utf-8").strip()
    assert [p.name for p in out.parent.iterdir()] == ["credits.txt"]     # no probe file left
    assert [p.name for p in tmp_path.iterdir()] == ["new"]
