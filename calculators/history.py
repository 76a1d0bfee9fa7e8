"""Earlier months for the chronic-failure termination trigger (sla-semantics.md section 6).

A unit below its target in `months_below_target` of the last `within_months` months gives
the customer a termination right. A review of one month cannot judge that on its own, so
the months before it come either from earlier `slakit credits --format json` outputs
(`load_history_files`) or from earlier months computed from the same log
(`history_from_result` on a second engine run). `with_history` then replaces the result's
`termination.chronic` with the trigger judged on the contract's whole window (a
`calculators.support_records.ChronicTrigger`, `with_history`; in the JSON document):

    {"months_below_target", "within_months",
     "months_considered": months of the window that are known (computed or history),
     "months_missing": months of the window that are not, "history_months": those taken
     from history, "window_complete", "note", "termination_right",
     "triggered": [{"scope", "id", "months_below_target": [labels]}],
     "near": [{"scope", "id", "months_below_target": [labels]}]}

The window is the `within_months` calendar months that end with the last computed month.
A unit is `near` when it has not reached the right but one more month below target next
month would reach it: it is below target in at least `months_below_target - 1` of the
`within_months - 1` latest months of the window (the months next month's window keeps).
Months computed in this run win over the same month in a history file.

Reason codes: history_unreadable, history_invalid, history_contract_mismatch,
history_conflict.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from calculators.result_json import FORMAT
from calculators.support_records import ChronicTrigger, ChronicUnit, Termination
from slaschema.errors import InputError, Problem
from slaschema.models import SCOPES
from slaschema.safefiles import read_named

if TYPE_CHECKING:
    from slaschema.loader import LoadedContract

Below = dict[str, frozenset[tuple[str, str]]]      # month label -> (scope, id) below target


def history_from_result(result) -> Below:
    """Units below target per month of a `calculators.result.Result`."""
    out: Below = {}
    for p in result.periods:
        below = set()
        for scope, sm in p.scopes.items():
            for i in np.flatnonzero(~np.asarray(sm.met, dtype=bool)).tolist():
                below.add((scope, sm.ids[i]))
        out[p.period.label] = frozenset(below)
    return out


def _from_json(doc: Any, file: str, contract_id: str) -> tuple[Below, list[Problem]]:
    if not isinstance(doc, dict) or not isinstance(doc.get("periods"), list):
        return {}, [Problem("history_invalid", "not a `slakit credits --format json` result (no periods list)",
                            file=file, path="periods")]
    fmt = doc.get("format")
    if fmt is not None and fmt != FORMAT:
        return {}, [Problem("history_invalid", f"the result's format is {fmt!r}; this slakit reads {FORMAT!r} "
                            "(and results written before the field existed)", file=file, path="format", value=fmt,
                            fix="pass a `slakit credits --format json` output of this version")]
    if doc.get("contract") != contract_id:
        return {}, [Problem("history_contract_mismatch", f"the result is for contract {doc.get('contract')!r}, "
                            f"not {contract_id!r}", file=file, path="contract", value=doc.get("contract"),
                            fix="pass results computed for the same contract")]
    out: Below = {}
    problems = []
    for k, p in enumerate(doc["periods"]):
        label, units = (p.get("period"), p.get("units")) if isinstance(p, dict) else (None, None)
        if not isinstance(label, str) or not isinstance(units, list):
            problems.append(Problem("history_invalid", "a period needs `period` and `units`", file=file,
                                    path=f"periods[{k}]"))
            continue
        if not units:
            problems.append(Problem("history_invalid", f"period {label} has no units (computed without units?)",
                                    file=file, path=f"periods[{k}].units"))
            continue
        below = set()
        for j, u in enumerate(units):
            if not isinstance(u, dict) or not isinstance(u.get("met"), bool) or u.get("scope") not in SCOPES:
                problems.append(Problem("history_invalid", "a unit needs `scope`, `id` and `met` (true/false)",
                                        file=file, path=f"periods[{k}].units[{j}]"))
                break
            if not u["met"]:
                below.add((u["scope"], str(u.get("id"))))
        out[label] = frozenset(below)
    return out, problems


def load_history_files(paths: list[str], contract_id: str) -> tuple[Below, dict[str, str]]:
    """Months below target from earlier `slakit credits --format json` outputs, and the file of
    each month. Raises `InputError` with every problem of every file."""
    months: Below = {}
    source: dict[str, str] = {}
    problems: list[Problem] = []
    for path in paths:
        name = str(path)
        try:
            data = read_named(name, base_dir=None, from_cli=True, what="history file")
            doc = json.loads(data.decode("utf-8"))
        except InputError as e:
            problems.extend(Problem("history_unreadable", f"cannot read the result: {q.message} ({q.code})",
                                    file=name, fix=q.fix) for q in e.problems)
            continue
        except (ValueError, RecursionError) as e:    # JSONDecodeError, UnicodeDecodeError, an int of 4,301 digits
            problems.append(Problem("history_unreadable", f"cannot read the result: {type(e).__name__}", file=name))
            continue
        got, probs = _from_json(doc, name, contract_id)
        problems.extend(probs)
        for label, below in got.items():
            if label in months and months[label] != below:
                problems.append(Problem("history_conflict", f"{label} is also in {source[label]} with other units "
                                        "below target", file=name, value=label,
                                        fix="pass one result per month"))
                continue
            months[label] = below
            source.setdefault(label, name)
    if problems:
        raise InputError(problems)
    return months, source


def _month_labels(last: str, n: int) -> list[str]:
    from calculators.periods import shift_label

    return [shift_label(last, -k) for k in range(n - 1, -1, -1)]


def chronic_with_history(lc: LoadedContract, result, history: Below) -> ChronicTrigger | None:
    """`termination.chronic` judged on the contract's window from the computed months and `history`."""
    chronic = lc.model.termination.chronic
    if chronic is None or not result.periods:
        return None
    computed = history_from_result(result)
    months = {**history, **computed}
    last = max(computed)
    window = _month_labels(last, chronic.within_months)
    known = [m for m in window if m in months]
    missing = [m for m in window if m not in months]
    k = chronic.months_below_target
    below_in: dict[tuple[str, str], list[str]] = {}
    for m in known:
        for unit in months[m]:
            below_in.setdefault(unit, []).append(m)
    keep_next = set(window[1:])
    order = _unit_order(lc)
    triggered, near = [], []
    for unit in sorted(below_in, key=lambda u: order.get(u, (SCOPES.index(u[0]), 1 << 62, u[1]))):
        labels = below_in[unit]
        rec = ChronicUnit(scope=unit[0], id=unit[1], months_below_target=tuple(labels))
        if len(labels) >= k:
            triggered.append(rec)
        elif sum(1 for m in labels if m in keep_next) >= k - 1:
            near.append(rec)
    hist = [m for m in known if m not in computed]
    return ChronicTrigger(
        months_below_target=k,
        within_months=chronic.within_months,
        months_considered=tuple(known),
        months_missing=tuple(missing),
        history_months=tuple(hist),
        window_complete=not missing,
        note=(f"{', '.join(missing)} not known; pass earlier results (--history) or --history-from to judge "
              "the contract's whole window") if missing else None,
        triggered=tuple(triggered),
        near=tuple(near),
    )


def _unit_order(lc: LoadedContract) -> dict[tuple[str, str], tuple[int, int, str]]:
    topo = lc.topology
    out = {}
    for s, names in enumerate((topo.nodes, topo.racks, topo.clusters, topo.sites)):
        for i, name in enumerate(names):
            out[(SCOPES[s], name)] = (s, i, name)
    return out


def with_history(lc: LoadedContract, result, history: Below):
    """`result` with `termination.chronic` judged on its months and `history` (a new frozen Result)."""
    ch = chronic_with_history(lc, result, history)
    if ch is None:
        return result
    termination = result.termination if result.termination is not None else Termination(chronic=None)
    return dataclasses.replace(result, termination=dataclasses.replace(termination, chronic=ch))
