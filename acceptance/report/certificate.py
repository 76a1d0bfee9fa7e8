"""The acceptance certificate as one document (`calculators.reports.doc`): the decision
(`acceptance.decision`), the subset of a partial run and what it did not cover, waivers with
their approvers, per-criterion table, per-rack and per-node tables, per-node detail, evidence
hashes and a sign-off block for both parties.

The shared renderers turn it into PDF (`calculators.reports.pdf`), Markdown and HTML
(`calculators.reports.text`), so the three always say the same. A partial run's certificate
says "PARTIAL — not an acceptance" in its banner and at the top of every page; an unsigned
bundle's says UNSIGNED at the top of every page; the footer of every page names the evidence
digest and, for a signed bundle, who signed it.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from acceptance.checks.base import CLUSTER
from acceptance.coverage import not_covered_lines, scope_text
from acceptance.document import Decision, EvidenceManifest, RunDocument
from acceptance.report.render import criterion_rows, measured_text, status_counts_text
from acceptance.results import Status
from calculators.reports import doc as d

COLORS = {"pass": "#1b7f3b", "warn": "#b7791f", "fail": "#c53030", "skip": "#2b6cb0", "error": "#805ad5",
          "not_run": "#9b2c2c", "waived": "#2c5282"}
PARTIAL_COLOR = "#b7791f"
UNSIGNED_COLOR = "#c53030"
# A results.json written before coverage was judged carries no decision: it is never shown as one.
NO_DECISION = Decision(result="unjudged", accepted=False, partial=False, subset_result=None, blocking={},
                       headline="NO VERDICT — these results predate coverage judging; run accept evaluate again",
                       exit_status=1)
MAX_DETAIL_ROWS = 3000
MAX_HASH_ROWS = 400


def _unit_text(v: Any) -> str:
    """The node or rack a verdict is about; a verdict about no single node (NCCL across nodes,
    a check on the runner host: the internal key `_cluster`) reads "cluster"."""
    return "cluster" if v.unit in (None, CLUSTER) else v.unit


class _Rows:
    """Table rows with the status cells' colours, collected as rows are added."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, ...]] = []
        self.colors: list[tuple[int, int, str]] = []

    def add(self, *cells: Any, status: dict[int, str] | None = None) -> None:
        for col, s in (status or {}).items():
            self.colors.append((len(self.rows), col, COLORS.get(s, "#000000")))
        self.rows.append(tuple("" if c is None else str(c) for c in cells))

    def table(self, header: tuple[str, ...], widths: tuple[float, ...], **kw: Any) -> d.Table:
        return d.Table(header=header, rows=tuple(self.rows), widths=widths, colors=tuple(self.colors), **kw)


def _status(s: str, reason: str | None = None) -> str:
    return s.upper().replace("_", " ") + (f"\n{reason}" if reason else "")


def _ident(cid: str, check: str | None = None) -> str:
    return cid + (f"\n{check}" if check else "")


def _waived_instead(doc: RunDocument) -> str:
    """The waived verdicts by what they were before the waiver: "1 not run, 2 skipped"."""
    was: dict[str, int] = {}
    for c in doc.criteria:
        for v in c.verdicts:
            w = v.waived
            if w is not None:
                key = {"not_run": "not run", "skip": "skipped", "fail": "failed"}.get(str(w.get("status")),
                                                                                     str(w.get("status")))
                was[key] = was.get(key, 0) + 1
    if not was:
        return ""
    return ", ".join(f"{n} {k}" for k, n in was.items())


