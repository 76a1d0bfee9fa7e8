"""Waivers: a signed-off exception that turns a named `skip`, `fail` or `not_run` into `waived`.

As InSpec has them, a waiver names the criterion, why, who approved it and until when:

    waivers:
      - criterion: gemm-bf16
        nodes: r01-n[03-04]            # optional: nodes or rack ids (hostlist); default all
        reason: GPU 2 replaced on 2027-01-20; retest booked for 2027-02-03
        approved_by: J. Roe (Example AI Lab)
        expires: 2027-02-15            # date (midnight in the contract's time zone) or aware time

A waiver applies while `as_of < expires` (half-open). An expired waiver changes nothing and
is reported as `expired`; one that matched no verdict is reported as `unused`. An `error`
(a result that could not be judged) is never waived, and neither is a pass or warn.

The file is read strictly: every problem at once, each with file, line, field and a code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timezone, tzinfo
from pathlib import Path
from typing import Any

from acceptance.document import CriterionOutcome, WaiverState, WaiverUse
from acceptance.results import Status, Verdict
from slaschema.errors import InputError, Problem

WAIVABLE = frozenset({Status.SKIP, Status.FAIL, Status.NOT_RUN})
FIELDS = ("criterion", "nodes", "reason", "approved_by", "expires")
REQUIRED = ("criterion", "reason", "approved_by", "expires")
EXAMPLE = ("waivers:\n  - criterion: gemm-bf16\n    nodes: r01-n[03-04]\n    reason: ...\n"
           "    approved_by: J. Roe\n    expires: 2027-02-15")


@dataclass(frozen=True)
class Waiver:
    index: int                       # 1-based position in the file
    criterion: str
    nodes: tuple[str, ...] | None    # None: every node and group of the criterion
    nodes_expr: str | None
    reason: str
    approved_by: str
    expires: datetime                # aware
    line: int | None = None

    def active(self, as_of: datetime) -> bool:
        return as_of < self.expires

    def matches(self, v: Verdict) -> bool:
        if v.criterion != self.criterion or Status(v.status) not in WAIVABLE:
            return False
        if self.nodes is None:
            return True
        unit = v.details.get("unit") if isinstance(v.details, Mapping) else None
        return (v.node is not None and v.node in self.nodes) or (unit is not None and unit in self.nodes)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "criterion": self.criterion, "nodes": self.nodes_expr,
                "reason": self.reason, "approved_by": self.approved_by, "expires": self.expires.isoformat()}


def load_waivers(path: str | Path, *, criteria: Sequence[str], units: Sequence[str],
                 tz: tzinfo = timezone.utc) -> list[Waiver]:
    """Read and check a waiver file. `criteria`: the ids a waiver may name; `units`: the
    node names and rack ids it may name; `tz`: where a bare date's midnight is."""
    from slaschema.hostlist import HostlistError, expand
    from slaschema.strict_yaml import read_yaml

    file = str(path)
    p = Path(path)
    if not p.is_file():
        raise InputError([Problem("waiver_file_missing", f"{file}: no such file", file=file,
                                  fix="give the path of a YAML waiver file")])
    doc = read_yaml(p.read_bytes(), file, collect=True,
                    empty_fix="write `waivers:` with a list of waivers (see docs/acceptance.md)")
    problems: list[Problem] = list(doc.problems)
    data = doc.data
    if isinstance(data, Mapping):
        extra = [k for k in data if k != "waivers"]
        for k in extra:
            line, col = doc.locate((k,), prefer_key=True)
            problems.append(Problem("waiver_unknown_field", f"unknown top-level key {k!r}", file=file, line=line,
                                    col=col, path=str(k), value=k, fix="the file holds one key, `waivers:`"))
        items, base = data.get("waivers"), ("waivers",)
    else:
        items, base = data, ()
    if not isinstance(items, list):
        line, col = doc.locate(base)
        raise InputError(problems + [Problem("waiver_not_a_list", "expected a list of waivers", file=file,
                                             line=line or 1, col=col, path="waivers", fix=EXAMPLE)])
    known, allowed = set(criteria), set(units)
    out: list[Waiver] = []
    seen: dict[tuple[str, str | None], int] = {}
    for i, item in enumerate(items):
        at = (*base, i)
        where = f"waivers[{i}]"

        def prob(code: str, msg: str, key: str | None = None, value: Any = None, fix: str | None = None) -> None:
            line, col = doc.locate((*at, key) if key else at, prefer_key=value is None)
            problems.append(Problem(code, msg, file=file, line=line, col=col,
                                    path=f"{where}.{key}" if key else where, value=value, fix=fix))

        if not isinstance(item, Mapping):
            prob("waiver_not_a_mapping", "a waiver is a mapping of criterion, nodes, reason, approved_by, expires",
                 value=str(item)[:80], fix=EXAMPLE)
            continue
        bad = False
        for k in item:
            if k not in FIELDS:
                prob("waiver_unknown_field", f"unknown field {k!r}", str(k), k,
                     f"fields: {', '.join(FIELDS)}")
                bad = True
        for k in REQUIRED:
            v = item.get(k)
            if v is None or (isinstance(v, str) and not v.strip()):
                prob("waiver_missing_field", f"a waiver needs `{k}`", k if k in item else None, None,
                     f"add `{k}:` ({'who signed it off' if k == 'approved_by' else 'see ' + EXAMPLE.splitlines()[0]})")
                bad = True
        cid = item.get("criterion")
        if isinstance(cid, str) and cid.strip() and cid not in known:
            prob("waiver_unknown_criterion", f"no criterion {cid!r} in the contract", "criterion", cid,
                 "criterion ids: " + ", ".join(sorted(known)))
            bad = True
        nodes: tuple[str, ...] | None = None
        expr = item.get("nodes")
        if expr is not None:
            names: list[str] = []
            try:
                for part in (expr if isinstance(expr, list) else [expr]):
                    names += expand(str(part))
            except HostlistError as exc:
                prob("waiver_bad_nodes", f"nodes: {exc}", "nodes", str(expr), "a hostlist such as r01-n[03-04]")
                bad = True
            else:
                unknown = [n for n in names if n not in allowed]
                if unknown or not names:
                    prob("waiver_unknown_node", "nodes the contract's topology does not list: "
                         + ", ".join(unknown[:10]) if unknown else "nodes: empty", "nodes",
                         ", ".join(unknown[:10]) or str(expr), "name nodes or rack ids of the contract's topology")
                    bad = True
                nodes = tuple(dict.fromkeys(names))
        expires = _when(item.get("expires"), tz)
        if item.get("expires") is not None and expires is None:
            prob("waiver_bad_date", "expires must be a date (2027-02-15) or a time with its offset "
                 "(2027-02-15T12:00:00+00:00)", "expires", str(item.get("expires")),
                 "write the day it no longer applies as YYYY-MM-DD, or an ISO time with its offset")
            bad = True
        for k in ("reason", "approved_by"):
            if item.get(k) is not None and not isinstance(item.get(k), str):
                prob("waiver_bad_field", f"`{k}` must be text", k, str(item.get(k)), f"quote the {k}")
                bad = True
        if bad:
            continue
        key = (str(cid), ",".join(nodes) if nodes else None)
        if key in seen:
            prob("waiver_duplicate", f"the same criterion and nodes as waiver {seen[key] + 1}", "criterion", cid,
                 "keep one waiver per criterion and node set")
            continue
        seen[key] = i
        line, _ = doc.locate(at)
        out.append(Waiver(i + 1, str(cid), nodes, None if expr is None else (
            ",".join(map(str, expr)) if isinstance(expr, list) else str(expr)),
            str(item["reason"]).strip(), str(item["approved_by"]).strip(), expires, line))  # type: ignore[arg-type]
    if problems:
        raise InputError(sorted(problems, key=lambda q: (q.line or 0, q.col or 0)))
    return out


