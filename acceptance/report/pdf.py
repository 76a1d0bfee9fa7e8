"""The acceptance certificate (PDF): the decision (`acceptance.decision`), the subset of a
partial run and what it did not cover, waivers with their approvers, per-criterion table,
per-node detail, evidence hashes and a sign-off block for both parties. A partial run's
certificate says "PARTIAL — not an acceptance" in its banner and on every page.

A function of the run document and the bundle manifest; reportlab's `invariant=1` makes the
same inputs give the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acceptance.coverage import not_covered_lines, scope_text
from acceptance.report.render import criterion_rows, measured_text, status_counts_text

COLORS = {"pass": "#1b7f3b", "warn": "#b7791f", "fail": "#c53030", "skip": "#2b6cb0", "error": "#805ad5",
          "not_run": "#9b2c2c", "waived": "#2c5282"}
PARTIAL_COLOR = "#b7791f"
# A results.json written before coverage was judged carries no decision: it is never shown as one.
NO_DECISION = {"result": "unjudged", "accepted": False, "partial": False, "subset_result": None, "blocking": {},
               "headline": "NO VERDICT — these results predate coverage judging; run accept evaluate again"}
MAX_DETAIL_ROWS = 3000
MAX_HASH_ROWS = 400


def render_pdf(doc: dict[str, Any], manifest: dict[str, Any] | None, out: Path, *, bundle_ok: bool = True,
               mark: str | None = None, signers: list[str] | None = None) -> None:
    """`mark` (e.g. UNSIGNED) is printed across the top of every page; `signers` (who signed
    the manifest, checked) go into every page's footer."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.lib.units import mm
    from reportlab.platypus import KeepTogether, SimpleDocTemplate, Spacer, Table, TableStyle

    from calculators.reports import fonts
    from calculators.reports.fonts import Paragraph
    from slaschema.fileio import write_atomic

    styles = fonts.stylesheet(getSampleStyleSheet())
    small = ParagraphStyle("small", parent=styles["BodyText"], fontSize=7.5, leading=9)
    body = ParagraphStyle("body", parent=styles["BodyText"], fontSize=9, leading=11.5)
    mono = ParagraphStyle("mono", parent=small, fontName=fonts.MONO, fontSize=6.5, leading=8)
    # Ids such as nccl-all-reduce-rack wrap at their hyphens rather than mid-word.
    ident = ParagraphStyle("ident", parent=small, embeddedHyphenation=1)

    def p(text: Any, style: ParagraphStyle = small, markup: bool = False) -> Paragraph:
        return Paragraph(str(text) if markup else _esc(text), style)

    def status_cell(s: str, reason: str | None = None) -> Paragraph:
        text = f'<font color="{COLORS.get(s, "#000000")}"><b>{s.upper().replace("_", " ")}</b></font>'
        if reason:
            # a reason code is one word: smaller type rather than a break inside it (status column)
            size = min(6.5, 6.5 * (34 * mm - 13) / max(1.0, fonts.width(reason, fonts.REGULAR, 6.5)))
            text += f'<br/><font size="{size:.2f}" color="#555555">{_esc(reason)}</font>'
        return Paragraph(text, small)

    def id_cell(cid: str, check: str | None = None) -> Paragraph:
        text = _esc(cid) + (f'<br/><font size="6.5" color="#555555">{_esc(check)}</font>' if check else "")
        return Paragraph(text, ident)

    contract = doc["contract"]
    run = doc["run"]
    status = doc["status"]
    incomplete = run.get("state") not in (None, "complete")
    story: list[Any] = []
    story.append(Paragraph("Acceptance certificate", styles["Title"]))
    story.append(p(f"{contract.get('title') or contract['id']}", styles["Heading3"]))
    story.append(Spacer(1, 3 * mm))

    decision = doc.get("decision") or NO_DECISION
    scope = doc.get("scope") or {}
    verdict_word = decision["headline"]
    if incomplete and not verdict_word.startswith("INCOMPLETE RUN"):
        verdict_word = "INCOMPLETE RUN — " + verdict_word
    tone = (COLORS["pass"] if decision["accepted"] else PARTIAL_COLOR if decision["partial"]
            else COLORS.get(status, COLORS["error"]))
    counts = ", ".join(f"{v} {k}" for k, v in doc["counts"].items() if v)
    box = [[Paragraph(f'<font size="16" color="{tone}"><b>{_esc(verdict_word)}</b></font>', body)],
           [p(f"Worst criterion status: {status.upper()} — criteria: {counts}", body)]]
    if decision["partial"]:
        box.append([p(f"Subset: {scope_text(scope)} — {decision.get('subset_result')}.", body)])
        box += [[p(f"Not covered — {line}", body)] for line in not_covered_lines(scope)]
        box.append([p("This run covered part of the contract only. It is not an acceptance of the cluster, "
                      "whatever the results of the subset.", body)])
    elif decision.get("blocking"):
        box.append([p("Verdicts that block an acceptance: " + status_counts_text(decision["blocking"])
                      + " (fail, error, not_run and skip block; pass, warn and waived do not).", body)])
    summary = Table(box, colWidths=[170 * mm])
    summary.setStyle(TableStyle([fonts.TABLE_FONT, ("BOX", (0, 0), (-1, -1), 1.2, colors.HexColor(tone)),
                                 ("TOPPADDING", (0, 0), (-1, -1), 6), ("BOTTOMPADDING", (0, 0), (-1, -1), 6)]))
    story += [summary, Spacer(1, 4 * mm)]

    info = [
        ["Contract", contract["id"]], ["Provider", contract.get("provider")], ["Customer", contract.get("customer")],
        ["Contract file SHA-256", contract.get("sha256")],
        ["Run", f"{run.get('mode')} / {run.get('state')} — executor {run.get('executor') or '—'}"],
        ["Started / finished", f"{run.get('started') or '—'} / {run.get('finished') or '—'}"],
        ["Nodes", f"{len(run.get('nodes') or [])}: {_short_list(run.get('nodes') or [])}"],
        ["Scope", (f"PARTIAL: {scope_text(scope)}" if decision["partial"] else
                   f"the whole contract: {len(scope.get('criteria') or [])} criteria x "
                   f"{scope.get('contract_nodes', '—')} nodes" if scope else "not recorded")],
        ["Waivers judged as of", doc.get("as_of") or "—"],
        ["Evidence digest", (manifest or {}).get("digest", "no manifest")],
        ["Bundle verifies", "yes" if bundle_ok else "NO — files changed, missing or added since the manifest"],
    ]
    if run.get("overrides"):
        info.append(["Parameter overrides", "; ".join(
            f"{c}: " + ", ".join(f"{k}={v}" for k, v in kv.items()) for c, kv in run["overrides"].items())])
    t = Table([[p(k, small), p(v, mono if "SHA" in k or "digest" in k else small)] for k, v in info],
              colWidths=[38 * mm, 132 * mm])
    t.setStyle(TableStyle([fonts.TABLE_FONT, ("GRID", (0, 0), (-1, -1), 0.25, colors.grey), ("VALIGN", (0, 0), (-1, -1), "TOP"),
                           ("BACKGROUND", (0, 0), (0, -1), colors.HexColor("#f2f2f2"))]))
    story += [t, Spacer(1, 5 * mm)]

    waivers = doc.get("waivers") or []
    if waivers:
        story.append(Paragraph("Waivers", styles["Heading2"]))
        story.append(p("A waiver turns a named skip, fail or not_run into waived while it has not expired; "
                       "an expired waiver changes nothing.", body))
        wrows = [[p(h) for h in ("#", "Criterion / nodes", "Reason", "Approved by", "Expires", "State")]]
        for w in waivers:
            state = w["state"] + (f" ({w['verdicts_waived']} verdicts)" if w["state"] == "applied" else "")
            wrows.append([p(w["index"]), id_cell(w["criterion"], w.get("nodes") or "all nodes"), p(w["reason"]),
                          p(w["approved_by"]), p(w["expires"]),
                          status_cell("waived" if w["state"] == "applied" else "error" if w["state"] == "expired"
                                      else "skip", state)])
        wt = Table(wrows, colWidths=[8 * mm, 36 * mm, 56 * mm, 30 * mm, 20 * mm, 20 * mm], repeatRows=1)
        wt.setStyle(_grid(colors))
        story += [wt, Spacer(1, 5 * mm)]

    story.append(Paragraph("Criteria", styles["Heading2"]))
    rows = [[p(h) for h in ("Criterion / check", "Status / reason", "Measured (decisive)", "Required", "Nodes")]]
    by_id = {c["id"]: c for c in doc["criteria"]}
    for r in criterion_rows(doc):
        c = by_id[r["id"]]
        required = r["expected"] + (f" — source: {c['source']}" if c.get("source") else "")
        rows.append([id_cell(r["id"], r["check"]), status_cell(r["status"], r["reason"]), p(r["measured"]),
                     p(required), p(r["nodes"])])
    ct = Table(rows, colWidths=[40 * mm, 34 * mm, 30 * mm, 48 * mm, 18 * mm], repeatRows=1)
    ct.setStyle(_grid(colors))
    story += [ct, Spacer(1, 5 * mm)]

    agg = doc.get("aggregate")
    if agg:
        story.append(Paragraph("Per rack and per node", styles["Heading2"]))
        o = agg["overall"]
        story.append(p(f"Overall {o['status'].upper()}: {o['nodes']} node(s) — "
                       f"{status_counts_text(o['node_counts']) or 'none'}"
                       + (f"; verdicts about no single node: {status_counts_text(o['cluster_counts'])}"
                          if any(o["cluster_counts"].values()) else "")
                       + ". A node's status is the worst of its verdicts, a rack's the worst of its nodes'.", body))
        story.append(Spacer(1, 2 * mm))
        rrows = [[p(h) for h in ("Rack", "Status", "Nodes", "Nodes by status", "Verdicts by status")]]
        for r in agg["racks"][:MAX_DETAIL_ROWS]:
            rrows.append([id_cell(r["rack"]), status_cell(r["status"]), p(r["nodes"]),
                          p(status_counts_text(r["node_counts"])), p(status_counts_text(r["counts"]))])
        if len(agg["racks"]) > MAX_DETAIL_ROWS:
            rrows.append([p("…"), p(""), p(""), p(f"{len(agg['racks']) - MAX_DETAIL_ROWS} more in results.json"), p("")])
        rt = Table(rrows, colWidths=[40 * mm, 18 * mm, 14 * mm, 49 * mm, 49 * mm], repeatRows=1)
        rt.setStyle(_grid(colors))
        story += [rt, Spacer(1, 3 * mm)]
        bad = [n for n in agg["nodes"] if n["status"] != "pass"]
        good = [n["node"] for n in agg["nodes"] if n["status"] == "pass"]
        if bad:
            nrows = [[p(h) for h in ("Node", "Rack", "Status", "Verdicts by status", "Criteria not passed")]]
            for n in bad[:MAX_DETAIL_ROWS]:
                nrows.append([id_cell(n["node"]), id_cell(n["rack"]), status_cell(n["status"]),
                              p(status_counts_text(n["counts"])),
                              p(", ".join(f"{cid} ({s})" for cid, s in n["criteria"].items()), ident)])
            if len(bad) > MAX_DETAIL_ROWS:
                nrows.append([p("…"), p(""), p(""), p(f"{len(bad) - MAX_DETAIL_ROWS} more in results.json"), p("")])
            nt = Table(nrows, colWidths=[28 * mm, 22 * mm, 18 * mm, 36 * mm, 66 * mm], repeatRows=1)
            nt.setStyle(_grid(colors))
            story += [nt, Spacer(1, 2 * mm)]
        if good:
            story.append(p(f"{len(good)} node(s) passed every verdict: {_short_list(good)}.", body))
        story.append(Spacer(1, 2 * mm))

    story.append(Paragraph("Per-node detail", styles["Heading2"]))
    story.append(p("Every verdict that is not a pass (the nodes and racks without evidence in one row per "
                   "criterion), then the number of passing verdicts per criterion.", body))
    detail = [[p(h) for h in ("Criterion", "Node", "Status", "Measured", "Expected", "Reason / remediation")]]
    shown = 0
    for c in doc["criteria"]:
        passes = 0
        missing = [v["node"] or (v.get("details") or {}).get("unit") or "cluster"
                   for v in c["verdicts"] if v["status"] == "not_run"]
        if missing:
            # One row for every unit without evidence: the hostlist, not one row each.
            detail.append([id_cell(c["id"]), p(_short_list(missing), ident), status_cell("not_run"),
                           p(f"{len(missing)} with no evidence"), p(f"raw/{c['id']}/<node or rack>.*"),
                           p("<b>no_evidence</b>: run the check there, or hand over its raw output", markup=True)])
        for v in c["verdicts"]:
            if v["status"] == "pass":
                passes += 1
                continue
            if v["status"] == "not_run":
                continue
            if shown < MAX_DETAIL_ROWS:
                detail.append([id_cell(c["id"]), id_cell(v["node"] or v.get("details", {}).get("unit") or "cluster"),
                               status_cell(v["status"]),
                               p(measured_text(v, c.get("unit", ""))), p(v["expected"]),
                               p(f"<b>{_esc(v['reason'])}</b>: {_esc(v.get('remediation') or '')}", markup=True)])
            shown += 1
        if passes:
            detail.append([id_cell(c["id"]), p("—"), status_cell("pass"), p(f"{passes} verdict(s) passed"), p(""), p("")])
    if shown > MAX_DETAIL_ROWS:
        detail.append([p("…"), p(""), p(""), p(f"{shown - MAX_DETAIL_ROWS} more in results.json"), p(""), p("")])
    dt = Table(detail, colWidths=[30 * mm, 20 * mm, 17 * mm, 30 * mm, 30 * mm, 43 * mm], repeatRows=1)
    dt.setStyle(_grid(colors))
    story += [dt, Spacer(1, 5 * mm)]

    story.append(Paragraph("Evidence", styles["Heading2"]))
    files = sorted(((manifest or {}).get("files") or {}).items())
    story.append(p(f"manifest.json lists {len(files)} files (SHA-256). Digest over the manifest: "
                   f"{(manifest or {}).get('digest', '—')}. Check with: slakit accept verify BUNDLE", body))
    hrows = [[p("File"), p("SHA-256")]] + [[p(f, mono), p(h, mono)] for f, h in files[:MAX_HASH_ROWS]]
    if len(files) > MAX_HASH_ROWS:
        hrows.append([p(f"… {len(files) - MAX_HASH_ROWS} more files in manifest.json"), p("")])
    ht = Table(hrows, colWidths=[70 * mm, 100 * mm], repeatRows=1)
    ht.setStyle(_grid(colors))
    story += [ht, Spacer(1, 6 * mm)]

    sign = [[p("<b>For the provider</b>", body, markup=True), p("<b>For the customer</b>", body, markup=True)],
            [p(contract.get("provider"), body), p(contract.get("customer"), body)]]
    for label in ("Name", "Title", "Signature", "Date"):
        sign.append([p(f"{label}: ____________________________", body)] * 2)
    st = Table(sign, colWidths=[85 * mm, 85 * mm])
    st.setStyle(TableStyle([fonts.TABLE_FONT, ("BOX", (0, 0), (0, -1), 0.5, colors.grey), ("BOX", (1, 0), (1, -1), 0.5, colors.grey),
                            ("TOPPADDING", (0, 2), (-1, -1), 10)]))
    confirm = ("The parties confirm that the criteria above were tested on the nodes listed, "
               "with the evidence identified by the digest above.")
    if not decision["accepted"]:
        confirm = ("The parties confirm the results above, with the evidence identified by the digest above. "
                   "This document is no acceptance of the cluster: " + verdict_word + ".")
    story.append(KeepTogether([Paragraph("Sign-off", styles["Heading2"]), p(confirm, body), Spacer(1, 2 * mm), st]))

    out = Path(out)
    tmp = out.with_name(f".{out.name}.build")
    title = f"Acceptance certificate {contract['id']}"
    pdf = SimpleDocTemplate(str(tmp), pagesize=A4, title=title, author="slakit", invariant=1,
                            leftMargin=18 * mm, rightMargin=18 * mm, topMargin=16 * mm, bottomMargin=16 * mm)

    def footer(canvas, d) -> None:
        canvas.saveState()
        fonts.draw_string(canvas, 18 * mm, 9 * mm,
                          f"{title} — evidence digest {(manifest or {}).get('digest', '—')[:16]}…", fonts.REGULAR, 7)
        fonts.draw_string(canvas, A4[0] - 18 * mm, 9 * mm, f"page {d.page}", fonts.REGULAR, 7, "right")
        if signers:
            fonts.draw_string(canvas, 18 * mm, 5.5 * mm, _fit("signed by " + ", ".join(signers), 150), fonts.REGULAR, 7)
        if mark:
            canvas.setFillColor(colors.HexColor("#c53030"))
            fonts.draw_string(canvas, A4[0] / 2, A4[1] - 9 * mm,
                              f"{mark} — no signature vouches for this evidence bundle", fonts.BOLD, 11, "centre")
        if decision["partial"]:
            canvas.setFillColor(colors.HexColor(PARTIAL_COLOR))
            fonts.draw_string(canvas, A4[0] / 2, A4[1] - (14 if mark else 10) * mm,
                              f"PARTIAL — not an acceptance: {scope_text(scope)}"[:140], fonts.BOLD, 8, "centre")
        canvas.restoreState()

    pdf.build(story, onFirstPage=footer, onLaterPages=footer, canvasmaker=fonts.canvas_class())
    data = tmp.read_bytes()
    tmp.unlink()
    write_atomic(out, data)


def _fit(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _grid(colors: Any) -> Any:
    from reportlab.platypus import TableStyle

    from calculators.reports.fonts import TABLE_FONT

    return TableStyle([TABLE_FONT, ("GRID", (0, 0), (-1, -1), 0.25, colors.grey), ("VALIGN", (0, 0), (-1, -1), "TOP"),
                       ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8e8e8"))])


def _esc(text: Any) -> str:
    s = "" if text is None else str(text)
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _short_list(items: list[str], n: int = 12) -> str:
    from slaschema.hostlist import compress

    try:
        return compress(items)
    except Exception:  # noqa: BLE001 - names that do not compress are listed as they are
        return ", ".join(items[:n]) + (f", … ({len(items) - n} more)" if len(items) > n else "")
