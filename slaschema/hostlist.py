"""Slurm hostlist expressions: `r01-n[01-18]`, `gpu-[001-004,010]`, `a[1-2]-b[1-3]`, `x,y`.

Expansion keeps order and zero padding; compression groups names that differ only in
their last number, which is how Slurm prints node lists back to people.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

MAX_HOSTS = 1_000_000


class HostlistError(ValueError):
    def __init__(self, code: str, message: str, expr: str) -> None:
        super().__init__(message)
        self.code = code
        self.expr = expr


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
_NAME_OK = re.compile(r"^[A-Za-z0-9._-]+$")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _expand_range(spec: str, expr: str) -> list[str]:
    out: list[str] = []
    for item in spec.split(","):
        item = item.strip()
        m = _RANGE.match(item)
        if not m:
            raise HostlistError("hostlist_syntax", f"bad range {item!r} inside brackets", expr)
        lo_s, hi_s = m.group(1), m.group(2)
        if hi_s is None:
            out.append(lo_s)
            continue
        lo, hi = int(lo_s), int(hi_s)
        if hi < lo:
            raise HostlistError("hostlist_range_reversed", f"range {item!r} runs backwards", expr)
        if hi - lo + 1 > MAX_HOSTS:
            raise HostlistError("hostlist_too_large", f"range {item!r} is too large", expr)
        width = len(lo_s) if lo_s.startswith("0") or len(lo_s) == len(hi_s) else 0
        out.extend(str(i).zfill(width) for i in range(lo, hi + 1))
    return out


def expand(expr: str | Iterable[str]) -> list[str]:
    """Expand a hostlist expression (or a list of them) to names, in order."""
    if not isinstance(expr, str):
        names: list[str] = []
        for e in expr:
            names.extend(expand(e))
        return names
    result: list[str] = []
    for part in _split_top(expr.strip()):
        part = part.strip()
        if not part:
            raise HostlistError("hostlist_syntax", "empty name in hostlist", expr)
        pieces: list[list[str]] = []
        pos = 0
        for m in _TOKEN.finditer(part):
            pieces.append([part[pos : m.start()]])
            pieces.append(_expand_range(m.group(1), expr))
            pos = m.end()
        pieces.append([part[pos:]])
        literal = _TOKEN.sub("0", part)
        if not _NAME_OK.match(literal):
            raise HostlistError(
                "hostlist_syntax", f"{part!r} has characters not allowed in a host name", expr
            )
        total = 1
        for p in pieces:
            total *= len(p)
        if total + len(result) > MAX_HOSTS:
            raise HostlistError("hostlist_too_large", "hostlist expands to too many names", expr)
        result.extend("".join(t) for t in itertools.product(*pieces))
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
