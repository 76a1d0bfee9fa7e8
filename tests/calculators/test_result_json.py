"""The credits JSON document (`calculators.result_json`) written from the columns is the text
`json.dumps(doc, indent=2, ensure_ascii=False)` writes for the document built as Python
values, record by record (the form the document had before it was written from columns),
with `"format": "slakit-credits/2"` in front and each unit record's `incidents` and `flags`
on one line (`dumps_inline_lists`); and the typed records agree with it."""

from __future__ import annotations

import csv
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from calculators import credits as cr
from calculators import settle
from calculators.engine import compute
from calculators.incidents import load_incidents
from calculators.result import iso
from calculators.result_json import FORMAT, document_text, support_json, termination_json
from slaschema.loader import load_contract
from tests.calculators.helpers import contract, inc, log
from tests.calculators.test_rules import HEAD, NODE_TIERS, t, topo

ROOT = Path(__file__).resolve().parents[2]
from tests.test_jsontext import HIDDEN, _escaped  # noqa: E402


def EXAMPLE_LOG_ROWS() -> list[list[str]]:  # noqa: N802
    return list(csv.reader((ROOT / "examples/gb200-incidents-2027Q1.csv").open(encoding="utf-8")))


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


# --- the document as Python values, built record by record --------------------------------

def _pct(value):
    return format(value.normalize(), "f") if value is not None else "0"


def _annotate(pr, units, nodes):
    for u in units:
        cents = int((Decimal(u["credit"]) * 100).to_integral_value())
        u["credit_before_cap"] = u["credit"]
        u["credit_after_cap_and_minimum"] = cr.money(settle.scaled_cents(cents, pr))
    for n, s in zip(nodes, settle.settled_node_cents(pr).tolist()):
        n["credit_before_cap"] = n["credit"]
        n["credit_after_cap_and_minimum"] = cr.money(int(s))


def _period(pr, include_units):
    units, nodes = [], []
    if include_units:
        for sm in pr.scopes.values():
            units.extend(sm.rows())
        nodes = pr.nodes.rows()
        if pr.nodes.service is not None:       # settled shares are per node in topology order
            keep = [i for i, s in enumerate(pr.nodes.service.tolist()) if s > 0]
            settled = settle.settled_node_cents(pr).tolist()
            for n, i in zip(nodes, keep):
                n["credit_before_cap"] = n["credit"]
                n["credit_after_cap_and_minimum"] = cr.money(int(settled[i]))
            _annotate(pr, units, [])
        else:
            _annotate(pr, units, nodes)
    out = {"period": pr.period.label, "start": iso(pr.period.start), "end": iso(pr.period.end),
           "hours": _pct(pr.period.hours), "fee_total": cr.money(pr.fee_total_cents),
           "credit_uncapped": cr.money(pr.credit_uncapped_cents), "credit_total": cr.money(pr.credit_total_cents),
           "cap_amount": cr.money(pr.cap_cents) if pr.cap_cents is not None else None,
           "cap_applied": pr.cap_applied, "minimum": _pct(pr.minimum), "minimum_applied": pr.minimum_applied,
           "units": units, "nodes": nodes}
    if pr.not_charged_cents is None:
        return out
    rev: dict = {}
    for k, v in out.items():
        rev[k] = v
        if k == "credit_total":
            rev["not_charged_total"] = cr.money(pr.not_charged_cents)
            rev["remedy_total"] = cr.money(pr.remedy_cents)
        elif k == "minimum_applied":
            rev["minimum_rule"] = "more_than" if pr.minimum_strict else "at_least"
    return rev


