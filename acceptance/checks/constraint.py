"""Version constraints as written in contracts: `>=570`, `>=12.8,<13`, `==2.21.5`, `12.8`.

A bare version means "this release line": `12.8` accepts 12.8 and 12.8.1 but not 12.9.
Versions compare as tuples of their numeric parts (`570.86.15` -> (570, 86, 15)); missing
trailing parts count as 0. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPS = (">=", "<=", "==", "!=", ">", "<")
_PART = re.compile(r"^\s*(>=|<=|==|!=|>|<)?\s*v?(\d+(?:\.\d+)*)\s*$")


class ConstraintError(ValueError):
    pass


@dataclass(frozen=True)
class Clause:
    op: str          # one of _OPS, or "" for a release line
    version: tuple[int, ...]

    def matches(self, v: tuple[int, ...]) -> bool:
        if self.op == "":
            return v[: len(self.version)] == self.version
        a, b = _pad(v, self.version)
        return {
            ">=": a >= b, "<=": a <= b, "==": a == b, "!=": a != b, ">": a > b, "<": a < b,
        }[self.op]

    def __str__(self) -> str:
        return f"{self.op}{'.'.join(map(str, self.version))}"


def _pad(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


def parse_constraint(text: str | int | float) -> tuple[Clause, ...]:
    """`">=570,<600"` -> clauses; raises ConstraintError on anything else."""
    clauses = []
    for part in str(text).split(","):
        m = _PART.match(part)
        if not m:
            raise ConstraintError(f"not a version constraint: {text!r} (write e.g. >=570 or >=12.8,<13)")
        clauses.append(Clause(m.group(1) or "", tuple(int(x) for x in m.group(2).split("."))))
    return tuple(clauses)


_NUM = re.compile(r"\d+(?:\.\d+)*")


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    """The first dotted number in `text`: "570.86.15" -> (570, 86, 15), "v1.30.2" -> (1, 30, 2)."""
    if text is None:
        return None
    m = _NUM.search(str(text))
    return tuple(int(x) for x in m.group(0).split(".")) if m else None


def satisfies(version: str | None, constraint: str | int | float) -> bool | None:
    """True/False; None when `version` holds no number."""
    v = version_tuple(version)
    if v is None:
        return None
    return all(c.matches(v) for c in parse_constraint(constraint))
