"""A file a command writes that is also a file it reads (`credits C LOG --format csv -o LOG`)
is a usage error `[output_is_input]` (exit 2) before anything is read or written: the atomic
write replaced the incident log (or the ticket export, ...) with the command's output."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.hostile.conftest import cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"
MAP = REPO / "examples" / "ticket-map.yaml"
EXPORT = REPO / "tests" / "fixtures" / "tickets" / "servicedesk_export.csv"


def _refused(r, option: str) -> None:
    assert r.exit_code == 2, r.output
    assert "[output_is_input]" in r.output and option in r.output, r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize("how", ["same", "-o first", "symlink", "relative"])
def test_credits_output_naming_its_log(tmp_path, monkeypatch, how):
    log = tmp_path / "log.csv"
    shutil.copy(LOG, log)
    out = log
    if how == "symlink":
        out = tmp_path / "link.csv"
        os.symlink(log, out)
    if how == "relative":
        monkeypatch.chdir(tmp_path)
        out = Path("log.csv")
    args = ["credits", CONTRACT, log, "--period", "2027-01", "--format", "csv"]
    r = cli(*(["credits", "-o", out, *args[1:]] if how == "-o first" else [*args, "-o", out]))
    _refused(r, "--output")
    assert log.read_bytes() == LOG.read_bytes()


def test_other_commands_and_extra_outputs(tmp_path):
    log = tmp_path / "log.csv"
    shutil.copy(LOG, log)
    export = tmp_path / "export.csv"
    shutil.copy(EXPORT, export)
    _refused(cli("import", "csv", export, "--map", MAP, "-o", export), "--output")
    jlog = tmp_path / "log.json"
    jlog.write_text('[{"id": "I1", "scope": "node", "target": "r01-n07", "start": "2027-01-05T03:00:00Z"}]\n',
                    encoding="utf-8")
    before = jlog.read_bytes()
    _refused(cli("review", CONTRACT, jlog, "--month", "2027-01", "-o", tmp_path / "r.pdf", "--json-out", jlog),
             "--json-out")
    assert jlog.read_bytes() == before
    _refused(cli("claim", CONTRACT, log, "--month", "2027-03", "--as-of", "2027-04-02T00:00:00Z",
                 "-o", tmp_path / "c.pdf", "--ledger", log), "--ledger")
    assert log.read_bytes() == LOG.read_bytes() and export.read_bytes() == EXPORT.read_bytes()
    assert not (tmp_path / "r.pdf").exists() and not (tmp_path / "c.pdf").exists()


def test_an_existing_output_that_is_no_input_is_still_replaced(tmp_path):
    out = tmp_path / "credits.csv"
    out.write_text("old\n", encoding="utf-8")
    r = cli("credits", CONTRACT, LOG, "--period", "2027-01", "--format", "csv", "-o", out)
    assert r.exit_code == 0, r.output
    assert out.read_text(encoding="utf-8").startswith("period,row,")


def test_two_outputs_in_one_file(tmp_path):
    # import lanl -o X --inventory-out X: the inventory replaced the incident log it had written
    lanl = REPO / "tests" / "fixtures" / "lanl" / "lanl_sample.csv"
    out = tmp_path / "out.csv"
    r = cli("import", "lanl", lanl, "-o", out, "--inventory-out", out, "--assume-tz", "America/Denver")
    _refused(r, "--inventory-out")
    assert not out.exists()
    r = cli("import", "lanl", lanl, "-o", "/dev/null", "--inventory-out", "/dev/null", "--assume-tz", "America/Denver")
    assert r.exit_code == 0, r.output
