"""Support figures and acceptance-delay remedies on hand-computed cases."""

from __future__ import annotations

from datetime import date, datetime, timezone
from decimal import Decimal

import numpy as np
import pytest

from calculators.incidents import IncidentLog, load_incidents
from calculators.result_json import acceptance_delay_json, support_json
from calculators.support import acceptance_delay, percentile, percentiles, support_report

from .conftest import EXAMPLE_LOG

T0 = int(datetime(2027, 2, 1, 6, 0, tzinfo=timezone.utc).timestamp())   # 2027-02 starts here in Chicago
T1 = int(datetime(2027, 3, 1, 6, 0, tzinfo=timezone.utc).timestamp())
DAY = 86400


@pytest.mark.parametrize("values, p50, p95", [
    ([], None, None),
    ([5], 5, 5),
    ([3, 1, 2], 2, 3),
    ([10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 50, 100),
    (list(range(1, 21)), 10, 19),
    ([7, 7, 7, 100], 7, 100),
])
def test_nearest_rank_percentiles(values, p50, p95):
    assert (percentile(values, 50), percentile(values, 95)) == (p50, p95)
    assert percentiles(np.array(values, dtype=np.int64), (50, 95)) == [p50, p95]


def rec(i: int, **kw) -> dict:
    base = {"id": f"I{i}", "scope": "node", "target": "r01-n01", "start": T0 + i * DAY}
    base.update(kw)
    return base


def test_detection_breaches_and_percentiles(lc):
    # detection delays 30, 60, 120 (exactly on target: met), 121, 600; one not measured
    delays = [30, 60, 120, 121, 600]
    recs = [rec(i, detected_at=T0 + i * DAY + d) for i, d in enumerate(delays)] + [rec(9)]
    rep = support_report(lc, IncidentLog.from_records(recs, lc.topology), T0, T1)
    d = rep.detection
    assert (d.target_seconds, d.count, d.measured, d.breaches) == (120, 6, 5, 2)
    assert (d.p50_seconds, d.p95_seconds, d.max_seconds) == (120, 600, 600)
    assert d.breach_ids == ("I3", "I4") and d.met is False


def test_response_from_reported_or_start_per_severity(lc):
    recs = [
        rec(0, severity="sev1", reported_at=T0 + 100, responded_at=T0 + 100 + 900),            # 900 = target
        rec(1, severity="sev1", responded_at=T0 + DAY + 901),                                   # from start: 901
        rec(2, severity="sev2", reported_at=T0 + 2 * DAY + 60, responded_at=T0 + 2 * DAY + 660),  # 600
        rec(3, severity="sev2"),                                                                # not measured
        rec(4, responded_at=T0 + 4 * DAY + 5),                                                  # no severity
    ]
    rep = support_report(lc, IncidentLog.from_records(recs, lc.topology), T0, T1)
    s1, s2, unset = rep.response_for("sev1"), rep.response_for("sev2"), rep.response_for("unset")
    assert (s1.target_seconds, s1.count, s1.measured, s1.breaches, s1.breach_ids) == (900, 2, 2, 1, ("I1",))
    assert (s1.p50_seconds, s1.p95_seconds) == (900, 901)
    assert (s2.target_seconds, s2.count, s2.measured, s2.breaches, s2.p50_seconds) == (3600, 2, 1, 0, 600)
    assert (unset.target_seconds, unset.count, unset.breaches, unset.met) == (None, 1, None, None)
    assert [f.group for f in rep.response] == ["sev1", "sev2", "sev3", "sev4", "unset"]   # every target is reported


def test_restore_per_scope_with_open_incidents(lc):
    recs = [
        rec(0, end=T0 + 3600),                                    # node, exactly 1h: met
        rec(1, end=T0 + DAY + 3601),                              # node, breach
        rec(2, scope="rack", target="r02", end=T0 + 2 * DAY + 7200),
        rec(3, scope="rack", target="r03"),                       # open since day 3: breach by as_of
        rec(4, scope="cluster", target="c1", end=T0 + 4 * DAY + 10),
        rec(5, scope="node", target="r01-n02", start=T1 - 600),   # open 10 minutes at period end: no breach yet
    ]
    rep = support_report(lc, IncidentLog.from_records(recs, lc.topology), T0, T1)
    node, rack, cluster = rep.restore_for("node"), rep.restore_for("rack"), rep.restore_for("cluster")
    assert (node.count, node.measured, node.open, node.breaches, node.breach_ids) == (3, 2, 1, 1, ("I1",))
    assert (node.p50_seconds, node.p95_seconds) == (3600, 3601)
    assert (rack.count, rack.measured, rack.open, rack.breaches, rack.breach_ids) == (2, 1, 1, 1, ("I3",))
    assert (cluster.target_seconds, cluster.breaches, cluster.p50_seconds) == (None, None, 10)
    # with an earlier as_of the open rack incident has not yet run past 24h
    early = support_report(lc, IncidentLog.from_records(recs, lc.topology), T0, T1, as_of_s=T0 + 3 * DAY + 3600)
    assert early.restore_for("rack").breaches == 0


def test_only_incidents_starting_in_the_period_count_once(lc):
    recs = [
        rec(0, start=T0 - 60, end=T0 + 7200),                       # starts in January: not in February
        rec(1, start=T1 - 60, end=T1 + 7200),                       # starts in February, ends in March
        rec(2, target="r01-n[01-04]", start=T0 + 10, end=T0 + 70),  # one incident, four rows
    ]
    rep = support_report(lc, IncidentLog.from_records(recs, lc.topology), T0, T1)
    assert rep.incidents == 2
    assert rep.restore_for("node").count == 2 and rep.restore_for("node").breach_ids == ("I1",)
    march = support_report(lc, IncidentLog.from_records(recs, lc.topology), T1, T1 + 31 * DAY)
    assert march.incidents == 0


def test_planned_work_with_notice_is_left_out(lc):
    recs = [rec(0, category="maintenance", notice_at=T0 - 5 * DAY, end=T0 + 5 * 3600, detected_at=T0 + 999),
            rec(1, category="maintenance", end=T0 + DAY + 5 * 3600)]      # no notice: counts
    rep = support_report(lc, IncidentLog.from_records(recs, lc.topology), T0, T1)
    assert rep.planned_excluded == 1 and rep.incidents == 2
    assert rep.restore_for("node").count == 1 and rep.restore_for("node").breach_ids == ("I1",)
    assert rep.detection.count == 1


def test_support_figures_as_json_are_plain_values(lc):
    import json

    log = load_incidents(EXAMPLE_LOG, lc)
    q_start = int(datetime(2027, 1, 1, 6, tzinfo=timezone.utc).timestamp())
    q_end = int(datetime(2027, 4, 1, 5, tzinfo=timezone.utc).timestamp())
    data = support_json(support_report(lc, log, q_start, q_end))
    assert json.loads(json.dumps(data)) == data
    assert data["incidents"] == log.frame["id"].nunique()
    assert data["detection"]["breaches"] > 0 and data["detection"]["target_seconds"] == 120
    assert data["restore"]["node"]["open"] == 1
    assert data["from"] == "2027-01-01T06:00:00Z" and data["percentile_method"] == "nearest-rank"


@pytest.mark.parametrize("accepted, days, credit, right, right_from", [
    (date(2027, 1, 10), 0, "0.00", False, "2027-02-14"),     # early
    (date(2027, 1, 15), 0, "0.00", False, "2027-02-14"),     # on the deadline
    (date(2027, 1, 16), 1, "1234.57", False, "2027-02-14"),  # 1% of 123,456.78 = 1,234.5678 -> half-up
    (date(2027, 2, 13), 29, "35802.47", False, "2027-02-14"),
    (date(2027, 2, 14), 30, "37037.03", True, "2027-02-14"),  # 30 days have passed
])
def test_acceptance_delay(lc, accepted, days, credit, right, right_from):
    rec = acceptance_delay(lc, accepted, Decimal("123456.78"))
    assert (rec.days_late, rec.credit, rec.termination_right, rec.termination_right_from) == \
        (days, Decimal(credit), right, date.fromisoformat(right_from))
    assert rec.currency == "USD" and rec.deadline == date(2027, 1, 15) and rec.monthly_fee_month is None
    out = acceptance_delay_json(rec)
    assert (out["days_late"], out["credit"], out["termination_right"], out["termination_right_from"]) == \
        (days, credit, right, right_from)
    assert out["deadline"] == "2027-01-15" and out["credit_per_day_pct"] == "1"


def test_acceptance_delay_without_deadline(lc):
    model = lc.model.model_copy(update={"acceptance": lc.model.acceptance.model_copy(update={"deadline": None})})
    lc2 = type(lc)(model, lc.topology, lc.file, lc.sha256)
    rec = acceptance_delay(lc2, date(2027, 6, 1), Decimal("100"))
    assert (rec.days_late, rec.credit, rec.termination_right, rec.deadline) == (0, Decimal("0.00"), False, None)
    out = acceptance_delay_json(rec)
    assert (out["days_late"], out["credit"], out["termination_right"], out["deadline"]) == (0, "0.00", False, None)
