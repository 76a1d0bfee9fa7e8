"""Problems found in user input, with stable reason codes and exact locations.

Every loader collects all problems before raising one `InputError`, so a user fixes a
file in one pass. Tests assert `code` and location, never the wording of `message`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeVar

from slaschema.textsafe import cut, shown_name

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Problem:
    code: str                      # stable snake_case reason code
    message: str                   # what is wrong, for people
    file: str | None = None
    line: int | None = None        # 1-based
    col: int | None = None         # 1-based
    path: str | None = None        # field path, e.g. service_levels.node.credits[1].below
    value: Any = None              # the value found
    fix: str | None = None         # what to write instead
    row: int | None = None         # tabular inputs: 1-based data row (header excluded)
    column: str | None = None      # tabular inputs: column name
    severity: str = "error"        # error | warning

    def location(self) -> str:
        # (a file's name may hold a newline or a terminal's escapes: shown as <U+hhhh>)
        file = shown_name(self.file) if self.file else "<input>"
        if self.row is not None:
            loc = f"{file} row {self.row}"
            if self.column:
                loc += f", column {self.column}"
            return loc
        loc = file
        if self.line is not None:
            loc += f":{self.line}"
            if self.col is not None:
                loc += f":{self.col}"
        if self.path:
            loc += f": {self.path}"
        return loc

    def format(self) -> str:
        text = f"{self.location()}: {self.message}"
        if self.value is not None:
            text += f" (got {_show(self.value)})"
        if self.fix:
            text += f"; fix: {self.fix}"
        return text + f" [{self.code}]"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["value"] = _jsonable(self.value)
        return {k: v for k, v in d.items() if v is not None}


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return cut(text, 80)


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


class SlakitError(Exception):
    """Base of the errors slakit raises about what it was given (files, options, data),
    as opposed to bugs. `InputError` carries located problems with reason codes; the
    narrower errors (`PeriodError`, `HostlistError`, `EngineError`, ...) also derive from
    `ValueError` and are turned into usage errors or problems where they are caught."""


@dataclass
class InputError(SlakitError):
    """Raised with every problem found in one input. A command lets it propagate: the
    `slakit` command prints the problems (`slaschema.cli.emit_problems`, in the command's
    --format), then each note added with `add_note` (e.g. "nothing written") on stderr, and
    exits with `exit_code` (`slaschema.cli.report_input_errors`): 1, or 2 where the problems
    are in how the command was called."""

    problems: list[Problem] = field(default_factory=list)
    exit_code: int = 1

    def __post_init__(self) -> None:
        super().__init__(self.__str__())

    def __str__(self) -> str:
        return "\n".join(p.format() for p in self.problems)

    @property
    def codes(self) -> list[str]:
        return [p.code for p in self.problems]


def gather(load: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """`load` of each item, in order; when any raises `InputError`, one `InputError` with the
    problems of all of them (every bad input reported at once). A problem two items give alike
    in every field (one file named twice: `reconcile LOG LOG`) is listed once."""
    out: list[R] = []
    problems: list[Problem] = []
    for item in items:
        try:
            out.append(load(item))
        except InputError as e:
            problems.extend(e.problems)
    if problems:
        seen: set[tuple] = set()
        unique = []
        for p in problems:
            key = tuple(repr(getattr(p, f.name)) for f in fields(p))
            if key not in seen:
                seen.add(key)
                unique.append(p)
        raise InputError(unique)
    return out
