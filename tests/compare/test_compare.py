"""`slakit compare`: rows, best-offer marks, simulated rows, Markdown and PDF output."""

from __future__ import annotations

import copy
import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from pypdf import PdfReader

from slakit.cli import main
from calculators.reports.compare import comparison, render_markdown, render_pdf
from slaschema.compare.terms import best_of, credit_at, price_per_gpu_hour, term_rows
from slaschema.loader import load_contract, load_contract_text
from slaschema.strict_yaml import read_yaml
from tests.contracts import plain

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gb200-contract.yaml"




def variant_text(mutate) -> str:
    data = copy.deepcopy(read_yaml(EXAMPLE.read_bytes()).data)
    mutate(data)
    return yaml.safe_dump(plain(data), sort_keys=False)


def variant(mutate, name="b.yaml"):
    return load_contract_text(variant_text(mutate), name, EXAMPLE.parent)


def offer_b(d):
    d["contract"]["id"] = "offer-b"
    d["pricing"] = {"per_node_month": "9000"}          # 9000 / (4 x 730) = 3.0822 per GPU-hour
    d["credits"]["cap"] = "20%"
    del d["support"]["detection"]
    d["acceptance"]["burn_in"]["duration"] = "24h"
    d["exclusions"]["maintenance"]["max_per_month"] = "4h"


@pytest.fixture(scope="module")
def offers():
    return [load_contract(EXAMPLE), variant(offer_b)]


def row(rows, term):
    (r,) = [r for r in rows if r.term == term]
    return r


def test_price_normalised_per_gpu_hour(offers):
    assert price_per_gpu_hour(offers[1]) == Decimal("9000") / (4 * 730)
    r = row(term_rows(offers), "price per GPU-hour")
    assert r.values == ("3.2500", "3.0822") and r.best == (1,)


def test_best_marks_follow_each_rule(offers):
    rows = term_rows(offers)
    assert row(rows, "cap (share of fee)").best == (0,)              # higher cap is better
    assert row(rows, "detection").best == (0,)                       # a missing target is worst
    assert row(rows, "detection").values == ("2m", "—")
    assert row(rows, "burn-in").best == (1,)
    assert row(rows, "maintenance: monthly cap").best == (1,)        # smaller cap is better
    assert row(rows, "node target").best == ()                       # equal values: no mark
    assert all(r.rule for r in rows)


def test_best_of_rules():
    assert best_of([None, 5, 3], "lower", "worst") == (2,)
    assert best_of([None, 5, 3], "higher", "best") == (0,)
    assert best_of([True, False], "yes", "worst") == (0,)
    assert best_of([1, 1], "lower", "worst") == ()
    assert best_of([1, 2], None, "worst") == ()


def test_credit_at_tiers_and_pro_rata(offers):
    sl = offers[0].model.service_levels
    assert credit_at(sl.node, Decimal(99)) == 0                   # 99% is not below 99%
    assert credit_at(sl.node, Decimal(94)) == 25
    assert credit_at(sl.rack, Decimal(95)) == 10                  # (100 - 95) x 2
    assert credit_at(None, Decimal(95)) is None


def test_comparison_with_simulation_and_renderers(offers):
    from calculators.simulate.models import builtin
    from calculators.simulate.run import simulate

    sims = [simulate(lc, builtin("llama3"), months=2, runs=10, seed=5).summary() for lc in offers]
    doc = comparison(offers, sims)
    sim_rows = [r for r in doc.rows if r.section == "Simulated"]
    terms = {r.term for r in sim_rows}
    assert {"expected credits, % of fee", "value returned (credits / value of lost GPU-hours)",
            "P(chronic-failure exit fires)", "node availability (mean)"} <= terms
    assert doc.simulation.seed == 5 and doc.simulation.runs == 10
    # the row's number is what its label says: credits over the value of the lost GPU-hours (their
    # price), not over the GPU-hours themselves
    row = next(r for r in sim_rows if r.term.startswith("value returned"))
    for v, s in zip(row.values, sims):
        assert float(v) == pytest.approx(float(s.credits.mean) / float(s.value_lost_mean), rel=1e-3)
        assert float(v) != pytest.approx(float(s.credits.mean) / s.lost_gpu_hours_mean, rel=1e-2)
    md = render_markdown(doc)
    assert "| price per GPU-hour | 3.2500 | **3.0822** ✓ |" in md
    pdf1, pdf2 = render_pdf(doc), render_pdf(doc)
    assert pdf1 == pdf2                                           # byte-identical (invariant)
    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf1)).pages)
    assert "Offer comparison" in text and "offer-b" in text and "price per GPU-hour" in text
    assert "3.0822" in text and "expected credits" in text


