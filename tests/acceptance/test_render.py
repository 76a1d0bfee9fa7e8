"""Renderers are functions of the run document; judging follows its written rules for any input."""

from __future__ import annotations

import io
import json
from xml.etree import ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from acceptance.document import parse_run_document
from acceptance.judge import Bounds, judge_value
from acceptance.report.render import criterion_rows, render_json, render_junit, render_table
from acceptance.results import Status

DATA = {
    "format": "slakit-acceptance-run/1",
    "contract": {"id": "c-1", "title": "T", "provider": "P", "customer": "C", "file": "c.yaml", "sha256": "ab" * 32},
    "run": {"mode": "run", "state": "complete", "started": "2027-01-10T10:00:00+00:00",
            "finished": "2027-01-10T11:00:00+00:00", "executor": "local", "nodes": ["n1", "n2"], "overrides": {}},
    "status": "fail",
    "counts": {"error": 0, "fail": 1, "warn": 0, "skip": 1, "pass": 0},
    "criteria": [
        {"id": "fs", "check": "storage.fio", "metric": "read_gbps", "expected": "read_gbps >= 20 GB/s", "unit": "GB/s",
         "status": "fail", "reason": "below_min", "duration_s": 12.5, "source": None,
         "verdicts": [
             {"criterion": "fs", "node": "n1", "status": "pass", "measured": 21.5, "expected": ">= 20 GB/s",
              "reason": "within_bounds", "remediation": "", "details": {}},
             {"criterion": "fs", "node": "n2", "status": "fail", "measured": 3.25, "expected": ">= 20 GB/s",
              "reason": "below_min", "remediation": "check the mount", "details": {}}]},
        {"id": "inv", "check": "gpu.inventory", "metric": None, "expected": "gpus_per_node: 4", "unit": "",
         "status": "skip", "reason": "no_gpu", "duration_s": 0.1, "source": None,
         "verdicts": [{"criterion": "inv", "node": "n1", "status": "skip", "measured": None, "expected": "the tool runs",
                       "reason": "no_gpu", "remediation": "no GPU", "details": {}}]},
    ],
    "aggregate": {"overall": {"status": "fail", "nodes": 2}, "racks": [], "nodes": []},
}
DOC = parse_run_document(DATA)


def test_json_round_trips():
    text = render_json(DOC)
    again = parse_run_document(json.loads(text))
    assert again == DOC and render_json(again) == text
    assert json.loads(text)["criteria"][0]["verdicts"] == DATA["criteria"][0]["verdicts"]


def test_junit_counts_and_cases():
    root = ET.fromstring(render_junit(DOC).encode())
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("3", "1", "0", "1")
    fs = root.find("testsuite[@name='fs']")
    failure = fs.find("testcase/failure")
    assert failure.get("type") == "below_min" and "3.25 GB/s" in failure.get("message")
    assert root.find("testsuite[@name='inv']/testcase/skipped") is not None


def test_rows_and_table_show_the_worst_verdict():
    rows = criterion_rows(DOC)
    assert rows[0] == {"id": "fs", "check": "storage.fio", "status": "fail", "measured": "3.25 GB/s",
                       "expected": "read_gbps >= 20 GB/s", "reason": "below_min", "nodes": "2: 1 bad"}
    buf = io.StringIO()
    render_table(DOC, Console(file=buf, width=160, color_system=None))
    text = buf.getvalue()
    assert "Acceptance c-1: FAIL" in text and "below_min" in text and "check the mount" in text


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
opt = st.one_of(st.none(), finite)


@given(measured=finite, lo=opt, hi=opt, wlo=opt, whi=opt)
@settings(max_examples=300)
def test_judge_value_follows_the_rules(measured, lo, hi, wlo, whi):
    b = Bounds(lo, hi, wlo, whi)
    v = judge_value("c", None, measured, b)
    if b.empty:
        assert v.status == Status.ERROR
    elif (lo is not None and measured < lo) or (hi is not None and measured > hi):
        assert v.status == Status.FAIL
    elif (wlo is not None and measured < wlo) or (whi is not None and measured > whi):
        assert v.status == Status.WARN
    else:
        assert v.status == Status.PASS and v.reason == "within_bounds"
