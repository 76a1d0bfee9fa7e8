"""Chronic-failure termination judged with earlier months: --history FILE and --history-from."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from calculators.engine import compute
from calculators.history import chronic_with_history, load_history_files
from slakit.cli import main
from slaschema.errors import InputError
from tests.calculators.helpers import contract, log
from tests.calculators.test_rules import HEAD, NODE_TIERS, topo

CONTRACT = HEAD + topo({"r1": "n[1-3]"}) + NODE_TIERS + """
termination:
  chronic: {months_below_target: 2, within_months: 3}
"""
# n1: a day down in January and in February (2 of 3 -> right reached in February)
# n2: a day down in February only (one more month below target would reach it)
# n3: a day down in December only (out of the window after February: not near)
LOG = """id,scope,target,start,end
d3,node,n3,2026-12-05T00:00:00Z,2026-12-06T00:00:00Z
j1,node,n1,2027-01-05T00:00:00Z,2027-01-06T00:00:00Z
f1,node,n1,2027-02-05T00:00:00Z,2027-02-06T00:00:00Z
f2,node,n2,2027-02-07T00:00:00Z,2027-02-08T00:00:00Z
"""


@pytest.fixture()
def files(tmp_path):
    c = tmp_path / "c.yaml"
    c.write_text(CONTRACT)
    lg = tmp_path / "log.csv"
    lg.write_text(LOG)
    return tmp_path, str(c), str(lg)


def _credits(c, lg, *args):
    r = CliRunner().invoke(main, ["credits", c, lg, *args])
    return r


def test_single_month_alone_cannot_see_the_window(files):
    _, c, lg = files
    r = _credits(c, lg, "--period", "2027-02", "--format", "json")
    assert r.exit_code == 0, r.output
    ch = json.loads(r.output)["termination"]["chronic"]
    assert ch["triggered"] == [] and ch["window_complete"] is False


def test_history_files_reach_the_right(files):
    tmp, c, lg = files
    for m in ("2026-12", "2027-01"):
        r = _credits(c, lg, "--period", m, "--format", "json", "-o", str(tmp / f"{m}.json"))
        assert r.exit_code == 0, r.output
    r = _credits(c, lg, "--period", "2027-02", "--format", "json",
                 "--history", str(tmp / "2026-12.json"), "--history", str(tmp / "2027-01.json"))
    assert r.exit_code == 0, r.output
    ch = json.loads(r.output)["termination"]["chronic"]
    assert ch["termination_right"] is True
    assert ch["triggered"] == [{"scope": "node", "id": "n1", "months_below_target": ["2027-01", "2027-02"]}]
    assert ch["near"] == [{"scope": "node", "id": "n2", "months_below_target": ["2027-02"]}]
    assert ch["months_considered"] == ["2026-12", "2027-01", "2027-02"] and ch["window_complete"] is True
    assert ch["history_months"] == ["2026-12", "2027-01"] and ch["months_missing"] == []
    # the same from the log itself
    r2 = _credits(c, lg, "--period", "2027-02", "--format", "json", "--history-from", "2026-12")
    assert r2.exit_code == 0, r2.output
    assert json.loads(r2.output)["termination"]["chronic"] == ch
    # the money of the reviewed month does not change
    plain = json.loads(_credits(c, lg, "--period", "2027-02", "--format", "json").output)
    assert json.loads(r2.output)["periods"] == plain["periods"]
    table = _credits(c, lg, "--period", "2027-02", "--history-from", "2026-12").output
    assert "termination right" in table and "one month below target away from the termination right: n2" in table


def test_part_of_the_window_missing_is_said(files):
    _, c, lg = files
    r = _credits(c, lg, "--period", "2027-02", "--format", "json", "--history-from", "2027-01")
    ch = json.loads(r.output)["termination"]["chronic"]
    assert ch["months_missing"] == ["2026-12"] and ch["window_complete"] is False
    assert "2026-12" in ch["note"]
    assert [t["id"] for t in ch["triggered"]] == ["n1"]


def test_near_needs_the_months_the_next_window_keeps():
    lc = contract(CONTRACT)
    from tests.calculators.helpers import inc

    res = compute(lc, log(lc, [inc("f2", "n2", "2027-02-07T00:00:00Z", "2027-02-08T00:00:00Z")]), ["2027-02"])
    ch = chronic_with_history(lc, res, {"2026-12": frozenset({("node", "n3")}), "2027-01": frozenset()})
    assert [u.id for u in ch.near] == ["n2"] and ch.triggered == ()
    # computed months win over a history file's month
    ch2 = chronic_with_history(lc, res, {"2027-02": frozenset({("node", "n1")}), "2027-01": frozenset({("node", "n1")})})
    assert ch2.triggered == () and [u.id for u in ch2.near] == ["n1", "n2"]


def test_bad_history_files_are_all_reported(files):
    tmp, c, lg = files
    (tmp / "bad.json").write_text("{not json")
    (tmp / "other.json").write_text(json.dumps({"contract": "someone-else", "periods": []}))
    (tmp / "shape.json").write_text(json.dumps({"contract": "rules", "periods": [{"period": "2027-01"}]}))
    r = CliRunner().invoke(main, ["credits", c, lg, "--period", "2027-02", "--format", "json",
                                  "--history", str(tmp / "bad.json"), "--history", str(tmp / "other.json"),
                                  "--history", str(tmp / "shape.json")])
    assert r.exit_code == 1
    codes = [p["code"] for p in json.loads(r.output)["problems"]]
    assert codes == ["history_unreadable", "history_contract_mismatch", "history_invalid"]


def test_a_number_python_will_not_read_is_an_unreadable_history(files):
    # an integer of 5,001 digits: json.loads raised ValueError, an [unexpected_error]
    tmp, c, lg = files
    (tmp / "big.json").write_text('{"contract": "rules", "periods": [], "x": 1' + "0" * 5000 + "}")
    r = CliRunner().invoke(main, ["credits", c, lg, "--period", "2027-02", "--format", "json",
                                  "--history", str(tmp / "big.json")])
    assert r.exit_code == 1, r.output
    assert [p["code"] for p in json.loads(r.output)["problems"]] == ["history_unreadable"]
    a = {"contract": "rules", "periods": [{"period": "2027-01", "units": [
        {"scope": "node", "id": "n1", "met": False}]}]}
    b = {"contract": "rules", "periods": [{"period": "2027-01", "units": [
        {"scope": "node", "id": "n1", "met": True}]}]}
    (tmp / "a.json").write_text(json.dumps(a))
    (tmp / "b.json").write_text(json.dumps(b))
    with pytest.raises(InputError) as e:
        load_history_files([str(tmp / "a.json"), str(tmp / "b.json")], "rules")
    assert [p.code for p in e.value.problems] == ["history_conflict"]


def test_history_from_must_be_earlier(files):
    _, c, lg = files
    assert _credits(c, lg, "--period", "2027-02", "--history-from", "2027-02").exit_code == 2
    assert _credits(c, lg, "--period", "2027-02", "--history-from", "2027-13").exit_code == 2


def test_review_says_reached_and_near(files):
    tmp, c, lg = files
    out = tmp / "r.md"
    r = CliRunner().invoke(main, ["review", c, lg, "--month", "2027-02", "-o", str(out), "--history-from", "2026-12"])
    assert r.exit_code == 0, r.output
    md = out.read_text()
    assert "Termination right reached: node n1 below target in 2027-01, 2027-02 (2 of 3 months)." in md
    assert "Near the chronic-failure right (one more month below target would reach it): node n2." in md
    assert "earlier months included: 2026-12, 2027-01." in md
    plain = tmp / "p.md"
    assert CliRunner().invoke(main, ["review", c, lg, "--month", "2027-02", "-o", str(plain)]).exit_code == 0
    assert "Termination right reached" not in plain.read_text()


def test_history_reads_both_format_versions_and_refuses_others(files):
    """A history file written before the `format` field existed, or with `slakit-credits/2`,
    is read; another format value is refused by name."""
    tmp, c, lg = files
    doc = json.loads(_credits(c, lg, "--period", "2027-01", "--format", "json").output)
    assert doc["format"] == "slakit-credits/2"
    old = {k: v for k, v in doc.items() if k != "format"}
    (tmp / "v2.json").write_text(json.dumps(doc))
    (tmp / "v1.json").write_text(json.dumps(old))
    (tmp / "v9.json").write_text(json.dumps({**doc, "format": "slakit-credits/9"}))
    for name in ("v1.json", "v2.json"):
        r = _credits(c, lg, "--period", "2027-02", "--format", "json", "--history", str(tmp / name))
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["termination"]["chronic"]["history_months"] == ["2027-01"]
    r = _credits(c, lg, "--period", "2027-02", "--format", "json", "--history", str(tmp / "v9.json"))
    assert r.exit_code == 1
    (problem,) = json.loads(r.output)["problems"]
    assert problem["code"] == "history_invalid" and "slakit-credits/9" in problem["message"]
