"""`slakit reconcile CONTRACT LOG`: a contract followed by one log is a usage error naming what
is missing (the contract was read as OURS, row by row, into missing_value problems)."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.conftest import cli

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"


def test_contract_and_one_log_is_a_usage_error():
    r = cli("reconcile", CONTRACT, LOG)
    assert r.exit_code == 2, r.output
    assert "[reconcile_arguments]" in r.output and "THEIRS" in r.output
    assert "missing_value" not in r.output