def certificate_document(doc: RunDocument, manifest: EvidenceManifest | None, *, bundle_ok: bool = True,
                         mark: str | None = None, signers: list[str] | None = None) -> d.Document:
    """The certificate of a run document and its bundle's manifest. `mark` (e.g. UNSIGNED) is
    printed at the top of every page; `signers` (who signed the manifest, checked) go into
    every page's footer."""
    contract = doc.contract
    run = doc.run
    status = doc.status
    digest = manifest.digest if manifest is not None and manifest.digest is not None else "no manifest"
    incomplete = run.state not in (None, "complete")
    blocks: list[d.Block] = []

    decision = doc.decision or NO_DECISION
    scope = doc.scope
    verdict_word = decision.headline
    if incomplete and not verdict_word.startswith("INCOMPLETE RUN"):
        verdict_word = "INCOMPLETE RUN — " + verdict_word
    tone = (COLORS["pass"] if decision.accepted else PARTIAL_COLOR if decision.partial
            else COLORS.get(status, COLORS["error"]))
    counts = ", ".join(f"{v} {k}" for k, v in doc.counts.items() if v)
    lines = [f"Worst criterion status: {status.upper()} — criteria: {counts}"]
    if decision.partial:
        lines.append(f"Subset: {scope_text(scope)} — {decision.subset_result}.")
        lines += [f"Not covered — {line}" for line in not_covered_lines(scope)]
        lines.append("This run covered part of the contract only. It is not an acceptance of the cluster, "
                     "whatever the results of the subset.")
    elif decision.blocking:
        lines.append("Verdicts that block an acceptance: " + status_counts_text(decision.blocking)
                     + " (fail, error, not_run and skip block; pass, warn and waived do not).")
    blocks.append(d.Callout(title=verdict_word, lines=tuple(lines), color=tone))

    info = [
        ("Contract", contract.id), ("Provider", contract.provider), ("Customer", contract.customer),
        ("Contract file SHA-256", contract.sha256),
        ("Run", f"{run.mode} / {run.state} — executor {run.executor or '—'}"),
        ("Started / finished", f"{_time(run.started)} / {_time(run.finished)}"),
        ("Nodes", f"{len(run.nodes)}: {_short_list(list(run.nodes))}"),
        ("Scope", (f"PARTIAL: {scope_text(scope)}" if decision.partial else
                   f"the whole contract: {len(scope.criteria)} criteria x "
                   f"{scope.contract_nodes} nodes" if scope is not None else "not recorded")),
        ("Waivers judged as of", _time(doc.as_of)),
        ("Evidence digest", digest),
        ("Bundle verifies", "yes" if bundle_ok else "NO — files changed, missing or added since the manifest"),
        ("Signed by", ", ".join(signers) if signers else "nobody: the evidence bundle carries no signature"
         if mark else "—"),
    ]
    if run.overrides:
        info.append(("Parameter overrides", "; ".join(
            f"{c}: " + ", ".join(f"{k}={v}" for k, v in kv.items()) for c, kv in run.overrides.items())))
    blocks.append(d.KeyValues(tuple((k, "—" if v is None else str(v)) for k, v in info)))

    waivers = doc.waivers or ()
    if waivers:
        blocks += [d.Heading("Waivers", 2),
                   d.Para("A waiver turns a named skip, fail or not_run into waived while it has not expired; "
                          "an expired waiver changes nothing.")]
        wr = _Rows()
        for w in waivers:
            state = w.state + (f" ({w.verdicts_waived} verdicts)" if w.state == "applied" else "")
            look = "waived" if w.state == "applied" else "error" if w.state == "expired" else "skip"
            wr.add(w.index, _ident(w.criterion, w.nodes or "all nodes"), w.reason, w.approved_by,
                   w.expires.isoformat(), _status(look, state), status={5: look})
        blocks.append(wr.table(("#", "Criterion / nodes", "Reason", "Approved by", "Expires", "State"),
                               (8, 36, 56, 30, 20, 20)))

    blocks.append(d.Heading("Criteria", 2))
    cr = _Rows()
    by_id = {c.id: c for c in doc.criteria}
    for r in criterion_rows(doc):
        c = by_id[r["id"]]
        required = r["expected"] + (f" — source: {c.source}" if c.source else "")
        cr.add(_ident(r["id"], r["check"]), _status(r["status"], r["reason"]), r["measured"], required, r["nodes"],
               status={1: r["status"]})
    blocks.append(cr.table(("Criterion / check", "Status / reason", "Measured (decisive)", "Required", "Nodes"),
                           (40, 34, 30, 48, 18)))

    agg = doc.aggregate
    if agg:
        o = agg.overall
        blocks += [d.Heading("Per rack and per node", 2),
                   d.Para(f"Overall {o.status.upper()}: {o.nodes} node(s) — "
                          f"{status_counts_text(o.node_counts) or 'none'}"
                          + (f"; verdicts about no single node: {status_counts_text(o.cluster_counts)}"
                             if any(o.cluster_counts.values()) else "")
                          + ". A node's status is the worst of its verdicts, a rack's the worst of its nodes'.")]
        rr = _Rows()
        for rack in agg.racks[:MAX_DETAIL_ROWS]:
            rr.add(rack.rack, _status(rack.status), rack.nodes, status_counts_text(rack.node_counts),
                   status_counts_text(rack.counts), status={1: rack.status})
        if len(agg.racks) > MAX_DETAIL_ROWS:
            rr.add("…", "", "", f"{len(agg.racks) - MAX_DETAIL_ROWS} more in results.json", "")
        blocks.append(rr.table(("Rack", "Status", "Nodes", "Nodes by status", "Verdicts by status"),
                               (40, 18, 14, 49, 49)))
        bad = [n for n in agg.nodes if n.status != Status.PASS]
        good = [n.node for n in agg.nodes if n.status == Status.PASS]
        if bad:
            nr = _Rows()
            for n in bad[:MAX_DETAIL_ROWS]:
                nr.add(n.node, n.rack, _status(n.status), status_counts_text(n.counts),
                       ", ".join(f"{cid} ({s})" for cid, s in n.criteria.items()), status={2: n.status})
            if len(bad) > MAX_DETAIL_ROWS:
                nr.add("…", "", "", f"{len(bad) - MAX_DETAIL_ROWS} more in results.json", "")
            blocks.append(nr.table(("Node", "Rack", "Status", "Verdicts by status", "Criteria not passed"),
                                   (30, 26, 17, 36, 61)))
        if good:
            blocks.append(d.Para(f"{len(good)} node(s) passed every verdict: {_short_list(good)}."))

    blocks += [d.Heading("Per-node detail", 2),
               d.Para("Every verdict that is not a pass (the nodes and racks without evidence in one row per "
                      "criterion), then the number of passing verdicts per criterion.")]
    dr = _Rows()
    shown = 0
    for c in doc.criteria:
        passes = 0
        missing = [_unit_text(v) for v in c.verdicts if v.status == Status.NOT_RUN]
        if missing:
            # One row for every unit without evidence: the hostlist, not one row each.
            dr.add(c.id, _short_list(missing), _status("not_run"), f"{len(missing)} with no evidence",
                   f"raw/{c.id}/<node or rack>.*", "no_evidence: run the check there, or hand over its raw output",
                   status={2: "not_run"})
        for v in c.verdicts:
            if v.status == Status.PASS:
                passes += 1
                continue
            if v.status == Status.NOT_RUN:
                continue
            if shown < MAX_DETAIL_ROWS:
                dr.add(c.id, _unit_text(v), _status(v.status), measured_text(v, c.unit),
                       v.expected, f"{v.reason}: {v.remediation or ''}", status={2: v.status})
            shown += 1
        if passes:
            dr.add(c.id, "—", _status("pass"), f"{passes} verdict(s) passed", "", "", status={2: "pass"})
    if shown > MAX_DETAIL_ROWS:
        dr.add("…", "", "", f"{shown - MAX_DETAIL_ROWS} more in results.json", "", "")
    blocks.append(dr.table(("Criterion", "Node", "Status", "Measured", "Expected", "Reason / remediation"),
                           (32, 22, 17, 29, 29, 41)))

    files = sorted((manifest.files if manifest is not None else {}).items())
    hashes = [(f, h) for f, h in files[:MAX_HASH_ROWS]]
    if len(files) > MAX_HASH_ROWS:
        hashes.append((f"… {len(files) - MAX_HASH_ROWS} more files in manifest.json", ""))
    blocks += [d.Heading("Evidence", 2),
               d.Para(f"manifest.json lists {len(files)} files (SHA-256). Digest over the manifest: "
                      f"{manifest.digest if manifest is not None and manifest.digest is not None else '—'}. "
                      "Check with: slakit accept verify BUNDLE"),
               d.Table(header=("File", "SHA-256"), rows=tuple(hashes), widths=(70, 100), font_size=6.5)]

    confirm = ("The parties confirm that the criteria above were tested on the nodes listed, "
               "with the evidence identified by the digest above.")
    instead = _waived_instead(doc)
    if decision.accepted and instead:
        # a waived verdict is no test passed: the sentence a person signs says what stands in for one
        confirm = ("The parties confirm that the criteria above were tested on the nodes listed, except for the "
                   f"verdicts the waivers above accept in place of a pass ({instead}), with the evidence "
                   "identified by the digest above.")
    if not decision.accepted:
        confirm = ("The parties confirm the results above, with the evidence identified by the digest above. "
                   "This document is no acceptance of the cluster: " + verdict_word + ".")
    sign = [(str(contract.provider or "—"), str(contract.customer or "—"))]
    sign += [(f"{label}: ____________________________",) * 2 for label in ("Name", "Title", "Signature", "Date")]
    blocks += [d.Heading("Sign-off", 2), d.Para(confirm),
               d.Table(header=("For the provider", "For the customer"), rows=tuple(sign), widths=(1, 1),
                       min_row_height=22)]

    marks: list[d.PageMark] = []
    if mark:
        marks.append(d.PageMark(f"{mark} — no signature vouches for this evidence bundle", UNSIGNED_COLOR, 11))
    if decision.partial:
        marks.append(d.PageMark(f"PARTIAL — not an acceptance: {scope_text(scope)}", PARTIAL_COLOR, 8))
    title = f"Acceptance certificate {contract.id}"
    return d.Document(
        title="Acceptance certificate", subtitle=str(contract.title or contract.id),
        footer=f"{title} — evidence digest {digest[:16]}…", blocks=tuple(blocks), toc=False, cover_page=False,
        keywords=("acceptance", contract.id), page_marks=tuple(marks),
        footer_note=("signed by " + ", ".join(signers)) if signers else None)


