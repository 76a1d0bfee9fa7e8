"""Load a contract file: strict YAML -> models -> cross-field checks -> resolved topology.

All problems of a stage are reported together, each with file:line:col, the field
path, the value found and a fix. Nothing is computed from a contract with errors.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from slaschema import models
from slaschema.errors import InputError, Problem
from slaschema.models import Contract
from slaschema.semantics import check_contract
from slaschema.strict_yaml import MAX_BYTES, YamlDoc, format_path, read_yaml
from slaschema.topology import ResolvedTopology, resolve

SCHEMA_URL_COMMENT = "# yaml-language-server: $schema={schema}"


@dataclass(frozen=True)
class LoadedContract:
    model: Contract
    topology: ResolvedTopology
    file: str
    sha256: str
    raw: bytes = field(default=b"", repr=False, compare=False)     # the file's bytes (sha256 is of these)

    @property
    def id(self) -> str:
        return self.model.contract.id


def _all_field_names() -> set[str]:
    names: set[str] = set()
    for obj in vars(models).values():
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            for name, f in obj.model_fields.items():
                names.add(f.alias or name)
    return names


_FIELDS = _all_field_names()

def _model_in(tp: Any) -> type[BaseModel] | None:
    import typing

    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    args = typing.get_args(tp)
    origin = typing.get_origin(tp)
    if origin is dict and len(args) == 2:
        return _model_in(args[1])
    for a in args:
        m = _model_in(a)
        if m is not None:
            return m
    return None


def _fields_at(loc: tuple) -> set[str]:
    """Field names allowed at a location, for 'did you mean' suggestions."""
    cls: type[BaseModel] | None = Contract
    in_dict = False
    for part in loc:
        if cls is None:
            return set()
        if isinstance(part, int):
            continue
        if in_dict:
            in_dict = False
            continue
        f = cls.model_fields.get(part) or next(
            (x for x in cls.model_fields.values() if x.alias == part), None)
        if f is None:
            return set()
        import typing

        in_dict = typing.get_origin(f.annotation) is dict or any(
            typing.get_origin(a) is dict for a in typing.get_args(f.annotation))
        cls = _model_in(f.annotation)
    return {f.alias or n for n, f in cls.model_fields.items()} if cls else set()


_CODES = {
    "missing": "missing_field",
    "extra_forbidden": "unknown_field",
    "literal_error": "invalid_choice",
    "enum": "invalid_choice",
    "greater_than_equal": "out_of_range",
    "greater_than": "out_of_range",
    "less_than_equal": "out_of_range",
    "less_than": "out_of_range",
    "too_short": "too_short",
    "too_long": "too_long",
}


def _clean_loc(loc: tuple, data: Any) -> tuple:
    """Drop pydantic's union-member tags from a loc, keeping real keys and indices."""
    out: list = []
    cur = data
    for i, part in enumerate(loc):
        if isinstance(cur, dict) and isinstance(part, str) and part in cur:
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            out.append(part)
            cur = cur[part]
        elif isinstance(part, str) and ("[" in part or part in {"str", "int", "list", "dict", "bool", "date",
                                                                   "decimal", "timedelta", "function-before",
                                                                   "function-after", "function-plain"}
                                        or part.startswith("function-")):
            continue
        else:
            out.append(part)
            cur = None
    return tuple(out)


# the unit a duration field is usually written in, for the hint when a number has none
_USUAL_UNIT = {"claim_window": "d", "max_per_month": "h", "min_outage": "m", "detection": "m", "sev1": "m",
               "sev2": "h", "sev3": "h", "sev4": "h", "swap_within": "h", "duration": "h",
               "termination_right_after": "d", "exit_assistance": "d"}
