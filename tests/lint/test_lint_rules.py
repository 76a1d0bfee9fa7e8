"""Every lint rule has a contract that triggers it and one that does not.

Variants are built from examples/gb200-contract.yaml by mutating its data and loading the
result as YAML text, so findings also carry real line numbers.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from slakit.cli import main
from slaschema.lint import RULES, lint
from slaschema.lint.engine import SETTINGS_RULE, all_rules
from slaschema.loader import load_contract, load_contract_text
from slaschema.strict_yaml import read_yaml
from tests.contracts import plain

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gb200-contract.yaml"
TEMPLATES = sorted((ROOT / "templates" / "contracts").glob("*.yaml"))




BASE = read_yaml(EXAMPLE.read_bytes(), str(EXAMPLE)).data


def variant(mutate=None) -> tuple[str, object]:
    data = copy.deepcopy(BASE)
    if mutate:
        mutate(data)
    text = yaml.safe_dump(plain(data), sort_keys=False, allow_unicode=True)
    lc = load_contract_text(text, "variant.yaml", EXAMPLE.parent)
    return text, lint(lc, read_yaml(text, "variant.yaml"))


def setp(path: str, value):
    """Mutation setting a dotted path (`credits.cap`), creating maps on the way."""

    def f(d):
        *parents, last = path.split(".")
        for p in parents:
            d = d.setdefault(p, {})
        d[last] = value

    return f


def delp(path: str):
    def f(d):
        *parents, last = path.split(".")
        for p in parents:
            d = d[p]
        del d[last]

    return f


def chain(*fs):
    def f(d):
        for x in fs:
            x(d)

    return f


def drop_criterion(check: str):
    def f(d):
        d["acceptance"]["criteria"] = [c for c in d["acceptance"]["criteria"] if c["check"] != check]

    return f


def add_sources(d):
    for c in d["acceptance"]["criteria"]:
        if "min" in c or "max" in c:
            c.setdefault("source", "datasheet")


BASELINE = None  # the unmodified example

# rule id -> (mutation that triggers it, mutation that does not)
CASES = {
    "SLA000": (setp("lint", {"disable": [{"rule": "SLA052"}]}),
               setp("lint", {"disable": [{"rule": "SLA052", "reason": "exit terms are in the MSA"}]})),
    "SLA001": (delp("downtime.rack"), BASELINE),
    "SLA002": (delp("service_levels.rack"), BASELINE),
    "SLA003": (chain(setp("topology.architecture", "hgx-8gpu"), setp("topology.gpus_per_node", 8),
                     delp("downtime.rack"), delp("service_levels.node")),
               delp("service_levels.node")),            # NVL72 with a rack commitment is fine
    "SLA004": (chain(delp("downtime.cluster"), delp("service_levels.cluster")), BASELINE),
    "SLA005": (setp("downtime.degraded", "ignore"), BASELINE),
    "SLA006": (setp("downtime.min_outage", "30m"), BASELINE),
    "SLA007": (setp("downtime.rack.down_when_nodes_down", 6), BASELINE),
    "SLA008": (chain(setp("downtime.rack.nodes_follow_rack", False), delp("service_levels.rack")),
               BASELINE),
    "SLA009": (chain(setp("downtime.degraded", "down"), setp("downtime.measure", {"bucket": "1m", "counts_when": "full"})),
               chain(setp("downtime.degraded", "down"), setp("downtime.measure", {"bucket": "1m", "counts_when": "any"}))),
    "SLA010": (delp("exclusions.maintenance.notice"), BASELINE),
    "SLA011": (delp("exclusions.security_patch.max_per_month"), BASELINE),
    "SLA012": (delp("exclusions.force_majeure.definition"), BASELINE),
    "SLA013": (delp("exclusions.customer_caused.definition"), BASELINE),
    "SLA014": (setp("exclusions.maintenance.notice", "4h"), BASELINE),
    "SLA015": (BASELINE, chain(setp("exclusions.maintenance.max_per_month", "2h"),
                               setp("exclusions.security_patch.max_per_month", "1h"))),
    "SLA020": (setp("credits.cap", "5%"), BASELINE),
    "SLA021": (setp("credits.claim_window", "14d"), BASELINE),
    "SLA022": (setp("credits.minimum", "10000"), BASELINE),
    "SLA029": (BASELINE, setp("credits.claim_window", {"months_after": 3})),
    "SLA023": (setp("service_levels.rack.pro_rata.multiplier", "0.5"), BASELINE),
    "SLA024": (setp("service_levels.node.credits", [{"below": "99%", "credit": "10%"},
                                                    {"below": "90%", "credit": "100%"}]), BASELINE),
    "SLA025": (setp("service_levels.node.target", "99.5%"), BASELINE),
    "SLA026": (setp("service_levels.cluster.credits", [{"below": "99.5%", "credit": "5%"},
                                                       {"below": "99%", "credit": "10%"}]), BASELINE),
    "SLA027": (setp("service_levels.rack.pro_rata.only_below_target", True),
               setp("service_levels.rack.pro_rata.only_below_target", False)),
    "SLA028": (setp("credits.minimum", {"more_than": "1.00"}), BASELINE),
    "SLA030": (delp("support.detection"), BASELINE),
    "SLA031": (chain(delp("support.restore"), delp("support.hot_spares")), BASELINE),
    "SLA032": (setp("support.response.sev1", "2h"), BASELINE),
    "SLA033": (setp("support.log_export", False), BASELINE),
    "SLA034": (setp("support.customer_monitoring", False), BASELINE),
    "SLA035": (setp("support.hot_spares", {"nodes": 4}), BASELINE),
    "SLA036": (BASELINE, setp("support.restore.cluster", "48h")),
    "SLA037": (setp("downtime.counts_from", "report"), setp("downtime.counts_from", "fault")),
    "SLA040": (delp("acceptance.deadline"), BASELINE),
    "SLA041": (setp("acceptance.remedies", {"termination_right_after": "30d"}), BASELINE),
    "SLA042": (setp("acceptance.remedies", {"credit_per_day_late": "1%"}), BASELINE),
    "SLA043": (setp("acceptance.burn_in.duration", "4h"), BASELINE),
    "SLA044": (drop_criterion("storage.fio"), BASELINE),
    "SLA045": (setp("acceptance.criteria", []), BASELINE),
    "SLA046": (BASELINE, lambda d: d["acceptance"]["criteria"].append(
        {"id": "sec-versions", "check": "security.versions"})),
    "SLA047": (BASELINE, setp("access", {"provider_staff_keys": [], "customer_keys": ["ssh-ed25519 AAAA x"]})),
    "SLA048": (BASELINE, add_sources),
    "SLA049": (drop_criterion("health.detection"), BASELINE),
    "SLA050": (delp("termination.chronic"), BASELINE),
    "SLA051": (setp("termination.chronic", {"months_below_target": 6, "within_months": 12}), BASELINE),
    "SLA052": (BASELINE, setp("termination.exit_assistance", "30d")),
}


def test_every_rule_has_a_case():
    assert set(CASES) == set(RULES) | {SETTINGS_RULE}
    assert len(RULES) >= 22


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_triggers_and_clears(rule_id):
    bad, good = CASES[rule_id]
    _, report = variant(bad)
    hits = [f for f in report.findings if f.rule == rule_id]
    assert hits, f"{rule_id} did not fire"
    for f in hits:
        assert f.line is not None and f.line >= 1
        assert f.why and f.fix and f.message
        yaml.safe_load(f.fix)  # the fix is valid YAML
    _, clean = variant(good)
    assert rule_id not in clean.rule_ids()


def test_second_variant_of_detection_and_burn_in():
    _, r = variant(setp("support.detection", "5m"))
    (f,) = [f for f in r.findings if f.rule == "SLA030"]
    assert f.value == "5m" and f.path == "support.detection"
    _, r = variant(delp("acceptance.burn_in"))
    assert "SLA043" in r.rule_ids()


def test_inventory_alone_does_not_cover_gpu_compute():
    def only_inventory(d):
        d["acceptance"]["criteria"] = [c for c in d["acceptance"]["criteria"]
                                       if c["check"] not in ("gpu.gemm", "gpu.dcgm")]

    _, r = variant(only_inventory)
    (f,) = [f for f in r.findings if f.rule == "SLA044"]
    assert f.value == ["gpu"]


def test_line_number_points_at_the_value():
    text, report = variant(setp("credits.cap", "5%"))
    (f,) = [f for f in report.findings if f.rule == "SLA020"]
    line = text.splitlines()[f.line - 1]
    assert line.strip().startswith("cap:") and f.value == "5%" and f.severity == "error"
    assert not report.ok


def test_unknown_rule_in_disable_is_an_error():
    _, r = variant(setp("lint", {"disable": [{"rule": "SLA999", "reason": "typo"}]}))
    (f,) = [f for f in r.findings if f.rule == SETTINGS_RULE]
    assert f.value == "SLA999" and f.path == "lint.disable[0].rule"


def test_disable_with_reason_suppresses_and_reports():
    _, r = variant(chain(setp("credits.cap", "5%"),
                         setp("lint", {"disable": [{"rule": "SLA020", "reason": "cap agreed in MSA"}]})))
    assert "SLA020" not in r.rule_ids()
    assert [(s.rule, s.findings) for s in r.suppressed] == [("SLA020", 1)]


def test_rule_metadata_is_complete():
    for r in all_rules():
        assert r.id.startswith("SLA") and len(r.id) == 6
        assert r.severity in ("error", "warning", "info")
        assert r.title and len(r.why) > 40
        yaml.safe_load(r.fix)


@pytest.mark.skipif(not TEMPLATES, reason="no templates in templates/contracts yet")
@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_templates_have_no_error_findings(path):
    report = lint(load_contract(path), read_yaml(path.read_bytes(), str(path)))
    errors = [(f.rule, f.message) for f in report.findings if f.severity == "error"]
    assert errors == []


def test_example_has_no_error_findings():
    report = lint(load_contract(EXAMPLE))
    assert report.ok


def test_cli_exit_codes_and_json(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(main, ["lint", str(EXAMPLE), "--format", "json"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.output)
    assert doc["ok"] is True and doc["counts"]["error"] == 0
    assert {f["rule"] for f in doc["findings"]} >= {"SLA046", "SLA047"}
    text, _ = variant(setp("credits.claim_window", "7d"))
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    res = runner.invoke(main, ["lint", str(bad)])
    assert res.exit_code == 1
    assert "SLA021" in res.output
    listing = runner.invoke(main, ["lint", "--rules", "--format", "json"])
    listed = json.loads(listing.output)
    assert listing.exit_code == 0 and listed["format"] == "slakit-lint-rules/1"
    assert len(listed["rules"]) == len(RULES) + 1 and {"id", "severity", "why"} <= set(listed["rules"][0])


def test_cli_invalid_contract_exits_1(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("slakit: 1\ncontract: {}\n")
    res = CliRunner().invoke(main, ["lint", str(p)])
    assert res.exit_code == 1


@pytest.mark.parametrize("cadence,window,fires", [
    ("quarterly", "30d", True), ("quarterly", "74d", True), ("quarterly", "75d", False),
    ("quarterly", {"months_after": 2}, True), ("quarterly", {"months_after": 3}, False),
    ("monthly", "30d", False), ("monthly", {"months_after": 1}, False),
    ("quarterly", "14d", False),            # SLA021 reports a window under 30 days
])
def test_claims_lapse_before_the_review(cadence, window, fires):
    text, r = variant(chain(setp("review.cadence", cadence), setp("credits.claim_window", window)))
    hits = [f for f in r.findings if f.rule == "SLA029"]
    assert bool(hits) == fires, [f.message for f in r.findings]
    if hits:
        assert hits[0].path == "credits.claim_window"
        assert text.splitlines()[hits[0].line - 1].strip().startswith(("claim_window:", "months_after:"))
    if window == "14d":
        assert "SLA021" in r.rule_ids()


def test_readme_counts_the_rules_of_the_catalogue():
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (count,) = re.findall(r"slakit lint contract\.yaml +# (\d+) rules from the buyer's checklist", readme)
    checklist = [r for r in all_rules() if r.id != SETTINGS_RULE]
    assert int(count) == len(checklist), (count, len(checklist))
