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

from acceptance.document import CriterionOutcome, Decision, Result, ScopeInfo, zero_counts
from acceptance.results import ACCEPTING, Status

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
