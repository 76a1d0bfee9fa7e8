"""The acceptance certificate as PDF: `acceptance.report.certificate` builds the document,
the shared renderer (`calculators.reports.pdf`) sets it with the embedded fonts; the same
inputs give the same bytes (reportlab's `invariant=1`)."""

from __future__ import annotations

from pathlib import Path

from acceptance.document import EvidenceManifest, RunDocument
from acceptance.report.certificate import certificate_document, render_certificate


def render_pdf(doc: RunDocument, manifest: EvidenceManifest | None, out: Path, *, bundle_ok: bool = True,
               mark: str | None = None, signers: list[str] | None = None) -> None:
    """Write the certificate PDF to `out` (atomically). `mark` (e.g. UNSIGNED) is printed at the
    top of every page; `signers` (who signed the manifest, checked) go into every page's footer."""
    from slaschema.fileio import write_atomic

    document = certificate_document(doc, manifest, bundle_ok=bundle_ok, mark=mark, signers=signers)
    write_atomic(Path(out), render_certificate(document, "pdf"))
