"""custom.command: params validation, metric extraction and verdicts (pure), and a local run."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from acceptance.checks import get_check
from acceptance.checks.base import judge_output
from acceptance.executors.base import RawOutput
from acceptance.runner import plan
from slaschema.errors import InputError
from slaschema.models import Criterion
from tests.contracts import small_contract

T = datetime(2027, 1, 5, tzinfo=timezone.utc)


def crit(**kw) -> Criterion:
    base = {"id": "burn", "check": "custom.command", "params": {"argv": ["burn", "--all"]}}
    base.update(kw)
    return Criterion.model_validate(base)


def raw(stdout: str, rc: int | None = 0) -> RawOutput:
    return RawOutput(stdout, "", rc, T, T, node="n1")


def judge(c: Criterion, out: RawOutput):
    (p,) = plan([c])
    return judge_output(p.check, p.criterion, p.params, "n1", out)[1]


def test_exit_status_alone_passes_and_fails():
    assert [v.reason for v in judge(crit(), raw("ok"))] == ["exit_ok"]
    (v,) = judge(crit(), raw("GPU 3: ECC error\nburn: FAILED", rc=2))
    assert v.status == "fail" and v.reason == "task_failed" and v.measured == "exit 2"
    assert "burn: FAILED" in v.details["output_tail"]


def test_metric_from_named_regex_lowest_match_judged_for_min():
    c = crit(params={"argv": ["burn"], "metrics": {"tflops": r"TFLOPS=([0-9.]+)"}}, metric="tflops", min=900)
    out = raw("gpu0 TFLOPS=990.1\ngpu1 TFLOPS=870.0\ngpu2 TFLOPS=1001\n")
    (v,) = judge(c, out)
    assert v.status == "fail" and v.reason == "below_min" and v.measured == 870.0
    assert v.details["matches"] == 3


def test_metric_highest_match_judged_for_max_and_named_group():
    c = crit(params={"argv": ["burn"], "metrics": {"temp_c": r"(?P<temp_c>\d+)C max"}}, metric="temp_c", max=85)
    (v,) = judge(c, raw("70C max\n88C max\n"))
    assert v.status == "fail" and v.reason == "above_max" and v.measured == 88.0


def test_metric_not_in_output_is_an_error_not_a_pass():
    c = crit(params={"argv": ["burn"], "metrics": {"tflops": r"TFLOPS=([0-9.]+)"}}, metric="tflops", min=1)
    (v,) = judge(c, raw("nothing useful\n"))
    assert v.status == "error" and v.reason == "metric_not_found"


def test_bounds_without_a_metric_are_an_error():
    (v,) = judge(crit(min=1, params={"argv": ["burn"], "metrics": {"x": "x=(\\d+)"}}), raw("x=3"))
    assert v.status == "error" and v.reason == "no_metric"


@pytest.mark.parametrize("params, code", [
    ({"argv": "burn --all"}, "list_type"),
    ({"argv": []}, "too_short"),
    ({"argv": ["-rf"]}, "value_error"),
    ({"argv": ["burn"], "metrics": {"x": "no group"}}, "value_error"),
    ({"argv": ["burn"], "metrics": {"x": "(unclosed"}}, "value_error"),
    ({"argv": ["burn"], "metrics": {"Bad-Name": "(\\d)"}}, "value_error"),
    ({"argv": ["burn"], "nodes": 0}, "greater_than_equal"),
    ({"argv": ["burn"], "shell": True}, "extra_forbidden"),
])
def test_bad_params_are_refused_with_a_code(params, code):
    with pytest.raises(InputError) as err:
        plan([crit(params=params)])
    assert code in [p.code for p in err.value.problems]


def test_no_shell_is_involved():
    """The argv goes to the executor as a list; shell syntax in an item stays literal."""
    check = get_check("custom.command")
    (p,) = plan([crit(params={"argv": ["echo", "$(id); rm -rf /"]})])
    from acceptance.checks.base import CollectContext
    from acceptance.executors.local import LocalExecutor

    ctx = CollectContext(executor=LocalExecutor(), nodes=("n1",), timeout_s=30)
    out = check.collect(p.params, ctx)
    assert out["n1"].stdout == "$(id); rm -rf /\n"


def test_accept_run_locally_with_a_custom_command(tmp_path):
    extra = ("acceptance:\n  criteria:\n"
             "    - id: quick\n      check: custom.command\n"
             "      params: {argv: [python3, -c, 'print(\"score: 42\")'], metrics: {score: 'score: (\\d+)'}}\n"
             "      metric: score\n      min: 40\n")
    path = tmp_path / "c.yaml"
    path.write_text(small_contract("custom-local", {"r1": "n[1-2]"}, extra), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "slakit", "accept", "run", str(path), "--out", str(tmp_path / "b"),
                           "--format", "json", "--no-progress"], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    quick = next(c for c in doc["criteria"] if c["id"] == "quick")
    assert quick["status"] == "pass" and quick["verdicts"][0]["measured"] == 42.0
