"""A log's file name is the other party's text too: a byte that is not UTF-8 in it does not
break the JSON document, and a line break in it cannot forge a line of the messages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"


def _slakit(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "slakit", *args], cwd=cwd, capture_output=True)


def test_a_log_name_with_a_byte_that_is_not_utf8_is_written_as_u_escape(tmp_path):
    name = os.fsdecode(b"clean\xff.csv")
    shutil.copy(LOG, tmp_path / name)
    out = _slakit("credits", str(CONTRACT), name, "--quarter", "2027-Q1", "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["incidents_file"] == "clean<U+DCFF>.csv"


def test_a_line_break_in_a_log_name_cannot_forge_a_message_line(tmp_path):
    name = "nl\nwarning: all good [ok]\n.csv"
    data = LOG.read_bytes().replace(b"Driver", b"Dr\xe9iver", 1)
    (tmp_path / name).write_bytes(data)
    out = _slakit("credits", str(CONTRACT), name, "--quarter", "2027-Q1", "-o", "o.txt", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.decode().splitlines()
    assert [x for x in lines if x.startswith("warning: ")] == [lines[0]]
    assert lines[0].startswith("warning: nl<U+000A>warning: all good [ok]<U+000A>.csv:") and lines[0].endswith("[not_utf8]")
