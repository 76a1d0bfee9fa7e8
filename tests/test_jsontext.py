"""`dumps_indented` writes exactly what `json.dumps(indent=2, ensure_ascii=False)` writes."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from slaschema.jsontext import dumps_indented

leaves = (st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.text()
          | st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != 0 or str(x) == "0.0")
          | st.decimals(min_value=0, max_value=10**9, places=3, allow_nan=False).map(float))
docs = st.recursive(leaves, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4),
                    max_leaves=30)


def reference(doc) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@settings(max_examples=300, deadline=None)
@given(docs)
def test_same_text_as_the_standard_library(doc):
    assert dumps_indented(doc) == reference(doc)


def test_edge_cases():
    for doc in ({}, [], {"a": {}, "b": []}, [[[]]], {"x": "\x00\x1f\x7f\u2028\ud7ff\ue000\U0001f600"},
                {"n": 2**63 - 1, "m": -(2**63)}, (1, 2), {"f": [1e16, 1e-05, 123.456, -0.0, 5e-324]}):
        assert dumps_indented(doc) == reference(doc)


def test_what_orjson_refuses_is_written_by_the_standard_library():
    for doc in ({"big": 2**70}, {1: "int key"}, {"s": "\ud800"}):
        assert dumps_indented(doc) == reference(doc)


def test_utf8_bytes_are_the_text_encoded():
    from slaschema.jsontext import dumps_indented_utf8

    for doc in ({"ü": ["\u2028", 1.5, None]}, {"small": 1e-05}, {1: 2}, {"big": 2**70}):
        assert dumps_indented_utf8(doc) == reference(doc).encode("utf-8")
