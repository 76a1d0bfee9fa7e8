"""The comparison is a frozen record built by keyword: its fields for known offers, and its
one serializer, `Comparison.to_json()`, writing the kept `slakit-compare/2` documents
(tests/fixtures/golden) byte for byte."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from calculators.reports.compare import Comparison, Offer, SimulationInfo, comparison
from slakit.cli import main
from slaschema.compare.terms import Row
from slaschema.lint import lint
from slaschema.loader import load_contract

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
EXAMPLE = "examples/gb200-contract.yaml"
INVENTORY = "examples/gb200-contract-inventory.yaml"
REV11 = "tests/fixtures/rev11-contract.yaml"


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)         # the documents name the contract files as given (relative)


def _sha(name: str) -> str:
    return hashlib.sha256((ROOT / name).read_bytes()).hexdigest()


def _terms_only() -> Comparison:
    offers = [load_contract(EXAMPLE), load_contract(REV11)]
    return comparison(offers, None, [lint(lc) for lc in offers])


def test_the_record_holds_the_offers_rows_and_counts(at_root):
    cmp = _terms_only()
    assert cmp.offers == (
        Offer(file=EXAMPLE, contract="example-gb200-2027", provider="Example Neocloud Inc.",
              title="GB200 NVL72 managed cluster — Schedule B, Service Levels", sha256=_sha(EXAMPLE)),
        Offer(file=REV11, contract="rev11-demo", provider="P", title=None, sha256=_sha(REV11)))
    assert cmp.labels == ("A: example-gb200-2027", "B: rev11-demo")
    rows = {r.term: r for r in cmp.rows}
    price = rows["price per GPU-hour"]
    assert (price.section, price.values, price.best, price.data) == ("Price", ("3.2500", "2.0000"), (1,), (3.25, 2.0))
    assert rows["node target"].values == ("99%", "99.5%") and rows["node target"].best == (1,)
    lint_row = rows["lint errors / warnings"]
    assert lint_row.values == ("0 / 3", "8 / 10") and lint_row.best == (0,)
    assert lint_row.data == ({"errors": 0, "warnings": 3}, {"errors": 8, "warnings": 10})
    assert len(cmp.rows) == 67 and cmp.best_counts == (27, 21)
    assert cmp.best_counts == tuple(sum(1 for r in cmp.rows if i in r.best) for i in range(2))
    assert cmp.simulation is None and cmp.simulations == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cmp.best_counts = (0, 0)            # type: ignore[misc]
    with pytest.raises(TypeError):
        Offer(EXAMPLE, "x", "P", None, "0")                     # type: ignore[misc]  keyword only
    with pytest.raises(TypeError):
        Row("Price", "x", ("1",), (), "for information")        # type: ignore[misc]  keyword only


def test_to_json_is_the_kept_document(at_root):
    kept = (GOLDEN / "compare-example-rev11.json").read_text(encoding="utf-8")
    assert json.dumps(_terms_only().to_json(), indent=2) + "\n" == kept


def test_the_simulated_comparison_takes_the_typed_summaries(at_root):
    from calculators.simulate.models import builtin
    from calculators.simulate.run import SimSummary, simulate

    offers = [load_contract(EXAMPLE), load_contract(INVENTORY)]
    sims = [simulate(lc, builtin("llama3"), months=2, runs=3, seed=5).summary() for lc in offers]
    cmp = comparison(offers, sims, [lint(lc) for lc in offers])
    assert all(isinstance(s, SimSummary) for s in cmp.simulations) and cmp.simulations == tuple(sims)
    assert cmp.simulation == SimulationInfo(
        model_name="llama3", model_description=builtin("llama3").description, seed=5, runs=3, months=2)
    assert sims[0].fee_total == Decimal("1325376.00") and sims[0].credits.mean == Decimal("2064.40")
    rows = {r.term: r for r in cmp.rows if r.section == "Simulated"}
    assert rows["expected credits (mean)"].values == ("2,064.40 USD",) * 2
    assert rows["fee minus expected credits"].data == (1323311.6, 1323311.6)
    # (1325376.00 - 2064.40) / (1,416 h x 288 GPUs - 194.26 lost GPU-hours)
    assert rows["price per delivered GPU-hour"].data[0] == pytest.approx(1323311.6 / (1416 * 288 - 194.26))
    assert rows["node availability (mean)"].values == ("99.9534%",) * 2
    kept = (GOLDEN / "compare-example-inventory-sim.json").read_text(encoding="utf-8")
    assert json.dumps(cmp.to_json(), indent=2) + "\n" == kept


def test_the_command_writes_the_kept_documents(at_root):
    for args, name in ((["--runs", "0"], "compare-example-rev11.json"),
                       (["--runs", "3", "--months", "2", "--seed", "5", "--no-progress"],
                        "compare-example-inventory-sim.json")):
        second = REV11 if name == "compare-example-rev11.json" else INVENTORY
        r = CliRunner().invoke(main, ["compare", EXAMPLE, second, *args, "--format", "json"])
        assert r.exit_code == 0, r.output
        assert r.stdout == (GOLDEN / name).read_text(encoding="utf-8")
