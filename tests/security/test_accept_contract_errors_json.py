"""`accept run`, `accept evaluate` and `accept isolate` with `--format json`: a bad contract's
problems are the JSON problem document on stdout, exit 1, as with every other command that
writes JSON (they were printed as text lines)."""

from __future__ import annotations

import json

import pytest

from tests.hostile.conftest import cli


@pytest.mark.parametrize("command", ["run", "evaluate", "isolate"])
def test_bad_contract_problems_are_json(tmp_path, command):
    contract = tmp_path / "bad.yaml"
    contract.write_text("sla: [\n  bad", encoding="utf-8")
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    args = {"run": ["-o", tmp_path / "out"], "evaluate": [bundle],
            "isolate": ["--criterion", "x", "-o", tmp_path / "out"]}[command]
    r = cli("accept", command, contract, *args, "--format", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert doc["ok"] is False and [p["code"] for p in doc["problems"]] == ["yaml_syntax"]
