"""`acceptance.json_scan.long_arrays` counts the items of chosen arrays without parsing: checked
against a parse of the same text (json.loads keeping every key, even one given twice) on
random documents whose strings hold quotes, backslashes, brackets and commas, in any
spacing, with chunks from 1 byte up so that every token and escape falls across a chunk
boundary somewhere; and it declines (None) to speak of text that is not well formed."""

from __future__ import annotations

import json
import random

import pytest

from acceptance import json_scan
from acceptance.json_scan import ANY, long_arrays

LIMITS = {("criteria",): 2, ("criteria", ANY, "verdicts"): 1, ("criteria", ANY, "nodes"): 0, ("run", "nodes"): 3,
          ("waivers",): 0}
KEYS = ["criteria", "verdicts", "nodes", "run", "waivers", "id", "x", 'cri"teria', "crit\\eria", "ñodes", ""]
TRICKY = ['"', "\\", "\\\\", '\\"', "[", "]", "{", "}", ",", ":", " ", "\n", "é", "𝔘", "\u2028", "a", "0"]


def _value(rng: random.Random, depth: int):
    r = rng.random()
    if depth > 5 or r < 0.3:
        return rng.choice([None, True, 1, -2.5e-7, "".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 6)))])
    if r < 0.65:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def _document(rng: random.Random) -> dict:
    crit = [{"id": str(i), "verdicts": [_value(rng, 3) for _ in range(rng.randint(0, 3))],
             "nodes": [f"n{j}" for j in range(rng.randint(0, 2))], rng.choice(KEYS): _value(rng, 3)}
            for i in range(rng.randint(0, 4))]
    doc = {"format": "x", "run": {"nodes": [f"n{j}" for j in range(rng.randint(0, 5))]}, "criteria": crit}
    for _ in range(rng.randint(0, 3)):
        doc[rng.choice(KEYS)] = _value(rng, 1)
    return doc


def _reference(text: str) -> list:
    """What long_arrays should find, from a parse that keeps duplicate keys (arrays in the
    order they end: children before the array that holds them)."""
    found = []

    def walk(value, path):
        if isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, (*path, i))
            for pattern, limit in LIMITS.items():
                if len(pattern) == len(path) and all(isinstance(p, int) if w is ANY else p == w
                                                     for w, p in zip(pattern, path)) and len(value) > limit:
                    found.append((path, len(value), limit))
        elif isinstance(value, tuple):          # an object as its (key, value) pairs
            for k, v in value:
                walk(v, (*path, k))

    walk(json.loads(text, object_pairs_hook=tuple), ())
    return found


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 23])
def test_counts_agree_with_a_parse_on_random_documents(monkeypatch, chunk):
    monkeypatch.setattr(json_scan, "CHUNK", chunk)
    rng = random.Random(chunk)
    hits = 0
    for _ in range(25 if chunk < 8 else 150):
        doc = _document(rng)
        text = json.dumps(doc, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1, "\t"]),
                          separators=rng.choice([(",", ":"), (", ", ": "), (" ,\n", " :  ")]))
        if rng.random() < 0.3:       # a key given twice: both of its values are looked at
            text = text.replace('{"format"', '{"criteria": [1, 2, 3, 4], "format"', 1)
        want = _reference(text)
        got = long_arrays(text.encode("utf-8"), LIMITS)
        assert got == want, text
        hits += bool(want)
    assert hits > 10                 # the limits were crossed often enough to mean something


def test_a_key_is_read_with_its_escapes_and_a_quoted_key_inside_a_string_is_not_one():
    text = r'{"\u0063riteria": [1, 2, 3], "x": "\"criteria\": [1, 2, 3, 4]", "run": {"nodes": [1,2,3,4]}}'
    assert long_arrays(text.encode(), LIMITS) == [(("criteria",), 3, 2), (("run", "nodes"), 4, 3)]
    text = '{"criteria\\\\": [1, 2, 3], "x\\"criteria": [1, 2, 3]}'        # keys `criteria\` and `x"criteria`
    assert long_arrays(text.encode(), LIMITS) == []


def test_an_empty_list_is_empty_and_a_list_of_one_is_one():
    assert long_arrays(b'{"waivers": [ \n ]}', LIMITS) == []
    assert long_arrays(b'{"waivers": [{}]}', LIMITS) == [(("waivers",), 1, 0)]
    assert long_arrays(b'{"waivers": [""]}', LIMITS) == [(("waivers",), 1, 0)]


