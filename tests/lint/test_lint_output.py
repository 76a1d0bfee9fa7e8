"""Lint output: findings in file order, fix snippets about the flagged item, the cluster rule
through the site, duration hints in the field's usual unit, several files, SARIF, profiles."""

from __future__ import annotations

import json

from click.testing import CliRunner

from slakit.cli import main
from slaschema.errors import InputError
from slaschema.loader import load_contract_text
from tests.lint.test_lint_rules import EXAMPLE, chain, delp, setp, variant


def hits(report, rule):
    return [f for f in report.findings if f.rule == rule]


def test_cluster_rule_counts_through_the_site_service_level():
    # no cluster service level, nodes not following the cluster: the rule still makes sites down
    _, with_site = variant(chain(delp("service_levels.cluster"),
                                 setp("service_levels.site", {"target": "99%", "credits": [
                                     {"below": "99%", "credit": "10%"}]})))
    assert not hits(with_site, "SLA008")
    _, without = variant(delp("service_levels.cluster"))
    (f,) = hits(without, "SLA008")
    assert f.path == "downtime.cluster" and "service_levels.site" in f.message


def test_fix_snippets_name_the_flagged_item():
    _, rep = variant(setp("exclusions.emergency_maintenance", {"definition": "Urgent work.", "notice": "2h"}))
    (f,) = [x for x in hits(rep, "SLA014") if "emergency_maintenance" in x.path]
    assert f.fix.splitlines()[1].strip() == "emergency_maintenance:" and "notice: 72h" in f.fix

    def no_source(d):
        for c in d["acceptance"]["criteria"]:
            if c["id"] == "shared-fs-read":
                c.pop("source", None)
    _, rep = variant(no_source)
    (f,) = [x for x in hits(rep, "SLA048") if x.value == "shared-fs-read"]
    assert f.fix.startswith("- id: shared-fs-read\n") and "gemm" not in f.fix and "source:" in f.fix


def test_duration_without_unit_suggests_the_fields_usual_unit():
    text = EXAMPLE.read_text().replace("claim_window: 30d", "claim_window: 30")
    assert "claim_window: 30\n" in text
    try:
        load_contract_text(text, "c.yaml", EXAMPLE.parent)
    except InputError as e:
        (p,) = [p for p in e.problems if p.code == "duration_unit_missing"]
        assert p.fix.startswith("write 30d") and "days" in p.fix and "30m" not in (p.fix + p.message)
    else:
        raise AssertionError("a bare number was accepted as a duration")


def test_findings_are_in_the_order_of_the_file():
    _, rep = variant(chain(setp("exclusions.maintenance.notice", "4h"), delp("support.detection")))
    lines = [(f.line or 0, f.col or 0) for f in rep.findings]
    assert lines == sorted(lines) and len({f.severity for f in rep.findings}) > 1


def write_variants(tmp_path):
    a = tmp_path / "a.yaml"
    a.write_text(EXAMPLE.read_text())
    b = tmp_path / "b.yaml"
    b.write_text(EXAMPLE.read_text().replace("notice: 72h", "notice: 4h", 1))
    bad = tmp_path / "bad.yaml"
    bad.write_text("slakit: 1\ncontract: {id: x}\n")
    return a, b, bad


def test_several_files_at_once(tmp_path, monkeypatch):
    a, b, bad = write_variants(tmp_path)
    monkeypatch.chdir(EXAMPLE.parent)
    r = CliRunner().invoke(main, ["lint", str(a), str(b), str(bad), "--format", "json"])
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["format"] == "slakit-lint/1" and [x["file"] for x in doc["reports"]] == [str(a), str(b)]
    assert any(f["rule"] == "SLA014" for f in doc["reports"][1]["findings"])
    assert not any(f["rule"] == "SLA014" for f in doc["reports"][0]["findings"])
    assert doc["invalid"] and all(p["file"] == str(bad) for p in doc["invalid"])
    table = CliRunner().invoke(main, ["lint", str(a), str(b)])
    assert str(a) in table.output and str(b) in table.output


def test_sarif_output(tmp_path, monkeypatch):
    a, b, bad = write_variants(tmp_path)
    monkeypatch.chdir(EXAMPLE.parent)
    r = CliRunner().invoke(main, ["lint", str(b), str(bad), "--format", "sarif"])
    assert r.exit_code == 1
    sarif = json.loads(r.stdout)
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [x["id"] for x in rules]
    res = [x for x in run["results"] if x["ruleId"] == "SLA014"]
    assert res and res[0]["level"] == "warning" and rules[res[0]["ruleIndex"]]["id"] == "SLA014"
    loc = res[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("b.yaml") and loc["region"]["startLine"] > 1
    assert {x["level"] for x in run["results"]} <= {"error", "warning", "note"}
    assert any(x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("bad.yaml")
               for x in run["results"] if x["ruleId"] not in ids)


def test_public_profile_leaves_out_handover_rules():
    _, default = variant(delp("acceptance"))
    assert {"SLA045"} & default.rule_ids()
    from slaschema.lint import lint
    from slaschema.loader import load_contract

    text = EXAMPLE.read_text()
    start = text.index("\nacceptance:")
    end = text.index("\n", text.index("\n\n", start + 1))
    public_text = text[:start] + text[end:]
    lc = load_contract_text(public_text, "public.yaml", EXAMPLE.parent)
    rep = lint(lc, profile="public")
    assert rep.profile == "public"
    assert not {r for r in rep.rule_ids() if r.startswith("SLA04")} - {"SLA049"} and "SLA049" not in rep.rule_ids()
    assert any(s.rule == "SLA045" and "profile public" in s.reason for s in rep.suppressed)
    assert lint(load_contract(EXAMPLE), profile="public").findings  # other rules still run