def test_cli_writes_pdf_and_markdown(tmp_path):
    b = tmp_path / "b.yaml"
    b.write_text(variant_text(offer_b))
    runner = CliRunner()
    pdf = tmp_path / "cmp.pdf"
    res = runner.invoke(main, ["compare", str(EXAMPLE), str(b), "--runs", "4", "--months", "1", "-o", str(pdf),
                               "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [o["contract"] for o in doc["offers"]] == ["example-gb200-2027", "offer-b"]
    assert any(r["term"] == "lint errors / warnings" for r in doc["rows"])
    assert PdfReader(str(pdf)).pages[0].extract_text().startswith("Offer comparison")
    md = tmp_path / "cmp.md"
    res = runner.invoke(main, ["compare", str(EXAMPLE), str(b), "--runs", "0", "-o", str(md)])
    assert res.exit_code == 0, res.output
    assert "Simulated" not in md.read_text() and "## Credits" in md.read_text()


def test_cli_usage_and_input_errors(tmp_path):
    runner = CliRunner()
    assert runner.invoke(main, ["compare", str(EXAMPLE)]).exit_code == 2
    assert runner.invoke(main, ["compare", str(EXAMPLE), str(EXAMPLE), "-o", "x.docx"]).exit_code == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("slakit: 1\n")
    assert runner.invoke(main, ["compare", str(EXAMPLE), str(bad), "--runs", "0"]).exit_code == 1


def offer_custom(d):
    d["contract"]["id"] = "offer-c"
    d["exclusions"]["vendor_recall"] = {"definition": "Hardware recalled by its vendor.", "notice": "24h"}


def test_custom_exclusion_rows_say_no_for_an_offer_without_it(offers):
    rows = term_rows([offers[0], variant(offer_custom)])
    assert row(rows, "vendor_recall: excluded").values == ("no", "yes")
    assert row(rows, "vendor_recall: excluded").best == (0,)          # not excluded is better
    assert row(rows, "vendor_recall: defined").values == ("not excluded", "yes")
    assert row(rows, "vendor_recall: notice").values == ("not excluded", "1d")


def test_json_rows_carry_numbers_and_the_display_text(offers):
    doc = json.loads(json.dumps(comparison(offers).to_json()))
    assert doc["format"] == "slakit-compare/2"
    rows = {r["term"]: r for r in doc["rows"]}
    gpus = rows["GPUs (nodes)"]
    assert gpus["values"] == [{"gpus": 288, "nodes": 72}] * 2 and gpus["display"] == ["288 (72)"] * 2
    price = rows["price per GPU-hour"]
    assert price["values"][0] == 3.25 and abs(price["values"][1] - 9000 / 2920) < 1e-9
    assert rows["detection"]["values"] == [120, None] and rows["detection"]["unit"] == "seconds"
    assert rows["node target"]["values"] == [99, 99] and rows["node target"]["unit"] == "percent"
    assert rows["maintenance: monthly cap"]["values"][1] == 4 * 3600
    for r in doc["rows"]:
        assert all(not isinstance(v, str) or r["display"][i] == v for i, v in enumerate(r["values"])) or \
            r["term"] in ("provider", "architecture", "degraded time", "node credits", "rack credits",
                          "cluster credits", "chronic trigger"), r["term"]


def test_simulated_net_cost_and_price_per_delivered_gpu_hour(offers):
    from calculators.simulate.models import builtin
    from calculators.simulate.run import simulate

    summaries = [simulate(lc, builtin("llama3"), months=2, runs=10, seed=5).summary() for lc in offers]
    sims = [s.to_json() for s in summaries]
    doc = json.loads(json.dumps(comparison(offers, summaries).to_json()))
    rows = {r["term"]: r for r in doc["rows"]}
    net = rows["fee minus expected credits"]
    for i, s in enumerate(sims):
        assert net["values"][i] == pytest.approx(float(s["fee_total"]) - float(s["credits"]["mean"]))
    per = rows["price per delivered GPU-hour"]
    # 2027-01 and 2027-02 in America/Chicago: 744 + 672 hours x 288 GPUs
    hours = (744 + 672) * 288 - sims[0]["lost_gpu_hours"]["mean"]
    assert per["values"][0] == pytest.approx(net["values"][0] / hours)
    assert per["best"] and per["unit"] == "USD per GPU-hour"
    assert per["values"][0] > float(sims[0]["fee_total"]) / ((744 + 672) * 288) * 0.9


def test_best_marks_without_colour_when_piped(tmp_path):
    b = tmp_path / "b.yaml"
    b.write_text(variant_text(offer_b))
    res = CliRunner().invoke(main, ["compare", str(EXAMPLE), str(b), "--runs", "0"])
    assert res.exit_code == 0, res.output
    assert "\x1b[" not in res.output and "best for the buyer marked *" in res.output
    price = next(line for line in res.output.splitlines() if "price per GPU-hour" in line)
    assert "3.0822 *" in price and "3.2500 *" not in price