@pytest.mark.parametrize("text", [
    b'{"criteria": [1, 2, 3]',                  # not closed
    b'{"criteria": [1, 2, 3}}',                 # `[` closed by `}`
    b'{"criteria": [1, 2, 3]]}',                # closed twice
    b'{"criteria": [1, 2, 3], "x": "open}',     # a string not closed
    b'{"criteria": [1, 2, 3], "x": "\\"}',      # its quote escaped
])
def test_text_that_is_not_well_formed_is_left_to_the_parser(text):
    assert long_arrays(text, LIMITS) is None


def test_only_arrays_at_the_paths_given_are_reported():
    text = json.dumps({"criteria": [], "other": list(range(100)), "run": {"nodes": [], "x": list(range(9))},
                       "list": [{"criteria": list(range(9))}]})
    assert long_arrays(text.encode(), LIMITS) == []
    assert long_arrays(b"[1, 2, 3, 4, 5]", {(): 1}) == []           # the root must be an object


@pytest.mark.parametrize("run", [1, 2, 3, 4, 9, 10])
def test_runs_of_backslashes_across_chunks(monkeypatch, run):
    """A run of backslashes cut by a chunk boundary, or filling whole chunks: an odd run
    escapes the quote after it, an even one does not."""
    text = '{"x": "' + "\\" * run + ('"' if run % 2 else "") + '", "criteria": [1, 2, 3, 4]}'
    assert json.loads(text)                                       # the text is JSON
    for chunk in (1, 2, 3, 4, 5, 8, 1 << 23):
        monkeypatch.setattr(json_scan, "CHUNK", chunk)
        assert long_arrays(text.encode(), LIMITS) == [(("criteria",), 4, 2)], (chunk, text)


# --- empty items: `[,`, `,,`, `,]` are not JSON, and counting commas would count them -------------

def _empty_item_reference(text: str) -> bool:
    """Whether the text, read a character at a time, has a comma right after `[`, `{` or a
    comma, or a `]` or `}` right after a comma, outside strings, nothing but whitespace
    (any character up to U+0020) between; the text's start counts as a `[`."""
    last, in_string, escaped = "[", False, False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string, last = False, '"'
            continue
        if ord(c) <= 0x20:
            continue
        if (c == "," and last in "[{,") or (c in "]}" and last == ","):
            return True
        in_string, last = c == '"', c
    return False


def _chunked(monkeypatch, rng: random.Random, text: str, chunk: int) -> tuple[bytes, str]:
    """The text with up to a chunk of whitespace before it (so that the chunk boundaries
    fall anywhere in it), and the chunk size set."""
    monkeypatch.setattr(json_scan, "CHUNK", chunk)
    padded = rng.choice(" \n\t\r") * rng.randrange(chunk + 1) + text
    return padded.encode("utf-8"), padded


def _tokens(text: str) -> list[int]:
    """Where the brackets, braces and commas outside strings are."""
    spots, in_string, escaped = [], False, False
    for i, c in enumerate(text):
        if in_string:
            if c == '"' and not escaped:
                in_string = False
            escaped = not escaped and c == "\\"
            continue
        if c == '"':
            in_string = True
        elif c in "[{,]}":
            spots.append(i)
    return spots


def _spaced(rng: random.Random, text: str) -> str:
    """The text with whitespace put in before or after a bracket, brace or comma (still JSON)."""
    i = rng.choice(_tokens(text)) + rng.randint(0, 1)
    return text[:i] + rng.choice([" ", "\n  ", "\t", "\r\n", " " * rng.randint(4, 40)]) + text[i:]


def _break(rng: random.Random, text: str) -> str:
    """The text with one empty item made somewhere outside its strings: a comma put right
    after a `[`, `{` or comma, or right before a `]` or `}`, with whitespace or none."""
    ws = rng.choice(["", " ", "\n  ", "\t", " " * rng.randint(4, 40)])
    i = rng.choice(_tokens(text))
    if text[i] in "[{,":
        return text[:i + 1] + ws + "," + text[i + 1:]
    return text[:i] + "," + ws + text[i:]