_UNIT_WORDS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def usual_duration_unit(loc: tuple) -> tuple[str | None, str | None]:
    """(unit, word) a duration at `loc` usually takes: claim windows in days, exclusion
    notice in hours, termination notice in days, restore targets in hours ..."""
    names = [x for x in loc if isinstance(x, str)]
    if not names:
        return None, None
    last = names[-1]
    if last == "notice":
        unit = "d" if "termination" in names else "h"
    elif "restore" in names:
        unit = "h"
    else:
        unit = _USUAL_UNIT.get(last)
    return (unit, _UNIT_WORDS[unit]) if unit else (None, None)


def _from_validation(err: ValidationError, doc: YamlDoc) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[tuple] = set()
    for e in err.errors(include_url=False):
        loc = _clean_loc(tuple(e["loc"]), doc.data)
        etype = e["type"]
        code = _CODES.get(etype, etype if "_" in etype and etype.islower() and not etype.endswith("_type")
                          and not etype.endswith("_parsing") else "invalid_value")
        if etype.endswith("_type") or etype in ("model_type", "model_attributes_type"):
            code = "wrong_type"
        if etype.startswith("date") or etype.startswith("datetime"):
            code = "date_invalid"
        key = (loc, code)
        if key in seen:
            continue
        seen.add(key)
        value = e.get("input") if etype != "missing" else None
        fix: str | None = None
        msg = e["msg"]
        if code == "unknown_field":
            name = str(loc[-1]) if loc else ""
            allowed = _fields_at(loc[:-1]) or _FIELDS
            close = difflib.get_close_matches(name, allowed - {name}, n=1, cutoff=0.6)
            msg = f"unknown field {name!r}"
            fix = f"did you mean {close[0]!r}?" if close else "remove it or check the spelling against the schema"
            value = name
            line, col = doc.locate(loc, prefer_key=True)
        else:
            line, col = doc.locate(loc, prefer_key=isinstance(_at(doc.data, loc), (dict, list)))
        if code == "missing_field":
            msg = f"required field {loc[-1]!r} is missing"
            fix = f"add `{loc[-1]}:`"
        elif code == "invalid_choice":
            expected = (e.get("ctx") or {}).get("expected")
            fix = f"use one of {expected}" if expected else None
        elif code == "date_invalid":
            fix = "write dates as YYYY-MM-DD"
        elif code == "duration_unit_missing":
            unit, word = usual_duration_unit(loc)
            msg = f"a duration needs a unit: is {value} seconds, minutes, hours or days?"
            fix = (f"write {value}{unit} ({'.'.join(str(x) for x in loc if isinstance(x, str))} is usually "
                   f"given in {word})" if unit else f"write it with its unit, e.g. {value}s, {value}m, {value}h "
                                                    f"or {value}d")
        elif code == "wrong_type":
            if isinstance(value, (dict, list)):
                value = type(value).__name__
        if isinstance(value, (dict, list)):
            value = None
        problems.append(Problem(code=code, message=msg, file=doc.file, line=line, col=col,
                                path=format_path(loc) or "(document)", value=value, fix=fix))
    return problems


def load_contract_text(text: str | bytes, file: str = "<input>", base_dir: Path | None = None) -> LoadedContract:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    doc = read_yaml(raw, file, collect=True)
    if not isinstance(doc.data, dict):
        raise InputError([Problem("not_a_mapping", "a contract is a YAML mapping of sections", file=file,
                                  line=1, col=1, value=type(doc.data).__name__,
                                  fix="start from a template: slakit init --template NAME")])
    try:
        model = Contract.model_validate(doc.data)
    except ValidationError as err:
        trap_paths = {p.path for p in doc.problems}
        schema_problems = [p for p in _from_validation(err, doc) if p.path not in trap_paths]
        raise InputError(_sorted(doc.problems + schema_problems)) from None
    if doc.problems:
        raise InputError(_sorted(doc.problems))
    topo, topo_problems = resolve(model.topology, base_dir or Path("."), file, zone=model.contract.timezone)
    problems: list[Problem] = []
    for p in topo_problems:
        if p.line is None and p.path and p.path.startswith("topology"):
            loc = _path_tuple(p.path)
            line, col = doc.locate(loc)
            # the line and column are the contract's: so is the file (an unreadable inventory's
            # name, which the problem named as its file, becomes the value shown)
            value = p.value if p.value is not None or p.file in (None, file) else p.file
            p = Problem(**{**p.__dict__, "file": file, "line": line, "col": col, "value": value})
        problems.append(p)
    for f in check_contract(model, topo):
        line, col = doc.locate(f.path, prefer_key=isinstance(_at(doc.data, f.path), (dict, list)))
        problems.append(Problem(f.code, f.message, file=file, line=line, col=col,
                                path=format_path(f.path), value=f.value, fix=f.fix))
    if problems:
        raise InputError(_sorted(problems))
    assert topo is not None
    return LoadedContract(model, topo, file, hashlib.sha256(raw).hexdigest(), raw)


