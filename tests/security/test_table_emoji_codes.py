"""An incident id or cause like `INC-1:smile:` is shown as written in the credits table and
its lines, not with Rich's emoji put in for the code (the id could not be found again), and
Rich markup in it is shown, not applied."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from rich.console import Console

from slaschema.plain_table import PlainTable
from tests.hostile.conftest import cli

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"


def test_plain_table_keeps_emoji_codes_and_markup():
    t = PlainTable(title="t :smile:")
    t.add_column("id")
    t.add_row("INC-1:smile: [bold]x[/bold]")
    buf = io.StringIO()
    t.print(Console(file=buf, width=80, color_system=None, force_terminal=False))
    out = buf.getvalue()
    assert "INC-1:smile: [bold]x[/bold]" in out and "t :smile:" in out
    assert "\U0001f604" not in out


def test_credits_table_shows_incident_ids_as_written(tmp_path):
    rows = list(csv.reader(LOG.open(encoding="utf-8")))
    for r in rows[1:]:
        r[0] = r[0] + ":smile:"
    log = tmp_path / "log.csv"
    with log.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    r = cli("credits", CONTRACT, log, "--month", "2027-01")
    assert r.exit_code == 0, r.output
    assert "\U0001f604" not in r.stdout
    assert ":smile:" in r.stdout