def test_the_empty_places_of_a_list_are_not_counted_as_items():
    """`{"criteria": [,,,…]}` of 10,001 commas is no list of 10,002: it is not JSON at all, and
    the scan leaves it to the parser."""
    from acceptance.document import _list_limits

    assert long_arrays(b'{"criteria": [' + b"," * 10_001 + b"]}", _list_limits()) is None
    assert long_arrays(b'{"criteria": [' + b"1," * 10_001 + b"1]}", _list_limits()) == \
        [(("criteria",), 10_002, 10_000)]


@pytest.mark.parametrize("text", [
    '{"criteria": [,1, 2, 3]}', '{"criteria": [1, 2,, 3]}', '{"criteria": [1, 2, 3,]}', '{"criteria": [ , ]}',
    '{"criteria": [1, 2, 3 , \n\t ]}', '{"criteria": [1, 2, 3], "x": {,}}', '{"criteria": [1, 2, 3], "x": 1,}',
    '{"criteria": [1, 2, [[[[[[[1,,]]]]]]], 3]}',           # deeper than any path: still not JSON
    '{"criteria": [1, 2, 3], "x": "\\\\",}',                 # a string ending in a backslash, then `,}`
    ',{"criteria": [1, 2, 3]}', '  ,{"criteria": [1, 2, 3]}', '{,"criteria": [1, 2, 3]}',
    '{"criteria": [1, 2, 3]' + " " * 100 + ',' + " " * 100 + '}',
])
def test_an_empty_item_anywhere_is_left_to_the_parser(monkeypatch, text):
    with pytest.raises(ValueError):
        json.loads(text)
    rng = random.Random(text)
    for chunk in (*range(1, 65), 1 << 23):
        data, _ = _chunked(monkeypatch, rng, text, chunk)
        assert long_arrays(data, LIMITS) is None, (chunk, data)


@pytest.mark.parametrize("text", [
    '{"criteria": [[], {}, [ ], { }, "", ",", "[,", ",]"], "x": [1, 2,"" ,{"a" : [ ]} , 3]}',
    '{"criteria": ["a,", "\\",", "\\\\", 1 , 2 ,\n\t3 \r\n,{}]}',
])
def test_what_is_between_tokens_decides_and_strings_hold_anything(monkeypatch, text):
    want = _reference(text)
    rng = random.Random(text)
    for chunk in (*range(1, 65), 1 << 23):
        data, padded = _chunked(monkeypatch, rng, text, chunk)
        assert long_arrays(data, LIMITS) == want, (chunk, padded)


@pytest.mark.parametrize("chunk", range(1, 65))
def test_valid_and_nearly_valid_documents_against_json_loads(monkeypatch, chunk):
    """Valid JSON is counted as the parser counts it, at every chunk size and split, also with
    more whitespace put in; the same documents with one empty item put in, or with one
    character put in or taken out anywhere, are declined wherever the text has an empty item,
    and counted as parsed where json.loads still takes them."""
    rng = random.Random(1000 + chunk)
    declined = 0
    for _ in range(3):
        doc = _document(rng)
        text = json.dumps(doc, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1, "\t"]),
                          separators=rng.choice([(",", ":"), (", ", ": "), (" ,\n", " :  ")]))
        data, padded = _chunked(monkeypatch, rng, text, chunk)
        assert long_arrays(data, LIMITS) == _reference(padded), padded
        data, padded = _chunked(monkeypatch, rng, _spaced(rng, text), chunk)
        assert long_arrays(data, LIMITS) == _reference(padded), padded

        broken = _break(rng, text)
        with pytest.raises(ValueError):
            json.loads(broken)
        assert _empty_item_reference(broken)
        data, padded = _chunked(monkeypatch, rng, broken, chunk)
        assert long_arrays(data, LIMITS) is None, padded
        declined += 1

        i = rng.randrange(len(text) + 1)
        changed = (text[:i] + rng.choice(',[]{}":\\ \n0') + text[i:]) if rng.random() < 0.5 else \
            text[:i] + text[i + 1:]
        data, padded = _chunked(monkeypatch, rng, changed, chunk)
        got = long_arrays(data, LIMITS)
        if _empty_item_reference(padded):
            assert got is None, padded
            declined += 1
        else:
            try:
                want = _reference(padded)
            except ValueError:
                continue                           # not JSON for another reason: not asserted here
            assert got == want, padded
    assert declined >= 3
