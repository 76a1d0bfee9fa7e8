"""The acceptance run document (results.json) as frozen typed records, its JSON form and its reader.

`acceptance.runner` builds a `RunDocument` by keyword; every renderer (terminal table, JSON,
JUnit, the certificate in PDF, Markdown and HTML) and every reader (`accept report`, the
performance re-check) takes the typed object. JSON is one serializer of it:
`RunDocument.to_json()` gives the plain data that `acceptance.evidence.dumps` writes, with
the keys in the order of the records' fields; `format` names the version
(`slakit-acceptance-run/2`).

A results.json travels with a bundle that comes from the other party, so reading one back
(`read_run_document`) trusts nothing: the JSON is parsed strictly into the records (no
extra field, no wrong type, no unknown status, aware times only, bounded lists) and every
departure is one `Problem` with the file, the field path, the value found and a fix, all of
them at once, raised as one `InputError`.

Shape (fields in this order; `?` fields are left out of the JSON when absent):

    RunDocument      format, contract, run, status, counts, criteria, aggregate,
                     scope?, as_of?, waivers?, decision?
    ContractInfo     id, title, provider, customer, file, sha256
    RunInfo          mode, state, started, finished, executor, nodes, only, overrides, resumed, isolation?
    CriterionOutcome id, check, area, metric, severity, source, description, params, thresholds,
                     expected, unit, status, reason, reason_text, state, duration_s, nodes,
                     evidence_outside_scope?, verdicts
    VerdictEntry     criterion, node, status, measured, expected, reason, remediation, details
    Aggregate        overall {status, nodes, node_counts, counts, cluster_counts},
                     racks [{rack, status, nodes, node_counts, counts}],
                     nodes [{node, rack, status, counts, criteria}]
    ScopeInfo        partial, nodes, nodes_expr, contract_nodes, nodes_not_covered,
                     nodes_not_covered_count, nodes_not_in_contract, only, criteria, criteria_not_covered
    WaiverUse        index, criterion, nodes, reason, approved_by, expires, state, verdicts_waived
    Decision         result, accepted, partial, headline, subset_result, blocking, verdict_counts, exit_status

The scope, waivers, `as_of` and decision are absent from documents written before coverage
was judged (format /1, and early /2 ones): such a document is read, but never shown as a
decision (`acceptance.report.certificate.NO_DECISION`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import math

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    ValidationInfo,
)
from pydantic_core import PydanticCustomError

from acceptance.results import PRECEDENCE, Status, Verdict
from slaschema.gc_pause import gc_paused
from slaschema.textsafe import cut

RUN_FORMAT: Final = "slakit-acceptance-run/2"
FORMATS = ("slakit-acceptance-run/1", RUN_FORMAT)      # /1: written before coverage judging

# Bounds on what a document read back may hold: a results.json comes from the other party.
MAX_BYTES = 1 << 30                 # 1 GiB; a 12,600-node run with every check is a few hundred MB
MAX_CRITERIA = 10_000
MAX_VERDICTS = 5_000_000            # per criterion
MAX_NODES = 1_000_000
MAX_WAIVERS = 10_000
MAX_PROBLEMS = 50                   # problems listed one by one; the rest are counted
_UTF8_CHUNK = 1 << 23

Time = Annotated[AwareDatetime, PlainSerializer(lambda t: t.isoformat(), return_type=str)]


def _finite(value: Any, info: ValidationInfo) -> Any:
    """Reading a document (`read_run_document` validates with the context `{"read": True}`):
    NaN, Infinity and a number too large for a float (1e999) are refused anywhere, in the
    free-form objects too. They are not JSON, and the JSON written from the document would
    not be either."""
    if info.context and info.context.get("read") and not _all_finite(value):
        raise PydanticCustomError("not_finite", "a number that is not finite (NaN, Infinity or too large) is not JSON")
    return value


def _all_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_all_finite(v) for v in value)
    return True


Number = Annotated[float, AfterValidator(_finite)]
Data = Annotated[dict[str, Any], AfterValidator(_finite)]      # free-form JSON object (params, details)
Counts = dict[Status, int]           # verdicts (or nodes, criteria) per status, worst first
Mode = Literal["run", "evaluate", "isolate"]
RunState = Literal["running", "complete", "interrupted"]
CriterionState = Literal["done", "interrupted", "pending"]
Severity = Literal["critical", "major", "minor"]
WaiverState = Literal["applied", "unused", "expired"]
Result = Literal["accepted", "accepted_with_warnings", "accepted_with_waivers", "partial", "rejected",
                 "unjudged", "incomplete", "empty"]


def zero_counts() -> Counts:
    """Every status with 0, in PRECEDENCE order (the order the JSON lists them in)."""
    return {s: 0 for s in PRECEDENCE}


class Record(BaseModel):
    """A frozen record built by keyword; unknown fields are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="constants")


