"""custom.command metric regexes come from the contract: a pattern with catastrophic
backtracking must end in a coded error verdict within the match budget, not hang the run."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from acceptance.checks import custom_command
from acceptance.checks.base import judge_output
from acceptance.executors.base import RawOutput
from acceptance.runner import plan
from slaschema.models import Criterion

T = datetime(2027, 1, 5, tzinfo=timezone.utc)


def test_backtracking_regex_is_cut_off_with_a_coded_verdict(monkeypatch):
    monkeypatch.setattr(custom_command, "MATCH_BUDGET_S", 0.5)
    c = Criterion.model_validate({"id": "burn", "check": "custom.command", "metric": "x", "min": 1,
                                  "params": {"argv": ["burn"], "metrics": {"x": r"(x+x+)+y"}}})
    (p,) = plan([c])
    t0 = time.monotonic()
    verdicts = judge_output(p.check, p.criterion, p.params, "n1", RawOutput("x" * 3000, "", 0, T, T, node="n1"))[1]
    assert time.monotonic() - t0 < 10
    (v,) = verdicts
    assert v.status == "error" and v.reason == "metric_regex_timeout"


def test_ordinary_regex_still_matches():
    timed_out: list[str] = []
    got = custom_command.extract_metrics("TFLOPS=990.5\nTFLOPS=870\n", {"t": r"TFLOPS=([0-9.]+)"}, timed_out)
    assert got == {"t": [990.5, 870.0]} and timed_out == []
