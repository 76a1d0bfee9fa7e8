"""Judging as tables: bounds -> status and reason; statuses -> the worst by precedence."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from acceptance.judge import Bounds, judge_value
from acceptance.results import PRECEDENCE, Status, worst
from slaschema.models import Criterion

B = Bounds


@pytest.mark.parametrize(
    ("measured", "bounds", "status", "reason"),
    [
        (25.0, B(min=20), Status.PASS, "within_bounds"),
        (20.0, B(min=20), Status.PASS, "within_bounds"),           # the bound itself passes
        (19.99, B(min=20), Status.FAIL, "below_min"),
        (1900.0, B(min=1800, warn_below=2000), Status.WARN, "below_warn"),
        (1700.0, B(min=1800, warn_below=2000), Status.FAIL, "below_min"),   # fail wins over warn
        (2100.0, B(min=1800, warn_below=2000), Status.PASS, "within_bounds"),
        (130.0, B(max=120), Status.FAIL, "above_max"),
        (120.0, B(max=120), Status.PASS, "within_bounds"),
        (95.0, B(max=120, warn_above=90), Status.WARN, "above_warn"),
        (0.0, B(max=0), Status.PASS, "within_bounds"),
        (1.0, B(max=0), Status.FAIL, "above_max"),
        (5.0, B(min=1, max=10), Status.PASS, "within_bounds"),
        (11.0, B(min=1, max=10), Status.FAIL, "above_max"),
        (None, B(min=1), Status.ERROR, "metric_missing"),
        (float("nan"), B(min=1), Status.ERROR, "metric_missing"),
        (5.0, B(), Status.ERROR, "no_threshold"),
    ],
)
def test_judge_value_table(measured, bounds, status, reason):
    v = judge_value("c1", "n1", measured, bounds, unit="GB/s", remediation="fix it")
    assert (v.status, v.reason) == (status, reason)
    assert v.criterion == "c1" and v.node == "n1"
    assert v.remediation == ("" if status == Status.PASS else v.remediation)
    if status in (Status.FAIL, Status.WARN):
        assert v.remediation == "fix it"


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ([], Status.PASS),
        (["pass"], Status.PASS),
        (["pass", "skip"], Status.SKIP),
        (["skip", "warn", "pass"], Status.SKIP),
        (["warn", "fail", "skip"], Status.FAIL),
        (["fail", "error"], Status.FAIL),
        (["not_run", "skip", "waived"], Status.NOT_RUN),
        (["waived", "warn"], Status.WAIVED),
        (["error", "pass", "pass"], Status.ERROR),
        (["skip", "skip"], Status.SKIP),
    ],
)
def test_precedence_table(statuses, expected):
    assert worst(statuses) == expected


def test_precedence_order_is_written_down():
    assert [str(s) for s in PRECEDENCE] == ["fail", "error", "not_run", "skip", "waived", "warn", "pass"]


def test_bounds_from_criterion_durations_in_seconds():
    c = Criterion(id="d", check="health.detection", max=timedelta(minutes=2))
    b = Bounds.of(c)
    assert b.max == 120.0
    assert judge_value("d", None, 121.0, b).status == Status.FAIL
    assert judge_value("d", None, 119.0, b).status == Status.PASS


def test_expected_text_names_bounds_and_warning():
    b = Bounds.of(Criterion(id="g", check="gpu.gemm", metric="tflops_bf16", min=Decimal(1800),
                            warn_below=Decimal(2000)))
    assert b.describe("TFLOPS") == ">= 1800 TFLOPS (warn below 2000)"
