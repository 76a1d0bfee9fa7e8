"""The simulator reproduces its failure model and respects the order of contracts."""

from __future__ import annotations

import copy
import csv
import json
import math
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from calculators.periods import month
from calculators.simulate.generate import generate, lost_gpu_hours, union_seconds
from calculators.simulate.models import BUILTIN, builtin, from_yaml, load_model
from calculators.simulate.run import simulate
from slakit.cli import main
from slaschema.errors import InputError
from slaschema.loader import load_contract, load_contract_text
from slaschema.strict_yaml import read_yaml
from tests.contracts import plain

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gb200-contract.yaml"
SHARED = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="module")
def lc():
    return load_contract(EXAMPLE)




def variant(mutate):
    data = copy.deepcopy(read_yaml(EXAMPLE.read_bytes()).data)
    mutate(data)
    return load_contract_text(yaml.safe_dump(plain(data), sort_keys=False), "variant.yaml", EXAMPLE.parent)


@pytest.mark.parametrize("name", BUILTIN)
def test_generated_rate_matches_model(lc, name):
    """Mean incidents per 1,000 GPU-days over many runs equals the model's rate within 4 sigma."""
    model = builtin(name)
    topo = lc.topology
    start = month(2027, 1, "UTC").start
    end = start + 365 * 86400
    runs = 4000
    logs = generate(topo, model, start, end, runs, np.random.default_rng(7))
    gpu_days = topo.gpu_count * 365
    per_run = model.rate_per_1000_gpu_days(topo.architecture, 4, 18) * gpu_days / 1000
    if name == "titan":     # hazard changes at age 1 y = 365.25 d: the horizon stays in year 0
        per_run = sum(c.rate_at(0.0) / 1000 * {"gpu": topo.gpu_count, "rack": len(topo.racks)}[c.unit] * 365
                      for c in model.for_architecture(topo.architecture))
    observed = len(logs) / runs
    sigma = math.sqrt(per_run / runs)          # Poisson: variance = mean
    assert abs(observed - per_run) < 4 * sigma + 1e-9, (observed, per_run)


def test_llama3_rate_is_the_published_table(lc):
    model = builtin("llama3")
    gpu_rate = sum(c.hazard[0].rate for c in model.causes if c.unit == "gpu")
    assert gpu_rate == pytest.approx(419 / (16384 * 54) * 1000, rel=1e-4)   # 0.4736 per 1,000 GPU-days
    assert all(c.source and c.repair.source for c in model.causes)
    rack = [c for c in model.causes if c.unit == "rack"]
    assert rack and rack[0].architectures == ("gb200-nvl72", "gb300-nvl72")
    assert model.for_architecture("hgx-8gpu") == tuple(c for c in model.causes if c.unit != "rack")


def test_per_cause_counts_follow_the_table(lc):
    model = builtin("llama3")
    start = month(2027, 1, "UTC").start
    logs = generate(lc.topology, model, start, start + 365 * 86400, 3000, np.random.default_rng(11))
    counts = np.bincount(logs.cause, minlength=len(logs.causes))
    faulty = [i for i, c in enumerate(logs.causes) if c.name == "faulty_gpu"][0]
    hbm = [i for i, c in enumerate(logs.causes) if c.name == "gpu_hbm3_memory"][0]
    assert counts[faulty] / counts[hbm] == pytest.approx(148 / 72, rel=0.05)


def test_package_data_matches_shared_table():
    src = SHARED / "published_interruption_tables.csv"
    if not src.is_file():
        pytest.skip("../shared/data/published_interruption_tables.csv is not next to the repo")
    rows = [r for r in csv.DictReader(src.open()) if r["study"].startswith("Llama 3")]
    shipped = list(csv.DictReader((ROOT / "calculators/simulate/data/llama3_interruptions.csv").open()))
    assert [(r["root_cause"], r["interruptions"], r["source"]) for r in rows] == \
           [(r["root_cause"], r["interruptions"], r["source"]) for r in shipped]


def test_titan_hazard_grows_with_age():
    c = builtin("titan").causes[0]
    assert c.rate_at(0.5) < c.rate_at(1.5) < c.rate_at(2.5)
    assert builtin("titan-wearout").fleet_age_years == 2.0


