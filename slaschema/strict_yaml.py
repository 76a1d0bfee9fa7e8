"""YAML reading without YAML 1.1 surprises, with a position for every value.

PyYAML (like most YAML 1.1 readers) silently turns `NO` into False, `1:30` into 90,
`010` into 8 and `2027-01-01` into a date, and keeps the last of two duplicate keys.
In a contract each of those is a silent change of meaning, so here they are problems
with a location and a fix. Plain scalars are resolved by our own small rule set; quoted
scalars are always strings. Dates and timestamps stay strings for the models to parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import yaml

from slaschema.errors import InputError, Problem

try:  # libyaml's composer is ~10x faster; fall back to pure Python where it is absent
    _BaseLoader = yaml.CSafeLoader  # type: ignore[attr-defined]
except AttributeError:  # pragma: no cover
    _BaseLoader = yaml.SafeLoader

MAX_BYTES = 16 * 1024 * 1024
MAX_NODES = 200_000      # values after alias expansion; a contract has a few thousand
MAX_DEPTH = 64           # nesting of mappings and lists; a contract needs fewer than 10

Path = tuple[str | int, ...]

_NULL = {"", "~", "null", "Null", "NULL"}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
_AMBIGUOUS_BOOL = {"yes", "no", "on", "off", "y", "n"}
_INT = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)$")
_LEADING_ZERO = re.compile(r"^[-+]?0[0-9_]+$")
_OTHER_RADIX = re.compile(r"^[-+]?0[xXoObB][0-9a-fA-F_]+$")
_SEXAGESIMAL = re.compile(r"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$")
_SPECIAL_FLOAT = re.compile(r"^[-+]?\.(inf|Inf|INF|nan|NaN|NAN)$")
_UNDERSCORE_NUM = re.compile(r"^[-+]?[0-9][0-9_]*_[0-9_]*(\.[0-9_]*)?$")
_STD_TAGS = {
    "tag:yaml.org,2002:" + t
    for t in ("str", "int", "float", "bool", "null", "timestamp", "map", "seq", "merge", "value")
}


@dataclass
class YamlDoc:
    data: Any
    file: str
    problems: list[Problem] = field(default_factory=list)                     # value-level traps
    positions: dict[Path, tuple[int, int]] = field(default_factory=dict)       # value marks
    key_positions: dict[Path, tuple[int, int]] = field(default_factory=dict)   # key marks

    def locate(self, path: Path, prefer_key: bool = False) -> tuple[int | None, int | None]:
        """Line/col of the deepest existing prefix of `path` (1-based)."""
        p = tuple(path)
        while True:
            if prefer_key and p in self.key_positions:
                return self.key_positions[p]
            if p in self.positions:
                return self.positions[p]
            if p in self.key_positions:
                return self.key_positions[p]
            if not p:
                return (None, None)
            p = p[:-1]


def format_path(path: Path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class _Reader:
    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.positions: dict[Path, tuple[int, int]] = {}
        self.key_positions: dict[Path, tuple[int, int]] = {}
        self.count = 0

    def problem(self, code: str, node: yaml.Node, path: Path, message: str, value: Any, fix: str) -> None:
        self.problems.append(
            Problem(
                code=code,
                message=message,
                file=self.file,
                line=node.start_mark.line + 1,
                col=node.start_mark.column + 1,
                path=format_path(path) or "(document)",
                value=value,
                fix=fix,
            )
        )

    def walk(self, node: yaml.Node, path: Path) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise _TooLarge(node)
        self.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.walk(child, path + (i,)) for i, child in enumerate(node.value)]
        return self.scalar(node, path)

    def mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        merges: list[dict[str, Any]] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or (
                isinstance(key_node, yaml.ScalarNode) and key_node.value == "<<" and not key_node.style
            ):
                merged = self.walk(value_node, path)
                for m in merged if isinstance(merged, list) else [merged]:
                    if isinstance(m, dict):
                        merges.append(m)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.problem("yaml_complex_key", key_node, path, "mapping keys must be plain names", None,
                             "use a simple word as the key")
                continue
            key = key_node.value
            kpath = path + (key,)
            if key in out or key in first_line:
                self.problem(
                    "yaml_duplicate_key", key_node, kpath,
                    f"key {key!r} appears twice in the same mapping (first at line {first_line[key]})",
                    key, "remove one of the two entries; YAML would silently keep only the last",
                )
                continue
            first_line[key] = key_node.start_mark.line + 1
            self.key_positions[kpath] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[key] = self.walk(value_node, kpath)
        for m in merges:
            for k, v in m.items():
                out.setdefault(k, v)
        return out

    def scalar(self, node: yaml.ScalarNode, path: Path) -> Any:
        text = node.value
        if node.tag not in _STD_TAGS and node.tag != "tag:yaml.org,2002:binary":
            self.problem("yaml_tag", node, path, f"YAML tag {node.tag!r} is not allowed", text,
                         "remove the tag; contracts hold plain values only")
            return text
        if node.style in ("\"", "'", "|", ">"):  # quoted or block scalar: always a string
            return text
        if text in _NULL:
            return None
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        low = text.lower()
        if low in _AMBIGUOUS_BOOL:
            self.problem(
                "yaml_ambiguous_boolean", node, path,
                f"{text!r} is a boolean in YAML 1.1 but a string in YAML 1.2", text,
                f"write true or false, or quote it (\"{text}\") if you mean the text",
            )
            return text
        if _INT.match(text) or _FLOAT.match(text):
            value = int(text) if _INT.match(text) else Decimal(text)
            big = (len(text.lstrip("+-")) > 40) if isinstance(value, int) else \
                (value.is_finite() and value != 0 and abs(value.adjusted()) > 40)
            if big:
                # 1e999999999 as a node count or a GPU count would take forever to build
                self.problem("number_too_large", node, path, "number out of range (more than 40 digits)", text[:40],
                             "write the number as it is meant, e.g. 4 or 3.25")
                return text
            return value
        if _LEADING_ZERO.match(text) or _OTHER_RADIX.match(text):
            self.problem(
                "yaml_octal", node, path,
                "a number with a leading zero or radix prefix is read as octal/hex by YAML 1.1", text,
                f"remove the leading zero, or quote it (\"{text}\") if you mean the text",
            )
            return text
        if _SEXAGESIMAL.match(text):
            self.problem(
                "yaml_sexagesimal", node, path,
                f"{text!r} is a base-60 number in YAML 1.1 (1:30 means 90)", text,
                "write a duration with a unit such as 90m, or quote it",
            )
            return text
        if _SPECIAL_FLOAT.match(text) or _UNDERSCORE_NUM.match(text):
            self.problem("yaml_number_format", node, path, "number format is ambiguous", text,
                         "write a plain decimal number")
            return text
        return text


class _TooLarge(Exception):
    def __init__(self, node: yaml.Node) -> None:
        self.node = node


EMPTY_CONTRACT_FIX = "start from a template: slakit init --template NAME"


def read_yaml(text: str | bytes, file: str = "<input>", collect: bool = False,
              empty_fix: str = EMPTY_CONTRACT_FIX) -> YamlDoc:
    """Parse one YAML document strictly. Raises InputError with every problem found.

    With `collect`, value-level traps (ambiguous booleans, duplicate keys, ...) are
    returned in `doc.problems` so the caller can add the schema's problems to them.
    `empty_fix`: what to write into an empty file (a contract's, unless the file is another kind).
    """
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise InputError([_size_problem(file, len(text))])
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError([Problem("not_utf8", f"file is not UTF-8 text ({e.reason} at byte {e.start})",
                                      file=file, fix="save the file as UTF-8")]) from None
    if len(text) > MAX_BYTES:
        raise InputError([_size_problem(file, len(text))])
    if not text.strip():
        raise InputError([Problem("empty_file", "file is empty", file=file, line=1, col=1,
                                  fix=empty_fix)])
    try:
        _prescan(text, file)
        nodes = list(yaml.compose_all(text, Loader=_BaseLoader))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise InputError([Problem(
            "yaml_syntax", f"not valid YAML: {e.problem or e.context}",
            file=file, line=mark.line + 1 if mark else None, col=mark.column + 1 if mark else None,
            fix="check indentation, colons and quotes around this line",
        )]) from None
    except yaml.reader.ReaderError as e:      # a character YAML does not allow (NUL, other controls)
        pos = e.position if isinstance(e.position, int) else 0
        if _BaseLoader is not yaml.SafeLoader:    # libyaml counts the position in UTF-8 bytes
            pos = len(text.encode("utf-8")[:pos].decode("utf-8", "ignore"))
        code = e.character if isinstance(e.character, int) else ord(e.character)
        raise InputError([Problem(
            "yaml_syntax", f"not valid YAML: {e.reason} (got U+{code:04X})",
            file=file, line=text.count("\n", 0, pos) + 1, col=pos - (text.rfind("\n", 0, pos) + 1) + 1,
            fix="remove the character, or write it as an escape such as \\x00 in a double-quoted string",
        )]) from None
    except yaml.YAMLError as e:
        raise InputError([Problem("yaml_syntax", f"not valid YAML: {e}", file=file)]) from None
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        raise InputError([Problem("empty_file", "file holds no YAML document", file=file, line=1, col=1,
                                  fix=empty_fix)])
    if len(nodes) > 1:
        n = nodes[1]
        raise InputError([Problem("yaml_multiple_documents", "file holds more than one YAML document",
                                  file=file, line=n.start_mark.line + 1, col=n.start_mark.column + 1,
                                  fix="keep one contract per file (remove the '---' separator)")])
    reader = _Reader(file)
    try:
        data = reader.walk(nodes[0], ())
    except _TooLarge as t:
        raise InputError([Problem(
            "yaml_too_complex",
            f"document expands to more than {MAX_NODES:,} values (alias/anchor bomb?)",
            file=file, line=t.node.start_mark.line + 1, col=t.node.start_mark.column + 1,
            fix="remove the repeated aliases; write the values out",
        )]) from None
    except RecursionError:
        raise InputError([Problem("yaml_too_complex", "document is nested too deeply or recursive",
                                  file=file, fix="flatten the structure")]) from None
    if reader.problems and not collect:
        raise InputError(reader.problems)
    return YamlDoc(data=data, file=file, problems=reader.problems, positions=reader.positions,
                   key_positions=reader.key_positions)


def _prescan(text: str, file: str) -> None:
    """Count values (aliases expanded) and nesting depth from the event stream, before any
    node is built: an alias bomb or a deep nest is refused in the time and memory the
    count takes, not after it has been built."""
    total = 0
    depth = 0
    sizes: dict[str, int] = {}
    frames: list[tuple[str | None, int]] = []

    def refuse(event: yaml.Event, message: str, fix: str) -> InputError:
        mark = event.start_mark
        return InputError([Problem("yaml_too_complex", message, file=file,
                                   line=mark.line + 1 if mark else None, col=mark.column + 1 if mark else None,
                                   fix=fix)])

    for event in yaml.parse(text, Loader=_BaseLoader):
        if isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            total += 1
            depth += 1
            if depth > MAX_DEPTH:
                raise refuse(event, f"document is nested more than {MAX_DEPTH} levels deep", "flatten the structure")
            frames.append((event.anchor, total))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, start = frames.pop()
            if anchor:
                sizes[anchor] = total - start + 1
        elif isinstance(event, yaml.AliasEvent):
            total += sizes.get(event.anchor, 1)
        if total > MAX_NODES:
            raise refuse(event, f"document holds more than {MAX_NODES:,} values once its aliases are expanded",
                         "remove the repeated aliases; write the values out")


def check_complexity(text: str, file: str = "<input>") -> None:
    """For readers that use plain `yaml.safe_load`: InputError `yaml_too_complex` for an alias
    bomb or a deep nest, before the document is built."""
    _prescan(text, file)


def _size_problem(file: str, size: int) -> Problem:
    return Problem("file_too_large", f"file is {size / 1e6:.1f} MB; the limit is {MAX_BYTES / 1e6:.0f} MB",
                   file=file, value=size,
                   fix="list nodes with hostlist expressions (r01-n[01-18]) or an inventory CSV")
