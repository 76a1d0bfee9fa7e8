"""The claims ledger: reading it (all problems at once), states and outstanding amounts, `slakit claim status`."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from calculators.claim_ledger import read_ledger, record_claims, status_rows, totals
from slaschema.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"
HEADER = "contract,month,amount_claimed,currency,due,filed,reference,answer,amount_accepted,amount_paid,paid_on,note\n"


def _t(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def _ledger(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "claims.csv"
    p.write_text(HEADER + body)
    return p


LEDGER = (
    "example-gb200-2027,2027-01,69638.40,USD,2027-03-03T06:00:00Z,2027-02-20,CASE-1,partial,60000.00,25000.00,2027-03-15,\n"
    "example-gb200-2027,2027-02,2052.21,USD,2027-03-31T06:00:00Z,,,,,,,\n"
    "example-gb200-2027,2027-03,4115.80,USD,2027-05-01T05:00:00Z,2027-04-10,CASE-3,,,,,sent by mail\n"
    "other-contract,2027-03,100.00,EUR,2027-04-15T00:00:00Z,,,,,,,\n"
    "other-contract,2027-02,50.00,EUR,2027-03-31T00:00:00Z,2027-04-02,CASE-9,rejected,,,,late\n"
)


def test_states_and_outstanding(tmp_path):
    rows = read_ledger(_ledger(tmp_path, LEDGER))
    st = {(s.contract, s.month): s for s in status_rows(rows, _t("2027-04-12T00:00:00Z"))}
    jan = st["example-gb200-2027", "2027-01"]
    assert (jan.state, jan.outstanding, jan.disputed) == ("accepted", Decimal("35000.00"), Decimal("9638.40"))
    feb = st["example-gb200-2027", "2027-02"]
    assert (feb.state, feb.outstanding, feb.lost) == ("lapsed", Decimal(0), Decimal("2052.21"))
    mar = st["example-gb200-2027", "2027-03"]
    assert (mar.state, mar.outstanding, mar.flags) == ("awaiting", Decimal("4115.80"), ())
    other = st["other-contract", "2027-03"]
    assert (other.state, other.flags) == ("to_file", ("due_soon",))
    rejected = st["other-contract", "2027-02"]
    assert (rejected.state, rejected.flags, rejected.disputed) == ("rejected", ("filed_late",), Decimal("50.00"))
    tot = totals(list(st.values()))
    assert tot["USD"] == {"outstanding": "39115.80", "to_file": "0.00", "awaiting": "4115.80",
                          "accepted_unpaid": "35000.00", "lost": "2052.21", "disputed": "9638.40"}
    assert tot["EUR"]["to_file"] == "100.00" and tot["EUR"]["disputed"] == "50.00"


def test_paid_in_full_is_settled(tmp_path):
    rows = read_ledger(_ledger(tmp_path, "c1,2027-03,10.00,USD,,2027-04-01,,accepted,,10.00,2027-05-01,\n"))
    s = status_rows(rows, _t("2027-06-01T00:00:00Z"))[0]
    assert (s.state, s.outstanding, s.due_source) == ("paid", Decimal(0), "none")


def test_contract_supplies_the_deadline(tmp_path):
    from slaschema.loader import load_contract

    lc = load_contract(EXAMPLE)
    rows = read_ledger(_ledger(tmp_path, "example-gb200-2027,2027-02,2052.21,USD,,,,,,,,\n"))
    before = status_rows(rows, _t("2027-03-30T00:00:00Z"), {lc.id: lc})[0]
    assert before.due == _t("2027-03-31T06:00:00Z") and before.due_source == "contract"
    assert (before.state, before.flags) == ("to_file", ("due_soon",))
    after = status_rows(rows, _t("2027-03-31T06:00:00Z"), {lc.id: lc})[0]
    assert after.state == "lapsed"


def test_every_problem_at_once(tmp_path):
    body = ("example,2027-13,12.x,USD,tomorrow,2027-02-30,,maybe,,,,\n"
            ",2027-02,10.00,USD,,,,accepted,,,,\n"
            "example,2027-03,10.00,USD,,2027-04-01,,partial,,,,\n"
            "example,2027-04,10.00,USD,,2027-05-01,,accepted,20.00,,,\n"
            "example,2027-04,10.00,USD,,,,,,,,\n")
    with pytest.raises(InputError) as exc:
        read_ledger(_ledger(tmp_path, body))
    got = sorted((p.row, p.column, p.code) for p in exc.value.problems)
    assert got == sorted([
        (1, "month", "ledger_month_invalid"), (1, "amount_claimed", "ledger_amount_invalid"),
        (1, "due", "ledger_due_invalid"), (1, "filed", "ledger_date_invalid"), (1, "answer", "ledger_answer_invalid"),
        (2, "contract", "ledger_missing_value"), (2, "answer", "ledger_answer_without_filing"),
        (3, "amount_accepted", "ledger_accepted_missing"), (4, "amount_accepted", "ledger_accepted_exceeds"),
        (5, "month", "ledger_duplicate_row")])
    p = next(p for p in exc.value.problems if p.code == "ledger_month_invalid")
    assert p.file.endswith("claims.csv") and p.value == "2027-13" and p.fix
    assert "row 1, column month" in p.format() and "[ledger_month_invalid]" in p.format()


def test_missing_column(tmp_path):
    p = tmp_path / "l.csv"
    p.write_text("contract,amount_claimed\nx,1\n")
    with pytest.raises(InputError) as exc:
        read_ledger(p)
    assert [q.code for q in exc.value.problems] == ["ledger_missing_column"]


def _slakit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "slakit", *args], capture_output=True, text=True, cwd=ROOT)


def test_claim_records_months_in_the_ledger_and_status_reads_them(tmp_path):
    ledger = tmp_path / "claims.csv"
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--quarter", "2027-Q1", "--as-of", "2027-03-31T00:00:00Z",
                  "--month", "x", "-o", str(tmp_path / "c.pdf"))
    assert out.returncode == 2          # --month and --quarter together
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--month", "2027-02", "--as-of", "2027-03-29T00:00:00Z",
                  "-o", str(tmp_path / "feb.md"), "--ledger", str(ledger))
    assert out.returncode == 0, out.stderr
    rows = read_ledger(ledger)
    assert [(r.contract, r.month, str(r.amount_claimed), r.filed) for r in rows] == \
        [("example-gb200-2027", "2027-02", "2052.21", None)]
    assert rows[0].due == _t("2027-03-31T06:00:00Z")
    # the team files it; a second run leaves a filed row alone
    ledger.write_text(ledger.read_text().replace(",USD,2027-03-31T06:00:00Z,,", ",USD,2027-03-31T06:00:00Z,2027-03-30,"))
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--month", "2027-02", "--as-of", "2027-03-29T00:00:00Z",
                  "-o", str(tmp_path / "feb.md"), "--ledger", str(ledger))
    assert "0 row(s) added, 0 updated" in out.stdout
    out = _slakit("claim", "status", str(ledger), str(EXAMPLE), "--as-of", "2027-04-05T00:00:00Z", "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["format"] == "slakit-claim-status/1"
    assert doc["rows"][0]["state"] == "awaiting" and doc["rows"][0]["outstanding"] == "2052.21"
    table = _slakit("claim", "status", str(ledger), str(EXAMPLE), "--as-of", "2027-04-05T00:00:00Z")
    assert "2027-03-31 01:00 CDT" in table.stdout and "awaiting" in table.stdout
    assert "USD: outstanding 2,052.21" in table.stdout


def test_status_of_a_bad_ledger_exits_1(tmp_path):
    out = _slakit("claim", "status", str(_ledger(tmp_path, "x,2027-1,1,USD,,,,,,,,\n")))
    assert out.returncode == 1
    assert "[ledger_month_invalid]" in out.stderr and "Traceback" not in out.stderr


def test_record_updates_an_unfiled_row(tmp_path):

    from calculators.claim_case import claim_months
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract

    lc = load_contract(EXAMPLE)
    log = load_incidents(LOG, lc)
    run = claim_months(lc, log, ["2027-03"], datetime.fromisoformat("2027-04-03T00:00:00+00:00"))
    ledger = _ledger(tmp_path, "example-gb200-2027,2027-03,1.00,USD,,,,,,,,\n")
    assert record_claims(ledger, run) == (0, 1)
    row = read_ledger(ledger)[0]
    assert str(row.amount_claimed) == "4115.80" and row.due == _t("2027-05-01T05:00:00Z")


def test_lapsed_months_go_to_the_ledger_as_lost(tmp_path):
    ledger = tmp_path / "claims.csv"
    out = _slakit("claim", str(EXAMPLE), str(LOG), "--quarter", "2027-Q1", "--as-of", "2027-04-03T00:00:00Z",
                  "-o", str(tmp_path / "q1.md"), "--ledger", str(ledger))
    assert out.returncode == 0, out.stderr
    assert "3 row(s) added" in out.stdout
    rows = {r.month: r for r in read_ledger(ledger)}
    assert rows["2027-01"].note == "lapsed before it was claimed" and rows["2027-03"].note == ""
    out = _slakit("claim", "status", str(ledger), str(EXAMPLE), "--as-of", "2027-04-03T00:00:00Z", "--format", "json")
    doc = json.loads(out.stdout)
    assert [(r["month"], r["state"]) for r in doc["rows"]] == [("2027-01", "lapsed"), ("2027-02", "lapsed"),
                                                               ("2027-03", "to_file")]
    assert doc["totals"]["USD"]["lost"] == f"{Decimal('69638.40') + Decimal('2052.21'):.2f}"
    assert doc["totals"]["USD"]["outstanding"] == "4115.80"
