import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest

from slaschema.loader import dump_contract, load_contract, load_contract_text
from slaschema.schema import REGENERATE, SCHEMA_PATH, schema_text
from slaschema.strict_yaml import read_yaml
from slaschema.templates import TEMPLATE_DIR, list_templates, render_template

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = sorted(TEMPLATE_DIR.glob("*.yaml"))
CONTRACTS = TEMPLATES + [REPO / "examples" / "gb200-contract.yaml"]


def test_required_templates_exist():
    names = {n for n, _ in list_templates()}
    assert {"hgx-h100-bronze", "hgx-b200-silver", "gb200-nvl72-gold", "gb300-nvl72-rack-only"} <= names


def test_schema_has_not_drifted():
    assert SCHEMA_PATH.read_text() == schema_text(), (
        f"slaschema/contract.schema.json is out of date with the models; regenerate with: {REGENERATE}")


def _plain(x):
    if isinstance(x, Decimal):
        return float(x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.stem)
def test_contract_validates_round_trips_and_matches_json_schema(path):
    lc = load_contract(path)
    again = load_contract_text(dump_contract(lc.model), "dumped.yaml", path.parent)
    assert again.model == lc.model
    schema = json.loads(SCHEMA_PATH.read_text())
    data = _plain(read_yaml(path.read_bytes(), str(path)).data)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(data))
    assert errors == []
    assert "yaml-language-server: $schema=" in path.read_text().splitlines()[0]


def test_json_schema_rejects_what_the_loader_rejects():
    schema = json.loads(SCHEMA_PATH.read_text())
    data = _plain(read_yaml((REPO / "examples" / "gb200-contract.yaml").read_bytes()).data)
    data["downtime"]["min_outgae"] = "5m"
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(data))


def test_gb300_rack_only_semantics():
    lc = load_contract(TEMPLATE_DIR / "gb300-nvl72-rack-only.yaml")
    m = lc.model
    assert [s for s, _ in m.service_levels.items()] == ["rack"]
    assert m.downtime.rack.down_when_nodes_down == 1 and m.downtime.rack.nodes_follow_rack
    assert m.service_levels.rack.effective_target == Decimal("95.0")
    assert set(lc.topology.nodes_per_rack()) == {18}


def test_gb200_gold_rack_rule():
    m = load_contract(TEMPLATE_DIR / "gb200-nvl72-gold.yaml").model
    assert m.downtime.rack.down_when_nodes_down == 3 and m.downtime.rack.nodes_follow_rack


@pytest.mark.parametrize("name", [n for n, _ in list_templates()])
def test_init_writes_valid_contract(name, tmp_path):
    out = tmp_path / "sub" / "c.yaml"
    r = subprocess.run([sys.executable, "-m", "slakit", "init", "--template", name, "--provider", "Acme: Cloud",
                        "--customer", 'Big "Lab"', "--nodes", "r[01-03]-n[01-18]", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lc = load_contract(out)
    assert lc.model.contract.provider == "Acme: Cloud"
    assert lc.model.contract.customer == 'Big "Lab"'
    assert lc.topology.counts()["nodes"] == 54
    assert lc.topology.racks == ("r01", "r02", "r03")
    # the schema comment points at the real schema file from the output's folder
    ref = out.read_text().splitlines()[0].split("$schema=")[1]
    assert (out.parent / ref).resolve() == SCHEMA_PATH.resolve()
    r = subprocess.run([sys.executable, "-m", "slakit", "init", "--template", name, "--provider", "A",
                        "--customer", "B", "--nodes", "x[1-2]", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 2  # exists, no --force


def test_init_unknown_template(tmp_path):
    r = subprocess.run([sys.executable, "-m", "slakit", "init", "--template", "nope", "--provider", "A",
                        "--customer", "B", "--nodes", "x[1-2]", "-o", str(tmp_path / "c.yaml")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "unknown template" in r.stderr


@pytest.mark.parametrize("option, value, code_point", [
    ("--provider", "Acme\nCloud", "U+000A"),        # YAML folded it into "Acme Cloud" without a word
    ("--provider", "Acme\x1bCloud", "U+001B"),      # was invalid YAML blamed on <generated>:8:18
    ("--customer", "Big\u202eLab", "U+202E"),       # a bidi override turns the name around
    ("--id", "c\tx", "U+0009"),
])
def test_init_refuses_a_name_that_is_not_one_printable_line(tmp_path, option, value, code_point):
    from tests.hostile.conftest import cli

    args = {"--provider": "Acme", "--customer": "Big Lab", "--id": "c1"} | {option: value}
    out = tmp_path / "c.yaml"
    r = cli("init", "--template", "gb200-nvl72-gold", *[x for kv in args.items() for x in kv],
            "--nodes", "r[01-02]-n[01-18]", "-o", out)
    assert r.exit_code == 2, r.output
    assert f"'{option}'" in r.output and code_point in r.output and "[text_not_printable]" in r.output, r.output
    assert "<generated>" not in r.output and not out.exists()


def test_init_keeps_the_joiners_and_marks_of_persian_and_hebrew_names(tmp_path):
    from tests.hostile.conftest import cli

    out = tmp_path / "c.yaml"
    name = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u200f\u05e2\u05e0\u05df"     # ZWNJ and RLM
    r = cli("init", "--template", "gb200-nvl72-gold", "--provider", name, "--customer", "\u0141\u00f3d\u017a",
            "--nodes", "r[01-02]-n[01-18]", "-o", out)
    assert r.exit_code == 0, r.output
    assert load_contract(out).model.contract.provider == name


@pytest.mark.parametrize("customer, cid", [
    ("Łódź Příbram", "lodz-pribram-gb200-nvl72-gold"),        # was d-p-bram-gb200-nvl72-gold
    ("Müller & Søn GmbH", "muller-son-gmbh-gb200-nvl72-gold"),
    ("某某智算云", "gb200-nvl72-gold"),                         # no Latin letters: the template's name alone
    ("Big Lab", "big-lab-gb200-nvl72-gold"),
])
def test_the_default_contract_id_keeps_the_base_letters_of_accented_names(customer, cid):
    text = render_template("gb200-nvl72-gold", provider="A", customer=customer, nodes="r[01-02]-n[01-18]")
    assert load_contract_text(text, "x.yaml").model.contract.id == cid


def test_render_chunks_plain_names():
    text = render_template("hgx-h100-bronze", provider="A", customer="B", nodes="gpu-[001-020]")
    lc = load_contract_text(text, "x.yaml")
    assert lc.topology.nodes_per_rack() == [8, 8, 4]


def test_show_and_schema_commands():
    ex = str(REPO / "examples" / "gb200-contract.yaml")
    r = subprocess.run([sys.executable, "-m", "slakit", "show", "--format", "json", ex], capture_output=True, text=True)
    assert r.returncode == 0
    d = json.loads(r.stdout)
    assert d["topology"] == {"sites": 1, "clusters": 1, "racks": 4, "nodes": 72, "gpus": 288}
    # 288 GPUs x 3.25 x 24 h x 30 d
    assert d["fees_per_month"]["30d"] == "673920.00"
    r = subprocess.run([sys.executable, "-m", "slakit", "show", ex], capture_output=True, text=True)
    assert r.returncode == 0 and "72 nodes" in r.stdout and "pro rata" in r.stdout
    r = subprocess.run([sys.executable, "-m", "slakit", "schema"], capture_output=True, text=True)
    assert json.loads(r.stdout)["title"].startswith("slakit contract")
    r = subprocess.run([sys.executable, "-m", "slakit", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and "slakit" in r.stdout
