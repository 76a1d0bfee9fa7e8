"""`slakit security audit` and the audit() entry point, with contracts from YAML files."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from click.testing import CliRunner

from acceptance.results import Status
from acceptance.security.audit import audit, metrics, security_criteria
from acceptance.security.host import Host
from acceptance.security.minimums import load_minimums
from slakit.cli import main
from slaschema.loader import load_contract

from .test_access_check import CUSTOMER, LEFTOVER, STAFF

FIXTURES = Path(__file__).parent / "fixtures"
CONTRACT = """slakit: 1
contract: {{id: sec-test, provider: P Inc., customer: C Lab, timezone: UTC, currency: USD}}
topology:
  architecture: hgx-8gpu
  gpu_model: H100
  gpus_per_node: 8
  sites:
    - id: s1
      clusters:
        - id: c1
          racks:
            - {{id: r1, nodes: "n[1-2]"}}
pricing: {{per_gpu_hour: 2.5}}
service_levels:
  node:
    target: 99%
    credits:
      - {{below: 99%, credit: 10%}}
acceptance:
  criteria:
    - id: sec-versions
      check: security.versions
      expect: {{table_date: 2026-09-01}}
    - id: sec-access
      check: security.access
access:
  provider_staff_keys: ["{staff}"]
  customer_keys: [{customers}]
  allowed_ports: [22]
"""


def contract_file(tmp_path: Path, customers: list[str]) -> Path:
    p = tmp_path / "contract.yaml"
    p.write_text(CONTRACT.format(staff=STAFF, customers=", ".join(f'"{c}"' for c in customers)))
    return p


def node_tree(root: Path) -> Path:
    (root / "etc/ssh").mkdir(parents=True)
    (root / "etc/ssh/sshd_config").write_text("PasswordAuthentication no\nPermitRootLogin no\n")
    (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\n")
    (root / "root/.ssh").mkdir(parents=True)
    (root / "root/.ssh/authorized_keys").write_text(STAFF + "\n")
    (root / "home/alice/.ssh").mkdir(parents=True)
    (root / "home/alice/.ssh/authorized_keys").write_text(f"{CUSTOMER}\n{LEFTOVER}\n")
    return root


def run(*args):
    return CliRunner().invoke(main, ["security", "audit", *args])


def test_contract_with_wrong_key_list_fails(tmp_path):
    root = node_tree(tmp_path / "node")
    res = run(str(contract_file(tmp_path, [CUSTOMER])), "--only", "access", "--root", str(root),
              "--format", "json")
    assert res.exit_code == 1, res.output
    doc = json.loads(res.output)
    assert doc["status"] == "fail" and doc["checks"] == ["security.access"]
    unlisted = [f for f in doc["findings"] if f["reason"] == "unlisted_authorized_key"]
    assert len(unlisted) == 1
    assert unlisted[0]["criterion"] == "sec-access"
    assert unlisted[0]["details"]["user"] == "alice" and unlisted[0]["details"]["comment"] == "old-contractor"
    assert doc["metrics"]["unexpected_keys"] == 1


def test_contract_with_right_key_list_passes(tmp_path):
    root = node_tree(tmp_path / "node")
    res = run(str(contract_file(tmp_path, [CUSTOMER, LEFTOVER])), "--only", "access",
              "--root", str(root), "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["status"] == "skip" or doc["status"] == "pass"
    assert {f["reason"] for f in doc["findings"] if f["status"] == "pass"} >= {
        "ssh_password_auth_disabled", "ssh_root_login_restricted", "authorized_keys_listed"}


def test_versions_with_a_clustermax_table_and_table_date(tmp_path):
    root = node_tree(tmp_path / "node")
    res = run(str(contract_file(tmp_path, [CUSTOMER])), "--only", "versions", "--root", str(root),
              "--minimums", str(FIXTURES / "clustermax-minimums.json"), "--now", "2026-11-30T00:00:00Z",
              "--format", "json")
    doc = json.loads(res.output)
    assert doc["minimums"] == "https://clustermax.ai/minimum-versions"
    by_reason = {f["reason"]: f for f in doc["findings"]}
    assert by_reason["table_current"]["measured"] == "2026-10-20 (41 days old)"
    assert by_reason["table_date_met"]["status"] == "pass"
    # A fake tree runs no commands: every component is skipped, nothing passes by default.
    assert all(f["status"] == "skip" for f in doc["findings"] if f["subject"] not in ("minimum-version table",))
    assert res.exit_code == 0


def test_table_older_than_the_contract_requires(tmp_path):
    root = node_tree(tmp_path / "node")
    old = tmp_path / "old.json"
    old.write_text('{"generated": "2026-08-01", "components": {"runc": {"branches": {"1.2": "1.2.8"}}}}')
    res = run(str(contract_file(tmp_path, [CUSTOMER])), "--only", "versions", "--root", str(root),
              "--minimums", str(old), "--now", "2026-11-30T00:00:00Z", "--format", "json")
    assert res.exit_code == 1
    doc = json.loads(res.output)
    reasons = {f["reason"]: f["status"] for f in doc["findings"]}
    assert reasons["table_older_than_contract"] == "fail"
    assert reasons["table_stale"] == "warn"


def test_bad_minimums_is_exit_1_with_problem_codes(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"components": {"runc": {"versions": []}}}')
    res = run("--only", "versions", "--minimums", str(bad), "--format", "json")
    assert res.exit_code == 1
    assert json.loads(res.output)["problems"][0]["code"] == "minimums_unknown_shape"


def test_table_format_on_this_host():
    res = run("--only", "isolation", "--format", "table")
    assert res.exit_code in (0, 1)
    assert "security audit" in res.output and "IOMMU" in res.output


def test_audit_api_with_a_loaded_contract(tmp_path):
    lc = load_contract(contract_file(tmp_path, [CUSTOMER]))
    assert [c[:2] for c in security_criteria(lc.model)] == [("sec-versions", "security.versions"),
                                                           ("sec-access", "security.access")]
    now = datetime(2026, 11, 30, tzinfo=timezone.utc)
    result = audit(Host(node_tree(tmp_path / "node")), lc.model, table=load_minimums(), now=now, node="n1")
    assert result.status is Status.FAIL
    assert metrics(result.verdicts) == {"vulnerable_components": 0, "unexpected_keys": 1}
    assert {v.criterion for v in result.verdicts} == {"sec-versions", "sec-access"}
    assert all(v.node == "n1" for v in result.verdicts)
    # Without a contract every check runs under its own name.
    bare = audit(Host(node_tree(tmp_path / "node2")), None, only=["isolation"], now=now)
    assert {v.criterion for v in bare.verdicts} == {"security.isolation"}
