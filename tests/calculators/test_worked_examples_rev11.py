"""The worked examples E-J of sla-semantics.md section 8.9 (revision 1.1), figure by figure."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from calculators.engine import compute
from tests.calculators.helpers import EXAMPLE_CONTRACT, contract, inc, log


def _contract(downtime: str = "{min_outage: 5m}", credits: str = "", node_level: str | None = None,
              extra_levels: str = "", rack_extra: str = "") -> str:
    text = EXAMPLE_CONTRACT.replace("downtime: {min_outage: 5m}", f"downtime: {downtime}")
    if rack_extra:
        text = text.replace('{id: r1, nodes: "n[1-4]"}', '{id: r1, nodes: "n[1-4]"' + rack_extra + "}")
    if node_level is not None:
        text = text.split("service_levels:")[0] + "service_levels:\n" + node_level
    return text + extra_levels + (f"credits: {credits}\n" if credits else "")


def _shows(r, scope: str, unit: str, pct: str, period: str = "2027-02") -> bool:
    """The exact availability truncates to `pct` (4 decimals, as the spec's examples show it)."""
    sm = r.period(period).scopes[scope]
    i = sm.ids.index(unit)
    service = int(sm.service[i]) if sm.service is not None else sm.month_seconds
    exact = (1 - Fraction(int(sm.lnum[i]), int(sm.dn[i]) * service)) * 100
    low = Fraction(Decimal(pct))
    return low <= exact < low + Fraction(1, 10**4)


def _run(text: str, records: list[dict], period: str = "2027-02"):
    lc = contract(text)
    return compute(lc, log(lc, records), [period])


N1_E = [inc("E1", "n1", "2027-02-10T00:00:30Z", "2027-02-10T03:22:10Z")]


def test_example_e_exact_seconds():
    r = _run(_contract(), N1_E)
    u = r.unit("2027-02", "node", "n1")
    assert u["downtime_seconds"] == 201 * 60 + 40
    assert _shows(r, "node", "n1", "99.4998")
    assert u["credit"] == "1075.20"


def test_example_e_full_minutes():
    r = _run(_contract("{min_outage: 5m, measure: {bucket: 1m, counts_when: full}}"), N1_E)
    u = r.unit("2027-02", "node", "n1")
    assert u["downtime_seconds"] == 201 * 60             # minutes 00:01-03:21
    assert _shows(r, "node", "n1", "99.5014")
    assert u["met"] is True and u["credit"] == "0.00"
    assert r.to_json()["periods"][0]["credit_total"] == "0.00"


def test_example_e_any_minute():
    r = _run(_contract("{min_outage: 5m, measure: {bucket: 1m, counts_when: any}}"), N1_E)
    u = r.unit("2027-02", "node", "n1")
    assert u["downtime_seconds"] == 203 * 60             # minutes 00:00-03:22
    assert _shows(r, "node", "n1", "99.4965")
    assert u["credit"] == "1075.20"


def test_example_f_hours_not_charged():
    r = _run(_contract(credits="{not_charged: {per: 1h, when_down_over: 6m}}"),
             [inc("F1", "n2", "2027-02-10T10:55:00Z", "2027-02-10T12:10:00Z"),
              inc("F2", "n3", "2027-02-11T00:00:00Z", "2027-02-11T05:00:00Z")])
    n2 = r.unit("2027-02", "node", "n2")
    assert _shows(r, "node", "n2", "99.8139") and n2["credit"] == "0.00"
    assert r.node("2027-02", "n2")["not_charged"] == "32.00"                 # hours 11 and 12
    n3 = r.unit("2027-02", "node", "n3")
    assert _shows(r, "node", "n3", "99.2559")
    assert n3["charged_fee"] == "10672.00" and n3["fee"] == "10752.00"
    assert n3["credit"] == "1067.20"
    assert r.node("2027-02", "n3")["not_charged"] == "80.00"
    p = r.to_json()["periods"][0]
    assert p["credit_total"] == "1067.20"
    assert p["not_charged_total"] == "112.00"
    assert p["remedy_total"] == "1179.20"
    assert p["fee_total"] == "43008.00"


PRO_RATA_NODE = "  node:\n    target: 99.5%\n    pro_rata: {multiplier: 1}\n"


def test_example_g_minimum_at_least():
    r = _run(_contract("{min_outage: 0s}", credits="{minimum: 1.00}", node_level=PRO_RATA_NODE),
             [inc("G1", "n1", "2027-02-10T00:00:00Z", "2027-02-10T00:03:45Z")])
    assert r.unit("2027-02", "node", "n1")["credit"] == "1.00"          # 225/3600 x 16.00
    p = r.to_json()["periods"][0]
    assert p["credit_total"] == "1.00" and p["minimum_applied"] is False


def test_example_g_minimum_more_than():
    r = _run(_contract("{min_outage: 0s}", credits="{minimum: {more_than: 1.00}}", node_level=PRO_RATA_NODE),
             [inc("G1", "n1", "2027-02-10T00:00:00Z", "2027-02-10T00:03:45Z")])
    p = r.to_json()["periods"][0]
    assert p["credit_uncapped"] == "1.00"
    assert p["credit_total"] == "0.00" and p["minimum_applied"] is True
    assert p["minimum_rule"] == "more_than"


def test_example_h_node_enters_service_mid_month():
    text = _contract().replace('nodes: "n[1-4]"', 'nodes: ["n[1-3]", {name: n4, in_service: {from: 2027-02-15}}]')
    r = _run(text, [inc("H0", "n4", "2027-02-10T00:00:00Z", "2027-02-10T06:00:00Z"),
                    inc("H1", "n4", "2027-02-20T00:00:00Z", "2027-02-20T02:30:00Z")])
    u = r.unit("2027-02", "node", "n4")
    assert u["service_seconds"] == 14 * 86400                    # 20,160 minutes
    assert u["fee"] == "5376.00"                                 # 8 x 2.00 x 336 h
    assert u["downtime_seconds"] == 150 * 60
    assert _shows(r, "node", "n4", "99.2559")
    assert u["credit_pct"] == "10" and u["credit"] == "537.60"
    assert u["incidents"] == ["H1"]
    assert "outside_service" in u["flags"]                        # H0 counts nowhere
    p = r.to_json()["periods"][0]
    assert p["fee_total"] == "37632.00"                           # 3 x 10,752.00 + 5,376.00
    assert p["credit_total"] == "537.60"
    # in January n4 has no service time: no unit-month, no fee
    jan = _run(text, [], "2027-01")
    assert [n["id"] for n in jan.to_json()["periods"][0]["nodes"]] == ["n1", "n2", "n3"]
    assert "n4" not in [x["id"] for x in jan.to_json()["periods"][0]["units"]]


def test_example_i_clock_starts_at_report():
    rec = [inc("I1", "n1", "2027-02-03T10:00:00Z", "2027-02-03T14:00:00Z", reported_at="2027-02-03T10:45:00Z")]
    r = _run(_contract("{min_outage: 5m, counts_from: report}"), rec)
    u = r.unit("2027-02", "node", "n1")
    assert u["downtime_seconds"] == 195 * 60
    assert _shows(r, "node", "n1", "99.5163")
    assert u["credit"] == "0.00"
    r2 = _run(_contract("{min_outage: 5m, counts_from: fault}"), rec)
    u2 = r2.unit("2027-02", "node", "n1")
    assert u2["downtime_seconds"] == 240 * 60 and _shows(r2, "node", "n1", "99.4047")
    assert u2["credit"] == "1075.20"


def test_example_i_not_reported_counts_nowhere():
    r = _run(_contract("{min_outage: 5m, counts_from: report}"),
             [inc("I2", "n1", "2027-02-03T10:00:00Z", "2027-02-03T14:00:00Z")])
    u = r.unit("2027-02", "node", "n1")
    assert u["downtime_seconds"] == 0 and u["credit"] == "0.00"
    assert u["flags"] == ["not_reported"]


RACK_LEVEL = "  rack:\n    target: 99.5%\n    pro_rata: {multiplier: 2EXTRA}\n"


def test_example_j_rack_pro_rata():
    rec = [inc("J1", "r1", "2027-02-10T00:00:00Z", "2027-02-10T02:00:00Z", scope="rack")]
    r = _run(_contract(extra_levels=RACK_LEVEL.replace("EXTRA", "")), rec)
    rack = r.unit("2027-02", "rack", "r1")
    assert _shows(r, "rack", "r1", "99.7023")
    assert rack["met"] is True and rack["credit"] == "256.00"     # 2 h x 64.00 x 2
    for n in ("n1", "n2", "n3", "n4"):
        assert r.node("2027-02", n)["credit"] == "64.00"
    assert r.to_json()["periods"][0]["credit_total"] == "256.00"
    r2 = _run(_contract(extra_levels=RACK_LEVEL.replace("EXTRA", ", only_below_target: true")), rec)
    assert r2.unit("2027-02", "rack", "r1")["credit"] == "0.00"
    assert r2.to_json()["periods"][0]["credit_total"] == "0.00"