def _is_none(value: Any) -> bool:
    return value is None


def _omitted(default: Any = None, **kw: Any) -> Any:
    """A field left out of the JSON when it is None (a per-field rule: a wrapping model
    serializer made every list inside the record several times slower to write)."""
    return Field(default, exclude_if=_is_none, **kw)


class ContractInfo(Record):
    id: str
    title: str | None = None
    provider: str | None = None
    customer: str | None = None
    file: str | None = None
    sha256: str | None = None


class IsolationInfo(Record):
    """What `accept isolate` found: the runs it made, the nodes it isolated, the unit it split by."""

    runs: int
    isolated: tuple[str, ...]
    unit: str


class RunInfo(Record):
    mode: Mode | None = None
    state: RunState | None = None
    started: Time | None = None
    finished: Time | None = None
    executor: str | None = None
    nodes: tuple[str, ...] = Field(default=(), max_length=MAX_NODES)
    only: tuple[str, ...] = ()
    overrides: dict[str, Data] = Field(default_factory=dict)
    resumed: bool = False
    isolation: IsolationInfo | None = _omitted()


class Thresholds(Record):
    min: Number | None = None
    max: Number | None = None
    warn_below: Number | None = None
    warn_above: Number | None = None
    expect: Data | None = None


class VerdictEntry(Record):
    """One verdict of the run document: a criterion on one node, rack or the whole cluster."""

    criterion: str | None = None
    node: str | None
    status: Status
    measured: Number | str | None = None
    expected: str | None = None
    reason: str | None = None
    remediation: str | None = None
    details: Data = Field(default_factory=dict)

    @classmethod
    def of(cls, v: Verdict) -> VerdictEntry:
        return cls(criterion=v.criterion, node=v.node, status=v.status, measured=v.measured, expected=v.expected,
                   reason=v.reason, remediation=v.remediation, details=dict(v.details))

    @property
    def unit(self) -> str | None:
        """The node, else the rack or group the verdict is about (`details.unit`)."""
        u = self.details.get("unit")
        return self.node or (u if isinstance(u, str) else None)

    @property
    def waived(self) -> Mapping[str, Any] | None:
        """The waiver that turned this verdict `waived`, with the original status and reason."""
        w = self.details.get("waived")
        return w if isinstance(w, Mapping) else None


class CriterionOutcome(Record):
    """A criterion's entry: what the contract asks, its status, reason and every verdict."""

    id: str
    check: str
    area: str | None = None
    metric: str | None = None
    severity: Severity | None = None
    source: str | None = None
    description: str | None = None
    params: Data = Field(default_factory=dict)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    expected: str
    unit: str = ""
    status: Status
    reason: str | None = None
    reason_text: str | None = None
    state: CriterionState | None = None
    duration_s: Number | None = None
    nodes: tuple[str, ...] = Field(default=(), max_length=MAX_NODES)
    # evidence in the bundle about contract nodes or racks outside the scope: not judged
    evidence_outside_scope: tuple[str, ...] | None = _omitted()
    verdicts: tuple[VerdictEntry, ...] = Field(max_length=MAX_VERDICTS)


class OverallRollup(Record):
    status: Status
    nodes: int = 0
    node_counts: Counts = Field(default_factory=zero_counts)
    counts: Counts = Field(default_factory=zero_counts)
    cluster_counts: Counts = Field(default_factory=zero_counts)


class RackRollup(Record):
    rack: str
    status: Status
    nodes: int
    node_counts: Counts
    counts: Counts


