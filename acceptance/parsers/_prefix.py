"""The shared pre-pass of every parser: launcher prefixes and indentation.

Output captured through a launcher or a log collector carries a per-line prefix:

  "ray"     SkyPilot / Ray: `(task, pid=7059) `, `(worker1, rank=1, pid=33870, ip=192.168.0.15) `
  "mpirun"  Open MPI `--tag-output`: `[1,0]<stdout>:`
  "srun"    Slurm `srun --label`: `0: ` (right-aligned for wide jobs: ` 7: `)
  "pdsh"    pdsh / clush: `node-01: `
  "quote"   markdown quoting: `> `

`segments(text)` detects a prefix used consistently (mpirun tags and Ray prefixes are
unambiguous and detected on any line; srun labels and pdsh hosts only when they lead most of
the non-blank lines and each label repeats, so `GPU0: Pass`, `NIC0: mlx5_0`, `Timestamp:` or
a kernel-log time stamp is never taken for one), strips it, and returns one `Segment` per
source (host or rank), each with the lines of that source and the lines without a prefix (a
launcher's own messages), in their original order. `Source` names the host / rank the prefix
gave; parsers put it on their record (`source`).

`dedent_at(text, anchor)` removes the indentation a docs page or a log collector added
around a tool's output: the leading whitespace of each line the anchor matches (the
tool's first line, e.g. the `NVIDIA-SMI ... Version:` header), from that line and the
neighbouring lines that share it. Indentation inside the output (nvidia-smi -q nesting) is
kept, because only the anchor line's own indentation is removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache, wraps
from typing import Any, Callable, Iterable, TypeVar

from acceptance.parsers._common import ParseError, Record, clean_text

_RAY = re.compile(r"^[ \t]*+\((?P<inner>[^()\n]*\bpid=\d+[^()\n]*)\) ?")
_MPI = re.compile(r"^[ \t]*+\[(?P<job>\d+),(?P<rank>\d+)\]<(?:stdout|stderr)>:")
_SRUN = re.compile(r"^[ \t]*(?P<rank>\d{1,6}):(?: |$)")  # "0:" alone: an empty line, trailing space trimmed
_PDSH = re.compile(r"^[ \t]*(?P<host>[A-Za-z0-9][A-Za-z0-9_.\-]*[A-Za-z0-9]|[A-Za-z]):(?: |$)")
_QUOTE = re.compile(r"^\s*> ?")
# Words that lead tool lines of their own ("GPU0: Pass", "NIC0: mlx5_0", "note: ...").
_NOT_HOST = re.compile(
    r"^(?:(?:GPU|NIC|CPU|GI|CI|MIG|NVL|PCI|Rank|Port|mlx\d?_?)\d*|\d+|"
    r"note|info|warning|warn|error|err|fatal|debug|notice|kernel|nvrm|usage|hint|fix|caused by|"
    r"timestamp|state|rate|status|result|command|started|finished|source|output|input)$",
    re.I,
)


@dataclass(frozen=True)
class Source(Record):
    """Where a launcher said a line came from: `kind` of prefix and the host / rank it names."""

    kind: str
    host: str | None
    rank: int | None
    label: str


@dataclass(frozen=True)
class Segment:
    text: str
    source: Source | None


def _ray_source(m: re.Match[str]) -> Source:
    inner = m.group("inner")
    fields = dict(re.findall(r"\b(\w+)=([^,\s)]+)", inner))
    head = re.split(r"[,\s]", inner.strip(), maxsplit=1)[0]
    label = head if head and "=" not in head else ""
    rank = int(fields["rank"]) if fields.get("rank", "").isdigit() else None
    return Source(kind="ray", host=fields.get("ip") or fields.get("node") or None, rank=rank, label=label or inner)


def _match(kind: str, line: str) -> tuple[Source, int] | None:
    if kind == "ray":
        m = _RAY.match(line)
        return (_ray_source(m), m.end()) if m else None
    if kind == "mpirun":
        m = _MPI.match(line)
        return (Source(kind="mpirun", host=None, rank=int(m.group("rank")), label=f"[{m.group('job')},{m.group('rank')}]"),
                m.end()) if m else None
    if kind == "srun":
        m = _SRUN.match(line)
        return (Source(kind="srun", host=None, rank=int(m.group("rank")), label=m.group("rank")), m.end()) if m else None
    if kind == "pdsh":
        m = _PDSH.match(line)
        if not m or _NOT_HOST.match(m.group("host")):
            return None
        return Source(kind="pdsh", host=m.group("host"), rank=None, label=m.group("host")), m.end()
    if kind == "quote":
        m = _QUOTE.match(line)
        return (Source(kind="quote", host=None, rank=None, label=">"), m.end()) if m else None
    raise ValueError(kind)


def detect_prefix(lines: list[str]) -> str | None:
    """The prefix kind used consistently in `lines`, or None."""
    return _detect("\n".join(lines))


@lru_cache(maxsize=32)
def _detect(text: str) -> str | None:
    # Few passes over the whole text: this runs before every parse.
    ray = _RAY_M.search(text) if "pid=" in text else None
    mpi = _MPI_M.search(text) if ">:" in text else None
    if ray or mpi:  # the outermost launcher's tag comes first on the line, and so first in the text
        return "ray" if ray and (not mpi or ray.start() <= mpi.start()) else "mpirun"
    found = []
    nonblank = 0
    for ln in text.split("\n"):
        if ln.strip():
            nonblank += 1
            m = _LEAD.match(ln)
            if m:
                found.append(m.groups())
    if len(found) < 2:
        return None
    for kind, group in (("srun", 0), ("pdsh", 1)):
        hits = [f[group] for f in found if f[group] and (kind == "srun" or not _NOT_HOST.match(f[group]))]
        if len(hits) < 2 or len(hits) < 0.6 * nonblank:
            continue
        counts: dict[str, int] = {}
        for label in hits:
            counts[label] = counts.get(label, 0) + 1
        # labels that lead several lines carry nearly all hits: a real per-line prefix, not a
        # "key: value" list
        if sum(n for n in counts.values() if n >= 2) >= 0.9 * len(hits):
            return kind
    quoted = sum(1 for f in found if f[2])
    if quoted >= 2 and quoted >= 0.6 * nonblank:
        return "quote"
    return None


_RAY_M = re.compile(_RAY.pattern, re.M)
_MPI_M = re.compile(_MPI.pattern, re.M)
# srun label | pdsh host | markdown quote, at the start of a line
_LEAD = re.compile(r"[ \t]*+(?:(\d{1,6}):(?: |$)|([A-Za-z0-9][A-Za-z0-9_.\-]*[A-Za-z0-9]|[A-Za-z]):(?: |$)|(>))")


def segments(text: str, _depth: int = 0) -> list[Segment]:
    """`text` without its launcher prefix, one segment per source (see the module doc).

    Launchers nest (SkyPilot running `mpirun --tag-output`): the prefix under a stripped one is
    stripped too, and the outer source takes the host / rank the inner one names when it
    names none itself."""
    text = clean_text(text)
    segs = _segments_once(text)
    if _depth >= 3 or (len(segs) == 1 and segs[0].source is None):
        return segs
    out: list[Segment] = []
    for seg in segs:
        for sub in segments(seg.text, _depth + 1) if seg.source is not None else [seg]:
            out.append(Segment(text=sub.text, source=_merge(seg.source, sub.source)))
    return out


def _merge(outer: Source | None, inner: Source | None) -> Source | None:
    if outer is None or inner is None:
        return outer or inner
    return replace(outer, host=outer.host or inner.host, rank=outer.rank if outer.rank is not None else inner.rank)


def _segments_once(text: str) -> list[Segment]:
    kind = _detect(text)
    if kind is None:
        return [Segment(text=text, source=None)]
    lines = text.split("\n")
    tagged: list[tuple[Source | None, str]] = []
    for ln in lines:
        hit = _match(kind, ln)
        if hit is None:
            tagged.append((None, ln))
        else:
            tagged.append((hit[0], ln[hit[1]:]))
    keys: list[Source] = []
    for src, _ in tagged:
        if src is not None and src not in keys:
            keys.append(src)
    if kind == "quote" or len(keys) <= 1:
        source = keys[0] if keys and kind != "quote" else None
        return [Segment(text="\n".join(ln for _, ln in tagged), source=source)]
    return [Segment(text="\n".join(ln for src, ln in tagged if src is None or src == key), source=key) for key in keys]


def strip_prefixes(text: str) -> str:
    """`text` without its launcher prefix; with several sources, their lines one source after another."""
    segs = segments(text)
    if len(segs) == 1:
        return segs[0].text
    return "\n".join(s.text for s in segs)


def dedent_at(text: str, anchor: re.Pattern[str], literal: str | None = None) -> str:
    """Remove, around every line `anchor` matches, the indentation that line has (see the module doc).
    `literal`, a text every anchor line holds, skips the search in texts without it."""
    if literal is not None and literal not in text or not _multiline(anchor).search(text):
        return text
    lines = text.split("\n")
    done = [False] * len(lines)
    for i, ln in enumerate(lines):
        if done[i] or not anchor.search(ln):
            continue
        indent = ln[: len(ln) - len(ln.lstrip(" \t"))]
        if not indent:
            continue
        a = i
        while a > 0 and not done[a - 1] and (lines[a - 1].startswith(indent) or not lines[a - 1].strip()):
            a -= 1
        b = i
        while b + 1 < len(lines) and not done[b + 1] and (lines[b + 1].startswith(indent) or not lines[b + 1].strip()):
            b += 1
        for k in range(a, b + 1):
            lines[k] = lines[k][len(indent):] if lines[k].startswith(indent) else lines[k].strip()
            done[k] = True
    return "\n".join(lines)


@lru_cache(maxsize=64)
def _multiline(anchor: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(anchor.pattern, anchor.flags | re.M)


def cut_last_line(lines: list[str], text: str) -> list[str]:
    """`lines` without the last one when `text` stops without a line end after it: a line the
    paste cut part way could read as a different value (`37.0` of `37.05`), so it is not read."""
    if lines and text and not text.endswith("\n") and len(text.split("\n")) > 1:
        return lines[:-1]
    return lines


R = TypeVar("R", bound=Record)


def prepassed(anchors: Iterable[tuple[re.Pattern[str], str]] = (),
              prefer: re.Pattern[str] | None = None) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Decorate a `parse_<tool>(text, ...)`: run it on each segment of `text` (prefix stripped,
    indentation at `anchors`, (pattern, literal) pairs, removed; segments that `prefer` matches
    first) until one parses,
    and put that segment's `source` on the record. Raises the first segment's ParseError when
    none parses."""
    anchor_list = list(anchors)

    def deco(fn: Callable[..., R]) -> Callable[..., R]:
        @wraps(fn)
        def wrapper(text: str, *args: Any, **kwargs: Any) -> R:
            first: ParseError | None = None
            segs = segments(text)
            if prefer is not None and len(segs) > 1:
                segs = sorted(segs, key=lambda s: prefer.search(s.text) is None)
            for seg in segs:
                body = seg.text
                for anchor, literal in anchor_list:
                    body = dedent_at(body, anchor, literal)
                try:
                    rec = fn(body, *args, **kwargs)
                except ParseError as exc:
                    first = first or exc
                    continue
                return replace(rec, source=seg.source) if seg.source is not None else rec  # type: ignore[type-var]
            assert first is not None
            raise first

        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
        return wrapper

    return deco
