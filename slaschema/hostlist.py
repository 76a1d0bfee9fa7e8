"""Slurm hostlist expressions: `r01-n[01-18]`, `gpu-[001-004,010]`, `a[1-2]-b[1-3]`, `x,y`.

Expansion keeps order and zero padding; compression groups names that differ only in
their last number, which is how Slurm prints node lists back to people.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections.abc import Iterable

from slaschema.errors import SlakitError

DEFAULT_MAX_NODES = 1_000_000
_max_nodes: int | None = None


def max_nodes() -> int:
    """The node budget: the most names one topology, one incident-log row or one `--nodes`
    expression may expand to. `slakit --max-nodes N` or SLAKIT_MAX_NODES raise it."""
    if _max_nodes is not None:
        return _max_nodes
    env = os.environ.get("SLAKIT_MAX_NODES", "")
    return int(env) if env.isdigit() and int(env) > 0 else DEFAULT_MAX_NODES


def set_max_nodes(limit: int | None) -> None:
    """Set the node budget for this process (None: back to the default / environment)."""
    global _max_nodes
    if limit is not None and limit < 1:
        raise ValueError("the node budget must be at least 1")
    _max_nodes = limit


def row_budget(known_nodes: int | None = None) -> int:
    """The most names one incident-log row may expand to: the node budget, and no more than
    the topology's node count (a row naming more must repeat or invent names)."""
    cap = max_nodes()
    return min(cap, known_nodes) if known_nodes else cap


class HostlistError(SlakitError, ValueError):
    def __init__(self, code: str, message: str, expr: str) -> None:
        super().__init__(message)
        self.code = code
        self.expr = expr if len(expr) <= 200 else expr[:200] + "...(cut)"


def _split_top(expr: str) -> list[str]:
    """Split on commas that are not inside brackets."""
    parts, depth, cur = [], 0, []
    for ch in expr:
        if ch == "[":
            depth += 1
            if depth > 1:
                raise HostlistError("hostlist_syntax", "nested '[' in hostlist", expr)
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError("hostlist_syntax", "unbalanced ']' in hostlist", expr)
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise HostlistError("hostlist_syntax", "unbalanced '[' in hostlist", expr)
    parts.append("".join(cur))
    return parts


_TOKEN = re.compile(r"\[([^\]]*)\]")
_NAME_OK = re.compile(r"^[A-Za-z0-9._-]+\Z")
_RANGE = re.compile(r"^(\d{1,18})(?:-(\d{1,18}))?\Z")

# One bracket item: (lo, hi, width); a part: literal pieces and bracket item lists alternating.
_Range = tuple[int, int, int]


def _parse_range(spec: str, expr: str) -> list[_Range]:
    out: list[_Range] = []
    for item in spec.split(","):
        item = item.strip()
        m = _RANGE.match(item)
        if not m:
            raise HostlistError("hostlist_syntax", f"bad range {item[:40]!r} inside brackets", expr)
        lo_s, hi_s = m.group(1), m.group(2)
        if hi_s is None:
            out.append((int(lo_s), int(lo_s), len(lo_s)))
            continue
        lo, hi = int(lo_s), int(hi_s)
        if hi < lo:
            raise HostlistError("hostlist_range_reversed", f"range {item!r} runs backwards", expr)
        width = len(lo_s) if lo_s.startswith("0") or len(lo_s) == len(hi_s) else 0
        out.append((lo, hi, width))
    return out


@functools.lru_cache(maxsize=1024)
def _parse(expr: str) -> tuple[tuple[str | tuple[_Range, ...], ...], ...]:
    """The parts of an expression, each as alternating literal text and bracket ranges
    (remembered: a topology's racks are counted and then expanded, and logs repeat theirs)."""
    parts: list[tuple[str | tuple[_Range, ...], ...]] = []
    for part in _split_top(expr.strip()):
        part = part.strip()
        if not part:
            raise HostlistError("hostlist_syntax", "empty name in hostlist", expr)
        literal = _TOKEN.sub("0", part)
        if not _NAME_OK.match(literal):
            raise HostlistError(
                "hostlist_syntax", f"{part[:60]!r} has characters not allowed in a host name", expr
            )
        pieces: list[str | list[_Range]] = []   # (made tuples: the parse is shared)
        pos = 0
        for m in _TOKEN.finditer(part):
            pieces.append(part[pos : m.start()])
            pieces.append(_parse_range(m.group(1), expr))
            pos = m.end()
        pieces.append(part[pos:])
        parts.append(tuple(tuple(p) if isinstance(p, list) else p for p in pieces))
    return tuple(parts)