def test_repair_distribution_median_and_p90(lc):
    model = builtin("llama3")
    start = month(2027, 1, "UTC").start
    logs = generate(lc.topology, model, start, start + 365 * 86400, 3000, np.random.default_rng(5))
    rack = [i for i, c in enumerate(logs.causes) if c.unit == "rack"][0]
    d = (logs.end - logs.start)[logs.cause == rack] / 3600
    assert np.median(d) == pytest.approx(30, rel=0.1)
    assert np.percentile(d, 90) == pytest.approx(96, rel=0.15)


def test_seed_is_deterministic(lc):
    a = simulate(lc, builtin("llama3"), months=2, runs=20, seed=3).to_json()
    b = simulate(lc, builtin("llama3"), months=2, runs=20, seed=3).to_json()
    c = simulate(lc, builtin("llama3"), months=2, runs=20, seed=4).to_json()
    assert a == b and a != c


def test_stricter_contract_never_pays_less(lc):
    """Same topology, model and seed: stricter terms give per-run credits >= laxer ones."""
    lax = variant(lambda d: (d["credits"].__setitem__("cap", "10%"),
                             d["service_levels"]["node"].__setitem__(
                                 "credits", [{"below": "99%", "credit": "5%"}, {"below": "90%", "credit": "50%"}])))
    strict = variant(lambda d: (d["credits"].__setitem__("cap", "100%"),
                                d["service_levels"]["node"].__setitem__("target", "99.5%"),
                                d["service_levels"]["node"].__setitem__(
                                    "credits", [{"below": "99.5%", "credit": "10%"}, {"below": "99%", "credit": "25%"},
                                                {"below": "95%", "credit": "100%"}])))
    results = {}
    for name, c in (("lax", lax), ("base", lc), ("strict", strict)):
        results[name] = simulate(c, builtin("llama3"), months=3, runs=60, seed=21).figures.credits_cents
    assert np.all(results["strict"] >= results["base"])
    assert np.all(results["base"] >= results["lax"])
    assert results["strict"].mean() > results["lax"].mean()


STRICT_LAX = {
    "min_outage": (lambda d: d["downtime"].__setitem__("min_outage", "30m"),
                   lambda d: d["downtime"].__setitem__("min_outage", "0s")),
    "rack_k": (lambda d: d["downtime"]["rack"].__setitem__("down_when_nodes_down", 6),
               lambda d: d["downtime"]["rack"].__setitem__("down_when_nodes_down", 1)),
    "degraded": (lambda d: d["downtime"].__setitem__("degraded", "ignore"),
                 lambda d: d["downtime"].__setitem__("degraded", "down")),
    "stacking": (lambda d: d["credits"].__setitem__("stacking", "max"),
                 lambda d: d["credits"].__setitem__("stacking", "sum")),
    "multiplier": (lambda d: d["service_levels"]["rack"]["pro_rata"].__setitem__("multiplier", "1"),
                   lambda d: d["service_levels"]["rack"]["pro_rata"].__setitem__("multiplier", "3")),
}


@pytest.mark.parametrize("term", sorted(STRICT_LAX))
def test_each_stricter_term_never_pays_less(term):
    lax_m, strict_m = STRICT_LAX[term]
    lax = simulate(variant(lax_m), builtin("llama3"), months=2, runs=30, seed=8).figures.credits_cents
    strict = simulate(variant(strict_m), builtin("llama3"), months=2, runs=30, seed=8).figures.credits_cents
    assert np.all(strict >= lax), term
    assert strict.mean() >= lax.mean()


def test_statistics_are_consistent(lc):
    r = simulate(lc, builtin("llama3"), months=3, runs=40, seed=1)
    data = r.to_json()
    f = r.figures
    assert f.credits_cents.shape == (40,) and f.credits_month_cents.shape == (40, 3)
    assert Decimal(data["credits"]["p50"]) <= Decimal(data["credits"]["p95"]) <= Decimal(data["credits"]["max"])
    assert set(data["availability"]) == {"node", "rack", "cluster"}
    for v in data["availability"].values():
        assert 0 <= float(v["p5"]) <= float(v["p50"]) <= float(v["p95"]) <= 100
    assert 0 <= data["termination"]["chronic_any"] <= 1
    # capacity lost is at most the whole horizon
    assert np.all(f.lost_gpu_hours <= r.gpus * (r.periods[-1].end - r.periods[0].start) / 3600)
    assert data["value_returned"]["ratio_of_means"] > 0


def test_union_seconds_merges_overlaps():
    key = np.array([0, 0, 0, 1])
    s = np.array([0, 5, 20, 0])
    e = np.array([10, 12, 30, 3])
    keys, secs = union_seconds(key, s, e)
    assert keys.tolist() == [0, 1] and secs.tolist() == [22, 3]


