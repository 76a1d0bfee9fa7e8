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
