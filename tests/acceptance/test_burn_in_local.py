"""`slakit accept burn-in --executor local` on this host: a GPU burn-in where the stress cannot
run (no PyTorch, no GPU) is a skip per node, and a skip stressed nothing, so it exits 1 as
`accept run --only gpu` does on such a host; the CPU loop that does run exits 0."""

from __future__ import annotations

import importlib.util
import json

import pytest
from click.testing import CliRunner

from slakit.cli import main

from .conftest import EXAMPLE


def burn_in(tmp_path, stress):
    out = tmp_path / f"burn-{stress}"
    r = CliRunner().invoke(main, ["accept", "burn-in", str(EXAMPLE), "--executor", "local", "--stress", stress,
                                  "--duration", "2s", "--interval", "1s", "--segment", "2s", "-o", str(out),
                                  "--format", "json"])
    doc = json.loads(r.stdout[r.stdout.index("{"):])
    return r, doc


def test_a_gpu_burn_in_that_could_not_stress_anything_exits_1(tmp_path):
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("PyTorch is installed here: the GPU stress may run")
    r, doc = burn_in(tmp_path, "gpu")
    assert doc["status"] == "skip" and {v["reason"] for v in doc["verdicts"]} == {"no_torch"}
    assert r.exit_code == 1, r.output


def test_a_cpu_burn_in_that_ran_exits_0(tmp_path):
    r, doc = burn_in(tmp_path, "cpu")
    assert r.exit_code == 0, r.output
    assert doc["status"] == "pass" and doc["done_s"] == 2.0
