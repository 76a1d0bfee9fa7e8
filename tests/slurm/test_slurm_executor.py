"""The Slurm executor: pure pieces on their own, then the real 4-node testbed through srun."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from acceptance.executors.base import NO_ANSWER, NODE_UNAVAILABLE, Executor, RawOutput
from acceptance.executors.local import LocalExecutor
from acceptance.executors.slurm import (
    SlurmExecutor,
    node_list_findings,
    node_usable,
    parse_sinfo_nodes,
)
from acceptance.results import Status

SINFO = "gpu-01 idle\ngpu-02 drained\ngpu-02 drained\ngpu-03 idle*\ngpu-04 mixed\ngpu-05 down*\n"


def test_parse_sinfo_dedupes_nodes_listed_per_partition():
    assert parse_sinfo_nodes(SINFO) == {
        "gpu-01": "idle", "gpu-02": "drained", "gpu-03": "idle*", "gpu-04": "mixed", "gpu-05": "down*",
    }


@pytest.mark.parametrize(
    "state,usable",
    [("idle", True), ("mixed", True), ("allocated", True), ("drained", False), ("draining", False),
     ("idle*", False), ("down*", False), ("mixed+drain", False), ("idle~", True), ("fail", False)],
)
def test_node_usable(state, usable):
    assert node_usable(state) is usable


def test_node_list_findings_missing_fails_and_extra_warns():
    found = node_list_findings(["gpu-01", "gpu-02", "gpu-09"], parse_sinfo_nodes(SINFO))
    by = {(v.node, v.reason): v.status for v in found}
    assert by[("gpu-09", "node_missing_in_scheduler")] is Status.FAIL
    assert by[("gpu-03", "node_not_in_contract")] is Status.WARN
    assert ("gpu-01", "node_missing_in_scheduler") not in by
    assert len(found) == 1 + 3  # one missing, three extra


def test_node_list_findings_match_passes():
    (v,) = node_list_findings(["a1", "a2"], {"a1": "idle", "a2": "idle"})
    assert v.status is Status.PASS and v.reason == "node_list_matches"


def test_multi_node_layout_puts_one_rank_per_gpu():
    argv = SlurmExecutor(partition="gpu").multi_node_argv(["all_reduce_perf", "-g", "1"], ["n1", "n2", "n3"], 8)
    assert argv[0] == "srun"
    assert ["-N", "3"] == argv[argv.index("-N") : argv.index("-N") + 2]
    assert "--ntasks-per-node=8" in argv and "--ntasks=24" in argv
    assert argv[argv.index("-w") + 1] == "n[1-3]"
    assert argv[argv.index("-p") + 1] == "gpu"
    assert argv[-3:] == ["all_reduce_perf", "-g", "1"]


def test_per_node_argv_keeps_argv_as_separate_words():
    argv = SlurmExecutor().per_node_argv(["echo", "a b; rm -rf /"], ["gpu-01", "gpu-02"])
    assert argv[-2:] == ["echo", "a b; rm -rf /"]
    assert "--ntasks-per-node=1" in argv and "--label" in argv


def test_executors_share_the_interface():
    assert isinstance(SlurmExecutor(), Executor)
    assert isinstance(LocalExecutor(), Executor)


def test_local_executor_output_rc_and_timeout():
    ex = LocalExecutor()
    res = ex.run(["sh", "-c", "echo out; echo err >&2; exit 4"], ["here"], 10)
    r = res["here"]
    assert (r.stdout, r.stderr, r.rc, r.timed_out, r.error) == ("out\n", "err\n", 4, False, None)
    assert r.started <= r.finished and r.started.tzinfo is not None
    t0 = time.monotonic()
    slow = ex.run(["sleep", "30"], ["here"], 0.5)["here"]
    assert slow.timed_out and slow.rc is None and time.monotonic() - t0 < 10


def test_local_executor_missing_program_is_an_error_not_an_exception():
    r = LocalExecutor().run(["/nonexistent/tool"], ["here"], 5)["here"]
    assert r.error == "launch_failed" and r.rc is None


# --- against the real cluster ------------------------------------------------------------

CHECK = ["sh", "-c", 'echo "node=$SLURMD_NODENAME"; printf tail; echo warn >&2; '
         '[ "$SLURMD_NODENAME" = gpu-02 ] && exit 3; exit 0']


@pytest.mark.slurm
def test_runs_on_every_node_with_per_node_output_and_status(slurm_cluster):
    res = SlurmExecutor().run(CHECK, list(slurm_cluster.nodes), 60)
    assert list(res) == list(slurm_cluster.nodes)
    for node, r in res.items():
        assert isinstance(r, RawOutput) and r.error is None, r
        assert r.stdout == f"node={node}\ntail"
        assert r.stderr == "warn\n"
        assert r.rc == (3 if node == "gpu-02" else 0)
        assert r.started is not None and r.finished is not None and r.started <= r.finished


@pytest.mark.slurm
def test_unknown_and_drained_nodes_are_errors_and_the_run_goes_on(slurm_cluster):
    env = dict(os.environ)
    subprocess.run(["scontrol", "update", "nodename=gpu-03", "state=drain", "reason=executor test"],
                   check=True, env=env)
    try:
        res = SlurmExecutor().run(["hostname"], ["gpu-01", "gpu-03", "gpu-77"], 60)
    finally:
        subprocess.run(["scontrol", "update", "nodename=gpu-03", "state=resume"], check=True, env=env)
    assert res["gpu-01"].ok
    assert res["gpu-03"].error == NODE_UNAVAILABLE and "drain" in res["gpu-03"].stderr
    assert res["gpu-77"].error == NODE_UNAVAILABLE


@pytest.mark.slurm
def test_timeout_stops_only_the_slow_node(slurm_cluster):
    argv = ["sh", "-c", '[ "$SLURMD_NODENAME" = gpu-04 ] && sleep 60; echo done']
    t0 = time.monotonic()
    res = SlurmExecutor().run(argv, ["gpu-01", "gpu-04"], 3)
    assert time.monotonic() - t0 < 30
    assert res["gpu-01"].ok and res["gpu-01"].stdout == "done\n"
    assert res["gpu-04"].timed_out and res["gpu-04"].rc is None
    _wait_no_jobs()


@pytest.mark.slurm
@pytest.mark.slow
def test_node_whose_slurmd_hangs_is_reported_no_answer(slurm_cluster):
    if slurm_cluster.state_dir is None:
        pytest.skip("needs the testbed's slurmd pid files")
    pid = int(Path(slurm_cluster.state_dir, "slurmd-gpu-03.pid").read_text().strip())
    os.kill(pid, signal.SIGSTOP)
    try:
        res = SlurmExecutor().run(["hostname"], list(slurm_cluster.nodes), 4)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert res["gpu-03"].error == NO_ANSWER and res["gpu-03"].timed_out
    assert all(res[n].ok for n in slurm_cluster.nodes if n != "gpu-03")
    _wait_no_jobs()


@pytest.mark.slurm
def test_multi_node_job_runs_all_ranks(slurm_cluster):
    r = SlurmExecutor().run_multi(["sh", "-c", 'echo "$SLURMD_NODENAME $SLURM_PROCID"'],
                                  ["gpu-01", "gpu-02"], 4, 60)
    assert r.rc == 0
    ranks = sorted(line.split() for line in r.stdout.splitlines())
    assert len(ranks) == 8
    assert {node for node, _ in ranks} == {"gpu-01", "gpu-02"}
    assert sorted(int(rank) for _, rank in ranks) == list(range(8))


@pytest.mark.slurm
def test_sinfo_node_list_matches_contract_topology(slurm_cluster):
    from acceptance.executors.slurm import slurm_nodes

    reported = slurm_nodes()
    assert [v.status for v in node_list_findings(list(slurm_cluster.nodes), reported)] == [Status.PASS]
    missing = node_list_findings(list(slurm_cluster.nodes) + ["gpu-05"], reported)
    assert [(v.node, v.reason) for v in missing] == [("gpu-05", "node_missing_in_scheduler")]


def _wait_no_jobs(limit_s: float = 20) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        out = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.strip()
        if not out:
            return
        time.sleep(0.2)
    raise AssertionError(f"jobs still queued after {limit_s}s: {out}")


@pytest.mark.slurm
def test_node_drained_after_the_state_check_fails_alone(slurm_cluster):
    env = dict(os.environ)
    subprocess.run(["scontrol", "update", "nodename=gpu-02", "state=drain", "reason=executor test"],
                   check=True, env=env)
    try:
        t0 = time.monotonic()
        res = SlurmExecutor(check_states=False, allocation_wait_s=2).run(["hostname"], ["gpu-01", "gpu-02"], 60)
        took = time.monotonic() - t0
    finally:
        subprocess.run(["scontrol", "update", "nodename=gpu-02", "state=resume"], check=True, env=env)
    assert res["gpu-01"].ok
    assert res["gpu-02"].error == "not_allocated" and res["gpu-02"].rc is None
    assert took < 30
    _wait_no_jobs()


def test_immediate_only_outside_an_allocation():
    outside = SlurmExecutor(env={"PATH": "/usr/bin"}, allocation_wait_s=12.5).per_node_argv(["true"], ["n1"])
    inside = SlurmExecutor(env={"SLURM_JOB_ID": "7"}).per_node_argv(["true"], ["n1"])
    assert "--immediate=13" in outside
    assert not any(a.startswith("--immediate") for a in inside)
