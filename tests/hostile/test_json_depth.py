"""An incident log in JSON nested thousands of levels deep is a coded problem naming the
file ([json_invalid], exit 1), for credits and reconcile, never [unexpected_error]."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.conftest import assert_coded_failure, cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
OURS = "id,scope,target,start,end\nI1,node,r01-n07,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z\n"

DEEP = {
    "array.json": "[" * 100_000 + "]" * 100_000,
    "object.jsonl": '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n",
    "value.jsonl": '{"id":' + "[" * 100_000 + "]" * 100_000 + "}\n",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deeply_nested_json_log_is_a_coded_problem(tmp_path, name):
    log = tmp_path / name
    log.write_text(DEEP[name], encoding="utf-8")
    ours = tmp_path / "ours.csv"
    ours.write_text(OURS, encoding="utf-8")
    for args in (("credits", CONTRACT, log, "--period", "2027-01"), ("reconcile", ours, log),
                 ("reconcile", CONTRACT, ours, log)):
        r = cli(*args)
        assert_coded_failure(r, "json_invalid")
        assert f"{name}" in r.output and "nested too deeply" in r.output, r.output
        assert "unexpected_error" not in r.output


def test_a_handed_over_raw_output_nested_too_deep_is_an_error_verdict_not_unexpected_error(tmp_path):
    """A provider's bundle whose raw outputs are JSON nested 100,000 levels deep (a RawOutput
    .json file, an iperf3 output cut off or whole) is judged: each such output is an `error`
    (unparseable or truncated), the rest of the bundle as usual; never [unexpected_error]."""
    from tests.acceptance.test_coverage import contract, evaluate, full_bundle

    c, b = contract(tmp_path), full_bundle(tmp_path)
    (b / "raw" / "sw" / "n2.txt").unlink()
    (b / "raw" / "sw" / "n2.json").write_text('{"stdout": "x", "rc": 0, "d": ' + "[" * 100_000 + "]" * 100_000 + "}",
                                              encoding="utf-8")
    (b / "raw" / "eth" / "n3.txt").write_text('{"start": {"x": ' + "[" * 100_000, encoding="utf-8")       # cut off
    (b / "raw" / "eth" / "n4.txt").write_text('{"start": ' + '{"a":' * 100_000 + "1" + "}" * 100_001,
                                              encoding="utf-8")
    r, doc = evaluate(c, b)
    assert r.exit_code == 1 and "unexpected_error" not in r.output and "Traceback" not in r.output, r.output
    got = {(v["criterion"], v["node"]): (v["status"], v["reason"]) for crit in doc["criteria"] for v in crit["verdicts"]
           if v["node"] in ("n2", "n3", "n4") and crit["id"] in ("sw", "eth") and v["status"] != "pass"}
    assert got == {("sw", "n2"): ("error", "unparseable_output"), ("eth", "n3"): ("error", "truncated_output"),
                   ("eth", "n4"): ("error", "unparseable_output")}
    assert doc["decision"]["result"] == "unjudged"
