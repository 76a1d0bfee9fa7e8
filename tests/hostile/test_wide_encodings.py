"""Files saved as UTF-16 or UTF-32 (a spreadsheet's "Unicode text", PowerShell's `>`): an
incident log is refused as what it is (`log_encoding`, with the fix) instead of every column
reported missing; a ticket export is read as the same text; an inventory is `not_utf8` that
names the encoding."""

from __future__ import annotations

import json

import pytest

from slaschema.safefiles import wide_encoding
from tests.hostile.conftest import REPO, assert_coded_failure, cli

CONTRACT = REPO / "examples" / "gb200-contract.yaml"
LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"

ENCODINGS = [("utf-16", "UTF-16LE (with a byte-order mark)", "UTF-16"),      # Python writes LE with a BOM
             ("utf-16-be", "UTF-16BE", "UTF-16BE"), ("utf-16-le", "UTF-16LE", "UTF-16LE"),
             ("utf-32", "UTF-32LE (with a byte-order mark)", "UTF-32"), ("utf-32-le", "UTF-32LE", "UTF-32LE"),
             ("utf-32-be", "UTF-32BE", "UTF-32BE")]


@pytest.mark.parametrize("encoding, said, iconv", ENCODINGS)
def test_an_incident_log_in_utf16_or_utf32_is_refused_as_such(tmp_path, encoding, said, iconv):
    log = tmp_path / "log.csv"
    log.write_bytes(LOG.read_text(encoding="utf-8").encode(encoding))
    assert wide_encoding(log.read_bytes()) == (said, iconv)
    r = cli("credits", CONTRACT, log, "--quarter", "2027-Q1")
    assert_coded_failure(r, "log_encoding")
    assert f"{log}: the incident log is {said} text, not UTF-8" in r.output, r.output
    assert f"iconv -f {iconv} -t UTF-8" in r.output and "missing_column" not in r.output
    r = cli("credits", CONTRACT, log, "--quarter", "2027-Q1", "--format", "json")
    (p,) = json.loads(r.stdout)["problems"]
    assert (p["code"], p["file"]) == ("log_encoding", str(log))
    r = cli("reconcile", log, LOG)                  # read with no contract: the same refusal
    assert_coded_failure(r, "log_encoding")


def test_the_suggested_conversion_gives_the_log_back(tmp_path):
    import subprocess

    log = tmp_path / "log.csv"
    log.write_bytes(LOG.read_text(encoding="utf-8").encode("utf-16"))
    fixed = tmp_path / "log-utf8.csv"
    with fixed.open("wb") as out:
        subprocess.run(["iconv", "-f", "UTF-16", "-t", "UTF-8", str(log)], stdout=out, check=True)
    assert cli("credits", CONTRACT, fixed, "--quarter", "2027-Q1").output == \
        cli("credits", CONTRACT, LOG, "--quarter", "2027-Q1").output.replace(str(LOG), str(fixed))


def test_a_json_lines_log_in_utf16_is_refused_too(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text('{"id": "I1", "scope": "node", "target": "r01-n01", "start": "2027-01-05T00:00:00Z"}\n',
                   encoding="utf-16")
    assert_coded_failure(cli("credits", CONTRACT, log, "--quarter", "2027-Q1"), "log_encoding")


def test_nul_bytes_in_a_utf8_log_are_not_taken_for_utf16(tmp_path):
    """One NUL in a header or a row of a UTF-8 file is not the NUL of every other byte."""
    log = tmp_path / "log.csv"
    lines = LOG.read_text(encoding="utf-8").splitlines()
    log.write_text("\n".join([lines[0], lines[1].replace(",", "\0,", 1), *lines[2:]]) + "\n", encoding="utf-8")
    assert wide_encoding(log.read_bytes()) is None
    assert "[log_encoding]" not in cli("credits", CONTRACT, log, "--quarter", "2027-Q1").output
    assert wide_encoding(b"id\0,scope\0,target,start,end\n") is None
    assert wide_encoding(b"") is None and wide_encoding(b"\0\0\0") is None


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_a_ticket_export_in_utf16_imports_as_its_utf8_text(tmp_path, encoding):
    export = REPO / "tests" / "fixtures" / "tickets" / "servicedesk_export.csv"
    wide = tmp_path / "export.csv"
    wide.write_bytes(export.read_text(encoding="utf-8").encode(encoding))
    mapping = REPO / "examples" / "ticket-map.yaml"
    want, got = tmp_path / "want.csv", tmp_path / "got.csv"
    assert cli("import", "csv", export, "--map", mapping, "-o", want).exit_code == 0
    r = cli("import", "csv", wide, "--map", mapping, "-o", got)
    assert r.exit_code == 0, r.output
    assert got.read_bytes() == want.read_bytes()


def test_an_inventory_in_utf16_names_the_encoding(tmp_path):
    inventory = tmp_path / "inventory.csv"
    inventory.write_text((REPO / "examples" / "gb200-inventory.csv").read_text(encoding="utf-8"), encoding="utf-16")
    contract = tmp_path / "contract.yaml"
    contract.write_text((REPO / "examples" / "gb200-contract-inventory.yaml").read_text(encoding="utf-8")
                        .replace("gb200-inventory.csv", "inventory.csv"), encoding="utf-8")
    r = cli("validate", contract)
    assert r.exit_code == 1, r.output
    assert "UTF-16LE (with a byte-order mark) text, not UTF-8" in r.output and "[not_utf8]" in r.output, r.output
    assert "iconv -f UTF-16 -t UTF-8" in r.output
