"""What a lint rule is: metadata as data plus one pure `check` function.

A rule knows nothing about files, YAML or output formats. Its `check(lc)` looks at a loaded
contract and returns `Hit`s (field path, what is wrong in this contract, the value found and,
where it helps, a fix written for this contract). The runner in `slaschema.lint.engine`
turns hits into findings with line numbers, applies per-file disables and sorts them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from slaschema.loader import LoadedContract

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[str, ...] = ("error", "warning", "info")
Path = tuple[str | int, ...]

# The buyer's checklist that industry ratings use (SemiAnalysis ClusterMAX 3.0); every rule
# belongs to one of these topics.
TOPICS = {
    "downtime": "Downtime defined at node, rack, cluster and site level",
    "exclusions": "Explicit, bounded exclusions",
    "credits": "Credits that bite and can be claimed",
    "support": "Support with measurable detection and repair",
    "acceptance": "Acceptance tests with a deadline and remedies",
    "security": "Security evidence and agreed access at handover",
    "exit": "Exit rights",
    "lint": "Lint settings in the file",
}


@dataclass(frozen=True)
class Hit:
    path: Path
    message: str
    value: Any = None
    fix: str | None = None


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    topic: str
    title: str
    why: str
    fix: str
    check: Callable[[LoadedContract], list[Hit]] = field(compare=False, repr=False)

    def describe(self) -> dict[str, str]:
        return {"id": self.id, "severity": self.severity, "topic": self.topic, "title": self.title,
                "why": self.why, "fix": self.fix}


RULES: dict[str, Rule] = {}


def rule(id: str, severity: Severity, topic: str, title: str, why: str, fix: str):
    """Register a check function as a rule with its metadata."""

    def deco(fn: Callable[[LoadedContract], list[Hit]]) -> Callable[[LoadedContract], list[Hit]]:
        if id in RULES:
            raise ValueError(f"duplicate lint rule id {id}")
        if severity not in SEVERITIES or topic not in TOPICS:
            raise ValueError(f"rule {id}: bad severity or topic")
        RULES[id] = Rule(id, severity, topic, title, " ".join(why.split()), fix.strip("\n"), fn)
        return fn

    return deco
