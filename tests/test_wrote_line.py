"""The `wrote FILE` line names the file on one line: a newline, a terminal escape or a bidi
control in the name is shown as <U+hhhh>, never written raw to the terminal."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from slakit.cli import main
from slaschema.textsafe import shown_name

REPO = Path(__file__).resolve().parents[1]


def test_shown_name_keeps_plain_names_and_shows_hidden_characters():
    assert shown_name("out/credits-2027Q1.json") == "out/credits-2027Q1.json"
    assert shown_name("€ report.pdf") == "€ report.pdf"
    assert shown_name("a\nb.txt") == "a<U+000A>b.txt"
    assert shown_name("x\x1b[2Jy.txt") == "x<U+001B>[2Jy.txt"
    assert shown_name("rep\u202egnp.pdf") == "rep<U+202E>gnp.pdf"
    assert shown_name("caf\udce9.txt") == "caf<U+DCE9>.txt"          # an undecodable byte of the name


def test_credits_wrote_line_is_one_line(tmp_path):
    out = tmp_path / "credits\n\x1b[31mred.txt"
    got = CliRunner().invoke(main, ["credits", str(REPO / "examples/gb200-contract.yaml"),
                                    str(REPO / "examples/gb200-incidents-2027Q1.csv"), "--quarter", "2027-Q1",
                                    "-o", str(out)])
    assert got.exit_code == 0, got.output
    assert out.exists()
    line = [x for x in got.output.splitlines() if x.startswith("wrote ")]
    assert line == [f"wrote {tmp_path}/credits<U+000A><U+001B>[31mred.txt"]
    assert "\x1b" not in got.output