def _when(value: Any, tz: tzinfo) -> datetime | None:
    if value is None:
        return None
    text = str(value).strip()
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(0), tzinfo=tz)
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo is not None else None


def apply_waivers(verdicts: Sequence[Verdict], waivers: Sequence[Waiver], as_of: datetime) -> list[Verdict]:
    """Verdicts with every skip/fail/not_run that an active waiver names turned `waived`;
    the original status and reason and the waiver stay under `details.waived`. Pure."""
    active = [w for w in waivers if w.active(as_of)]
    if not active:
        return list(verdicts)
    out = []
    for v in verdicts:
        w = next((w for w in active if w.matches(v)), None)
        if w is None:
            out.append(v)
            continue
        out.append(replace(v, status=Status.WAIVED, reason="waived", details={
            **v.details, "waived": {"status": str(v.status), "reason": v.reason, "waiver": w.index,
                                    "approved_by": w.approved_by, "justification": w.reason,
                                    "expires": w.expires.isoformat()}}))
    return out


def waiver_report(waivers: Sequence[Waiver], criteria: Sequence[CriterionOutcome],
                  as_of: datetime) -> tuple[WaiverUse, ...]:
    """Each waiver with its state (applied | unused | expired) and the verdicts it waived."""
    used: dict[int, int] = {}
    for c in criteria:
        for v in c.verdicts:
            given = v.waived
            if given is not None:
                used[given["waiver"]] = used.get(given["waiver"], 0) + 1
    out = []
    for w in waivers:
        state: WaiverState = "expired" if not w.active(as_of) else "applied" if used.get(w.index) else "unused"
        out.append(WaiverUse(index=w.index, criterion=w.criterion, nodes=w.nodes_expr, reason=w.reason,
                             approved_by=w.approved_by, expires=w.expires, state=state,
                             verdicts_waived=used.get(w.index, 0)))
    return tuple(out)