def _time(at: datetime | None) -> str:
    return at.isoformat() if at is not None else "—"


def _short_list(items: list[str], n: int = 12) -> str:
    from slaschema.hostlist import compress

    try:
        return compress(items)
    except Exception:  # noqa: BLE001 - names that do not compress are listed as they are
        return ", ".join(items[:n]) + (f", … ({len(items) - n} more)" if len(items) > n else "")


FORMATS = {".pdf": "pdf", ".md": "markdown", ".html": "html"}


def render_certificate(document: d.Document, fmt: str) -> bytes:
    """The certificate in `fmt` (pdf, markdown, html): one document, the shared renderers."""
    if fmt == "pdf":
        from calculators.reports.pdf import render_pdf

        return render_pdf(document)
    from calculators.reports.text import render_html, render_markdown

    return (render_markdown(document) if fmt == "markdown" else render_html(document)).encode("utf-8")


def write_certificate(doc: RunDocument, manifest: EvidenceManifest | None, out: Path, *, bundle_ok: bool = True,
                      mark: str | None = None, signers: list[str] | None = None) -> None:
    """Write the certificate to `out`, in the format its extension names (.pdf, .md, .html),
    atomically: nothing half-written."""
    from slaschema.fileio import write_atomic

    out = Path(out)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise ValueError(f"{out}: a certificate is written as .pdf, .md or .html")
    document = certificate_document(doc, manifest, bundle_ok=bundle_ok, mark=mark, signers=signers)
    write_atomic(out, render_certificate(document, fmt))
