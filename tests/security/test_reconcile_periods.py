"""`slakit reconcile CONTRACT OURS THEIRS` where no month can be computed: two logs with no
incidents (and no --as-of) agree and have no credit difference to show (it stopped with
unexpected_error, a PeriodError for December 1969); an --as-of past the years slakit computes
is a usage error with its code, not unexpected_error."""

from __future__ import annotations

import json
from pathlib import Path

from tests.hostile.conftest import cli

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"


def test_two_empty_logs_agree_without_a_credit_difference(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text(LOG.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    r = cli("reconcile", CONTRACT, empty, empty, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["agree"] is True
    assert doc["credit_difference"] == {"available": False, "reason": "no_incidents"}


def test_as_of_beyond_the_computed_years_is_a_usage_error():
    r = cli("reconcile", CONTRACT, LOG, LOG, "--as-of", "9999-12-31T00:00:00Z")
    assert r.exit_code == 2, r.output
    assert "[period_out_of_range]" in r.output and "unexpected_error" not in r.output
