"""`compute` from several threads at once, and in a forked child, with the halves of
`calculators.intervals` (a module-level worker shared by every caller) and the engine's
attribution worker in use: the answers are those of one thread, and nothing waits forever."""

from __future__ import annotations

import json
import os
import threading
import time

import numpy as np
import pytest

import calculators.intervals as iv_mod
from calculators import kernels
from calculators.engine import compute
from calculators.incidents import IncidentLog
from slaschema.loader import load_contract_text

CONTRACT = (
    "slakit: 1\n"
    "contract: {id: threads, provider: P, customer: C, timezone: UTC, currency: USD}\n"
    "topology:\n  architecture: custom\n  gpus_per_node: 4\n  sites:\n  - id: s1\n    clusters:\n"
    + "".join(f"    - id: c{c}\n      racks:\n" + "".join(
        f"      - {{id: c{c}-r{r}, nodes: \"c{c}-r{r}-n[1-6]\"}}\n" for r in range(4)) for c in range(3))
    + "pricing: {per_gpu_hour: 2.00}\n"
    "downtime:\n  min_outage: 5m\n  degraded: proportional\n"
    "  rack: {down_when_nodes_down: 2, nodes_follow_rack: true}\n"
    "  cluster: {down_when_available_below: 90%, nodes_follow_cluster: true}\n"
    "service_levels:\n"
    "  node:\n    credits:\n      - {below: 99.5%, credit: 10%}\n      - {below: 99%, credit: 25%}\n"
    "  rack:\n    target: 99.0%\n    pro_rata: {multiplier: 2}\n"
    "  cluster:\n    credits:\n      - {below: 99.5%, credit: 10%}\n"
    "  site:\n    credits:\n      - {below: 99.9%, credit: 5%}\n"
)


@pytest.fixture(scope="module")
def fleet():
    lc = load_contract_text(CONTRACT)
    rng = np.random.default_rng(7)
    nodes = lc.topology.units("node")
    n = 600
    scope = np.where(rng.random(n) < 0.9, "node", np.where(rng.random(n) < 0.7, "rack", "cluster"))
    target = [str(rng.choice(nodes)) if s == "node" else f"c{rng.integers(3)}-r{rng.integers(4)}" if s == "rack"
              else f"c{rng.integers(3)}" for s in scope]
    start = 1801440000 + rng.integers(0, 27 * 86400, n)             # February 2027
    end = start + rng.integers(60, 8 * 3600, n)
    iso = lambda t: np.datetime_as_string(t.astype("datetime64[s]"), unit="s").astype(object) + "Z"   # noqa: E731
    degraded = (scope == "node") & (rng.random(n) < 0.2)
    records = {"id": [f"I{k}" for k in range(n)], "scope": scope.tolist(), "target": target,
               "start": iso(start).tolist(), "end": iso(end).tolist(),
               "impact": np.where(degraded, "degraded", "down").tolist(),
               "gpus_affected": [str(int(g)) if d else "" for g, d in zip(rng.integers(1, 4, n), degraded)]}
    return lc, IncidentLog.from_records(records, lc.topology)


def _doc(fleet) -> str:
    lc, log = fleet
    return json.dumps(compute(lc, log, ["2027-02"], support=False).to_json(), sort_keys=True, default=str)


@pytest.fixture(params=["kernels", "numpy"])
def split(request, monkeypatch, fleet):
    """The one-piece answer, then every step split from 4 intervals (the calls counted); with
    the compiled kernels and without them (`minus_parent` then splits too: with them it walks
    each child's parent intervals in one piece)."""
    if request.param == "numpy":
        monkeypatch.setattr(kernels, "compiled", None)
    monkeypatch.setattr(iv_mod, "SPLIT_FROM", 10**12)
    want = _doc(fleet)
    calls = []
    real = iv_mod._both
    monkeypatch.setattr(iv_mod, "_both", lambda fn, a, b: calls.append(fn.__name__) or real(fn, a, b))
    monkeypatch.setattr(iv_mod, "SPLIT_FROM", 4)
    return want, calls


def test_two_threads_computing_at_once_get_the_one_thread_answer(fleet, split):
    want, calls = split
    got, errors = [], []

    def work():
        try:
            got.extend(_doc(fleet) for _ in range(3))
        except Exception as e:          # reported below, with the others
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads) and not errors
    assert len(got) == 6 and all(g == want for g in got)
    split_steps = {"_at_least", "_minus_parent"} if kernels.compiled is None else {"_at_least"}
    assert split_steps <= set(calls)          # the steps were split


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_computes_without_waiting_for_its_parents_worker(fleet, split):
    want, calls = split
    assert _doc(fleet) == want and iv_mod._pool is not None       # the parent's worker exists
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                                  # the child: its answer, then out
        try:
            os.write(write, b"1" if _doc(fleet) == want else b"0")
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child's compute did not finish in 30 s")
    answer = os.read(read, 1)
    os.close(read)
    assert answer == b"1"


def test_a_quarters_months_worked_out_in_two_threads_are_each_months_own(fleet, monkeypatch):
    """The months of a run are worked out every other one in a worker (`engine.run`): each is
    the month computed alone, in order, and with one month there is no worker."""
    import calculators.engine as engine

    lc, log = fleet
    months = ["2027-01", "2027-02", "2027-03"]
    threads = []
    real = engine._period_figures

    def figures(*a, **k):
        threads.append((k["period"].label, threading.current_thread().name))
        return real(*a, **k)

    monkeypatch.setattr(engine, "_period_figures", figures)
    together = compute(lc, log, months, support=False)
    assert sorted((m, t.startswith("slakit-months")) for m, t in threads) == [
        ("2027-01", False), ("2027-02", True), ("2027-03", False)]
    assert [p.period.label for p in together.periods] == months
    for k, m in enumerate(months):
        threads.clear()
        alone = compute(lc, log, [m], support=False)
        assert threads == [(m, threading.current_thread().name)]
        want = alone.to_json()["periods"][0]
        assert together.to_json()["periods"][k] == want
