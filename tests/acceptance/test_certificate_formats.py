"""The certificate is one document rendered three ways: `accept report -o cert.pdf|.md|.html`
all state the decision, the marks, the waivers with their approvers and the evidence digest;
the PDF is read back page by page with pypdf."""

from __future__ import annotations

import io
import re

import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from acceptance.document import EvidenceManifest, RunDocument, parse_run_document
from acceptance.report.certificate import certificate_document, render_certificate
from slakit.cli import main
from tests.acceptance.test_coverage import WAIVERS, contract, evaluate, failing_bundle, full_bundle, waiver_file


def report(b, out, *args):
    return CliRunner().invoke(main, ["accept", "report", str(b), "-o", str(out), *args])


def pages(path) -> list[str]:
    return [" ".join(p.extract_text().split()) for p in PdfReader(str(path)).pages]


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("partial")
    c, b = contract(tmp), full_bundle(tmp)
    r, doc = evaluate(c, b, "--nodes", "n[1-2]")
    assert doc["decision"]["partial"], r.output
    return tmp, b, doc


@pytest.fixture(scope="module")
def waived(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("waived")
    c, b = contract(tmp), failing_bundle(tmp)
    r, doc = evaluate(c, b, "--waivers", str(waiver_file(tmp, WAIVERS)), "--as-of", "2027-01-20")
    assert doc["decision"]["result"] == "accepted_with_waivers", r.output
    return tmp, b, doc


def test_partial_unsigned_pdf_marks_every_page_and_names_the_digest(partial):
    tmp, b, doc = partial
    out = tmp / "cert.pdf"
    r = report(b, out)
    assert r.exit_code == 0, r.output
    text = pages(out)
    digest = (b / "manifest.json").read_text()
    assert len(text) >= 2
    for i, page in enumerate(text, 1):
        assert "UNSIGNED — no signature vouches for this evidence bundle" in page
        assert "PARTIAL — not an acceptance: 2 of the contract's 4 nodes" in page
        assert re.search(r"evidence digest [0-9a-f]{16}\.\.\.", page)
        assert f"Page {i} of {len(text)}" in page
    whole = " ".join(text)
    assert whole.index("PARTIAL — not an acceptance Worst criterion status") < whole.index("Criteria")
    assert "Not covered — nodes not covered (2): n[3-4]" in whole
    for section in ("Per rack and per node", "Per-node detail", "Evidence", "Sign-off", "For the provider",
                    "Signature: ____"):
        assert section in whole, section
    assert '"digest"' in digest
    reader = PdfReader(str(out))
    assert [o.title for o in reader.outline][:2] == ["Criteria", "Per rack and per node"]
    fonts = {f["/BaseFont"] for p in reader.pages for f in (p["/Resources"].get("/Font") or {}).values()}
    assert fonts and not any("Helvetica" in f or "Courier" in f for f in fonts), fonts


@pytest.mark.parametrize("nodes, says", [
    ("gpu-x1", "0 of the contract's 4 nodes (none), and 1 node the contract does not list (gpu-x1)"),
    ("n1,gpu-x1", "1 of the contract's 4 nodes (n1), and 1 node the contract does not list (gpu-x1)"),
])
def test_a_host_the_contract_does_not_list_is_never_counted_as_one_of_its_nodes(tmp_path, nodes, says):
    """A run on a host outside the contract (the demo's laptop) covered none of the contract's
    nodes: every page's mark and the scope line say so, not '1 of the contract's 4 nodes'."""
    c, b = contract(tmp_path), full_bundle(tmp_path)
    r, doc = evaluate(c, b, "--nodes", nodes)
    assert doc["decision"]["partial"] and doc["scope"]["nodes_not_in_contract"] == ["gpu-x1"], r.output
    out = tmp_path / "cert.pdf"
    assert report(b, out).exit_code == 0
    text = pages(out)
    for page in text:
        assert f"PARTIAL — not an acceptance: {says}" in page
    whole = " ".join(text)
    assert f"Scope PARTIAL: {says}" in whole and f"Subset: {says}" in whole
    assert f"{len(nodes.split(','))} of the contract's" not in whole.replace(says, "")


def test_the_same_certificate_as_markdown_and_html(partial):
    tmp, b, doc = partial
    md_path, html_path = tmp / "cert.md", tmp / "cert.html"
    assert report(b, md_path).exit_code == 0 and report(b, html_path).exit_code == 0
    md, html = md_path.read_text(encoding="utf-8"), html_path.read_text(encoding="utf-8")
    assert md.startswith("# Acceptance certificate\n")
    assert "**UNSIGNED — no signature vouches for this evidence bundle**" in md
    assert "**PARTIAL — not an acceptance: 2 of the contract's 4 nodes" in md
    assert "> **PARTIAL — not an acceptance**" in md and "> Not covered — nodes not covered (2): n[3-4]" in md
    assert "### Per-node detail" in md and "| **PASS**<br>" in md
    assert doc["contract"]["sha256"] in md and "evidence digest" in md
    assert html.startswith("<!DOCTYPE html>") and '<div class="callout" style="border-color:#b7791f">' in html
    assert "UNSIGNED — no signature vouches" in html and '<strong style="color:#1b7f3b">PASS</strong>' in html
    assert "<h3" in html and "Sign-off" in html


def test_waivers_with_their_approvers_in_every_format(waived):
    tmp, b, doc = waived
    for ext in (".pdf", ".md", ".html"):
        out = tmp / f"cert{ext}"
        r = report(b, out)
        assert r.exit_code == 0, r.output
        text = " ".join(pages(out)) if ext == ".pdf" else " ".join(out.read_text(encoding="utf-8").split())
        for needle in ("ACCEPTED WITH WAIVERS", "J. Roe (Example AI Lab)", "A. Buyer (Example AI Lab)", "CHG-1182",
                       "WAIVED", "applied (1 verdicts)"):
            assert needle in text, (ext, needle)
        assert "PARTIAL" not in text, ext


def test_format_follows_the_extension_and_a_mismatch_is_refused(partial):
    tmp, b, _ = partial
    r = report(b, tmp / "cert.docx")
    assert r.exit_code == 2 and ".pdf, .md or .html" in r.output
    r = report(b, tmp / "cert.pdf", "--format", "html")
    assert r.exit_code == 2 and "does not match" in r.output and "cert.html" in r.output
    assert not (tmp / "cert.docx").exists()
    r = report(b, tmp / "explicit.md", "--format", "markdown")
    assert r.exit_code == 0 and (tmp / "explicit.md").read_text(encoding="utf-8").startswith("# Acceptance")


def _raw_run(status: str, criteria: list[dict]) -> dict:
    """A one-node run document (n01 of contract c-1) with these criteria, as JSON values."""
    counts = {"error": 0, "fail": 0, "warn": 0, "skip": 0, "pass": 0} | {status: 1}
    return {"format": "slakit-acceptance-run/1",
            "contract": {"id": "c-1", "title": "Cluster C", "provider": "Prov", "customer": "Cust", "file": "c.yaml",
                         "sha256": "cd" * 32},
            "run": {"mode": "run", "state": "complete", "started": None, "finished": None, "executor": "local",
                    "nodes": ["n01"], "overrides": {}},
            "status": status, "counts": counts, "criteria": criteria,
            "aggregate": {"overall": {"status": status, "nodes": 1}, "racks": [], "nodes": []}}


def run_doc(remediation: str = "", decision: dict | None = None) -> RunDocument:
    doc = _raw_run("fail", [{"id": "inv", "check": "gpu.inventory", "metric": None, "expected": "gpus_per_node: 8",
                             "unit": "", "status": "fail", "reason": "constraint_not_met", "duration_s": 0.1,
                             "verdicts": [{"criterion": "inv", "node": "n01", "status": "fail", "measured": 7,
                                           "expected": "8", "reason": "constraint_not_met",
                                           "remediation": remediation, "details": {}}]}])
    if decision is not None:
        doc["decision"] = decision
    return parse_run_document(doc)


def test_signed_certificate_has_the_signers_line_on_every_page_and_no_mark():
    document = certificate_document(run_doc("x " * 40), EvidenceManifest(digest="ab" * 32, files={
                                        f"raw/f{i}.txt": "0" * 64 for i in range(120)}),
                                    signers=["ops@prov (ED25519 SHA256:abc)", "buyer@cust"])
    data = render_certificate(document, "pdf")
    text = [" ".join(p.extract_text().split()) for p in PdfReader(io.BytesIO(data)).pages]
    assert len(text) >= 2
    for page in text:
        assert "signed by ops@prov (ED25519 SHA256:abc), buyer@cust" in page and "UNSIGNED" not in page
        assert "evidence digest abababababababab..." in page
    assert render_certificate(document, "pdf") == data                 # byte-identical for the same inputs
    assert "NO VERDICT — these results predate coverage judging" in text[0]   # no decision recorded


def test_an_over_long_cell_is_cut_in_the_pdf_and_kept_in_the_text_formats():
    long = "reseat the riser and " * 200
    decision = {"result": "rejected", "accepted": False, "partial": False, "subset_result": None,
                "blocking": {"fail": 1}, "headline": "REJECTED", "exit_status": 1}
    document = certificate_document(run_doc(long, decision), EvidenceManifest(digest="ab" * 32), mark="UNSIGNED")
    text = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(io.BytesIO(render_certificate(document, "pdf"))).pages)
    assert "REJECTED" in text and "[cut:" in text and "more characters]" in text
    assert "Verdicts that block an acceptance: " in text
    assert "no acceptance of the cluster: REJECTED" in text
    md = render_certificate(document, "markdown").decode("utf-8")
    assert long.strip() in md and "[cut:" not in md