def _count_parts(parts: tuple[tuple[str | tuple[_Range, ...], ...], ...]) -> int:
    total = 0
    for pieces in parts:
        n = 1
        for p in pieces:
            if isinstance(p, tuple):
                n *= sum(hi - lo + 1 for lo, hi, _ in p)
        total += n
    return total


def count(expr: str | Iterable[str]) -> int:
    """How many names an expression (or a list of them) expands to, without expanding it.
    Duplicates count each time they appear. Raises HostlistError on bad syntax."""
    if not isinstance(expr, str):
        return sum(count(e) for e in expr)
    return _count_parts(_parse(expr))


class Budget:
    """A node budget shared by several expressions (e.g. every rack of one topology)."""

    def __init__(self, limit: int | None = None, what: str = "the topology") -> None:
        self.limit = max_nodes() if limit is None else limit
        self.left = self.limit
        self.what = what

    def expand(self, expr: str | Iterable[str]) -> list[str]:
        """Expand `expr` and charge its names to the budget; raises `hostlist_too_large`
        (before expanding anything) when they do not fit."""
        n = count(expr)
        if n > self.left:
            raise HostlistError(
                "hostlist_too_large",
                f"hostlist names {n:,} nodes; {self.what} may name at most {self.limit:,} "
                f"({self.left:,} left); raise the limit with `slakit --max-nodes N`",
                expr if isinstance(expr, str) else ",".join(expr),
            )
        self.left -= n
        return expand(expr, limit=n)


def expand(expr: str | Iterable[str], limit: int | None = None) -> list[str]:
    """Expand a hostlist expression (or a list of them) to names, in order.

    The names are counted first: more than `limit` (default: the node budget, `max_nodes()`)
    raises `hostlist_too_large` without building any of them."""
    if not isinstance(expr, str):
        exprs = list(expr)
        budget = Budget(limit, "one expression list")
        names: list[str] = []
        for e in exprs:
            names.extend(budget.expand(e))
        return names
    cap = max_nodes() if limit is None else limit
    parts = _parse(expr)
    n = _count_parts(parts)
    if n > cap:
        hint = " (raise it with `slakit --max-nodes N`)" if cap >= max_nodes() else " (the topology's node count)"
        raise HostlistError("hostlist_too_large", f"hostlist expands to {n:,} names; the limit here is {cap:,}{hint}",
                            expr)
    result: list[str] = []
    for pieces in parts:
        choices = [[p] if isinstance(p, str) else [str(i).zfill(w) for lo, hi, w in p for i in range(lo, hi + 1)]
                   for p in pieces]
        result.extend("".join(t) for t in itertools.product(*choices))
    return result


_LAST_NUM = re.compile(r"^(.*?)(\d+)(\D*)$")


def compress(names: Iterable[str]) -> str:
    """Compress names to a hostlist expression; the inverse of `expand` for display."""
    groups: dict[tuple[str, str, int], list[int]] = {}
    order: list[tuple[str, str, int] | str] = []
    for name in names:
        m = _LAST_NUM.match(name)
        if not m:
            order.append(name)
            continue
        prefix, num, suffix = m.groups()
        if num.startswith("0") and len(num) > 1:
            key = (prefix, suffix, len(num))
        elif (prefix, suffix, len(num)) in groups:
            key = (prefix, suffix, len(num))  # e.g. n10 joins n[01-09]
        else:
            key = (prefix, suffix, 0)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(num))
    parts: list[str] = []
    for key in order:
        if isinstance(key, str):
            parts.append(key)
            continue
        prefix, suffix, width = key
        nums = groups[key]
        ranges: list[str] = []
        start = prev = nums[0]
        for n in nums[1:] + [None]:  # type: ignore[list-item]
            if n is not None and n == prev + 1:
                prev = n
                continue
            a, b = str(start).zfill(width), str(prev).zfill(width)
            ranges.append(a if start == prev else f"{a}-{b}")
            if n is not None:
                start = prev = n
        if len(nums) == 1:
            parts.append(f"{prefix}{ranges[0]}{suffix}")
        else:
            parts.append(f"{prefix}[{','.join(ranges)}]{suffix}")
    return ",".join(parts)
