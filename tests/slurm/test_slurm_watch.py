"""`slakit watch --slurm`: state transitions on scripted polls, then the real 4-node cluster
with a watcher that is killed and restarted while a node is drained."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from calculators.watch import (
    Incident,
    Observation,
    WatchState,
    load_state,
    parse_sinfo,
    read_log,
    recover,
    save_state,
    step,
    update_log,
)
from slakit.cli import main
from tests.slurm._contract import CONTRACT

T0 = datetime(2027, 3, 1, 8, 0, tzinfo=timezone.utc)
REPO = Path(__file__).resolve().parents[2]


def obs(node, state="idle", reason="none", since=None):
    return Observation(node, state, reason, since)


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_parse_sinfo_reads_reason_time_and_keeps_pipes_in_reason():
    snap = parse_sinfo("n1|drained|2027-03-01T08:00:05|disk | smart\nn1|drained|2027-03-01T08:00:05|x\n"
                       "n2|idle|Unknown|none\n")
    assert snap["n1"].reason == "disk | smart" and snap["n1"].out_of_service
    assert snap["n1"].since is not None and snap["n1"].since.tzinfo is not None
    assert snap["n2"].since is None and not snap["n2"].out_of_service


@pytest.mark.parametrize("state,out", [("down*", True), ("drained", True), ("draining", True),
                                        ("mixed+drain", True), ("fail", True), ("idle*", False),
                                        ("allocated", False), ("idle~", False)])
def test_out_of_service_states(state, out):
    assert obs("n", state).out_of_service is out


def test_step_opens_with_slurm_reason_time_and_closes_at_first_poll_back():
    s = WatchState({}, None)
    s, ch = step(s, {"n1": obs("n1"), "n2": obs("n2")}, T0)
    assert ch == [] and s.last_poll == T0
    since = T0 + timedelta(seconds=12)
    s, ch = step(s, {"n1": obs("n1", "drained", "gpu fell off", since), "n2": obs("n2")}, T0 + timedelta(seconds=30))
    assert [(i.node, i.start, i.end, i.cause) for i in ch] == [("n1", since, None, "gpu fell off")]
    # still down: nothing changes, no duplicate
    s, ch = step(s, {"n1": obs("n1", "drained", "gpu fell off", since)}, T0 + timedelta(seconds=60))
    assert ch == [] and set(s.open) == {"n1"}
    s, ch = step(s, {"n1": obs("n1", "idle")}, T0 + timedelta(seconds=90))
    assert [(i.id, i.end) for i in ch] == [(f"n1-20270301T080012Z", T0 + timedelta(seconds=90))]
    assert s.open == {}


def test_start_is_never_before_the_previous_poll_and_no_reason_uses_the_state():
    s = WatchState({}, T0)
    s, ch = step(s, {"n1": obs("n1", "down*", "none", T0 - timedelta(hours=1))}, T0 + timedelta(seconds=30))
    assert ch[0].start == T0 and ch[0].cause == "down*"


def test_restart_continues_open_incidents_without_duplicates(tmp_path):
    log, st = tmp_path / "inc.csv", tmp_path / "inc.state.json"
    since = T0 + timedelta(seconds=5)
    s, ch = step(WatchState({}, None), {"n1": obs("n1", "drained", "psu", since)}, T0 + timedelta(seconds=10))
    update_log(log, ch)
    save_state(st, s)
    # a crash after the log was written but before the state was saved
    s2, ch2 = step(WatchState({}, T0), {"n1": obs("n1", "drained", "psu", since)}, T0 + timedelta(seconds=40))
    update_log(log, ch2)
    assert len(rows(log)) == 1
    # a normal restart from the state file
    restored = load_state(st)
    assert restored.open["n1"].id == ch[0].id and restored.last_poll == T0 + timedelta(seconds=10)
    s3, ch3 = step(restored, {"n1": obs("n1", "idle")}, T0 + timedelta(minutes=5))
    update_log(log, ch3)
    save_state(st, s3)
    (row,) = rows(log)
    assert (row["start"], row["end"], row["scope"], row["category"]) == (
        "2027-03-01T08:00:05Z", "2027-03-01T08:05:00Z", "node", "unplanned")
    assert load_state(st).open == {}


def poll(files, state, snapshot, at, killed=False):
    """One poll as the command makes it: the log written, then (unless `killed` in between)
    the state file; a restart reads the state file and sets it right from the log."""
    log, st = files
    state, changed = step(state, snapshot, at)
    update_log(log, changed)
    if not killed:
        save_state(st, state)
    return state, changed


def restart(files):
    return recover(load_state(files[1]), read_log(files[0])[1])


def test_a_watcher_killed_after_writing_an_open_row_closes_it_once_the_node_is_back(tmp_path):
    files = (tmp_path / "inc.csv", tmp_path / "inc.state.json")
    since = T0 + timedelta(seconds=5)
    _, opened = poll(files, WatchState({}, T0), {"n1": obs("n1", "drained", "=psu", since)}, T0 + timedelta(seconds=10),
                     killed=True)
    restored = restart(files)                 # after the node came back
    assert [(i.id, i.start, i.cause) for i in restored.open.values()] == [(opened[0].id, since, "=psu")]
    poll(files, restored, {"n1": obs("n1", "idle")}, T0 + timedelta(minutes=3))
    assert [(r["id"], r["start"], r["end"], r["cause"]) for r in rows(files[0])] == [
        ("n1-20270301T080005Z", "2027-03-01T08:00:05Z", "2027-03-01T08:03:00Z", "'=psu")]
    assert load_state(files[1]).open == {}


def test_a_watcher_killed_after_writing_a_closed_row_does_not_close_it_again(tmp_path):
    files = (tmp_path / "inc.csv", tmp_path / "inc.state.json")
    s, _ = poll(files, WatchState({}, None), {"n1": obs("n1", "down*", "x", T0)}, T0 + timedelta(seconds=10))
    poll(files, s, {"n1": obs("n1")}, T0 + timedelta(minutes=1), killed=True)
    restored = restart(files)                 # the state file still had it open
    assert restored.open == {}
    poll(files, restored, {"n1": obs("n1")}, T0 + timedelta(minutes=9))
    assert [r["end"] for r in rows(files[0])] == ["2027-03-01T08:01:00Z"]      # not moved to the restart


def test_recovery_takes_over_only_the_rows_this_watcher_wrote(tmp_path):
    log = tmp_path / "inc.csv"
    log.write_text("id,scope,target,start,end\n"
                   "T-1,node,n1,2027-03-01T00:00:00Z,\n"                         # another tool's open row
                   "n2-20270301T000000Z,rack,n2,2027-03-01T00:00:00Z,\n"          # not a node
                   "n3-20270301T000000Z,node,n3,2027-03-01T00:00:00,\n"           # not a time watch writes
                   "n4-20270301T000000Z,node,n4,2027-03-01T00:00:00Z,\n")         # its own
    assert list(recover(WatchState({}, None), read_log(log)[1]).open) == ["n4"]


def test_update_log_keeps_rows_it_did_not_write(tmp_path):
    log = tmp_path / "inc.csv"
    log.write_text("id,scope,target,start,end,ticket\nT-1,rack,r01,2027-03-01T00:00:00Z,2027-03-01T01:00:00Z,T-1\n")
    inc = Incident("n1-x", "n1", T0, None, "x", T0)
    update_log(log, [inc])
    got = rows(log)
    assert [r["id"] for r in got] == ["T-1", "n1-x"]
    assert got[0]["ticket"] == "T-1" and got[0]["scope"] == "rack"


def test_watch_log_loads_as_an_incident_log(tmp_path):
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract_text

    lc = load_contract_text(CONTRACT.replace("DETECTION", "2m"))
    log = tmp_path / "inc.csv"
    s, ch = step(WatchState({}, None), {"gpu-02": obs("gpu-02", "down*", "Not responding", T0)}, T0)
    s, ch2 = step(s, {"gpu-02": obs("gpu-02")}, T0 + timedelta(minutes=7))
    s, ch3 = step(s, {"gpu-03": obs("gpu-03", "drained", "xid 79", T0)}, T0 + timedelta(minutes=8))
    update_log(log, ch + ch2 + ch3)
    loaded = load_incidents(log, lc)
    assert loaded.incident_ids == ["gpu-02-20270301T080000Z", "gpu-03-20270301T080700Z"]  # gpu-03 was up at the 08:07 poll
    assert loaded.skipped == []


# --- the real cluster ----------------------------------------------------------------------

def _scontrol(*args: str) -> None:
    subprocess.run(["scontrol", "update", *args], check=True, capture_output=True)


def _watch_cmd(log: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "slakit", "watch", "--slurm", "-o", str(log), *extra]


def _wait_rows(log: Path, pred, limit_s: float = 20.0) -> list[dict[str, str]]:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if log.exists():
            got = rows(log)
            if pred(got):
                return got
        time.sleep(0.2)
    raise AssertionError(f"log never matched: {log.read_text() if log.exists() else '<missing>'}")


@pytest.mark.slurm
def test_watcher_killed_while_node_drained_records_exactly_one_incident(slurm_cluster, tmp_path):
    log = tmp_path / "incidents.csv"
    watcher = subprocess.Popen(_watch_cmd(log, "--interval", "1s"), cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_rows(log, lambda r: True)               # first poll done
        _scontrol("nodename=gpu-02", "state=drain", "reason=watch test: fan failure")
        got = _wait_rows(log, lambda r: any(x["target"] == "gpu-02" for x in r))
        assert got[0]["end"] == "" and got[0]["cause"] == "watch test: fan failure"
    finally:
        watcher.send_signal(signal.SIGKILL)
        watcher.wait()
    # the node comes back while no watcher runs
    _scontrol("nodename=gpu-02", "state=resume")
    time.sleep(1.0)
    restarted = subprocess.run(_watch_cmd(log, "--interval", "1s", "--max-polls", "2"), cwd=REPO,
                               capture_output=True, text=True, timeout=60)
    assert restarted.returncode == 0, restarted.stderr
    got = [r for r in rows(log) if r["target"] == "gpu-02"]
    assert len(got) == 1
    start = datetime.fromisoformat(got[0]["start"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(got[0]["end"].replace("Z", "+00:00"))
    assert timedelta(0) < end - start < timedelta(seconds=30)
    assert not any(r["target"] != "gpu-02" for r in rows(log))
    # a second restart adds nothing
    again = CliRunner().invoke(main, ["watch", "--slurm", "-o", str(log), "--once"])
    assert again.exit_code == 0 and len(rows(log)) == 1


@pytest.mark.slurm
def test_drain_and_resume_between_single_polls(slurm_cluster, tmp_path):
    log = tmp_path / "w.csv"
    runner = CliRunner()
    assert runner.invoke(main, ["watch", "--slurm", "-o", str(log), "--once"]).exit_code == 0
    assert rows(log) == []
    _scontrol("nodename=gpu-01,gpu-04", "state=drain", "reason=maintenance window")
    try:
        assert runner.invoke(main, ["watch", "--slurm", "-o", str(log), "--once"]).exit_code == 0
        assert sorted(r["target"] for r in rows(log) if not r["end"]) == ["gpu-01", "gpu-04"]
        time.sleep(1.5)   # whole seconds in the log: make the outage at least one
    finally:
        _scontrol("nodename=gpu-01,gpu-04", "state=resume")
    assert runner.invoke(main, ["watch", "--slurm", "-o", str(log), "--once"]).exit_code == 0
    got = rows(log)
    assert len(got) == 2 and all(r["end"] for r in got)
    assert {r["cause"] for r in got} == {"maintenance window"}
    # the log feeds `slakit credits` as it is
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT.replace("DETECTION", "2m"))
    month = got[0]["start"][:7]
    credits = runner.invoke(main, ["credits", str(contract), str(log), "--period", month, "--format", "json"])
    assert credits.exit_code == 0, credits.output
    units = json.loads(credits.output[credits.output.index("{"):])["periods"][0]["units"]
    down = {u["id"]: u for u in units if u["scope"] == "node" and u["downtime_seconds"] > 0}
    assert set(down) == {"gpu-01", "gpu-04"}
    assert sorted(i for u in down.values() for i in u["incidents"]) == sorted(r["id"] for r in got)


def test_watch_once_fails_when_sinfo_cannot_reach_a_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "missing.conf"))
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    fake = tmp_path / "sinfo"
    fake.write_text("#!/bin/sh\necho 'sinfo: error: cannot reach slurmctld' >&2\nexit 1\n")
    fake.chmod(0o755)
    res = CliRunner().invoke(main, ["watch", "--slurm", "-o", str(tmp_path / "x.csv"), "--once"])
    assert res.exit_code == 1 and "poll_failed" in res.output


def test_unreadable_state_file_is_refused_not_overwritten(tmp_path):
    state = tmp_path / "w.state.json"
    state.write_text('{"version": 9, "open": {}}')
    res = CliRunner().invoke(main, ["watch", "--slurm", "-o", str(tmp_path / "w.csv"), "--state", str(state),
                                    "--once"])
    assert res.exit_code == 1 and "bad_state_file" in res.output
    assert state.read_text() == '{"version": 9, "open": {}}'
