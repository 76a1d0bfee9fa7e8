"""`credits.claim_window` (a duration or `{months_after: N}`) and `credits.claim`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from slaschema.errors import InputError
from slaschema.loader import load_contract_text
from slaschema.models import ClaimMonthsAfter, claim_window_min_seconds, describe_claim_window
from tests.schema.conftest import BASE

CLAIM = """credits:
  cap: 50%
  claim_window: {months_after: 2}
  claim:
    send_to: sla-claims@provider.example
    evidence: [incident timestamps, affected nodes, customer monitoring logs]
"""


def _with(credits: str) -> str:
    assert "credits:\n  cap: 50%\n" in BASE
    return BASE.replace("credits:\n  cap: 50%\n", credits, 1)


def _problems(text: str):
    with pytest.raises(InputError) as exc:
        load_contract_text(text, "bad.yaml")
    return exc.value.problems


def test_months_after_and_claim_instructions_load():
    cp = load_contract_text(_with(CLAIM), "ok.yaml").model.credits
    assert cp.claim_window == ClaimMonthsAfter(months_after=2)
    assert cp.claim is not None and cp.claim.send_to == "sla-claims@provider.example"
    assert cp.claim.evidence == ["incident timestamps", "affected nodes", "customer monitoring logs"]


def test_duration_window_still_a_duration():
    cp = load_contract_text(_with("credits:\n  claim_window: 30d\n"), "ok.yaml").model.credits
    assert cp.claim_window == timedelta(days=30)
    assert cp.claim is None


def test_round_trip_keeps_both_forms():
    from slaschema.loader import dump_contract

    lc = load_contract_text(_with(CLAIM), "ok.yaml")
    again = load_contract_text(dump_contract(lc.model), "again.yaml")
    assert again.model.credits == lc.model.credits


@pytest.mark.parametrize("window,code,needle", [
    ("{months_after: 0}", "claim_months_invalid", "months_after"),
    ("{months_after: 1.5}", "claim_months_invalid", "months_after"),
    ("{months_after: true}", "claim_months_invalid", "months_after"),
    ("{month_after: 2}", "unknown_field", "month_after"),
    ("30", "duration_unit_missing", "claim_window"),
    ("0d", "claim_window_zero", "claim_window"),
    ("soon", "duration_invalid", "claim_window"),
])
def test_bad_claim_window(window, code, needle):
    text = _with(f"credits:\n  claim_window: {window}\n")
    problems = _problems(text)
    p = next((p for p in problems if p.code == code), None)
    assert p is not None, [q.format() for q in problems]
    assert p.line == next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)
    assert p.path.startswith("credits.claim_window")
    assert f"[{code}]" in p.format()


@pytest.mark.parametrize("claim,code", [
    ("{evidence: [logs]}", "missing_field"),
    ("{send_to: ' '}", "empty_value"),
    ("{send_to: a@b.example, evidence: [logs, Logs]}", "claim_evidence_duplicate"),
    ("{send_to: a@b.example, evidence: ['']}", "empty_value"),
    ("{send_to: a@b.example, evidance: [logs]}", "unknown_field"),
])
def test_bad_claim_instructions(claim, code):
    problems = _problems(_with(f"credits:\n  claim_window: 30d\n  claim: {claim}\n"))
    assert code in [p.code for p in problems], [p.format() for p in problems]


def test_all_claim_errors_at_once():
    problems = _problems(_with("credits:\n  claim_window: {months_after: 0}\n  claim: {send_to: ''}\n"))
    assert sorted(p.code for p in problems) == ["claim_months_invalid", "empty_value"]


def test_min_seconds_and_words():
    assert claim_window_min_seconds(timedelta(days=30)) == 30 * 86400
    assert claim_window_min_seconds(ClaimMonthsAfter(months_after=1)) == 28 * 86400
    assert claim_window_min_seconds(ClaimMonthsAfter(months_after=2)) == 59 * 86400      # Feb + Mar
    assert claim_window_min_seconds(ClaimMonthsAfter(months_after=12)) == 365 * 86400
    assert claim_window_min_seconds(None) is None
    assert describe_claim_window(ClaimMonthsAfter(months_after=2)) == \
        "by the end of the 2nd calendar month after the month"
    assert describe_claim_window(timedelta(days=30)) == "30d after the end of the month"


def test_schema_accepts_both_forms():
    import jsonschema

    from slaschema.schema import contract_schema

    schema = contract_schema()
    window = schema["$defs"]["CreditPolicy"]["properties"]["claim_window"]
    sub = {"$defs": schema["$defs"], **window}
    jsonschema.validate({"months_after": 2}, sub)
    jsonschema.validate("30d", sub)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"months_after": 0}, sub)


def test_show_prints_window_and_claim_instructions(tmp_path: Path):
    f = tmp_path / "c.yaml"
    f.write_text(_with(CLAIM))
    out = subprocess.run([sys.executable, "-m", "slakit", "show", str(f), "--format", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    credits = json.loads(out.stdout)["credits"]
    assert credits["claim_window"] == "by the end of the 2nd calendar month after the month"
    assert credits["claim"] == {"send_to": "sla-claims@provider.example",
                                "evidence": ["incident timestamps", "affected nodes", "customer monitoring logs"]}
    table = subprocess.run([sys.executable, "-m", "slakit", "show", str(f)], capture_output=True, text=True,
                           env={**os.environ, "COLUMNS": "200"})
    assert "sla-claims@provider.example" in table.stdout
    assert "2nd calendar month" in table.stdout


def test_compare_ranks_months_after_by_its_shortest_case(tmp_path: Path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(_with("credits:\n  claim_window: 60d\n"))
    b.write_text(_with(CLAIM))
    out = subprocess.run([sys.executable, "-m", "slakit", "compare", str(a), str(b), "--format", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    (row,) = [r for r in json.loads(out.stdout)["rows"] if r["term"] == "claim window"]
    assert row["display"] == ["60d", "end of month +2 (at least 59d)"]
    assert row["values"] == [60 * 86400, 59 * 86400] and row["unit"] == "seconds"
    assert row["best"] == [0]                    # 60 days beat a window that can be 59


def test_schedule_states_window_and_where_claims_go(tmp_path: Path):
    f = tmp_path / "c.yaml"
    f.write_text(_with(CLAIM))
    out = subprocess.run([sys.executable, "-m", "slakit", "draft", str(f), "-o", str(tmp_path / "s.md")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "s.md").read_text()
    assert ("Claims: the customer claims a month's credit to sla-claims@provider.example, by the end of the 2nd "
            "calendar month after that month; a credit not claimed by then lapses.") in md
    assert "Evidence: a claim comes with incident timestamps; affected nodes; customer monitoring logs." in md
