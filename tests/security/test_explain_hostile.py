"""`slakit explain` prints incident ids, targets and categories from the other party's log:
Rich markup in an id (`[/]`) stopped the command with unexpected_error, and escape sequences
(an OSC title or hyperlink) reached the terminal. The texts are shown as written, made safe."""

from __future__ import annotations

import csv
from pathlib import Path

from tests.hostile.conftest import cli

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"
IDS = ["INC-A[/]", "INC-B\x1b]0;pwned\x07", "INC-C[bold]x", "INC-D\x1b[31mred"]


def test_hostile_incident_ids_are_shown_safely(tmp_path):
    rows = list(csv.reader(LOG.open(encoding="utf-8")))
    mine = [r for r in rows[1:] if r[1] == "node"][: len(IDS)]
    for r, new in zip(mine, IDS):
        r[0], r[2] = new, "r01-n07"
    log = tmp_path / "log.csv"
    with log.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([rows[0], *mine])
    r = cli("explain", CONTRACT, log, "--unit", "r01-n07", "--month", "2027-01")
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.output and "\x07" not in r.output
    for shown in ("INC-A[/]", "INC-B ", "INC-C[bold]x", "INC-Dred"):
        assert shown in r.stdout, r.stdout
