"""An identifier that ends in a line break is refused, never taken for the name before it.

Python's `$` matches before a final newline: the patterns that check contract ids, host
names, hostlist ranges and evidence file names used it with `match`, so `r01\\n` passed as a
rack id and `gpu-01\\n` as a plain file name. They end in `\\Z` now. (A month or quarter
given with white space around it is read without it, as before.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from acceptance.evidence import node_file, node_from_file
from slaschema.errors import InputError
from slaschema.loader import load_contract_text

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = (REPO / "examples" / "gb200-contract.yaml").read_text(encoding="utf-8")


def test_a_rack_id_with_a_final_line_break_is_refused():
    text = EXAMPLE.replace('{id: r02, nodes: "r02-n[01-18]"}', '{id: "r02\\n", nodes: "r02-n[01-18]"}')
    assert text != EXAMPLE
    with pytest.raises(InputError) as e:
        load_contract_text(text, "c.yaml")
    assert [p.code for p in e.value.problems] == ["id_invalid"]


def test_the_same_contract_without_it_loads():
    assert load_contract_text(EXAMPLE, "c.yaml").topology.counts()["nodes"] == 72


def test_a_node_name_with_a_final_line_break_is_no_plain_file_name():
    assert node_file("gpu-01") == "gpu-01"
    escaped = node_file("gpu-01\n")
    assert "\n" not in escaped and escaped.startswith("x-") and node_from_file(escaped) == "gpu-01\n"


def test_every_name_pattern_refuses_a_final_line_break():
    from slaschema import hostlist, topology
    from slaschema.models import _ID

    from acceptance.checks import base, storage_s3

    for pattern, good in ((_ID, "r01"), (topology._UNIT_ID, "c1"), (topology._NODE_NAME, "r01-n01"),
                          (hostlist._NAME_OK, "gpu-01"), (hostlist._RANGE, "01-18"), (base._HOST, "gpu-01"),
                          (base._HOST, "10.0.0.1"), (base._NAME, "gpu-01"), (storage_s3._URL, "http://minio:9000/"),
                          (storage_s3._BUCKET, "bench-bucket"), (storage_s3._PREFIX, "runs/a")):
        assert pattern.match(good) and not pattern.match(good + "\n"), pattern.pattern
