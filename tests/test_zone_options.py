"""--assume-tz (and its deprecated --tz): an empty or unknown zone is a usage error with a
code, never the default zone taken silently (`--assume-tz "$ZONE"` with ZONE unset)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from slakit.cli import main

REPO = Path(__file__).resolve().parents[1]
LANL = REPO / "tests" / "fixtures" / "lanl" / "lanl_sample.csv"


@pytest.mark.parametrize("option,value", [("--tz", ""), ("--assume-tz", ""), ("--assume-tz", " "),
                                          ("--tz", "Nowhere/Zone")])
def test_import_lanl_refuses_an_empty_or_unknown_zone(tmp_path, option, value):
    out = tmp_path / "incidents.csv"
    r = CliRunner().invoke(main, ["import", "lanl", str(LANL), "-o", str(out), option, value])
    assert r.exit_code == 2, r.output
    assert f"Invalid value for {option}" in r.output and "[unknown_timezone]" in r.output, r.output
    assert not out.exists()


def test_import_lanl_with_a_zone_still_converts(tmp_path):
    out = tmp_path / "incidents.csv"
    r = CliRunner().invoke(main, ["import", "lanl", str(LANL), "-o", str(out), "--assume-tz", "UTC"])
    assert r.exit_code == 0, r.output
    assert out.read_text(encoding="utf-8").startswith("id,")


def test_credits_names_the_code_of_an_empty_zone():
    r = CliRunner().invoke(main, ["credits", str(REPO / "examples" / "gb200-contract.yaml"),
                                  str(REPO / "examples" / "gb200-incidents-2027Q1.csv"), "--period", "2027-01",
                                  "--assume-tz", ""])
    assert r.exit_code == 2 and "[unknown_timezone]" in r.output, r.output