class NodeRollup(Record):
    node: str
    rack: str
    status: Status
    counts: Counts
    criteria: dict[str, Status]          # criteria the node did not pass: id -> its worst status there


class Aggregate(Record):
    overall: OverallRollup
    racks: tuple[RackRollup, ...] = Field(max_length=MAX_NODES)
    nodes: tuple[NodeRollup, ...] = Field(max_length=MAX_NODES)


class ScopeInfo(Record):
    """What a run covered (`acceptance.coverage.Scope`); `partial` when --only or --nodes limited it."""

    partial: bool
    nodes: tuple[str, ...] = Field(default=(), max_length=MAX_NODES)
    nodes_expr: str = ""
    contract_nodes: int = 0
    nodes_not_covered: str = ""
    nodes_not_covered_count: int = 0
    nodes_not_in_contract: tuple[str, ...] = Field(default=(), max_length=MAX_NODES)
    only: tuple[str, ...] = ()
    criteria: tuple[str, ...] = Field(default=(), max_length=MAX_CRITERIA)
    criteria_not_covered: tuple[str, ...] = Field(default=(), max_length=MAX_CRITERIA)


class WaiverUse(Record):
    """A waiver given to the run, its state at `as_of` and how many verdicts it waived."""

    index: int
    criterion: str
    nodes: str | None = None
    reason: str
    approved_by: str
    expires: Time
    state: WaiverState
    verdicts_waived: int = 0


class Decision(Record):
    """The result every output leads with (`acceptance.decision`)."""

    result: Result
    accepted: bool
    partial: bool
    headline: str
    subset_result: str | None = None
    blocking: Counts = Field(default_factory=dict)
    verdict_counts: Counts = Field(default_factory=zero_counts)
    exit_status: Literal[0, 1]


class RunDocument(Record):
    format: Literal["slakit-acceptance-run/1", "slakit-acceptance-run/2"]
    contract: ContractInfo
    run: RunInfo
    status: Status
    counts: Counts
    criteria: tuple[CriterionOutcome, ...] = Field(max_length=MAX_CRITERIA)
    aggregate: Aggregate
    scope: ScopeInfo | None = _omitted()
    as_of: Time | None = _omitted()
    waivers: tuple[WaiverUse, ...] | None = _omitted(max_length=MAX_WAIVERS)
    decision: Decision | None = _omitted()

    def to_json(self) -> dict[str, Any]:
        """The plain data of the JSON form (statuses as their strings, times in ISO 8601)."""
        with gc_paused():
            return self.model_dump(mode="python")

    def dumps(self) -> str:
        """The compact JSON text of `to_json()` as `json.dumps(..., ensure_ascii=False,
        separators=(",", ":"))` writes it, plus a newline, which is what defines the bytes of a
        results.json. pydantic's own JSON is not used: it spells floats otherwise (`1e-5` for
        Python's `1e-05`, `0.00001` for `1e-05`), and finding its numbers apart from the same
        characters inside strings took longer than this whole function."""
        import json

        return json.dumps(self.to_json(), ensure_ascii=False, default=str, separators=(",", ":")) + "\n"

    @property
    def failed(self) -> bool:
        """Exit status 1: not accepted (a fail, error, not_run or skip in scope, or nothing
        judged); see `acceptance.decision`. A document without a decision fails on a fail or error."""
        if self.decision is not None:
            return self.decision.exit_status != 0
        return self.status in (Status.FAIL, Status.ERROR)

    @property
    def finished_at(self) -> datetime | None:
        return self.run.finished or self.run.started


class EvidenceManifest(Record):
    """What the certificate names of a bundle's manifest.json: the digest and the files with
    their SHA-256 (`acceptance.evidence` writes and verifies the manifest itself)."""

    digest: str | None = None
    files: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def of(cls, data: Any) -> EvidenceManifest | None:
        """From manifest.json's data; None when it holds no digest and file list of strings."""
        if not isinstance(data, Mapping):
            return None
        digest, files = data.get("digest"), data.get("files")
        if not isinstance(files, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                      for k, v in files.items()):
            files = {}
        return cls(digest=digest if isinstance(digest, str) else None, files=dict(files))


# --------------------------------------------------------------------------- reading

