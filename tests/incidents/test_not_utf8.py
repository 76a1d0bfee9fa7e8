"""A log with bytes that are not UTF-8 (a spreadsheet's Latin-1 or Windows-1252 export) is read
with each such byte as U+FFFD, as before, but never silently: a `not_utf8` warning names the
lines, counts them and shows the first bytes as \\xNN, and the commands print it on stderr.
Bytes in a column the format does not have are ignored with the column (Arrow reads only the
log's own columns); valid UTF-8, U+FFFD written as such included, gives no warning."""

from __future__ import annotations

import json

from click.testing import CliRunner

import calculators.incidents as inc
from calculators.incident_reasons import Reason
from slakit.cli import main

from .conftest import EXAMPLE_CONTRACT
from .test_arrow_reader import HEADER, ROWS


def _write_bytes(tmp_path, name: str, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def _csv(rows: list[bytes]) -> bytes:
    return HEADER.encode() + b"\n".join(rows) + b"\n"


def _warnings(log, code=Reason.NOT_UTF8):
    return [w for w in log.warnings if w.code == code]


def test_a_latin1_byte_is_read_as_u_fffd_and_its_line_named(tmp_path, lc):
    rows = [r.encode() for r in ROWS]
    rows[1] = rows[1].replace(b",fan", b",ventilateur d\xe9faillant")        # line 3 of the file
    log = inc.load_incidents(_write_bytes(tmp_path, "latin1.csv", _csv(rows)), lc)
    (w,) = _warnings(log)
    assert w.severity == "warning" and w.line == 3 and w.file.endswith("latin1.csv")
    assert "1 line holds bytes that are not UTF-8" in w.message and "(line 3)" in w.message
    assert "ventilateur d\\xe9faillant" in w.message            # the bytes shown, not the U+FFFD
    assert "iconv -f WINDOWS-1252 -t UTF-8" in w.fix
    causes = log.frame.set_index("id")["cause"]
    assert causes["A2"] == "ventilateur d\ufffdfaillant"


def test_every_line_is_counted_and_the_first_five_named(tmp_path, lc):
    rows = [f"B{i},node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z,,,,,,,caf\xe9 {i}".encode("latin-1")
            for i in range(8)]
    log = inc.load_incidents(_write_bytes(tmp_path, "many.csv", _csv(rows)), lc)
    (w,) = _warnings(log)
    assert "8 lines hold" in w.message and "(lines 2, 3, 4, 5, 6, ...)" in w.message and w.line == 2


def test_json_lines_with_a_stray_byte_are_warned_about_too(tmp_path, lc):
    good = json.dumps({"id": "J1", "scope": "node", "target": "r01-n01", "start": "2027-02-03T10:00:00Z",
                       "end": "2027-02-03T11:00:00Z"}).encode()
    bad = good.replace(b'"J1"', b'"J2"').replace(b'}', b', "cause": "\xff\xfe"}')
    log = inc.load_incidents(_write_bytes(tmp_path, "log.jsonl", good + b"\n" + bad + b"\n"), lc)
    (w,) = _warnings(log)
    assert w.line == 2 and "\\xff\\xfe" in w.message


def test_valid_utf8_is_no_warning(tmp_path, lc):
    rows = [r.encode() for r in ROWS]
    rows[1] = rows[1].replace(b",fan", ",风扇故障 \ufffd żółw".encode())
    log = inc.load_incidents(_write_bytes(tmp_path, "utf8.csv", _csv(rows)), lc)
    assert not _warnings(log)
    assert log.frame.set_index("id")["cause"]["A2"] == "风扇故障 \ufffd żółw"


def test_a_stray_byte_in_a_column_the_format_does_not_have_is_ignored_with_it(tmp_path, lc):
    data = (HEADER.rstrip("\n") + ",notes\n").encode() + b"\n".join(r.encode() + b",r\xe9sum\xe9" for r in ROWS)
    log = inc.load_incidents(_write_bytes(tmp_path, "notes.csv", data + b"\n"), lc)
    assert not _warnings(log)
    assert [w.column for w in _warnings(log, Reason.UNKNOWN_COLUMN)] == ["notes"]


def test_the_commands_print_the_loaders_warnings_on_stderr(tmp_path, monkeypatch):
    rows = [r.encode() for r in ROWS]
    rows[1] = rows[1].replace(b",fan", b",d\xe9faut")
    log = _write_bytes(tmp_path, "latin1.csv", (HEADER.rstrip("\n") + ",tickt\n").encode()
                       + b"\n".join(r + b"," for r in rows) + b"\n")
    out = tmp_path / "out.json"
    r = CliRunner().invoke(main, ["credits", str(EXAMPLE_CONTRACT), str(log), "--quarter", "2027-Q1",
                                  "--format", "json", "-o", str(out)])
    assert r.exit_code == 0, r.output
    warned = [line for line in r.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 2
    assert warned[0].endswith("[not_utf8]") and "latin1.csv:3:" in warned[0] and "d\\xe9faut" in warned[0]
    assert warned[1].endswith("[unknown_column]") and "'tickt'" in warned[1]
    assert json.loads(out.read_text())["format"] == "slakit-credits/2"      # the document itself is clean


def test_a_short_row_with_a_stray_byte_goes_to_the_general_reader_without_a_traceback(tmp_path, lc):
    """Arrow cannot hand such a row to the ragged-row handler (it fails before the handler
    runs); the command reads the file with the general reader and prints no traceback. Run
    as a process: pytest puts its own sys.unraisablehook in place during a test."""
    import subprocess
    import sys

    from calculators import log_csv

    rows = [r.encode() for r in ROWS]
    rows[1] = rows[1].rsplit(b",", 1)[0].replace(b"sev2", b"s\xe9v2")      # a cell short, and a stray byte
    data = _csv(rows)
    assert log_csv.read_csv_arrow(data) is None
    log = _write_bytes(tmp_path, "short.csv", data)
    out = subprocess.run([sys.executable, "-m", "slakit", "credits", str(EXAMPLE_CONTRACT), str(log), "--quarter",
                          "2027-Q1", "--skip-bad-rows", "-o", str(tmp_path / "o.txt")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr
    assert "short.csv:3: 1 line holds bytes that are not UTF-8" in out.stderr


# --- an escaped lone UTF-16 surrogate in a JSON log: read as U+FFFD, never silently -------------

def _obj(i: str, **extra) -> str:
    return json.dumps({"id": i, "scope": "node", "target": "r01-n01", "start": "2027-02-03T10:00:00Z",
                       "end": "2027-02-03T11:00:00Z", **extra})


def test_a_lone_surrogate_in_json_lines_is_read_as_u_fffd_and_its_line_named(tmp_path, lc):
    lines = [_obj("J1"), _obj("J2").replace('"J2"', '"J2\\ud800"'), "", _obj("J3", cause="\\udc00x")]
    lines[3] = lines[3].replace('"\\\\udc00x"', '"\\udc00x"')
    log = inc.load_incidents(_write_bytes(tmp_path, "log.jsonl", "\n".join(lines).encode() + b"\n"), lc)
    (w,) = _warnings(log)
    assert w.severity == "warning" and w.line == 2 and w.file.endswith("log.jsonl")
    assert "2 lines hold an escaped lone UTF-16 surrogate" in w.message and "(lines 2, 4)" in w.message
    frame = log.frame.set_index("id")
    assert "J2\ufffd" in frame.index and frame.loc["J3", "cause"] == "\ufffdx"


def test_a_lone_surrogate_in_a_json_array_names_its_element(tmp_path, lc):
    text = "[" + ",\n".join([_obj("J1"), _obj("J2", cause="\\ud834").replace('"\\\\ud834"', '"\\ud834"')]) + "]"
    log = inc.load_incidents(_write_bytes(tmp_path, "log.json", text.encode()), lc)
    (w,) = _warnings(log)
    assert w.row == 2 and w.line is None and "1 element holds" in w.message and "(element 2)" in w.message
    assert log.frame.set_index("id").loc["J2", "cause"] == "\ufffd"


def test_a_surrogate_pair_and_an_escaped_backslash_are_no_warning(tmp_path, lc):
    line = _obj("J1", cause="x").replace('"x"', '"\\ud83d\\ude00 C:\\\\ud800"')
    log = inc.load_incidents(_write_bytes(tmp_path, "log.jsonl", line.encode() + b"\n"), lc)
    assert _warnings(log) == []
    assert log.frame.set_index("id").loc["J1", "cause"] == "\U0001f600 C:\\ud800"


def test_a_lone_surrogate_is_warned_about_beside_the_logs_errors(tmp_path, lc):
    lines = [_obj("J1").replace('"J1"', '"J1\\ud800"'), "{not json"]
    import pytest

    from slaschema.errors import InputError

    with pytest.raises(InputError) as e:
        inc.load_incidents(_write_bytes(tmp_path, "log.jsonl", "\n".join(lines).encode() + b"\n"), lc)
    codes = [(p.code, p.severity) for p in e.value.problems]
    assert (Reason.JSON_INVALID, "error") in codes and (Reason.NOT_UTF8, "warning") in codes


def test_json_lines_end_at_lf_crlf_or_cr_only(tmp_path, lc):
    """A raw U+2028 or U+0085 inside a JSON string is text (str.splitlines broke the line there,
    and the object was refused as json_invalid); the lines are counted as the byte-level
    warning counts them, so both warnings name the same line."""
    head = b'{"id": "%s", "scope": "node", "target": "r01-n01", "start": "2027-02-03T10:00:00Z", ' \
           b'"end": "2027-02-03T11:00:00Z", "cause": "%s"}'
    first = head % (b"J1", "a\u2028b\u0085cd".encode("utf-8"))
    second = head % (b"J2", b"\\ud800 \xff")            # an escaped lone surrogate and a stray byte
    third = head % (b"J3", b"x")
    log = inc.load_incidents(_write_bytes(tmp_path, "log.jsonl", first + b"\r\n" + second + b"\r" + third + b"\n"),
                             lc)
    frame = log.frame.set_index("id")
    assert frame.loc["J1", "cause"] == "a\u2028b\u0085cd" and list(frame.index) == ["J1", "J2", "J3"]
    assert sorted(w.line for w in _warnings(log)) == [2, 2], [w.message for w in log.warnings]
