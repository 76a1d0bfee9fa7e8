"""The schedule as an attachment to a signed agreement: numbered clauses that can be cited,
master agreement and precedence, revision history, DRAFT until signed, signatories, a
creation date from the contract, the YAML embedded with its SHA-256, no local file names."""

from __future__ import annotations

import hashlib
import io

import pytest
from pypdf import PdfReader

from calculators.reports.pdf import render_pdf
from calculators.reports.schedule import clause_numbers, schedule_document
from calculators.reports.text import render_markdown
from slaschema.errors import InputError
from slaschema.loader import load_contract_text
from tests.reports.conftest import EXAMPLE, pdf_text

AGREEMENT = """
agreement:
  master: "Master Services Agreement MSA-2026-114 of 2026-11-02"
  precedence: [the master agreement, schedule, the order form]
  signatories:
    provider: {name: Dana Whitfield, title: Chief Operating Officer}
    customer: {name: Jun Park, title: Head of Infrastructure}
revisions:
  - {revision: "1.0", date: 2026-11-20, summary: First terms}
  - {revision: "1.1", date: 2027-01-12, summary: Cluster availability tier added}
"""
SIGNED = AGREEMENT.replace("  signatories:", "  signed: 2027-01-14\n  signatories:")


def load(extra: str, name: str = "/home/buyer/Private Deals/offer-final.yaml"):
    return load_contract_text(EXAMPLE.read_text(encoding="utf-8") + extra, name, EXAMPLE.parent)


@pytest.fixture(scope="module")
def draft():
    lc = load(AGREEMENT)
    return lc, render_pdf(schedule_document(lc, "9.9.9"))


def test_clauses_are_numbered_and_the_numbers_can_be_cited(draft):
    lc, pdf = draft
    numbers = clause_numbers(lc)
    assert numbers["credits"] == "6" and numbers["node"] == "5.1" and numbers["downtime.rack"] == "3.3"
    assert numbers["credits.spread"] == "6.1" and numbers["credits.rounding"] == "6.2"
    text = pdf_text(pdf)
    for key in ("credits.spread", "credits.cap", "credits.claims", "credits.form", "parties.precedence",
                "identification.status"):
        assert f" {numbers[key]} " in f" {text} ", key
    assert "6.5 Claims: the customer claims a month's credit" in text
    assert "within 30 days (counted as 30 x 24 hours) after the end of that month" in text


def test_master_agreement_precedence_revisions_and_signatories(draft):
    lc, pdf = draft
    text = pdf_text(pdf)
    assert "forms part of Master Services Agreement MSA-2026-114 of 2026-11-02" in text
    assert "(1) the master agreement; (2) this schedule; (3) the order form" in text
    assert "Revision 1.1 of 2027-01-12" in text and "Cluster availability tier added" in text
    for who in ("Dana Whitfield", "Chief Operating Officer", "Jun Park", "Head of Infrastructure"):
        assert who in text


def test_draft_until_signed(draft, monkeypatch):
    lc, pdf = draft
    reader = PdfReader(io.BytesIO(pdf))
    assert all("DRAFT" in p.extract_text() for p in reader.pages)
    assert "**DRAFT**" in render_markdown(schedule_document(lc, "9.9.9"))
    signed = load(SIGNED)
    spdf = render_pdf(schedule_document(signed, "9.9.9"))
    stext = pdf_text(spdf)
    assert "DRAFT" not in stext and "signed these terms on 2027-01-14" in stext


def test_creation_date_is_the_revision_date_or_source_date_epoch(draft, monkeypatch):
    _, pdf = draft
    assert PdfReader(io.BytesIO(pdf)).metadata["/CreationDate"].startswith("D:20270112")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1800000000")
    lc = load(AGREEMENT)
    assert b"D:20270115" in render_pdf(schedule_document(lc, "9.9.9"))


def test_the_yaml_is_embedded_with_its_sha256_and_no_local_file_name(draft):
    lc, pdf = draft
    reader = PdfReader(io.BytesIO(pdf))
    files = reader.attachments
    name = f"{lc.id}.yaml"
    assert list(files) == [name]
    data = files[name][0]
    assert data == lc.raw and hashlib.sha256(data).hexdigest() == lc.sha256
    text = pdf_text(pdf)
    assert lc.sha256 in text and name in text
    assert "Private Deals" not in text and "offer-final" not in text and "/home/buyer" not in text
    md = render_markdown(schedule_document(lc, "9.9.9"))
    assert "Private Deals" not in md and "offer-final" not in md


@pytest.mark.parametrize("extra, code", [
    ("agreement: {precedence: [master, order form]}\n", "precedence_no_schedule"),
    ("agreement: {precedence: [schedule, Master, master]}\n", "precedence_duplicate"),
    ("agreement: {precedence: [schedule]}\n", "too_short"),
    ("agreement: {signed: 2027-13-01}\n", "date_invalid"),
    ("agreement: {signatories: {provider: {name: '  ', title: CEO}}}\n", "empty_value"),
    ("agreement: {signatories: {provider: {name: A}}}\n", "missing_field"),
    ("agreement: {signed_on: 2027-01-01}\n", "unknown_field"),
    ("revisions: [{revision: '1', date: 2027-01-05, summary: a}, {revision: '1', date: 2027-01-06, summary: b}]\n",
     "revision_duplicate"),
    ("revisions: [{revision: '1', date: 2027-01-05, summary: a}, {revision: '2', date: 2027-01-01, summary: b}]\n",
     "revision_order"),
    ("agreement: {signed: 2027-01-01}\nrevisions: [{revision: '2', date: 2027-02-01, summary: b}]\n",
     "signed_before_revision"),
])
def test_new_fields_are_validated_strictly(extra, code):
    with pytest.raises(InputError) as e:
        load(extra, "c.yaml")
    assert code in e.value.codes, str(e.value)
    assert all(p.line for p in e.value.problems if p.code == code)


def test_claims_procedure_reads_credits_claim_when_the_contract_has_it(draft):
    from dataclasses import replace
    from datetime import timedelta
    from slaschema.models import ClaimInstructions, ClaimMonthsAfter

    lc, _ = draft
    cp = lc.model.credits
    credits = cp.model_copy(update={
        "claim_window": ClaimMonthsAfter(months_after=2),
        "claim": ClaimInstructions(send_to="sla-claims@provider.example",
                                   evidence=["incident ids with ticket numbers", "customer monitoring export"])})
    model = lc.model.model_copy(update={"credits": credits})
    text = pdf_text(render_pdf(schedule_document(replace(lc, model=model), "9.9.9")))
    assert "to sla-claims@provider.example, by the end of the 2nd calendar month after that month" in text
    assert "Evidence: a claim comes with incident ids with ticket numbers; customer monitoring export." in text
    plain = lc.model.model_copy(update={"credits": cp.model_copy(update={"claim": None,
                                                                        "claim_window": timedelta(days=30)})})
    text = pdf_text(render_pdf(schedule_document(replace(lc, model=plain), "9.9.9")))
    assert ("to the provider as a notice under Master Services Agreement MSA-2026-114 of 2026-11-02 (this "
            "contract names no address for claims)") in text
    assert "Evidence: this contract lists no evidence a claim must carry." in text
