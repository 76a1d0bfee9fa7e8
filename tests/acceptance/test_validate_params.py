"""`slakit validate` checks every criterion's params as `accept run` plans them: the same
codes, located in the contract; a required param left for `--param` is a warning."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from slakit.cli import main
from tests.acceptance.conftest import REPO, contract_with

BAD = """
- id: fs
  check: storage.fio
  params: {path: relative/dir, rw: write, bs: 1M, size: 8Q, numjobs: 0}
  metric: write_gbps
  min: 1
- id: ib
  check: network.iperf3
  params: {server: "-oProxyCommand=x"}
  metric: throughput_gbps
  min: 1
"""


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def codes(text: str) -> list[str]:
    return re.findall(r"\[([a-z_]+)\]$", text, flags=re.M)


def test_validate_refuses_the_params_accept_run_refuses_with_the_same_codes(tmp_path):
    contract = contract_with(tmp_path, BAD)
    checked = run("validate", contract)
    assert checked.exit_code == 1
    ran = run("accept", "run", contract, "--out", tmp_path / "never", "--no-progress")
    assert ran.exit_code == 1 and not (tmp_path / "never").exists()
    assert codes(checked.stdout) == codes(ran.stderr) == ["path_not_absolute", "size_invalid", "greater_than_equal",
                                                          "host_invalid"]
    text = contract.read_text().splitlines()
    for line in checked.stdout.splitlines()[:4]:
        m = re.match(rf"{re.escape(str(contract))}:(\d+):(\d+): acceptance\.criteria\[(\w+)\]\.params\.(\w+):", line)
        assert m, line
        row, key = text[int(m.group(1)) - 1], m.group(4)
        assert f"{key}:" in row                   # the line that holds the param
    doc = json.loads(run("validate", contract, "--format", "json").stdout)
    assert doc["ok"] is False and {p["path"] for p in doc["files"][0]["problems"]} >= {
        "acceptance.criteria[fs].params.path", "acceptance.criteria[ib].params.server"}


def test_a_required_param_left_for_run_time_is_a_warning(tmp_path):
    template = REPO / "templates" / "contracts" / "gb200-nvl72-gold.yaml"
    res = run("validate", template)
    assert res.exit_code == 0, res.output
    warning = res.stdout.splitlines()[1]
    assert warning.startswith(f"warning: {template}:") and warning.endswith("[missing]")
    assert "--param object-store.bucket=VALUE" in warning
    doc = json.loads(run("validate", template, "--format", "json").stdout)
    assert doc["ok"] is True and [w["code"] for w in doc["files"][0]["warnings"]] == ["missing"]
    ran = run("accept", "run", template, "--out", tmp_path / "never", "--only", "object-store", "--no-progress")
    assert ran.exit_code == 1 and "[missing]" in ran.stderr


def test_a_contract_without_problems_validates_as_before():
    res = run("validate", REPO / "examples" / "gb200-contract.yaml")
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 1 and ": ok — " in res.stdout
