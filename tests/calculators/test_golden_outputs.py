"""`slakit credits` on the bundled example and the revision 1.1 fixture gives, byte for byte,
the documents kept in tests/fixtures/golden/ (JSON, table and CSV). A change of any figure,
field or layout shows up here; when it is intended, regenerate the files with the commands in
tests/fixtures/golden/README.md and say what changed in the commit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from slakit.cli import main

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "fixtures" / "golden"
EXAMPLE = ("examples/gb200-contract.yaml", "examples/gb200-incidents-2027Q1.csv")
REV11 = ("tests/fixtures/rev11-contract.yaml", "tests/fixtures/rev11-incidents.csv")

CASES = [
    (EXAMPLE, "json", "example-credits-2027Q1.json"),
    (EXAMPLE, "table", "example-credits-2027Q1.txt"),
    (EXAMPLE, "csv", "example-credits-2027Q1.csv"),
    (REV11, "json", "rev11-credits-2027Q1.json"),
    (REV11, "table", "rev11-credits-2027Q1.txt"),
]


@pytest.mark.parametrize(("inputs", "fmt", "golden"), CASES, ids=[c[2] for c in CASES])
def test_credits_documents_are_unchanged(tmp_path, monkeypatch, inputs, fmt, golden):
    monkeypatch.chdir(REPO)                    # the log is named as given: relative, as in the files
    out = tmp_path / golden
    r = CliRunner().invoke(main, ["credits", *inputs, "--quarter", "2027-Q1", "--format", fmt, "-o", str(out)])
    assert r.exit_code == 0, r.output
    want = (GOLDEN / golden).read_bytes()
    got = out.read_bytes()
    assert len(want) > 1000
    if got != want:
        diff = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b) if len(got) == len(want) else min(
            len(got), len(want))
        pytest.fail(f"{golden} differs from the kept document at byte {diff}: "
                    f"got {got[max(0, diff - 80):diff + 80]!r}, kept {want[max(0, diff - 80):diff + 80]!r}")
    assert os.path.getsize(out) == len(want)