def test_lost_gpu_hours_counts_a_rack_event(lc):
    model = builtin("llama3")
    logs = generate(lc.topology, model, 0, 86400 * 30, 1, np.random.default_rng(0))
    rack_only = logs.take(np.flatnonzero(logs.scope == 1))
    expected = sum(min(int(e), 86400 * 30) - int(s) for s, e in zip(rack_only.start, rack_only.end)) * 72 / 3600
    assert lost_gpu_hours(rack_only, lc.topology)[0] == pytest.approx(expected)


def test_yaml_model(tmp_path, lc):
    p = tmp_path / "m.yaml"
    p.write_text("""name: only-gpus
causes:
  - name: gpu
    unit: gpu
    rate_per_1000_unit_days: 2.0
    repair: {median: 1h, p90: 4h, source: "test"}
    source: "test"
  - name: patch
    unit: node
    rate_per_1000_unit_days: 10
    category: maintenance
    notice: 96h
    repair: {median: 2h, p90: 2h, source: "test"}
    source: "test"
""")
    m = from_yaml(p)
    assert m.rate_per_1000_gpu_days("gb200-nvl72", 4, 18) == pytest.approx(2.0 + 10 / 4)
    r = simulate(lc, m, months=1, runs=5, seed=0)
    assert r.to_json()["incidents"]["mean_per_run"] > 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ncauses:\n  - {name: a, unit: gpu, rate: 1, source: s,\n"
                   "     repair: {median: 1h, p90: 2h, source: s}}\n")
    with pytest.raises(InputError) as e:
        from_yaml(bad)
    assert e.value.problems[0].code == "failure_model_invalid" and e.value.problems[0].line is not None
    with pytest.raises(InputError):
        load_model("no-such-model")


def test_cli_json_and_chart(tmp_path):
    runner = CliRunner()
    png = tmp_path / "c.png"
    res = runner.invoke(main, ["simulate", str(EXAMPLE), "--runs", "8", "--months", "2", "--seed", "2",
                               "--format", "json", "--chart", str(png)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["runs"] == 8 and data["periods"] == ["2027-01", "2027-02"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pdf1, pdf2 = tmp_path / "a.pdf", tmp_path / "b.pdf"
    for p in (pdf1, pdf2):
        assert runner.invoke(main, ["simulate", str(EXAMPLE), "--runs", "4", "--months", "1",
                                    "--chart", str(p)]).exit_code == 0
    assert pdf1.read_bytes() == pdf2.read_bytes() and pdf1.read_bytes()[:4] == b"%PDF"
    shown = runner.invoke(main, ["simulate", str(EXAMPLE), "--show-model"])
    assert "arXiv:2407.21783" in shown.output
    assert runner.invoke(main, ["simulate", str(EXAMPLE), "--chart", "x.svg"]).exit_code == 2
    assert runner.invoke(main, ["simulate", str(EXAMPLE), "--failure-model", "nope"]).exit_code == 1


def test_titan_hazard_is_derived_from_the_lifetimes():
    src = SHARED / "titan_gpu_life" / "gc_summary_loc.csv"
    if not src.is_file():
        pytest.skip("../shared/data/titan_gpu_life is not next to the repo")
    import pandas as pd

    d = pd.read_csv(src)
    shipped = list(csv.DictReader((ROOT / "calculators/simulate/data/titan_gpu_hazard.csv").open()))
    assert len(shipped) == 6
    for row in shipped:
        k = int(row["age_from_years"])
        exposure = np.clip(d["years"] - k, 0, 1).sum()
        failures = int((d["dead"] & (d["years"] >= k) & (d["years"] < k + 1)).sum())
        assert int(row["failures"]) == failures
        assert float(row["hazard_per_1000_gpu_days"]) == pytest.approx(failures / (exposure * 365.25) * 1000,
                                                                       rel=1e-3)
        assert "TitanGPULife" in row["source"]


def test_example_failure_model_file(lc):
    m = load_model(str(ROOT / "examples" / "failure-model.yaml"))
    assert m.name == "llama3-plus-maintenance" and len(m.causes) == len(builtin("llama3").causes) + 1
    r = simulate(lc, m, months=1, runs=5, seed=0)
    assert r.figures.incidents.mean() > 72 * 0.5     # at least the maintenance windows
