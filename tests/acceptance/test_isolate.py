"""The isolation search on simulated clusters: which nodes it finds and how many runs it takes."""

from __future__ import annotations

import itertools
import math

import pytest

from acceptance.isolate import Probe, criterion_unit, search, units_of


def cluster(n: int) -> list[str]:
    return [f"n{i:02d}" for i in range(1, n + 1)]


def prober(bad: set[str], flaky: set[str] = frozenset(), log: list | None = None):
    """A criterion that fails on any set containing a bad node (a flaky node fails only once)."""
    seen_flaky: set[str] = set()

    def probe(nodes: tuple[str, ...], purpose: str) -> Probe:
        hit = bool(bad & set(nodes))
        for f in flaky & set(nodes):
            if f not in seen_flaky:
                seen_flaky.add(f)
                hit = True
        if log is not None:
            log.append((purpose, nodes))
        return Probe(tuple(nodes), hit, "task_failed" if hit else "exit_ok", "exit 3" if hit else "", purpose)

    return probe


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13, 16, 33])
def test_one_faulty_node_found_within_the_bound(n):
    nodes = cluster(n)
    bound = 2 * math.ceil(math.log2(n)) + 1
    for bad in nodes:
        result = search(units_of(nodes), prober({bad}))
        assert result.isolated_nodes == [bad]
        assert result.runs <= bound, (bad, result.runs, bound)
        assert bad not in result.cleared
        assert set(result.cleared) | {bad} == set(nodes)


def test_two_faulty_nodes_in_eight_are_both_found():
    nodes = cluster(8)
    worst = 0
    for pair in itertools.combinations(nodes, 2):
        result = search(units_of(nodes), prober(set(pair)))
        assert sorted(result.isolated_nodes) == sorted(pair)
        worst = max(worst, result.runs)
    # Two independent searches plus two confirmations is the most it may take.
    assert worst <= 2 * (2 * 3) + 2


def test_a_passing_baseline_means_nothing_to_isolate():
    log: list = []
    result = search(units_of(cluster(8)), prober(set(), log=log))
    assert result.isolated == () and result.runs == 0
    assert [p for p, _ in log] == ["baseline"]


def test_a_failure_that_does_not_come_back_blames_no_node():
    nodes = cluster(8)
    result = search(units_of(nodes), prober(set(), flaky={"n05"}))
    # The flaky node failed the baseline only: no node is blamed, and the result says so.
    assert result.isolated == () and result.intermittent == ()
    assert result.not_reproduced is True
    assert set(result.cleared) == set(nodes)


def test_suspect_whose_confirmation_passes_is_intermittent():
    nodes = cluster(4)
    calls = {"n": 0}

    def probe(part, purpose):
        calls["n"] += 1
        failed = "n03" in part and purpose != "confirm"
        return Probe(tuple(part), failed, "task_failed" if failed else "exit_ok", "", purpose)

    result = search(units_of(nodes), probe)
    assert result.isolated == ()
    assert [n for u in result.intermittent for n in u.unit] == ["n03"]


def test_units_are_never_split_pairs_and_racks():
    nodes = cluster(8)
    log: list = []
    result = search(units_of(nodes, 2), prober({"n06"}, log=log))
    assert result.isolated_nodes == ["n05", "n06"]          # the smallest valid group: a pair
    for _, part in log:
        assert len(part) % 2 == 0
    racks = [cluster(8)[:4], cluster(8)[4:]]
    log.clear()
    result = search(units_of(nodes, groups=racks), prober({"n02"}, log=log))
    assert result.isolated_nodes == racks[0]
    assert all(set(part) in ({*racks[0]}, {*racks[1]}, set(nodes)) for _, part in log)


def test_every_probe_is_counted_and_only_extra_runs_count():
    log: list = []
    result = search(units_of(cluster(8)), prober({"n01"}, log=log))
    assert len(log) == result.runs + 1                       # + the baseline
    assert [p for p, _ in log][0] == "baseline" and [p for p, _ in log][-1] == "confirm"


class _Topo:
    racks = ("r1", "r2")

    def nodes_per_rack(self):
        return [4, 4]

    def nodes_of(self, scope, unit):
        return cluster(8)[:4] if unit == "r1" else cluster(8)[4:]


class _P:
    def __init__(self, nodes):
        self.nodes = nodes


def test_unit_follows_the_criterion_layout():
    nodes = cluster(8)
    assert criterion_unit("network.nccl", _P(4), _Topo(), nodes)[0] == "rack"
    assert criterion_unit("network.nccl", _P(8), _Topo(), nodes)[0] == "pair"
    assert criterion_unit("network.nccl", _P(2), _Topo(), nodes)[0] == "pair"
    assert criterion_unit("custom.command", _P(8), _Topo(), nodes) == ("node", [(n,) for n in nodes])
    assert criterion_unit("custom.command", _P(8), _Topo(), nodes, unit_size=4)[1] == [tuple(nodes[:4]),
                                                                                      tuple(nodes[4:])]
