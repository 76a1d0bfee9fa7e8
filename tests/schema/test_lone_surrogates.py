"""`textsafe.no_lone_surrogates`: the one rule for a lone UTF-16 surrogate escaped in JSON from
the other party (incident logs, raw outputs, tool outputs), read as U+FFFD."""

from __future__ import annotations

import json

from acceptance.parsers._common import iter_json_objects
from slaschema.textsafe import no_lone_surrogates


def test_strings_keys_nested_values_and_attributes_are_cleaned_in_order():
    class Twice(dict):
        pass

    doc = json.loads('{"\\ud800k": ["a\\udc80", {"b": "\\ud834"}], "z": "\\ud83d\\ude00", "n": 1}',
                     object_pairs_hook=Twice)
    doc.twice = ["\ud800y"]
    doc.note = "\udc80"
    got = no_lone_surrogates(doc)
    assert got is doc and type(got) is Twice
    assert list(got.items()) == [("\ufffdk", ["a\ufffd", {"b": "\ufffd"}]), ("z", "\U0001f600"), ("n", 1)]
    assert got.twice == ["\ufffdy"] and got.note == "\ufffd"
    json.dumps(got, ensure_ascii=False).encode("utf-8")          # writable as UTF-8 now


def test_a_document_nested_as_deep_as_the_decoder_takes_is_cleaned_without_recursion():
    # a walk by recursion gave up at about 700 levels; the decoder reads such a document
    text = '{"a":' * 950 + '"\\ud800"' + "}" * 950
    ((_, doc),) = list(iter_json_objects(text))
    for _ in range(950):
        doc = doc["a"]
    assert doc == "\ufffd"


def test_an_escaped_backslash_before_u_is_text_not_a_surrogate():
    # the escape-rewriting rule this replaced took `\\ud800` (a backslash, then "ud800") for one
    ((_, doc),) = list(iter_json_objects('{"path": "C:\\\\ud800", "lone": "\\ud800"}'))
    assert doc == {"path": "C:\\ud800", "lone": "\ufffd"}
