"""Collect on a node, judge on the runner: the probe document round-trips exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from acceptance.results import Status
from acceptance.security import audit_access, audit_isolation, audit_versions
from acceptance.security.audit import evaluate_probe, evaluate_versions, probe_argv
from acceptance.security.host import Host, table_runner
from acceptance.security.minimums import load_minimums
from acceptance.security.serial import ProbeError, probe_document, raw_from_json, to_json

from .test_access_check import CONTRACT, node  # noqa: F401  (fixture)
from .test_versions_check import OUTPUTS, fake_tree


def roundtrip(check, raw):
    doc = json.loads(json.dumps(probe_document(check, raw, "2026-11-30T12:00:00+00:00", "n1")))
    return raw_from_json(doc, check)


def test_roundtrip_real_host():
    host = Host()
    raws = {
        "security.versions": audit_versions.collect(host),
        "security.access": audit_access.collect(host, audit_access.AccessParams()),
        "security.isolation": audit_isolation.collect(host, audit_isolation.IsolationParams(bmc_address="127.0.0.1:1")),
    }
    for check, raw in raws.items():
        assert roundtrip(check, raw) == raw, check


def test_roundtrip_fake_node(node):  # noqa: F811
    raw = audit_access.collect(Host(node), audit_access.AccessParams())
    assert roundtrip("security.access", raw) == raw
    assert raw.walks and raw.listeners and raw.key_files


def test_versions_judged_from_probe_equal_local(tmp_path):
    fake_tree(tmp_path, {"mlx5_0": "28.41.1000"})
    raw = audit_versions.collect(Host(tmp_path, run=table_runner(OUTPUTS)))
    table = load_minimums()
    doc = json.loads(json.dumps(probe_document("security.versions", raw, "2026-11-30T12:00:00+00:00", "n1")))
    remote = evaluate_probe(doc, "security.versions", criterion="v", node="n1", table=table)
    local = evaluate_versions(raw, table=table, now=datetime(2026, 11, 30, 12, tzinfo=timezone.utc), criterion="v",
                              node="n1")
    assert remote == local
    assert any(v.reason == "below_minimum" for v in remote)


def test_access_judged_from_probe(node):  # noqa: F811
    raw = audit_access.collect(Host(node), audit_access.AccessParams())
    doc = json.loads(json.dumps(probe_document("security.access", raw, "2026-11-30T12:00:00+00:00", "n1")))
    wrong = {"access": {"customer_keys": [CONTRACT["access"]["customer_keys"][0]],
                        "provider_staff_keys": CONTRACT["access"]["provider_staff_keys"]}}
    out = evaluate_probe(doc, "security.access", contract=wrong, criterion="a", node="n1")
    assert [v.status for v in out if v.reason == "unlisted_authorized_key"] == [Status.FAIL]


def test_probe_script_runs_on_this_host():
    argv = probe_argv("security.isolation", {"bmc_address": "127.0.0.1:1", "unrelated": 5}, sys.executable)
    assert json.loads(argv[-1]) == {"bmc_address": "127.0.0.1:1"}
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["check"] == "security.isolation" and doc["collected_at"].endswith("+00:00")
    out = evaluate_probe(doc, "security.isolation", criterion="iso", node=doc["host"])
    assert {v.details["subject"] for v in out} >= {"IOMMU", "GPU device nodes", "in-band IPMI", "BMC network"}
    assert [v.reason for v in out if v.details["subject"] == "BMC network"] == ["bmc_not_reachable"]


@pytest.mark.parametrize("doc,reason", [
    ({"format": "other"}, "not_a_probe_document"),
    ({"format": "slakit-security-probe", "check": "security.access", "raw": {}}, "probe_check_mismatch"),
    ({"format": "slakit-security-probe", "check": "security.versions", "raw": {"commands": {}}}, "probe_document_invalid"),
])
def test_bad_probe_documents(doc, reason):
    with pytest.raises(ProbeError) as exc:
        raw_from_json(doc, "security.versions")
    assert exc.value.reason == reason


def test_to_json_is_plain():
    raw = audit_isolation.collect(Host(), audit_isolation.IsolationParams())
    text = json.dumps(to_json(raw))
    assert isinstance(json.loads(text), dict)