def _sorted(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.line or 0, p.col or 0))


def _at(data: Any, loc: tuple) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _path_tuple(path: str) -> tuple:
    out: list = []
    for part in path.replace("]", "").split("."):
        bits = part.split("[")
        out.append(bits[0])
        out.extend(int(b) for b in bits[1:])
    return tuple(out)


def locate_problems(contract: LoadedContract, problems: list[Problem]) -> list[Problem]:
    """`problems` found in a loaded contract by a higher layer (the acceptance criteria's
    params: path `acceptance.criteria[ID].params.KEY`): each with a field path and no file gets
    the contract's file and the line and column of the value it names. Others are kept as
    they are (a problem of an option or another file)."""
    import re

    if not any(p.path and not p.file for p in problems):
        return list(problems)
    doc = read_yaml(contract.raw, contract.file, collect=True) if contract.raw else None
    acc = contract.model.acceptance
    index = {c.id: i for i, c in enumerate(acc.criteria)} if acc is not None else {}
    out = []
    for p in problems:
        if not p.path or p.file:
            out.append(p)
            continue
        line, col = p.line, p.col
        if doc is not None and line is None:
            m = re.match(r"acceptance\.criteria\[([^\]]+)\](.*)$", p.path)
            if m and m.group(1) in index:
                loc = ("acceptance", "criteria", index[m.group(1)], *(x for x in m.group(2).split(".") if x))
            else:
                loc = _path_tuple(p.path)
            line, col = doc.locate(loc)
        out.append(Problem(**{**p.__dict__, "file": contract.file, "line": line, "col": col}))
    return out


def load_contract(path: str | Path) -> LoadedContract:
    p = Path(path)
    if not p.exists():
        raise InputError([Problem("file_not_found", "no such file", file=str(path),
                                  fix="check the path")])
    if p.is_dir():
        raise InputError([Problem("not_a_file", "is a directory", file=str(path), fix="name a contract file")])
    from slaschema.safefiles import check_cli_file

    check_cli_file(p, "contract")                # no /proc, /sys, /dev, FIFO or device
    size = p.stat().st_size
    if size > MAX_BYTES:
        raise InputError([Problem("file_too_large", f"file is {size / 1e6:.1f} MB; the limit is "
                                  f"{MAX_BYTES / 1e6:.0f} MB", file=str(path), value=size,
                                  fix="list nodes with hostlist expressions (r01-n[01-18]) or an inventory CSV")])
    from slaschema.safefiles import read_regular

    # a FIFO or a device (/dev/zero) as the contract would hang every command
    return load_contract_text(read_regular(p, shown=str(path), what="contract", max_bytes=MAX_BYTES),
                              str(path), p.parent)


def dump_contract(model: Contract, schema_ref: str | None = None) -> str:
    """YAML text that loads back to an equal model."""
    text = yaml.safe_dump(model.dump(), sort_keys=False, allow_unicode=True, width=100)
    if schema_ref:
        text = SCHEMA_URL_COMMENT.format(schema=schema_ref) + "\n" + text
    return text