def _quarters(result):
    out: dict = {}
    for p in result.periods:
        q = f"{p.period.year}-Q{(p.period.month - 1) // 3 + 1}"
        d = out.setdefault(q, {"quarter": q, "months": [], "fee_total": 0, "credit_total": 0})
        d["months"].append(p.period.label)
        d["fee_total"] += p.fee_total_cents
        d["credit_total"] += p.credit_total_cents
        if p.not_charged_cents is not None:
            d["not_charged_total"] = d.get("not_charged_total", 0) + p.not_charged_cents
            d["remedy_total"] = d.get("remedy_total", 0) + p.remedy_cents
    return [{**d, **{k: cr.money(d[k]) for k in ("fee_total", "credit_total", "not_charged_total", "remedy_total")
                     if k in d}} for d in out.values() if len(set(d["months"])) == 3]


def reference(result, include_units=True, include_incidents=False, extra=None):
    doc = {"format": FORMAT, "contract": result.contract, "contract_sha256": result.contract_sha256,
           "incidents_file": result.incidents_file, "incidents_sha256": result.incidents_sha256,
           "currency": result.currency, "timezone": result.timezone, "as_of": iso(result.as_of),
           "skipped_rows": list(result.skipped_rows), "open_incidents": list(result.open_incidents),
           "periods": [_period(p, include_units) for p in result.periods], "quarters": _quarters(result),
           "support": support_json(result.support),
           "termination": termination_json(result.termination)}
    if result.claims is not None:
        by = {m.period: m for m in result.claims.months}
        for p in doc["periods"]:
            m = by.get(p["period"])
            if m is not None:
                p["claim"] = {"due": iso(m.due) if m.due is not None else None, "status": m.status}
        doc["claims_as_of"] = iso(result.claims.as_of)
        doc["claim_window"] = result.claims.window
        doc["claimable_total"] = cr.money(result.claims.claimable_cents)
    if include_incidents:
        f = result.figures
        for p in doc["periods"]:
            p["downtime_by_category"] = f.breakdown_json(f.by_category[p["period"]])
            p["downtime_by_cause"] = f.breakdown_json(f.by_cause[p["period"]])
        doc["incidents"] = f.records()
        doc["rack_day_downtime"] = f.rack_days.to_json()
    doc.update(extra or {})
    return dumps_inline_lists(doc)


def dumps_inline_lists(doc):
    """`json.dumps(doc, indent=2, ensure_ascii=False)`, except that each unit record's
    `incidents` and `flags` are written on one line as `json.dumps(list, ensure_ascii=False)`
    writes them (the layout of the credits document since its incident lists went on one line)."""
    inline = []
    for p in doc.get("periods", ()):
        for u in p.get("units", ()):
            for key in ("incidents", "flags"):
                inline.append(json.dumps(u[key], ensure_ascii=False))
                u[key] = f"\x00inline {len(inline) - 1}\x00"
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    used = []
    text = re.sub(r'"\\u0000inline (\d+)\\u0000"', lambda m: used.append(m[1]) or inline[int(m[1])], text)
    assert used == [str(i) for i in range(len(inline))]
    # the characters a terminal acts on or a viewer hides, as \u escapes (`jsontext.hidden_escaped`)
    return "".join(_escaped(c) if c in HIDDEN else c for c in text)


def assert_same(result, **kw):
    got = document_text(result, **kw)
    want = reference(result, **kw)
    assert got == want
    return got


# --- the cases ------------------------------------------------------------------------------

def example():
    lc = load_contract(str(ROOT / "examples/gb200-contract.yaml"))
    lg = load_incidents(str(ROOT / "examples/gb200-incidents-2027Q1.csv"), lc)
    return lc, lg


def test_example_quarter_with_support_claims_and_incidents():
    lc, lg = example()
    res = compute(lc, lg, ["2027-Q1"], incidents=True)
    text = assert_same(res)
    assert text.startswith('{\n  "format": "slakit-credits/2",\n  "contract": ')
    assert_same(res, include_units=False)
    assert_same(res, include_incidents=True)
    assert_same(res, extra={"performance": [{"level": "x", "share": 0.5}]})


def test_example_month_without_support():
    lc, lg = example()
    assert_same(compute(lc, lg, ["2027-02"], support=False))


