"""Verdicts roll up per node, per rack and overall; a scheduler's node list that differs from the
contract's topology is a finding. Judged from a handed-over bundle, rendered everywhere."""

from __future__ import annotations

import io
import json
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner
from rich.console import Console

from acceptance.document import parse_run_document
from acceptance.executors.base import RawOutput
from acceptance.executors.slurm import judge_node_list
from acceptance.report.render import aggregate_lines, render_table
from acceptance.runner import aggregate
from slakit.cli import main
from slaschema.loader import load_contract_text
from tests.contracts import small_contract

from .conftest import FIXTURES, outcome, typed_doc

CONTRACT = small_contract("agg-test", {"r1": "n[1-2]", "r2": "n[3-4]", "r3": "n[5-6]"}, """\
acceptance:
  criteria:
    - id: eth
      check: network.iperf3
      params: {server: 127.0.0.1, duration: 2}
      metric: throughput_gbps
      min: 1
""")


def _v(node, status, cid="c"):
    return {"criterion": cid, "node": node, "status": status, "measured": None, "expected": "", "reason": status,
            "remediation": "", "details": {}}


def _crit(cid, *verdicts):
    from acceptance.results import worst

    return outcome({"id": cid, "status": str(worst(v["status"] for v in verdicts)), "verdicts": list(verdicts)})


@pytest.mark.parametrize(("statuses", "expected"), [
    (["pass", "pass"], "pass"),
    (["pass", "skip"], "skip"),
    (["skip", "warn"], "skip"),           # skip blocks an acceptance, warn does not
    (["warn", "fail"], "fail"),
    (["fail", "error"], "fail"),          # a fail is a definite answer
    (["error", "pass", "skip", "warn", "fail"], "fail"),
    (["error", "not_run", "skip"], "error"),
    (["waived", "warn", "pass"], "waived"),
])
def test_node_status_is_the_worst_of_its_verdicts(statuses, expected):
    contract = load_contract_text(CONTRACT)
    crits = [_crit(f"c{i}", _v("n1", s)) for i, s in enumerate(statuses)]
    agg = aggregate(crits, contract).model_dump()
    (node,) = agg["nodes"]
    assert node["status"] == expected and node["rack"] == "r1"
    assert sum(node["counts"].values()) == len(statuses)
    assert node["criteria"] == {f"c{i}": s for i, s in enumerate(statuses) if s != "pass"}
    assert agg["racks"][0]["status"] == expected and agg["overall"]["status"] == expected


def test_racks_follow_the_topology_and_unknown_nodes_are_grouped_apart():
    contract = load_contract_text(CONTRACT)
    crits = [
        _crit("a", _v("n3", "pass"), _v("n1", "pass"), _v("zz", "warn"), _v("n4", "fail"), _v(None, "skip")),
        _crit("b", _v("n1", "skip"), _v("n3", "pass"), _v("n4", "pass"), _v("_cluster", "pass")),
    ]
    agg = aggregate(crits, contract).model_dump()
    assert [n["node"] for n in agg["nodes"]] == ["n1", "n3", "n4", "zz"]         # topology order, then the rest
    assert [(r["rack"], r["status"], r["nodes"]) for r in agg["racks"]] == [
        ("r1", "skip", 1), ("r2", "fail", 2), ("(not in contract)", "warn", 1)]   # r3 had no verdicts
    r2 = agg["racks"][1]
    assert r2["node_counts"] == {"error": 0, "fail": 1, "warn": 0, "skip": 0, "pass": 1, "not_run": 0, "waived": 0}
    assert r2["counts"] == {"error": 0, "fail": 1, "warn": 0, "skip": 0, "pass": 3, "not_run": 0, "waived": 0}
    o = agg["overall"]
    assert o["status"] == "fail" and o["nodes"] == 4
    assert o["cluster_counts"] == {"error": 0, "fail": 0, "warn": 0, "skip": 1, "pass": 1, "not_run": 0, "waived": 0}
    assert sum(o["counts"].values()) == 9                                        # every verdict once
    assert {n["node"]: n["criteria"] for n in agg["nodes"]}["n4"] == {"a": "fail"}


def test_node_list_judge_missing_extra_and_unavailable():
    ok = RawOutput("n1 idle\nn2 idle\n", "", 0, None, None)
    assert [(v.status, v.reason) for v in judge_node_list(ok, ["n1", "n2"])] == [("pass", "node_list_matches")]
    diff = RawOutput("n1 idle\nn9 drained\n", "", 0, None, None)
    assert [(v.node, v.status, v.reason) for v in judge_node_list(diff, ["n1", "n2"])] == [
        ("n2", "fail", "node_missing_in_scheduler"), ("n9", "warn", "node_not_in_contract")]
    bad = RawOutput("", "slurm_load_partitions: Unable to contact slurm controller", 1, None, None)
    (v,) = judge_node_list(bad, ["n1"])
    assert (v.status, v.reason) == ("error", "node_list_unavailable") and "Unable to contact" in v.measured


def _handover(tmp_path, executor="slurm"):
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    b = tmp_path / "bundle"
    good = (FIXTURES / "iperf3" / "iperf3_tcp_loopback_t2.json").read_text()
    refused = (FIXTURES / "iperf3" / "iperf3_error_connection_refused.json").read_text()
    (b / "raw" / "eth").mkdir(parents=True)
    for node in ("n1", "n2", "n3", "x9"):       # the client's host as iperf3 names it: the node
        (b / "raw" / "eth" / f"{node}.txt").write_text(good.replace('"Linux vm ', f'"Linux {node} '))
    (b / "raw" / "eth" / "n4.json").write_text(json.dumps(
        {"node": "n4", "rc": 1, "started": None, "finished": None, "timed_out": False, "error": None,
         "stdout": refused.replace('"Linux vm ', '"Linux n4 '), "stderr": ""}))
    (b / "raw" / "topology.node-list").mkdir()
    # Slurm knows n1..n3, n5, n6 and x9; the contract lists n1..n6.
    (b / "raw" / "topology.node-list" / "_cluster.txt").write_text(
        "n1 idle\nn2 idle\nn3 idle\nn5 idle\nn6 idle\nx9 idle\n")
    (b / "run.json").write_text(json.dumps({"executor": executor}))
    return contract, b


