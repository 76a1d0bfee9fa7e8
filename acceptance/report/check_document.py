"""The shape a run document (results.json) must have before any renderer reads it.

results.json travels with the bundle and can be edited; the renderers (table, JUnit, PDF
certificate) index into it freely. A document that lacks a field they read, or holds the
wrong type there, is refused here as `results_invalid` with the JSON path, instead of
failing half-way through a certificate.
"""

from __future__ import annotations

from typing import Any

from acceptance.results import Status

STATUSES = [str(s) for s in Status]
FORMATS = ["slakit-acceptance-run/1", "slakit-acceptance-run/2"]     # /1: written before coverage judging
_STATUS = {"enum": STATUSES}
_COUNTS = {"type": "object", "additionalProperties": {"type": "integer"}}
_TEXT = {"type": ["string", "null"]}

_VERDICT = {
    "type": "object",
    "required": ["status", "node"],
    "properties": {"status": _STATUS, "node": _TEXT, "reason": _TEXT, "remediation": _TEXT, "expected": {},
                   "measured": {}, "details": {"type": "object"}, "criterion": _TEXT},
}
_CRITERION = {
    "type": "object",
    "required": ["id", "check", "status", "verdicts", "expected"],
    "properties": {"id": {"type": "string"}, "check": {"type": "string"}, "status": _STATUS,
                   "verdicts": {"type": "array", "items": _VERDICT}, "expected": {"type": "string"},
                   "reason": _TEXT, "unit": _TEXT, "nodes": {"type": "array"}, "params": {"type": "object"},
                   "thresholds": {"type": "object"}, "area": _TEXT, "description": _TEXT, "severity": _TEXT,
                   "source": _TEXT, "metric": _TEXT, "state": _TEXT},
}
_NODE = {"type": "object", "required": ["node", "rack", "status", "counts", "criteria"],
         "properties": {"node": {"type": "string"}, "rack": {"type": "string"}, "status": _STATUS,
                        "counts": _COUNTS, "criteria": {"type": "object"}}}
_RACK = {"type": "object", "required": ["rack", "status", "nodes", "node_counts", "counts"],
         "properties": {"rack": {"type": "string"}, "status": _STATUS, "nodes": {"type": "integer"},
                        "node_counts": _COUNTS, "counts": _COUNTS}}

RUN_DOCUMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "contract", "run", "status", "counts", "criteria", "aggregate"],
    "properties": {
        "format": {"enum": FORMATS},
        "contract": {"type": "object", "required": ["id"],
                     "properties": {"id": {"type": "string"}, "title": _TEXT, "provider": _TEXT,
                                    "customer": _TEXT, "file": _TEXT, "sha256": _TEXT}},
        "run": {"type": "object", "properties": {"overrides": {"type": "object"}, "nodes": {"type": "array"},
                                                 "state": _TEXT, "executor": _TEXT, "mode": _TEXT}},
        "status": _STATUS,
        "counts": _COUNTS,
        "criteria": {"type": "array", "items": _CRITERION},
        "aggregate": {"type": "object", "required": ["overall", "racks", "nodes"],
                      "properties": {"overall": {"type": "object", "required": ["status"],
                                                 "properties": {"status": _STATUS}},
                                     "racks": {"type": "array", "items": _RACK},
                                     "nodes": {"type": "array", "items": _NODE}}},
    },
}


def document_problems(doc: Any, limit: int = 5) -> list[str]:
    """`path: message` for each place the document departs from the schema (at most `limit`)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(RUN_DOCUMENT_SCHEMA)
    out = []
    for err in validator.iter_errors(doc):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path) or "(document)"
        out.append(f"{path}: {err.validator} {'not met' if err.validator != 'required' else err.message[:80]}")
        if len(out) >= limit:
            break
    return out
