"""Properties of the credits that must hold whatever the log says."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators.periods import parse_periods
from tests.calculators.test_engine_vs_reference import run_both, scenarios

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def figures(result):
    """Everything money depends on, per month (incident ids left out)."""
    out = {}
    for pr in result.periods:
        units = {(scope, uid): (int(sm.lnum[i]), int(sm.dn[i]), int(sm.excluded[i]), bool(sm.met[i]),
                                int(sm.credit_cents[i]))
                 for scope, sm in pr.scopes.items() for i, uid in enumerate(sm.ids)}
        nodes = dict(zip(pr.nodes.ids, (int(x) for x in pr.nodes.credit_cents)))
        out[pr.period.label] = (units, nodes, pr.credit_uncapped_cents, pr.credit_total_cents, pr.cap_applied,
                                pr.minimum_applied)
    return out


@SETTINGS
@given(scenarios(), st.data())
def test_more_downtime_never_lowers_a_credit(scenario, data):
    spec, incidents, periods, as_of = scenario
    before, _ = run_both(spec, incidents, periods, as_of, False)
    extra = dict(data.draw(st.sampled_from(incidents))) if incidents else None
    if extra is None:
        return
    extra.update(id="EXTRA", category="unplanned", impact="down", gpus_affected=None,
                 end=extra["end"] if extra["end"] is not None else None)
    extra["start"] += data.draw(st.integers(-3600, 3600))
    if extra["end"] is not None:
        extra["end"] = max(extra["start"] + 1, extra["end"] + data.draw(st.integers(0, 7200)))
    after, _ = run_both(spec, incidents + [extra], periods, as_of, False)
    for b, a in zip(before.periods, after.periods):
        for scope, sm in b.scopes.items():
            sa = a.scopes[scope]
            for i in range(len(sm.ids)):
                assert int(sa.credit_cents[i]) >= int(sm.credit_cents[i]), (scope, sm.ids[i])
                assert int(sa.lnum[i]) * int(sm.dn[i]) >= int(sm.lnum[i]) * int(sa.dn[i])
        for i in range(len(b.nodes.ids)):
            assert int(a.nodes.credit_cents[i]) >= int(b.nodes.credit_cents[i])
        assert a.credit_uncapped_cents >= b.credit_uncapped_cents
        assert a.credit_total_cents >= b.credit_total_cents


@SETTINGS
@given(scenarios())
def test_node_credit_within_fee_and_total_within_cap(scenario):
    spec, incidents, periods, as_of = scenario
    result, _ = run_both(spec, incidents, periods, as_of, False)
    for pr in result.periods:
        for fee, credit in zip(pr.nodes.fee_cents, pr.nodes.credit_cents):
            assert 0 <= int(credit) <= int(fee)
        assert pr.credit_total_cents <= pr.credit_uncapped_cents
        if pr.cap_cents is not None:
            assert pr.credit_total_cents <= pr.cap_cents
            # cap is a share of the fee total: never above it
            assert pr.cap_cents <= pr.fee_total_cents
        assert pr.credit_uncapped_cents == sum(int(c) for c in pr.nodes.credit_cents)


@SETTINGS
@given(scenarios(), st.data())
def test_splitting_or_duplicating_an_incident_changes_nothing(scenario, data):
    spec, incidents, periods, as_of = scenario
    splittable = [i for i, inc in enumerate(incidents)
                  if inc["notice_at"] is None and (inc["end"] is None or inc["end"] - inc["start"] >= 2)]
    if not splittable:
        return
    k = data.draw(st.sampled_from(splittable))
    inc = incidents[k]
    hi = inc["end"] if inc["end"] is not None else inc["start"] + 86400
    cut = data.draw(st.integers(inc["start"] + 1, hi - 1))
    first = {**inc, "id": inc["id"] + "a", "end": cut}
    second = {**inc, "id": inc["id"] + "b", "start": cut}
    split = incidents[:k] + [first, second] + incidents[k + 1:]
    dup = incidents + [{**inc, "id": inc["id"] + "dup"}]
    base, _ = run_both(spec, incidents, periods, as_of, False)
    for variant in (split, dup):
        other, _ = run_both(spec, variant, periods, as_of, False)
        assert figures(other) == figures(base)


MONTH = 31 * 86400


@SETTINGS
@given(scenarios(pairs=(("2027-07", "2027-08"),), zones=("UTC",)))
def test_shifting_by_whole_months_shifts_the_result(scenario):
    spec, incidents, periods, as_of = scenario
    shifted_periods = parse_periods(["2027-12", "2028-01"], "UTC")
    delta = shifted_periods[0].start - periods[0].start
    assert [p.seconds for p in shifted_periods] == [p.seconds for p in periods]

    def move(t):
        return None if t is None else t + delta

    moved = [{**inc, "start": inc["start"] + delta, "end": move(inc["end"]), "notice_at": move(inc["notice_at"])}
             for inc in incidents]
    a, _ = run_both(spec, incidents, periods, as_of, False)
    b, _ = run_both(spec, moved, shifted_periods, move(as_of), False)
    fa, fb = figures(a), figures(b)
    assert list(fa.values()) == list(fb.values())


@SETTINGS
@given(scenarios())
def test_a_unit_has_downtime_exactly_when_it_names_incidents(scenario):
    spec, incidents, periods, as_of = scenario
    result, _ = run_both(spec, incidents, periods, as_of, False)
    known = {inc["id"] for inc in incidents}
    for pr in result.periods:
        for sm in pr.scopes.values():
            for row in sm.rows():
                lost = row.get("lost_gpu_seconds", row["downtime_seconds"])
                assert (lost > 0) == bool(row["incidents"]), (pr.period.label, row)
                assert set(row["incidents"]) <= known
