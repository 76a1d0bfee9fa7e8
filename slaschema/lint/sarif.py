"""Lint reports as SARIF 2.1.0, the format code-review tools read (GitHub code scanning,
GitLab, IDE viewers): one run, the rule catalogue as the tool's rules, one result per
finding with its file, line and column, and invalid contracts as error results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slaschema.lint.engine import LintReport, all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _uri(file: str | None) -> str:
    if not file:
        return "<input>"
    p = Path(file)
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def _location(file: str | None, line: int | None, col: int | None) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": {"uri": _uri(file)}}
    if line:
        phys["region"] = {"startLine": line, **({"startColumn": col} if col else {})}
    return {"physicalLocation": phys}


def to_sarif(reports: list[LintReport], problems: list[Any] = (), version: str = "") -> dict[str, Any]:
    """`reports` of the files that loaded; `problems` (slaschema.errors.Problem) of those that did not."""
    rules = all_rules()
    index = {r.id: i for i, r in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for rep in reports:
        for f in rep.findings:
            results.append({
                "ruleId": f.rule, "ruleIndex": index[f.rule], "level": LEVELS[f.severity],
                "message": {"text": f"{f.title}: {f.message} ({f.path})"},
                "locations": [_location(f.file or rep.file, f.line, f.col)],
                "properties": {"path": f.path, "fix": f.fix},
            })
    for p in problems:
        results.append({"ruleId": p.code, "level": "error",
                        "message": {"text": f"{p.path}: {p.message}" + (f"; fix: {p.fix}" if p.fix else "")
                                    if p.path else p.message},
                        "locations": [_location(p.file, p.line, p.col)]})
    driver = {
        "name": "slakit lint", "version": version,
        "rules": [{"id": r.id, "name": r.title, "shortDescription": {"text": r.title},
                   "fullDescription": {"text": r.why}, "help": {"text": r.fix},
                   "defaultConfiguration": {"level": LEVELS[r.severity]},
                   "properties": {"topic": r.topic}} for r in rules],
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}