def test_proportional_degraded_time_with_fractions_of_a_second():
    text = HEAD + topo({"r1": "n[1-2]"}) + "downtime: {degraded: proportional}\n" + NODE_TIERS
    lc = contract(text)
    r = compute(lc, log(lc, [inc("d1", "n1", t(3, 8), "2027-02-03T08:00:07Z", impact="degraded", gpus_affected=3),
                             inc("d2", "n2", t(3, 8), t(3, 20), impact="degraded", gpus_affected=5)]), ["2027-02"])
    u = r.unit_month("2027-02", "node", "n1")
    assert u.downtime_seconds == Decimal("2.625") and u.lost_gpu_seconds == 21
    text = assert_same(r)
    assert '"downtime_seconds": 2.625,' in text


def test_pro_rata_cap_stacking_and_ids_needing_escapes():
    text = HEAD + topo({"r1": "n[1-4]"}) + """
service_levels:
  node:
    credits: [{below: 99.5%, credit: 10%}]
  rack:
    target: 99.9%
    pro_rata: {multiplier: 2}
credits: {stacking: sum, cap: 3%}
"""
    lc = contract(text)
    r = compute(lc, log(lc, [inc("r", "r1", t(3, 0), t(3, 6), scope="rack"),
                             inc('qu"ote\\ é 日本', "n2", t(5, 0), t(5, 9)),
                             inc("tab\tid", "n3", t(6, 0), t(6, 1))]), ["2027-02"])
    assert r.period("2027-02").cap_applied
    assert_same(r)
    rack = r.unit_month("2027-02", "rack", "r1")
    assert rack.credit_pct == Decimal("1.7857") and rack.credit == Decimal("768.00")
    assert rack.credit_after_cap_and_minimum < rack.credit


def test_ids_a_terminal_would_act_on_are_escaped(tmp_path):
    """C1 (U+009B starts an escape sequence), DEL, bidi overrides, zero-width characters and
    separators in incident ids are written as \\u escapes on the id lists' fast path (an
    Arrow gather) and elsewhere; the document reads back the ids as they are."""
    lc, _ = example()
    ids = ["INC-\u009b31mX", "INC-\x7fdel", "INC-\u202eabc\u200e", "INC-\u200bzw", "INC-\U000e0041tag",
           "INC-\ufeffbom"]
    rows = EXAMPLE_LOG_ROWS()
    for k, new_id in enumerate(ids, start=1):
        rows[k][0] = new_id
    path = tmp_path / "log.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    res = compute(lc, load_incidents(str(path), lc), ["2027-01"])
    text = assert_same(res)
    assert not HIDDEN & set(text)
    doc = json.loads(text)
    found = set(ids) & set(_strings(doc))
    assert "INC-\u009b31mX" in found and len(found) >= 3, found
    assert all("".join(_escaped(c) if c in HIDDEN else c for c in i) in text for i in found)


def test_the_fast_path_looks_at_every_first_byte_of_a_hidden_character():
    """`_needs_escape` sends an Arrow array of ids to the slow path when a byte is the first
    UTF-8 byte of a character `jsontext.hidden_escaped` escapes: that list holds all of them."""
    import re

    from calculators.result_json import _HIDDEN_LEADS
    from slaschema.textsafe import HIDDEN_PAST_C0

    hidden = re.compile(f"[{HIDDEN_PAST_C0}]")
    leads = {chr(c).encode("utf-8")[0] for c in range(0x7F, 0x110000)
             if not 0xD800 <= c <= 0xDFFF and hidden.match(chr(c))}
    assert leads == set(_HIDDEN_LEADS)
    assert {chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and hidden.match(chr(c))} == HIDDEN


def test_revision_1_1_fixture():
    lc = load_contract(str(ROOT / "tests/fixtures/rev11-contract.yaml"))
    lg = load_incidents(str(ROOT / "tests/fixtures/rev11-incidents.csv"), lc)
    res = compute(lc, lg, ["2027-Q1"])
    assert res.revision_1_1
    assert_same(res)
    m = res.month_totals()[0]
    assert m.remedy_total == m.credit_total + m.not_charged_total
    q = res.quarter_totals()[0]
    assert q.remedy_total == sum((x.remedy_total for x in res.month_totals()), Decimal(0))