_FIX = "rerun `slakit accept evaluate CONTRACT BUNDLE --write` to write the run document afresh"
_UNION_TAGS = frozenset({"float", "str", "int", "bool"})
_CODES = {
    "missing": "results_missing_field",
    "extra_forbidden": "results_unknown_field",
    "too_long": "results_too_many",
    "literal_error": "results_bad_value",
    "enum": "results_bad_value",
    "timezone_aware": "results_naive_time",
    "not_finite": "results_not_finite",
}


def read_run_document(path: Path | str, data: bytes | None = None) -> RunDocument:
    """The run document in `path` (or its bytes `data`), checked field by field. Raises
    InputError with every problem: the file, the field path, the value found and the fix."""
    from slaschema.errors import InputError, Problem

    file = str(path)
    if data is None:
        try:
            size = Path(path).stat().st_size
        except OSError as exc:
            raise InputError([Problem("results_invalid", f"cannot read the run document: {exc.strerror}",
                                      file=file, fix=_FIX)]) from None
        if size > MAX_BYTES:
            raise InputError([Problem("results_too_large", f"the run document is {size} bytes, more than the "
                                      f"{MAX_BYTES} a run document may have", file=file, value=size, fix=_FIX)])
        data = Path(path).read_bytes()
    elif len(data) > MAX_BYTES:
        raise InputError([Problem("results_too_large", f"the run document is {len(data)} bytes, more than the "
                                  f"{MAX_BYTES} a run document may have", file=file, value=len(data), fix=_FIX)])
    bad_byte = _not_utf8_at(data)
    if bad_byte is not None:
        raise InputError([Problem("results_invalid", f"not UTF-8 text (byte {bad_byte})", file=file,
                                  fix=_FIX)])
    over = _over_the_limits(data, file)
    if over:
        raise InputError(over)
    with gc_paused():
        try:
            doc = RunDocument.model_validate_json(data, strict=True, context={"read": True})
        except ValidationError as exc:
            raise InputError(_problems(exc, file)) from None
        twice = _duplicate_keys(data)
    if twice:
        raise InputError([Problem("results_duplicate_key", f"a key given twice in one object: {k!r} (readers "
                                  "disagree on which value counts)", file=file, value=k, fix=_FIX)
                          for k in twice[:MAX_PROBLEMS]])
    return doc



def _not_utf8_at(data: bytes) -> int | None:
    """The offset of the first byte of `data` that is not UTF-8, checked a chunk at a time
    (no copy of a large document as text is kept)."""
    import codecs

    view, size, pos = memoryview(data), len(data), 0
    while pos < size:
        try:
            _, used = codecs.utf_8_decode(view[pos:pos + _UTF8_CHUNK], "strict", pos + _UTF8_CHUNK >= size)
        except UnicodeDecodeError as exc:
            return pos + exc.start
        pos += used
    return None


def _list_limits() -> dict[tuple[Any, ...], int]:
    """Every bounded list of a run document, by path (`ANY`: each criterion), and its limit
    (read when a document is read, so the module's constants decide)."""
    from acceptance.json_scan import ANY

    return {("run", "nodes"): MAX_NODES, ("criteria",): MAX_CRITERIA, ("criteria", ANY, "nodes"): MAX_NODES,
            ("criteria", ANY, "verdicts"): MAX_VERDICTS, ("aggregate", "racks"): MAX_NODES,
            ("aggregate", "nodes"): MAX_NODES, ("scope", "nodes"): MAX_NODES,
            ("scope", "nodes_not_in_contract"): MAX_NODES, ("scope", "criteria"): MAX_CRITERIA,
            ("scope", "criteria_not_covered"): MAX_CRITERIA, ("waivers",): MAX_WAIVERS}


