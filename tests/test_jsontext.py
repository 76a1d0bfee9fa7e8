"""`dumps_indented` writes exactly what `json.dumps(indent=2, ensure_ascii=False)` writes, but
for the characters a terminal acts on or a viewer hides, which it writes as \\u escapes."""

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


# DEL, C1, ALM, zero-width and bidi marks, separators, embeddings and overrides, word joiner and
# invisible operators, isolates, BOM, interlinear annotation: listed here apart from the module
HIDDEN = {chr(c) for c in [*range(0x7F, 0xA0), 0xAD, 0x34F, 0x61C, 0x115F, 0x1160, 0x17B4, 0x17B5,
                           *range(0x180B, 0x1810), *range(0x200B, 0x2010), *range(0x2028, 0x202F),
                           *range(0x2060, 0x2070), 0x3164, *range(0xFE00, 0xFE10), 0xFEFF, 0xFFA0,
                           *range(0xFFF0, 0xFFFC), *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B),
                           *range(0xE0000, 0xE1000)]}


def _escaped(c: str) -> str:
    return json.dumps(c)[1:-1] if c not in ("\x7f",) else "\\u007f"      # (the standard library's \u form)


def reference(doc) -> str:
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return "".join(_escaped(c) if c in HIDDEN else c for c in text)


@settings(max_examples=300, deadline=None)
@given(docs)
def test_same_text_as_the_standard_library(doc):
    assert dumps_indented(doc) == reference(doc)


hidden_text = st.text(alphabet=st.sampled_from(sorted(HIDDEN)[:300] + sorted(HIDDEN)[-40:]
                                               + ["a", "\u00fc", "\n", "\x1b", '"', "\U0001f600"]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(hidden_text, st.lists(hidden_text, max_size=3) | hidden_text, max_size=4))
def test_hidden_characters_are_escaped_and_read_back_the_same(doc):
    from slaschema.jsontext import dumps_indented_ascii, dumps_indented_utf8

    text = dumps_indented(doc)
    assert text == reference(doc) and not HIDDEN & set(text)
    assert json.loads(text) == doc and json.loads(dumps_indented_utf8(doc)) == doc
    ascii_text = dumps_indented_ascii(doc)
    assert json.loads(ascii_text) == doc and ascii_text.isascii() and "\x7f" not in ascii_text


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