def test_handed_over_slurm_bundle_reports_the_node_list_and_rolls_up(tmp_path):
    contract, b = _handover(tmp_path)
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(b), "--write", "--format", "json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    first = doc["criteria"][0]
    assert (first["id"], first["check"], first["status"]) == ("topology.node-list", "slurm.node_list", "fail")
    assert [(v["node"], v["status"], v["reason"]) for v in first["verdicts"]] == [
        ("n4", "fail", "node_missing_in_scheduler"), ("x9", "warn", "node_not_in_contract")]
    # eth: n4 refused (error), n5 and n6 have no evidence (not_run), x9 is not judged (warn).
    assert doc["counts"] == {"error": 1, "fail": 1, "warn": 0, "skip": 0, "pass": 0, "not_run": 0, "waived": 0}
    eth = doc["criteria"][1]
    assert eth["status"] == "error"
    assert sorted((v["node"], v["status"], v["reason"]) for v in eth["verdicts"] if v["status"] != "pass") == [
        ("n4", "error", eth["reason"]), ("n5", "not_run", "no_evidence"), ("n6", "not_run", "no_evidence"),
        ("x9", "warn", "evidence_not_in_scope")]
    agg = doc["aggregate"]
    assert {n["node"]: n["status"] for n in agg["nodes"]} == {
        "n1": "pass", "n2": "pass", "n3": "pass", "n4": "fail", "n5": "not_run", "n6": "not_run", "x9": "warn"}
    assert [(r["rack"], r["status"], r["nodes"]) for r in agg["racks"]] == [
        ("r1", "pass", 2), ("r2", "fail", 2), ("r3", "not_run", 2), ("(not in contract)", "warn", 1)]

    # Every renderer shows it: table (summary lines), JUnit, PDF certificate.
    buf = io.StringIO()
    render_table(parse_run_document(doc), Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    assert "topology.node-list" in text and "node_missing_in_scheduler" in text
    assert "rack r2 fail: 2 node(s) — fail 1, pass 1" in text
    assert "not in the contract's topology warn: 1 node(s) — warn 1" in text
    assert "overall fail: 7 node(s) — fail 1, not_run 2, warn 1, pass 3" in text
    assert "node n4 (rack r2) fail: topology.node-list fail, eth error" in text
    assert "REJECTED" in text
    junit = ET.fromstring((b / "junit.xml").read_bytes())
    suite = junit.find("testsuite[@name='topology.node-list']")
    assert suite.get("failures") == "1" and suite.get("tests") == "2"
    pdf = tmp_path / "acceptance.pdf"
    r = CliRunner().invoke(main, ["accept", "report", str(b), "-o", str(pdf)])
    assert r.exit_code == 0, r.output
    from pypdf import PdfReader

    pdf_text = "\n".join(page.extract_text() for page in PdfReader(str(pdf)).pages)
    for needle in ("topology.node-list", "node_missing_in_scheduler", "Per rack and per node",
                   "(not in contract)", "3 node(s) passed every verdict"):
        assert needle in pdf_text, needle


def test_local_runs_have_no_node_list_finding(tmp_path):
    contract, b = _handover(tmp_path, executor="local")
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(b), "--format", "json"])
    doc = json.loads(r.stdout)
    assert [c["id"] for c in doc["criteria"]] == ["eth"]
    assert doc["aggregate"]["overall"]["node_counts"]["pass"] == 3        # n1..n3; x9 is not in the contract
    assert doc["decision"]["result"] == "unjudged" and r.exit_code == 1    # n4 refused, n5, n6 not run


def test_summary_lines_are_capped_for_large_fleets():
    racks = [{"rack": f"r{i:03d}", "status": "fail" if i % 50 == 0 else "pass", "nodes": 18,
              "node_counts": {"fail": 1, "pass": 17} if i % 50 == 0 else {"pass": 18}, "counts": {}} for i in range(200)]
    nodes = [{"node": f"n{i}", "rack": "r000", "status": "fail", "counts": {}, "criteria": {"a": "fail"}}
             for i in range(30)]
    doc = typed_doc(aggregate={"overall": {"status": "fail", "nodes": 3600, "node_counts": {"fail": 30, "pass": 3570},
                                           "counts": {}, "cluster_counts": {}}, "racks": racks, "nodes": nodes})
    lines = [t for _, t in aggregate_lines(doc)]
    assert lines[1].startswith("rack r000 fail") and lines[4].startswith("rack r150 fail")   # bad racks first
    assert "… 180 more rack(s), 180 of them pass" in lines[21]
    assert lines[-1] == "… 10 more node(s) that did not pass (all in results.json)"
    assert len(lines) == 1 + 21 + 21


def test_table_caps_the_remediation_lines():
    verdicts = [{**_v(f"n{i}", "fail", "a"), "reason": "below_min", "remediation": f"fix n{i}"} for i in range(50)]
    doc = typed_doc(run={"state": "complete"}, status="fail", counts={"fail": 1},
                    criteria=[{"id": "a", "check": "storage.fio", "status": "fail", "reason": "below_min",
                               "expected": "", "verdicts": verdicts}])
    buf = io.StringIO()
    render_table(doc, Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    assert "fix n39" in text and "fix n40" not in text
    assert "… 10 more verdict(s) with remediation" in text