@pytest.mark.parametrize("label", ["2027-01", "2027-02", "2027-03"])
def test_typed_records_agree_with_the_document(label):
    lc, lg = example()
    res = compute(lc, lg, ["2027-Q1"])
    doc = json.loads(document_text(res))
    p = next(x for x in doc["periods"] if x["period"] == label)
    units = res.unit_months(label)
    assert len(units) == len(p["units"])
    for u, j in zip(units, p["units"]):
        assert (u.scope, u.id, u.met, u.incidents, u.flags) == (j["scope"], j["id"], j["met"],
                                                                tuple(j["incidents"]), tuple(j["flags"]))
        assert u.downtime_seconds == j["downtime_seconds"] and u.excluded_seconds == j["excluded_seconds"]
        assert format(u.availability, "f") == j["availability_pct"] and format(u.credit_pct, "f") == j["credit_pct"]
        assert (u.fee, u.credit, u.credit_after_cap_and_minimum) == (
            Decimal(j["fee"]), Decimal(j["credit"]), Decimal(j["credit_after_cap_and_minimum"]))
    nodes = res.node_credits(label)
    assert [(n.id, format(n.fee, "f"), format(n.credit, "f"), n.basis, format(n.credit_after_cap_and_minimum, "f"))
            for n in nodes] == [(j["id"], j["fee"], j["credit"], j["basis"], j["credit_after_cap_and_minimum"])
                                for j in p["nodes"]]
    m = next(x for x in res.month_totals() if x.period == label)
    assert (format(m.fee_total, "f"), format(m.credit_total, "f"), m.claim_status) == (
        p["fee_total"], p["credit_total"], p["claim"]["status"])
    assert iso(int(m.claim_due.timestamp())) == p["claim"]["due"]


def test_to_json_is_the_document_parsed():
    lc, lg = example()
    res = compute(lc, lg, ["2027-Q1"])
    assert res.to_json() == json.loads(res.dumps()) and res.to_json()["format"] == FORMAT


def test_incidents_of_a_few_units_are_those_of_all_units():
    """The table's rows look up their incident ids without the lists of every unit."""
    lc, lg = example()
    text = HEAD + topo({"r1": "n[1-4]", "r2": "n[5-8]"}, {"c1": ["r1"], "c2": ["r2"]}) + """
downtime:
  rack: {down_when_nodes_down: 2, nodes_follow_rack: true}
  cluster: {down_when_available_below: 60%, nodes_follow_cluster: true}
service_levels:
  node: {credits: [{below: 99.5%, credit: 10%}]}
  rack: {credits: [{below: 99.5%, credit: 10%}]}
  cluster: {credits: [{below: 99.5%, credit: 10%}]}
"""
    lc2 = contract(text)
    small = compute(lc2, log(lc2, [inc("r", "r1", t(3, 0), t(3, 6), scope="rack"),
                                   inc("c", "c2", t(4, 0), t(4, 2), scope="cluster"),
                                   inc("a", "n5", t(5, 0), t(5, 9)), inc("b", "n6", t(5, 1), t(5, 3)),
                                   inc("a2", "n2", t(6, 0), t(6, 1))]), ["2027-02"])
    for res in (compute(lc, lg, ["2027-Q1"]), small):
        for pr in res.periods:
            for sm in pr.scopes.values():
                every = {u.id: u.incidents for u in sm.records(pr)}
                some = list(range(len(sm.ids)))[::-1][:7] + [0]
                assert {u.id: u.incidents for u in sm.records(pr, some)} == {sm.ids[i]: every[sm.ids[i]] for i in some}
                assert all(sm.incidents.get(i, ()) == every[sm.ids[i]] for i in range(len(sm.ids)))
    assert small.unit_month("2027-02", "node", "n1").incidents == ("r",)
