"""Hostile claims inputs: ledgers, evidence packages and the files a claim letter copies into
the package it hands to the provider. Each ends with exit 1 and a coded problem, no traceback,
no hang, nothing written."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.hostile.conftest import SECRET, assert_coded_failure, cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"
HEADER = "contract,month,amount_claimed,currency,due,filed,reference,answer,amount_accepted,amount_paid,paid_on,note\n"
ROW = "x,2027-01,1.00,USD,2027-03-03T06:00:00Z,,,,,,,\n"


def _ledger(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "claims.csv"
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("data,code", [
    ((HEADER + "caf\xe9,2027-01,1,USD,2027-03-03T06:00:00Z,,,,,,,\n").encode("latin-1"), "not_utf8"),
    ((HEADER + "x" * 200_000 + ",2027-01,1,USD,,,,,,,,\n").encode(), "ledger_unreadable"),
    ((HEADER + "x,2027-01,1,USD,0001-01-01T00:00:00+14:00,,,,,,,\n").encode(), "ledger_due_invalid"),
    ((HEADER + "x,2027-01,1,USD,9999-12-31T23:59:59-12:00,,,,,,,\n").encode(), "ledger_due_invalid"),
])
def test_bad_ledger_is_a_coded_problem(tmp_path, data, code):
    p = _ledger(tmp_path, data)
    for fmt in ("table", "json"):
        assert_coded_failure(cli("claim", "status", p, "--format", fmt, "--as-of", "2027-04-01T00:00:00Z"), code)


def test_ledger_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "claims.csv"
    os.mkfifo(fifo)
    assert_coded_failure(cli("claim", "status", fifo), "not_a_regular_file")


def test_rich_markup_and_escapes_in_a_ledger_are_printed_as_text(tmp_path):
    p = _ledger(tmp_path, (HEADER + "x,2027-01,1,[/bold]\x1b]0;pwn\x07<s>,2027-03-03T06:00:00Z,,,,,,,\n").encode())
    r = cli("claim", "status", p, "--as-of", "2027-04-01T00:00:00Z")
    assert r.exit_code == 0, r.output
    assert "[/bold]" in r.output and "\x1b" not in r.output and "\x07" not in r.output


@pytest.mark.parametrize("data", [b"", os.urandom(2048), b"hello", (HEADER + ROW).encode()])
def test_claim_verify_of_something_that_is_no_package(tmp_path, data):
    p = tmp_path / "claim.evidence.tar"
    p.write_bytes(data)
    assert_coded_failure(cli("claim", "verify", p), "package_unreadable")


def test_claim_verify_of_a_manifest_that_is_not_json(tmp_path):
    import io
    import tarfile

    p = tmp_path / "claim.evidence.tar"
    with tarfile.open(p, "w") as tar:
        for name, data in (("manifest.json", b"{not json"), ("claim.json", b"{}")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert_coded_failure(cli("claim", "verify", p), "manifest_invalid")


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_claim_verify_of_a_fifo_or_device_does_not_hang(tmp_path, special):
    if special == "fifo":
        special = tmp_path / "pkg.tar"
        os.mkfifo(special)
    t0 = time.monotonic()
    assert_coded_failure(cli("claim", "verify", special), "not_a_regular_file")
    assert time.monotonic() - t0 < 10


def _letter(tmp_path: Path, *extra: str):
    return cli("claim", CONTRACT, LOG, "--month", "2027-01", "--as-of", "2027-02-05T00:00:00Z",
               "-o", tmp_path / "claim.md", *extra)


def _nothing_written(tmp_path: Path) -> None:
    assert not (tmp_path / "claim.md").exists() and not (tmp_path / "claim.evidence.tar").exists()


def test_environment_is_never_copied_into_the_package_as_a_monitor_log(tmp_path):
    for opt in ("--monitor-log", "--reconcile"):
        r = _letter(tmp_path, opt, "/proc/self/environ")
        assert_coded_failure(r, "path_forbidden")
        _nothing_written(tmp_path)


def test_a_file_that_is_no_monitor_log_or_reconcile_report_is_not_copied(tmp_path):
    secret = tmp_path / "id_rsa"
    secret.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    for opt in ("--monitor-log", "--reconcile"):
        r = _letter(tmp_path, opt, secret)
        assert_coded_failure(r, "evidence_file_invalid")
        assert SECRET not in r.output
        _nothing_written(tmp_path)


def test_monitor_log_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "watch.csv"
    os.mkfifo(fifo)
    assert_coded_failure(_letter(tmp_path, "--monitor-log", fifo), "not_a_regular_file")
    _nothing_written(tmp_path)


def test_as_of_beyond_year_9998_is_a_usage_error(tmp_path):
    r = _letter(tmp_path, "--as-of", "9999-12-31T23:59:59-12:00")
    assert r.exit_code == 2 and "[as_of_out_of_range]" in r.output and "Traceback" not in r.output
    r = cli("claim", "status", _ledger(tmp_path, (HEADER + ROW).encode()), "--as-of", "0001-01-01T00:00:00+14:00")
    assert r.exit_code == 2 and "[as_of_out_of_range]" in r.output


def test_letter_that_cannot_be_written_leaves_nothing(tmp_path):
    r = cli("claim", CONTRACT, LOG, "--month", "2027-01", "--as-of", "2027-02-05T00:00:00Z",
            "-o", "/proc/self/claim.md")
    assert_coded_failure(r, "output_unwritable")


def test_ledger_given_to_a_letter_that_is_a_fifo_is_refused_before_anything_is_written(tmp_path):
    fifo = tmp_path / "claims.csv"
    os.mkfifo(fifo)
    assert_coded_failure(_letter(tmp_path, "--ledger", fifo), "not_a_regular_file")
    _nothing_written(tmp_path)
    assert fifo.is_fifo()
