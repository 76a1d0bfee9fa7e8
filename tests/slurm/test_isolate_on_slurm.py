"""`accept isolate` on a real 8-node Slurm testbed: one or two nodes made faulty through a
per-node marker file that the contract's own test program (custom.command) looks for.

The 8-node cluster is started here (its own state folder and ports), beside the 4-node one
the other Slurm tests share.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.contracts import small_contract
from tests.slurm.conftest import TESTBED, _can_start, _free_port_base

pytestmark = pytest.mark.slurm

NODES = [f"gpu-{i:02d}" for i in range(1, 9)]


@pytest.fixture(scope="module")
def cluster8():
    why = _can_start()
    if why:
        pytest.skip(why)
    state = Path(tempfile.mkdtemp(prefix="slakit-slurm8-"))
    env = dict(os.environ, SLURM_TESTBED_DIR=str(state), SLURM_TESTBED_PORT=str(_free_port_base(8)))
    env.pop("SLURM_CONF", None)
    proc = subprocess.run(["bash", str(TESTBED), "start", "gpu-[01-08]"], env=env, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        subprocess.run(["bash", str(TESTBED), "stop"], env=env, capture_output=True, timeout=120)
        pytest.fail(f"8-node testbed did not start:\n{proc.stderr}")
    for line in proc.stdout.splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export "):].partition("=")
            env[key] = value
    try:
        yield env
    finally:
        subprocess.run(["bash", str(TESTBED), "stop"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(state, ignore_errors=True)


def contract(tmp_path: Path, markers: Path) -> Path:
    probe = (f'test ! -e "{markers}/$SLURMD_NODENAME" && echo "rate: 120.5 GB/s" '
             '|| { echo "fault marker on $SLURMD_NODENAME"; exit 3; }')
    extra = (
        "acceptance:\n"
        "  criteria:\n"
        "    - id: burn-all\n"
        "      check: custom.command\n"
        f"      params: {{argv: [sh, -c, {json.dumps(probe)}], nodes: 8, metrics: {{rate: 'rate: ([0-9.]+)'}}}}\n"
        "      metric: rate\n"
        "      min: 100\n"
    )
    path = tmp_path / "contract.yaml"
    path.write_text(small_contract("isolate-test", {"r1": "gpu-[01-08]"}, extra), encoding="utf-8")
    return path


def isolate(env, tmp_path, contract_path, *extra):
    out = tmp_path / "bundle"
    proc = subprocess.run([sys.executable, "-m", "slakit", "accept", "isolate", str(contract_path),
                           "--criterion", "burn-all", "--out", str(out), "--format", "json", *extra],
                          env=env, capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, out


@pytest.mark.parametrize("bad", [["gpu-06"], ["gpu-01"], ["gpu-03", "gpu-07"]])
def test_isolate_finds_the_faulty_nodes(cluster8, tmp_path, bad):
    markers = tmp_path / "bad"
    markers.mkdir()
    for node in bad:
        (markers / node).touch()
    proc, out = isolate(cluster8, tmp_path, contract(tmp_path, markers))
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert sorted(doc["isolated"]) == sorted(bad)
    if len(bad) == 1:
        assert doc["runs"] <= 2 * math.ceil(math.log2(8)) + 1
    assert doc["baseline"]["status"] == "fail" and doc["baseline"]["reason"] == "task_failed"
    # Every run is kept as evidence, and the bundle verifies.
    runs = sorted(p.name for p in (out / "isolation").iterdir())
    assert len(runs) == doc["runs"] + 1
    verify = subprocess.run([sys.executable, "-m", "slakit", "accept", "verify", str(out)], env=cluster8,
                            capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # The run document names each isolated node with its reason; the certificate prints them.
    results = json.loads((out / "results.json").read_text())
    failing = {v["node"]: v for c in results["criteria"] for v in c["verdicts"] if v["status"] == "fail"}
    assert sorted(failing) == sorted(bad)
    assert all(v["reason"] == "isolated_fault" and "task_failed" in v["measured"] for v in failing.values())
    pdf = tmp_path / "cert.pdf"
    rep = subprocess.run([sys.executable, "-m", "slakit", "accept", "report", str(out), "-o", str(pdf)],
                         env=cluster8, capture_output=True, text=True, timeout=120)
    assert rep.returncode == 0, rep.stderr
    from pypdf import PdfReader

    text = "\n".join(page.extract_text() for page in PdfReader(str(pdf)).pages)
    for node in bad:
        assert node in text
    assert "REJECTED" in text and "ACCEPTED" not in text.replace("REJECTED", "")


def test_isolate_on_a_healthy_set_runs_once_and_exits_0(cluster8, tmp_path):
    markers = tmp_path / "bad"
    markers.mkdir()
    proc, _ = isolate(cluster8, tmp_path, contract(tmp_path, markers))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["isolated"] == [] and doc["runs"] == 0 and doc["baseline"]["status"] == "pass"


def test_custom_command_runs_as_one_step_over_the_nodes(cluster8, tmp_path):
    """`accept run` with the same criterion: one srun step over 8 nodes, judged on the metric."""
    markers = tmp_path / "bad"
    markers.mkdir()
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "slakit", "accept", "run", str(contract(tmp_path, markers)),
                           "--executor", "slurm", "--out", str(out), "--format", "json", "--no-progress"],
                          env=cluster8, capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    burn = next(c for c in doc["criteria"] if c["id"] == "burn-all")
    assert burn["status"] == "pass", burn
    (verdict,) = burn["verdicts"]
    assert verdict["measured"] == 120.5 and verdict["details"]["matches"] == 8


def test_periodic_recheck_opens_and_closes_performance_incidents(cluster8, tmp_path):
    """Three re-checks of a per-node criterion (cron-style): all fast; gpu-03 slow; all fast
    again. The log gets one performance incident for gpu-03 from the second run to the third,
    and `credits` reports gpu-03's time below the floor under the performance level."""
    markers = tmp_path / "slow"
    markers.mkdir()
    probe = (f'if [ -e "{markers}/$SLURMD_NODENAME" ]; then echo "rate: 80.0"; else echo "rate: 119.0"; fi')
    extra = (
        "acceptance:\n"
        "  criteria:\n"
        "    - id: rate-check\n"
        "      check: custom.command\n"
        f"      params: {{argv: [sh, -c, {json.dumps(probe)}], metrics: {{rate: 'rate: ([0-9.]+)'}}}}\n"
        "      metric: rate\n"
        "      min: 50\n"
        "performance:\n"
        "  - {id: rate-perf, criterion: rate-check, published: 120, floor: 90%, target: 99.9%,\n"
        "     credits: [{below: 99.9%, credit: 5%}]}\n"
    )
    contract_path = tmp_path / "perf.yaml"
    contract_path.write_text(small_contract("perf-test", {"r1": "gpu-[01-08]"}, extra), encoding="utf-8")
    log = tmp_path / "perf-incidents.csv"

    def recheck(i: int) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", "slakit", "accept", "run", str(contract_path), "--executor",
                               "slurm", "--only", "rate-check", "--out", str(tmp_path / f"b{i}"), "--no-progress",
                               "--format", "json", "--as-incidents", str(log)],
                              env=cluster8, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    first = recheck(1)
    assert "no change" in first.stderr
    (markers / "gpu-03").touch()
    second = recheck(2)
    assert second.returncode == 0              # 80 is above the acceptance floor of 50 ...
    assert "opened perf-rate-perf-gpu-03-" in second.stderr   # ... but below the performance floor 108
    (markers / "gpu-03").unlink()
    __import__("time").sleep(1.1)              # timestamps have one-second resolution
    third = recheck(3)
    assert "closed perf-rate-perf-gpu-03-" in third.stderr
    rows = list(__import__("csv").DictReader(log.open(encoding="utf-8")))
    assert len(rows) == 1 and rows[0]["target"] == "gpu-03" and rows[0]["end"]
    month = rows[0]["start"][:7]
    credits = subprocess.run([sys.executable, "-m", "slakit", "credits", str(contract_path), str(log),
                              "--period", month, "--format", "json"],
                             env=cluster8, capture_output=True, text=True, timeout=120)
    assert credits.returncode == 0, credits.stderr
    doc = json.loads(credits.stdout)
    (level,) = doc["performance"]
    (pm,) = level["months"]
    (unit,) = pm["units"]
    from datetime import datetime

    below = (datetime.fromisoformat(rows[0]["end"].replace("Z", "+00:00"))
             - datetime.fromisoformat(rows[0]["start"].replace("Z", "+00:00"))).total_seconds()
    assert unit["node"] == "gpu-03" and unit["seconds_below_floor"] == int(below) > 0
    # Availability is untouched by performance incidents.
    assert all(u["downtime_seconds"] == 0 for u in doc["periods"][0]["units"])
