"""Compare two incident logs of the same cluster: the buyer's own (from `slakit watch`) and
the provider's.

Incidents are compared per unit: node incidents are expanded to one entry per node (a
provider row for `r01-n[03-05]` covers three nodes); other scopes compare by (scope, target).
Within a unit, an incident of one side matches one of the other side when their intervals
overlap or lie within the tolerance of each other. Matching is one to one and pairs as many
entries as can be paired (a maximum matching): pairs are taken closest start first, then any
entry left over takes a partner from a pair that can be re-paired (an augmenting path), so
one long incident never leaves two others unmatched when each had a partner. Ids are not
compared: the two logs come from different systems. Then:

  missing_in_theirs   we recorded it, the provider did not
  missing_in_ours     the provider recorded it, we did not
  start_differs       matched, starts differ by more than the tolerance
  end_differs         matched, ends differ by more than the tolerance (or one side still open)
  category_differs    matched, but one side calls it e.g. maintenance (an exclusion) and the
                      other unplanned

Open incidents (no end) run until `as_of` for matching (an open incident starting after
`as_of` is an instant at its start). `reconcile` is pure.

Counts: an *incident* is one row of a log; an *entry* is one row on one unit (a node row for
`r01-n[01-03]` is three entries). Findings and `matched` count entries, so
`matched + missing_in_theirs == ours_entries` and `matched + missing_in_ours ==
theirs_entries`; `ours_count`/`theirs_count` count incidents (entries given by hand may
repeat an id: two rows with the same id are two incidents).

Reading: `read_log` reads a log through the incident-log loader of `slakit credits`
(`calculators.incidents`), so both commands accept and refuse the same files with the same
problem lines (ids unique, impact and severity known, ...). Under a contract the targets
are checked against its topology; without one they cannot be, and are taken as written.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from heapq import heapify, heappop, heapreplace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from calculators.incidents import IncidentLog
    from slaschema.loader import LoadedContract

_KEPT_PAIRS = 4_000_000       # pairs kept for the augmenting-path searches (about 8 bytes each)
_FEW = 64                     # entries of a side on a unit up to which they are not grouped by duration
                              # and each entry's pairs are found at once, nor the searches' ends counted


@dataclass(frozen=True, slots=True)
class LogEntry:
    id: str
    scope: str
    unit: str                  # one node (node scope) or the target
    start: datetime
    end: datetime | None
    category: str
    row: int


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str                  # missing_in_ours | missing_in_theirs | start_differs | end_differs | category_differs
    scope: str
    unit: str
    ours: str | None           # incident id on our side
    theirs: str | None
    ours_start: datetime | None = None
    ours_end: datetime | None = None
    theirs_start: datetime | None = None
    theirs_end: datetime | None = None
    delta_s: float | None = None   # theirs - ours, for start/end differences
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        iso = lambda t: t.isoformat() if t else None  # noqa: E731
        return {"kind": self.kind, "scope": self.scope, "unit": self.unit, "ours": self.ours,
                "theirs": self.theirs, "ours_start": iso(self.ours_start), "ours_end": iso(self.ours_end),
                "theirs_start": iso(self.theirs_start), "theirs_end": iso(self.theirs_end),
                "delta_s": self.delta_s, **({"details": self.details} if self.details else {})}


@dataclass(frozen=True, kw_only=True)
class Reconciliation:
    findings: tuple[Finding, ...]
    matched: int               # entries (incident x unit) paired one to one
    ours_count: int            # incidents (rows) in our log
    theirs_count: int
    ours_entries: int          # entries compared: incidents expanded to one per unit
    theirs_entries: int
    tolerance_s: float
    as_of: datetime

    @property
    def agree(self) -> bool:
        return not self.findings

    def counts(self) -> dict[str, int]:
        out = {k: 0 for k in ("missing_in_ours", "missing_in_theirs", "start_differs", "end_differs",
                              "category_differs")}
        for f in self.findings:
            out[f.kind] += 1
        return out


# --- reading ---------------------------------------------------------------------------------

def read_log(path: str | Path, contract: LoadedContract | None = None) -> list[LogEntry]:
    """Incident log (CSV, JSON Lines or JSON array) -> entries, one per unit; every problem at
    once. Read by the loader `slakit credits` reads logs with (`calculators.incidents`), so a
    log is accepted or refused as there, with the same codes, rows and columns; with a
    contract its targets are checked against the topology, without one they are taken as
    written (`load_incidents_without_contract`)."""
    return log_entries(load_log(path, contract))


def load_log(path: str | Path, contract: LoadedContract | None = None, assume_tz: str | None = None) -> IncidentLog:
    """The validated log: `load_incidents` under a contract, else `load_incidents_without_contract`
    (`assume_tz`: the zone of timestamps written without an offset, as `slakit credits --assume-tz`)."""
    from calculators.incidents import load_incidents, load_incidents_without_contract

    if contract is None:
        return load_incidents_without_contract(path, assume_tz=assume_tz)
    return load_incidents(path, contract, assume_tz=assume_tz)


def log_entries(log: IncidentLog) -> list[LogEntry]:
    """The entries of a loaded log: one per row of its frame (an incident on one unit, node
    hostlists expanded), times as aware UTC datetimes (the loader keeps whole seconds).

    Built column by column: a text value (id, scope, unit, category) is one string for all
    the entries that have it (the loader's distinct values), and a second is one datetime for
    all the times at it; only the columns reconcile uses are read."""
    import numpy as np

    from calculators.incidents import coded

    f = log.frame
    if f.empty:
        return []

    def texts(column: str) -> list:
        codes, uniques = coded(log, column)
        return np.append(uniques, None).astype(object)[codes].tolist()     # (-1: missing -> None)

    starts = f["start"].to_numpy(dtype=np.int64)
    end = f["end"]
    is_open = end.isna().to_numpy(dtype=bool)
    ends = end.to_numpy(dtype=np.int64, na_value=0)
    seconds, at = np.unique(np.concatenate([starts, ends[~is_open]]), return_inverse=True)
    times = np.array([datetime.fromtimestamp(sec, tz=UTC) for sec in seconds.tolist()] + [None], dtype=object)
    end_at = np.full(len(ends), len(seconds), dtype=np.int64)      # open: None
    end_at[~is_open] = at[len(starts):]
    start_times, end_times = times[at[:len(starts)]].tolist(), times[end_at].tolist()
    del seconds, at, end_at, times
    return [LogEntry(*cells) for cells in zip(texts("id"), texts("scope"), texts("target"), start_times, end_times,
                                              texts("category"), f["row"].tolist())]


# --- comparing -----------------------------------------------------------------------------

def reconcile(ours: Iterable[LogEntry], theirs: Iterable[LogEntry], tolerance: timedelta,
              as_of: datetime) -> Reconciliation:
    ours, theirs = (x if isinstance(x, list) else list(x) for x in (ours, theirs))    # (not changed here)
    tol = tolerance.total_seconds()
    by_unit: dict[tuple[str, str], tuple[list[LogEntry], list[LogEntry]]] = defaultdict(lambda: ([], []))
    for e in ours:
        by_unit[(e.scope, e.unit)][0].append(e)
    for e in theirs:
        by_unit[(e.scope, e.unit)][1].append(e)

    findings: list[Finding] = []
    matched = 0
    for (scope, unit), (a_list, b_list) in sorted(by_unit.items()):
        partners = _Partners(a_list, b_list, tolerance, as_of)
        # by features, then index (the sort is stable)
        order = sorted(range(len(a_list)), key=lambda i: _features(a_list[i], as_of))
        partner = _maximum_matching(partners, order)
        del partners, order
        used_b = set(partner.values())
        for ai in sorted(sorted(partner), key=lambda ai: a_list[ai].start):     # by start, then index
            bi = partner[ai]
            matched += 1
            a, b = a_list[ai], b_list[bi]
            common = dict(scope=scope, unit=unit, ours=a.id, theirs=b.id, ours_start=a.start, ours_end=a.end,
                          theirs_start=b.start, theirs_end=b.end)
            d_start = (b.start - a.start).total_seconds()
            if abs(d_start) > tol:
                findings.append(Finding("start_differs", delta_s=d_start, **common))
            if (a.end is None) != (b.end is None):
                findings.append(Finding("end_differs", delta_s=None,
                                        details={"open_on": "ours" if a.end is None else "theirs"}, **common))
            elif a.end is not None and b.end is not None:
                d_end = (b.end - a.end).total_seconds()
                if abs(d_end) > tol:
                    findings.append(Finding("end_differs", delta_s=d_end, **common))
            if a.category != b.category:
                findings.append(Finding("category_differs", details={"ours": a.category, "theirs": b.category},
                                        **common))
        for ai, a in enumerate(a_list):
            if ai not in partner:
                findings.append(Finding("missing_in_theirs", scope, unit, a.id, None, a.start, a.end,
                                        details={"category": a.category}))
        for bi, b in enumerate(b_list):
            if bi not in used_b:
                findings.append(Finding("missing_in_ours", scope, unit, None, b.id, theirs_start=b.start,
                                        theirs_end=b.end, details={"category": b.category}))
    findings.sort(key=lambda f: (f.scope, f.unit, f.ours_start or f.theirs_start, f.kind, f.ours or "",
                                 f.theirs or ""))
    return Reconciliation(findings=tuple(findings), matched=matched, ours_count=_incidents(ours),
                          theirs_count=_incidents(theirs), ours_entries=len(ours), theirs_entries=len(theirs),
                          tolerance_s=tol, as_of=as_of)


class _Partners:
    """The entries of `b_list` that each entry of `a_list` may be paired with (no more than
    the tolerance apart: b starts at most `tolerance` after a ends and ends at most
    `tolerance` before a starts), in the order of preference, found when asked and not kept
    (but on a unit of a few entries): memory does not grow with the number of pairs (open
    entries run to `as_of`, so each overlaps every later one: 10,000 entries a side, every 7th
    open, make 14 million).

    A pair is (start distance, end distance, open on one side only, categories differ, gap, a's
    features, b's features, a index, b index), the features (`_features`: start, end, open,
    category) written out in the one tuple, not kept per entry; the order of preference is that
    of these tuples: closest start first, then closest end, both open or both closed, the same
    category; ties by the entries' times, then the rows' order (only between entries alike in
    all of these, so the counts do not depend on the order of the rows). The b entries are
    sorted by start: those starting at or after a's start are paired with it up to a's end +
    tolerance, in that order; those starting before it are grouped by duration (powers of two of
    seconds), since in a group only those starting no earlier than a.start - tolerance - the
    group's longest can reach a, and walked back from a's start. The walks are merged by start
    distance, those at the same distance sorted as a whole; b entries alike in all that a pair
    looks at (start, end, open or not, category) are walked as one, and their pairs, which sort
    by index among themselves, are made one at a time. Up to _FEW b entries are one group, and
    each a entry's pairs are found at once and kept."""

    def __init__(self, a_list: list[LogEntry], b_list: list[LogEntry], tolerance: timedelta,
                 as_of: datetime) -> None:
        self.a_list, self.b_list, self.tolerance, self.as_of = a_list, b_list, tolerance, as_of
        self.tol = tolerance.total_seconds()
        self.a_end = [_end(a, as_of) for a in a_list]
        self.b_end = [_end(b, as_of) for b in b_list]
        # b entries alike in all a pair looks at pair alike but for their index: walked as one
        self.alike: dict[int, list[int]] = {}   # the first of each kind of several -> all of them, in order
        self.by_start = []                      # the first of each kind, by start, then index
        by_start = sorted(range(len(b_list)), key=lambda bi: b_list[bi].start)     # (stable: ties by index)
        i = 0
        while i < len(by_start):
            j, start = i + 1, b_list[by_start[i]].start
            while j < len(by_start) and b_list[by_start[j]].start == start:
                j += 1
            if j == i + 1:
                self.by_start.append(by_start[i])
            else:                               # the same start: alike when the rest of `_features` is
                first: dict[tuple, int] = {}
                for bi in by_start[i:j]:
                    kind = first.setdefault((self.b_end[bi], b_list[bi].end is None, b_list[bi].category), bi)
                    if kind == bi:
                        self.by_start.append(bi)
                    else:
                        self.alike.setdefault(kind, [kind]).append(bi)
            i = j
        del by_start
        self.starts = [b_list[bi].start for bi in self.by_start]
        groups: dict[int, list[int]] = defaultdict(list)
        for bi in self.by_start:       # (a few entries are one group)
            groups[int((self.b_end[bi] - b_list[bi].start).total_seconds()).bit_length()
                   if len(b_list) > _FEW else 0].append(bi)
        self.few: dict[int, list[tuple]] = {}        # with a few b entries: each a entry's pairs
        self.groups = [([b_list[bi].start for bi in group], group,
                        max(self.b_end[bi] - b_list[bi].start for bi in group)) for group in groups.values()]

    def pair(self, ai: int, bi: int) -> tuple | None:
        """The pair of a and b, None when they are more than the tolerance apart."""
        a, b, a_end, b_end = self.a_list[ai], self.b_list[bi], self.a_end[ai], self.b_end[bi]
        gap = max(_seconds(b.start - a_end), _seconds(a.start - b_end), 0)
        if gap > self.tol:
            return None
        return (abs(_seconds(b.start - a.start)), abs(_seconds(b_end - a_end)),
                (a.end is None) != (b.end is None), a.category != b.category, gap,
                a.start, a_end, a.end is None, a.category, b.start, b_end, b.end is None, b.category, ai, bi)

    def preferred(self, ai: int, taken: _Taken | None = None) -> Iterator[tuple]:
        """The pairs of a (index `ai`), most preferred first; those of the b entries taken
        when they are looked at may be left out (a b entry once taken stays taken)."""
        a = self.a_list[ai]
        earliest = _minus(a.start, self.tolerance)    # a b entry must end at or after this
        latest = _plus(self.a_end[ai], self.tolerance)  # ... and start at or before this
        b_list, b_end = self.b_list, self.b_end
        if not b_list:
            return
        if len(b_list) <= _FEW:                       # a few: all of a's pairs at once, kept
            pairs = self.few.get(ai)
            if pairs is None:
                (starts, group, longest), = self.groups
                near = group[bisect_left(starts, _minus(earliest, longest)):bisect_right(starts, latest)]
                pairs = self.few[ai] = [
                    q for p in sorted(p for p in (self.pair(ai, bi) for bi in near if b_end[bi] >= earliest)
                                      if p is not None)
                    for q in (self._alike(p, None) if p[-1] in self.alike else (p,))]
            yield from pairs
            return
        walks, heads = self._walks(a.start, earliest, latest)
        while heads:
            d = heads[0][0]
            same = []
            while heads and heads[0][0] == d:
                walk = walks[heads[0][1]]
                same.append(walk[0][walk[1]])
                walk[1] += walk[3]
                nd = self._distance(a.start, earliest, walk, b_list, b_end)
                if nd is None:
                    heappop(heads)
                else:
                    heapreplace(heads, (nd, heads[0][1]))
            if taken is not None:
                same = [bi for bi in same if bi in self.alike or bi not in taken.by]
            pairs = [p for p in (self.pair(ai, bi) for bi in same) if p is not None]
            pairs.sort()
            for p in pairs:
                if p[-1] not in self.alike:
                    yield p
                else:
                    yield from self._alike(p, taken)

    def _alike(self, pair: tuple, taken: _Taken | None) -> Iterator[tuple]:
        """The pairs of the entries alike in kind with the b entry of `pair` (in index order,
        as they sort), without those taken (those taken before all the others of their kind
        are passed over once for all a entries)."""
        kind, head = pair[-1], pair[:-1]
        alike = self.alike[kind]
        i = 0
        while True:
            if taken is not None:
                first_free = taken.free_from.get(kind, 0)
                while first_free < len(alike) and alike[first_free] in taken.by:
                    first_free += 1
                taken.free_from[kind] = first_free
                i = max(i, first_free)
                while i < len(alike) and alike[i] in taken.by:
                    i += 1
            if i >= len(alike):
                return
            yield (*head, alike[i])
            i += 1

    def has_pair(self, ai: int) -> bool:
        """Whether a (index `ai`) has any pair."""
        start = self.a_list[ai].start
        earliest = _minus(start, self.tolerance)
        if bisect_left(self.starts, start) < bisect_right(self.starts, _plus(self.a_end[ai], self.tolerance)):
            return True
        for starts, group, longest in self.groups:
            pos, stop = bisect_left(starts, start) - 1, bisect_left(starts, _minus(earliest, longest)) - 1
            while pos > stop:
                if self.b_end[group[pos]] >= earliest:
                    return True
                pos -= 1
        return False

    def _walks(self, start: datetime, earliest: datetime, latest: datetime) -> tuple[list[list], list[tuple]]:
        """The walks over the b entries that may be paired with an a entry starting at `start`
        (each [b indices, position, where it stops, step]: forward from `start` on, back in
        each duration group), and a heap of (start distance, walk) of those not over."""
        b_list, b_end = self.b_list, self.b_end
        walks = [[self.by_start, bisect_left(self.starts, start), bisect_right(self.starts, latest), 1]]
        for starts, group, longest in self.groups:
            if starts[0] < start:                     # (a group starting later has nothing before `start`)
                walks.append([group, bisect_left(starts, start) - 1, bisect_left(starts, _minus(earliest, longest)) - 1, -1])
        heads = []
        for w, walk in enumerate(walks):
            d = self._distance(start, earliest, walk, b_list, b_end)
            if d is not None:
                heads.append((d, w))
        heapify(heads)
        return walks, heads

    @staticmethod
    def _distance(start: datetime, earliest: datetime, walk: list, b_list: list[LogEntry],
                  b_end: list[datetime]) -> float | None:
        """Seconds between `start` and the start of the b entry the walk is at (a walk back first
        passes over those that end before `earliest`); None when the walk is over."""
        seq, pos, stop, step = walk
        if step > 0:
            return (b_list[seq[pos]].start - start).total_seconds() if pos < stop else None
        while pos > stop and b_end[seq[pos]] < earliest:
            pos -= 1
        walk[1] = pos
        return (start - b_list[seq[pos]].start).total_seconds() if pos > stop else None


@dataclass(frozen=True)
class _Taken:
    """The b entries a matching has taken (b index -> a index), and for each kind of alike b
    entries (by its first) how many of them, from the first on, are taken."""
    by: dict[int, int]
    free_from: dict[int, int] = field(default_factory=dict)


_FIRST = datetime.min.replace(tzinfo=UTC)
_LAST = datetime.max.replace(tzinfo=UTC)


def _minus(t: datetime, d: timedelta) -> datetime:
    """`t - d`, or the first instant a datetime holds where that is earlier (a log time in
    year 1 less the tolerance): a bound of a search, so the first instant bounds the same."""
    return t - d if t - _FIRST >= d else _FIRST


def _plus(t: datetime, d: timedelta) -> datetime:
    """`t + d`, or the last instant a datetime holds where that is later (year 9999)."""
    return t + d if _LAST - t >= d else _LAST


def _seconds(d: timedelta) -> int | float:
    """`d` in seconds: an int when whole (most are small, and Python keeps one object for
    each small int), else the float `total_seconds` gives; the two compare alike."""
    return d.days * 86400 + d.seconds if not d.microseconds else d.total_seconds()


def _end(e: LogEntry, as_of: datetime) -> datetime:
    """Where an entry ends for matching: its end, or `as_of` when open (never before its start)."""
    if e.end is not None:
        return e.end
    return max(as_of, e.start)


def _incidents(entries: list[LogEntry]) -> int:
    """Incidents (rows) behind the entries: a row expanded to several nodes is one incident."""
    return len({(e.id, e.row) for e in entries})


def _features(e: LogEntry, as_of: datetime) -> tuple:
    """What the comparison looks at, for ordering entries independently of their rows."""
    return (e.start, _end(e, as_of), e.end is None, e.category)


def _after(pairs: Iterator[tuple], head: tuple) -> Iterator[tuple]:
    """The pairs of `pairs` (most preferred first) that come after `head`."""
    for p in pairs:
        if p > head:
            yield p
            break
    yield from pairs


def _maximum_matching(partners: _Partners, order: list[int]) -> dict[int, int]:
    """A maximum one-to-one matching of the pairs (ours index, theirs index): first greedily
    in the order of preference of all pairs, then augmenting paths (Kuhn) for the entries left
    over, in `order`, trying partners in the same preference. Returns ours -> theirs.

    The pairs are taken as they come: the greedy pass merges each entry's own pairs, most
    preferred first, holding one pair per entry not yet matched; an entry's walk over its pairs
    is held only from when its first pair's theirs entry is found taken (the walk is then begun
    anew and passes over the pairs up to that one), so the entries that get their first pair,
    most of them, never hold one (a walk has a position in each duration group). A search for an
    augmenting path is made only while some theirs entry with a pair is unmatched (it ends at
    one), and skips the theirs entries every search since the last augmentation has passed in
    vain (no path leads from them to an unmatched one; the path found is the same). An entry's
    pairs are kept for the searches up to _KEPT_PAIRS in all and found anew beyond that."""
    a_of: dict[int, int] = {}            # theirs -> ours
    b_of: dict[int, int] = {}            # ours -> theirs
    streams: dict[int, Iterator[tuple]] = {}
    heads = []
    taken = _Taken(a_of)
    for ai in range(len(partners.a_list)):
        first = next(partners.preferred(ai), None)
        if first is not None:
            heads.append(first)
    paired = bytearray(len(partners.a_list))     # the ours entries with any pair
    for p in heads:
        paired[p[-2]] = 1
    heapify(heads)
    while heads and len(a_of) < len(partners.b_list):
        head = heads[0]
        *_, ai, bi = head
        if bi not in a_of:
            b_of[ai], a_of[bi] = bi, ai
            heappop(heads)
            streams.pop(ai, None)
            continue
        stream = streams.get(ai)
        if stream is None:               # its first pair's b is taken: its pairs from there on
            stream = streams[ai] = _after(partners.preferred(ai, taken), head)
        following = next(stream, None)
        if following is None:
            heappop(heads)
            del streams[ai]
        else:
            heapreplace(heads, following)

    left = [ai for ai in order if ai not in b_of and paired[ai]]
    if not left or len(a_of) == len(partners.b_list):
        return b_of
    open_ends = len(partners.b_list) - len(a_of)      # the unmatched theirs entries with a pair, or more
    if len(partners.a_list) > _FEW:
        theirs = _Partners(partners.b_list, partners.a_list, partners.tolerance, partners.as_of)
        open_ends = sum(1 for bi in range(len(partners.b_list)) if bi not in a_of and theirs.has_pair(bi))
    kept: dict[int, list[int]] = {}
    room = _KEPT_PAIRS

    def adjacent(a: int) -> list[int]:
        nonlocal room
        got = kept.get(a)
        if got is None:
            got = [p[-1] for p in partners.preferred(a)]
            if len(got) <= room:
                kept[a], room = got, room - len(got)
        return got

    in_vain: set[int] = set()            # theirs entries the searches since the last augmentation passed
    for start in left:                   # (an augmenting path matches no ours entry but its start)
        if not open_ends:
            break                        # no search can end anywhere
        # iterative search for an augmenting path from `start` (no recursion limit on long chains)
        parent: dict[int, tuple[int, int | None]] = {}     # theirs -> (ours reached from, previous theirs)
        seen: set[int] = set()
        stack = [(start, None)]
        end = None
        while stack and end is None:
            a, via = stack.pop()
            for b in adjacent(a):
                if b in seen or b in in_vain:
                    continue
                seen.add(b)
                parent[b] = (a, via)
                if b not in a_of:
                    end = b
                    break
                stack.append((a_of[b], b))
        if end is None:
            in_vain |= seen
            continue
        b = end
        while b is not None:                 # flip the path: each ours on it takes the next theirs
            a, prev = parent[b]
            b_of[a], a_of[b] = b, a
            b = prev
        in_vain.clear()
        open_ends -= 1
    return b_of


def latest_time(entries: Iterable[LogEntry]) -> datetime | None:
    return max((t for e in entries for t in (e.start, e.end) if t is not None), default=None)