def test_a_verdict_about_no_single_node_reads_cluster_never_the_internal_key():
    """The demo's detection drill (a cluster-wide check) was listed under node '_cluster'."""
    raw = _raw_run("skip", [{"id": "drill", "check": "health.detection", "metric": "detection_s",
                             "expected": "detection_s <= 120 s", "unit": "s", "status": "skip",
                             "reason": "no_drill_result", "duration_s": 0.0, "nodes": ["_cluster"],
                             "verdicts": [{"criterion": "drill", "node": None, "status": "skip",
                                           "measured": "no drill result given (params.result)",
                                           "expected": "applicable on this node", "reason": "no_drill_result",
                                           "remediation": "pass params.result",
                                           "details": {"unit": "_cluster", "layout": "cluster"}}]}])
    document = certificate_document(parse_run_document(raw), EvidenceManifest(digest="ab" * 32), mark="UNSIGNED")
    for fmt in ("pdf", "markdown"):
        data = render_certificate(document, fmt)
        text = (" ".join(" ".join(p.extract_text().split()) for p in PdfReader(io.BytesIO(data)).pages)
                if fmt == "pdf" else data.decode("utf-8"))
        assert "_cluster" not in text, fmt
    assert re.search(r"drill cluster SKIP", " ".join(
        " ".join(p.extract_text().split()) for p in PdfReader(io.BytesIO(render_certificate(document, "pdf"))).pages))
