"""`credits` and `explain` show their stages on stderr for a large incident log (never on
stdout, whose bytes stay the same), and nothing for a small one or with --no-progress."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import calculators.cli as ccli
from slakit.cli import main

REPO = Path(__file__).resolve().parents[2]
C = str(REPO / "examples" / "gb200-contract.yaml")
LOG = str(REPO / "examples" / "gb200-incidents-2027Q1.csv")


@pytest.fixture
def wanted(monkeypatch):
    """Progress as on a terminal (CliRunner's stderr is none)."""
    monkeypatch.setattr(ccli, "progress_wanted", lambda no_progress=False, **kw: not no_progress)


def run(argv):
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 0, res.output
    return res.stdout, res.stderr


@pytest.mark.parametrize("argv, label, middle", [
    (["credits", C, LOG, "--quarter", "2027-Q1"], "credits", "3 month(s) computed"),
    (["credits", C, LOG, "--quarter", "2027-Q1", "--format", "json"], "credits", "3 month(s) computed"),
    (["explain", C, LOG, "--unit", "r01-n07", "--month", "2027-01"], "explain", "r01-n07 explained"),
])
def test_a_large_log_shows_its_stages(wanted, monkeypatch, argv, label, middle):
    quiet_out, quiet_err = run(argv)
    assert quiet_err == ""                                   # the example log is small
    monkeypatch.setattr(ccli, "PROGRESS_LOG_BYTES", 1)       # as if it were large
    out, err = run(argv)
    assert out == quiet_out
    lines = err.splitlines()
    assert [ln.split(":")[0] for ln in lines] == [label] * 3
    assert lines[0].startswith(f"{label}: 1/3 (33%)") and "incident rows read and checked" in lines[0]
    assert lines[1].startswith(f"{label}: 2/3 (66%)") and lines[1].endswith(middle)
    assert lines[2].startswith(f"{label}: 3/3 (100%)") and lines[2].endswith("written")
    assert run([*argv, "--no-progress"]) == (quiet_out, "")


def test_the_last_stage_is_drawn_before_the_wrote_line(wanted, monkeypatch, tmp_path):
    monkeypatch.setattr(ccli, "PROGRESS_LOG_BYTES", 1)
    out = tmp_path / "c.json"
    _, err = run(["credits", C, LOG, "--quarter", "2027-Q1", "-o", str(out)])
    lines = err.splitlines()
    assert lines[-2].startswith("credits: 3/3 (100%)") and lines[-2].endswith("written")
    assert lines[-1] == f"wrote {out}" and out.stat().st_size > 0