def _over_the_limits(data: bytes, file: str) -> list[Any]:
    """A problem for each bounded list that holds more than its limit, found by scanning the
    text before it is parsed (`acceptance.json_scan`): a document over a limit is refused for
    that alone, in a fraction of the time and memory validating it would take. The problems
    read as pydantic's own for the same list."""
    from acceptance.json_scan import long_arrays
    from slaschema.errors import Problem

    found = long_arrays(data, _list_limits()) or []
    out = [Problem("results_too_many", f"Tuple should have at most {limit} item{'' if limit == 1 else 's'} after "
                   f"validation, not {count}", file=file, path=_path_text(path), value=f"a list of {count}", fix=_FIX)
           for path, count, limit in found[:MAX_PROBLEMS]]
    if len(found) > MAX_PROBLEMS:
        out.append(Problem("results_invalid", f"{len(found) - MAX_PROBLEMS} more problems in the run document",
                           file=file, fix=_FIX))
    return out


def _path_text(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "(document)"


def _duplicate_keys(text: bytes | str) -> list[str]:
    """The keys that appear twice in one object of `text` (JSON the model has already
    accepted, so nested no deeper than pydantic's parser allows). The model's parser keeps
    the last value; another reader of the same signed bundle may keep the first."""
    import json

    found: dict[str, None] = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            for k, _ in items:
                if k in seen:
                    found[k] = None
                seen.add(k)
        return out

    json.loads(text, object_pairs_hook=pairs)
    return list(found)


def parse_run_document(doc: Any, file: str = "<run document>") -> RunDocument:
    """A run document from plain JSON data (as `json.loads` gives it), checked like a file."""
    import json

    from slaschema.errors import InputError, Problem

    try:
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError([Problem("results_invalid", f"not JSON data: {exc}", file=file, fix=_FIX)]) from None
    return read_run_document(file, text.encode("utf-8"))


def _problems(exc: ValidationError, file: str) -> list[Any]:
    from slaschema.errors import Problem

    out: list[Any] = []
    errors = exc.errors(include_url=False)
    for err in errors:
        if tuple(err.get("loc") or ()) == ("format",):
            # Another version's document: its fields mean something else, so nothing more is said.
            found = err.get("input")
            return [Problem("results_unknown_format", "not a run document format this slakit reads", file=file,
                            path="format", value=None if err.get("type") == "missing" else _short(found),
                            fix=f"use a run document of format {' or '.join(FORMATS)}; " + _FIX)]
    seen: set[str] = set()
    for err in errors:
        loc = tuple(err.get("loc") or ())
        key = bool(loc) and loc[-1] == "[key]"
        if key:
            loc = loc[:-1]
        tag = loc and isinstance(loc[-1], str) and (loc[-1] in _UNION_TAGS or loc[-1].startswith("function-after["))
        if tag and err.get("type") == "not_finite":
            loc = loc[:-1]              # `measured` not finite: said once, before its other kinds
        elif tag:
            # `measured` is a number, a text or null: one problem, not one per kind it is not
            loc = loc[:-1]
            err = {**err, "msg": "Input should be a number, a text or null"}
        path = _path_text(loc)
        if path in seen:
            continue
        seen.add(path)
        if len(out) >= MAX_PROBLEMS:
            continue
        kind = err.get("type", "")
        if kind == "json_invalid":
            out.append(Problem("results_invalid", f"not a readable JSON document: {err.get('msg')}", file=file,
                               fix=_FIX))
            continue
        if not loc and kind in ("model_type", "model_attributes_type", "dict_type"):
            out.append(Problem("results_invalid", "the document is not a JSON object", file=file,
                               value=_short(err.get("input")), fix=_FIX))
            continue
        code = _CODES.get(kind, "results_wrong_type")
        if kind == "extra_forbidden":
            message, fix = f"unknown field {loc[-1]!r} in a run document", "remove the field; " + _FIX
        elif kind == "missing":
            message, fix = "a field a run document must have is missing", _FIX
        else:
            message, fix = ("a key: " if key else "") + err.get("msg", "not valid"), _FIX
        out.append(Problem(code, message, file=file, path=path,
                           value=None if kind == "missing" else _short(err.get("input")), fix=fix))
    if len(seen) > MAX_PROBLEMS:
        out.append(Problem("results_invalid", f"{len(seen) - MAX_PROBLEMS} more problems in the run document",
                           file=file, fix=_FIX))
    return out


def _short(value: Any) -> Any:
    """The value found, cut down for a message (a whole list or object is summarised)."""
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return f"an object with {len(value)} fields"
    if isinstance(value, str):
        return cut(value, 80)
    return value
