"""A real Slurm cluster for the tests in this folder.

Session scope. Uses the cluster named by SLURM_CONF when `sinfo` answers there; otherwise
starts `scripts/slurm-testbed` with nodes gpu-[01-04] (root with apt-get or Slurm already
installed) in its own state directory and port range, and stops it at the end; otherwise
every test that asks for the cluster is skipped with the reason.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from slaschema.hostlist import expand

REPO = Path(__file__).resolve().parents[2]
TESTBED = REPO / "scripts" / "slurm-testbed"
NODELIST = "gpu-[01-04]"


def _free_port_base(n_nodes: int) -> int:
    """A controller port P with P, P+90, P+91 (slurmdbd, MariaDB) and P+100..P+100+n free, so
    several testbeds can coexist."""
    rng = random.Random()
    for _ in range(50):
        base = rng.randrange(20000, 29000)
        ports = [base, base + 90, base + 91, *range(base + 100, base + 100 + n_nodes)]
        try:
            for port in ports:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind(("", port))
        except OSError:
            continue
        return base
    raise RuntimeError("no free port range for the Slurm testbed")


@dataclass(frozen=True)
class SlurmCluster:
    conf: str                      # path of slurm.conf (also exported as SLURM_CONF)
    nodes: tuple[str, ...]         # node names in sinfo order
    state_dir: Path | None         # testbed state dir; None for a cluster we did not start
    health_interval_s: float | None  # HealthCheckInterval of the cluster, when known
    started_here: bool

    def marker(self, node: str) -> Path:
        """Fault marker file the testbed's health check looks for."""
        if self.state_dir is None:
            pytest.skip("fault markers need the slakit testbed (SLURM_TESTBED_DIR unknown)")
        return self.state_dir / "fault" / node


def _sinfo_nodes(env: dict[str, str]) -> list[str] | None:
    if shutil.which("sinfo") is None:
        return None
    try:
        proc = subprocess.run(
            ["sinfo", "-N", "-h", "-o", "%N"], env=env, capture_output=True, text=True, timeout=15
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return list(dict.fromkeys(proc.stdout.split()))


def _health_interval(env: dict[str, str]) -> float | None:
    proc = subprocess.run(["scontrol", "show", "config"], env=env, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "HealthCheckInterval":
            digits = "".join(ch for ch in value if ch.isdigit())
            return float(digits) if digits else None
    return None


def _can_start() -> str | None:
    """None when the testbed can start here, else why not."""
    if os.geteuid() != 0:
        return "Slurm testbed needs root (it starts munged, slurmctld and slurmd)"
    have_slurm = all(shutil.which(b) for b in ("slurmctld", "slurmd", "srun", "munged"))
    if not have_slurm and shutil.which("apt-get") is None:
        return "Slurm is not installed and apt-get is not available to install it"
    return None


@pytest.fixture(scope="session")
def slurm_cluster():
    saved = {k: os.environ.get(k) for k in ("SLURM_CONF", "SLURM_TESTBED_DIR", "SLAKIT_FAULT_MARKER")}
    if os.environ.get("SLURM_CONF"):
        nodes = _sinfo_nodes(dict(os.environ))
        if nodes:
            missing = [n for n in expand(NODELIST) if n not in nodes]
            if missing:
                pytest.skip(f"the cluster in SLURM_CONF lacks the nodes these tests use ({NODELIST}); "
                            "start one with scripts/slurm-testbed or unset SLURM_CONF")
            state = os.environ.get("SLURM_TESTBED_DIR")
            yield SlurmCluster(
                conf=os.environ["SLURM_CONF"],
                nodes=tuple(nodes),
                state_dir=Path(state) if state else None,
                health_interval_s=_health_interval(dict(os.environ)),
                started_here=False,
            )
            return
    why = _can_start()
    if why:
        pytest.skip(why)
    # Not under pytest's basetemp: concurrent pytest sessions prune old basetemps.
    state_dir = Path(tempfile.mkdtemp(prefix="slakit-slurm-"))
    port = _free_port_base(len(expand(NODELIST)))
    env = dict(os.environ, SLURM_TESTBED_DIR=str(state_dir), SLURM_TESTBED_PORT=str(port))
    proc = subprocess.run(
        ["bash", str(TESTBED), "start", NODELIST], env=env, capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0:
        subprocess.run(["bash", str(TESTBED), "stop"], env=env, capture_output=True, text=True, timeout=120)
        pytest.fail(f"slurm-testbed start failed (rc {proc.returncode}):\n{proc.stderr}")
    exports = {}
    for line in proc.stdout.splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export "):].partition("=")
            exports[key] = value
    os.environ.update(exports)
    try:
        yield SlurmCluster(
            conf=exports["SLURM_CONF"],
            nodes=tuple(expand(NODELIST)),
            state_dir=state_dir,
            health_interval_s=_health_interval(dict(os.environ)),
            started_here=True,
        )
    finally:
        subprocess.run(["bash", str(TESTBED), "stop"], env=env, capture_output=True, text=True, timeout=120)
        shutil.rmtree(state_dir, ignore_errors=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def wait_usable(nodes, limit_s: float = 30.0) -> None:
    """Block until Slurm lists every node as usable (idle/mixed/allocated)."""
    from acceptance.executors.slurm import node_usable, slurm_nodes

    deadline = time.monotonic() + limit_s
    while True:
        states = slurm_nodes()
        if all(node_usable(states.get(n, "unknown")) for n in nodes):
            return
        if time.monotonic() > deadline:
            pytest.fail(f"Slurm nodes not usable after {limit_s:.0f} s: {states}")
        time.sleep(0.2)


@pytest.fixture(autouse=True)
def _nodes_usable_before_each_test(request):
    """Right after `state=resume` Slurm lists a node as idle* until it has pinged it; a test
    that resumed a node must not hand the next test a node that is not yet usable."""
    if "slurm_cluster" in request.fixturenames:
        wait_usable(request.getfixturevalue("slurm_cluster").nodes)
    yield
