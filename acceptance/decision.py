"""The decision of a run document: accepted or not, and the one line every output leads with.

- ACCEPTED (WITH WARNINGS / WITH WAIVERS): every criterion of the contract has evidence on
  every node and group in scope, the scope is the whole contract, and every verdict is a
  pass, warn or waived.
- PARTIAL — not an acceptance: the run was limited by `--only` or `--nodes`; what it covered
  may pass, but it is never an acceptance. The outputs list what was not covered.
- REJECTED: a criterion failed. NO VERDICT: a criterion could not be judged (error).
  INCOMPLETE: a criterion was not run (not_run) or skipped somewhere in scope.

Exit status 0 when nothing in scope blocks (an acceptance, or a partial run whose subset
passed), 1 otherwise, also when there was nothing to judge. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from acceptance.document import _FIX as FIX  # the fix every problem of a run document names
from acceptance.document import (
    MAX_PROBLEMS,
    Counts,
    CriterionOutcome,
    Decision,
    Result,
    RunDocument,
    ScopeInfo,
    zero_counts,
)
from acceptance.results import ACCEPTING, Status, worst
from slaschema.errors import Problem

BLOCKING = (Status.FAIL, Status.ERROR, Status.NOT_RUN, Status.SKIP)
HEADLINES: dict[Result, str] = {
    "accepted": "ACCEPTED",
    "accepted_with_warnings": "ACCEPTED WITH WARNINGS",
    "accepted_with_waivers": "ACCEPTED WITH WAIVERS",
    "partial": "PARTIAL — not an acceptance",
    "rejected": "REJECTED — a criterion failed",
    "unjudged": "NO VERDICT — a criterion could not be judged",
    "incomplete": "INCOMPLETE — not every criterion was tested on every node in scope",
    "empty": "NO VERDICT — nothing was judged",
}
SUBSET = {
    "pass": "everything in the subset passed",
    "rejected": "in the subset a criterion failed",
    "unjudged": "in the subset a criterion could not be judged",
    "incomplete": "in the subset a criterion was not run or was skipped",
    "empty": "nothing in the subset was judged",
}


def decide(criteria: Sequence[CriterionOutcome], scope: ScopeInfo | None, state: str | None) -> Decision:
    counts = zero_counts()
    for c in criteria:
        for v in c.verdicts:
            counts[v.status] += 1
    blocking = {s: counts[s] for s in BLOCKING if counts[s]}
    partial = bool(scope is not None and scope.partial)
    interrupted = state not in (None, "complete")
    inner: str
    if not criteria or not any(counts.values()):
        inner = "empty"
    elif counts[Status.FAIL]:
        inner = "rejected"
    elif counts[Status.ERROR]:
        inner = "unjudged"
    elif blocking or interrupted:
        inner = "incomplete"
    else:
        inner = "pass"
    result: Result
    if partial:
        result = "partial"
    elif inner != "pass":
        result = inner  # type: ignore[assignment]  # one of rejected, unjudged, incomplete, empty
    elif counts[Status.WAIVED]:
        result = "accepted_with_waivers"
    elif counts[Status.WARN]:
        result = "accepted_with_warnings"
    else:
        result = "accepted"
    headline = HEADLINES[result]
    if interrupted and not partial:
        headline = "INCOMPLETE RUN — " + headline
    accepted = result.startswith("accepted")
    ok = inner == "pass" and all(s in ACCEPTING for s, k in counts.items() if k)
    return Decision(
        result=result,
        accepted=accepted,
        partial=partial,
        headline=headline,
        subset_result=SUBSET["pass" if inner == "pass" else inner] if partial else None,
        blocking=blocking,
        verdict_counts=counts,
        exit_status=0 if ok else 1,
    )


def inconsistencies(doc: RunDocument, file: str) -> list[Problem]:
    """What the document says that its own verdicts do not: a criterion's status that is not
    the worst of its verdicts, a run status that is not the worst of its criteria, and a
    decision that is not the one its criteria, scope and state give (`acceptance.decision`).
    Every document slakit writes is consistent; an edited one could otherwise print ACCEPTED
    over failed verdicts. `accept report` refuses such a document with these problems. A
    document without a decision (written before coverage was judged, by releases whose
    precedence may differ) is shown as NO VERDICT anyway and is not checked."""
    if doc.decision is None:
        return []
    out: list[Problem] = []
    for i, c in enumerate(doc.criteria):
        if not c.verdicts:
            out.append(Problem("results_inconsistent", f"criterion {c.id!r} has no verdicts (one without evidence "
                               "is not_run)", file=file, path=f"criteria[{i}].verdicts", value=c.status.value,
                               fix=FIX))
        elif c.status != worst(v.status for v in c.verdicts):
            out.append(Problem("results_inconsistent", f"criterion {c.id!r} has the status {c.status.value} but its "
                               f"verdicts give {worst(v.status for v in c.verdicts).value}", file=file,
                               path=f"criteria[{i}].status", value=c.status.value, fix=FIX))
    run_status = worst(c.status for c in doc.criteria) if doc.criteria else Status.SKIP
    if doc.status != run_status:
        out.append(Problem("results_inconsistent", f"the run's status is {doc.status.value} but its criteria give "
                           f"{run_status.value}", file=file, path="status", value=doc.status.value, fix=FIX))
    if doc.scope is not None:
        listed = {c.id for c in doc.criteria}
        for cid in doc.scope.criteria:
            if cid not in listed:
                out.append(Problem("results_inconsistent", f"criterion {cid!r} is in the scope but has no entry "
                                   "under criteria", file=file, path="scope.criteria", value=cid, fix=FIX))
    if doc.decision is not None:
        due = decide(doc.criteria, doc.scope, doc.run.state)
        if _said(doc.decision) != _said(due):
            said = (f"({due.headline!r})" if due.headline != doc.decision.headline else
                    f"(the same headline, but its verdicts count {_counted(due.verdict_counts)}, not "
                    f"{_counted(doc.decision.verdict_counts)})")
            out.append(Problem("results_inconsistent", f"the decision {doc.decision.headline!r} is not the one its "
                               f"verdicts, scope and state give {said}", file=file, path="decision",
                               value=doc.decision.result, fix=FIX))
    return out[:MAX_PROBLEMS]


def _said(d: Decision) -> tuple[object, ...]:
    """What a decision says, counts of 0 left out (a count not written is 0)."""
    def nonzero(c: Counts) -> dict[Status, int]:
        return {s: k for s, k in c.items() if k}
    return (d.result, d.accepted, d.partial, d.headline, d.subset_result, nonzero(d.blocking),
            nonzero(d.verdict_counts), d.exit_status)


def _counted(counts: Counts) -> str:
    return ", ".join(f"{s.value} {k}" for s, k in counts.items() if k) or "nothing"
