"""Revision 1.1 clauses in the SLA schedule and the review, read back from the PDFs."""

from __future__ import annotations

import re
from pathlib import Path

from calculators.engine import compute
from calculators.incidents import load_incidents
from calculators.reports.pdf import render_pdf
from calculators.reports.review import ReviewInputs, review_document
from calculators.reports.review_model import review_extras
from calculators.reports.schedule import schedule_document
from slaschema.loader import load_contract
from tests.reports.conftest import EXAMPLE, pdf_text

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CONTRACT, LOG = FIX / "rev11-contract.yaml", FIX / "rev11-incidents.csv"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_schedule_states_each_revision_1_1_clause():
    text = _flat(pdf_text(render_pdf(schedule_document(load_contract(CONTRACT), "9.9.9"))))
    assert "3.5 Service time and measurement" in text
    assert "n4 from 2027-02-15" in text and "midnight in America/Chicago" in text
    assert "counted from the moment the customer reports the incident" in text
    assert "clock intervals of 1 minute from local midnight" in text and "down for the whole of it" in text
    assert "only in a month in which the unit's availability is below its target" in text
    assert "is more than USD 1.00" in text
    assert "Hours not charged: each clock interval of 1 hour" in text and "more than 6 minutes" in text


def test_schedule_of_a_revision_1_contract_has_none_of_them():
    text = _flat(pdf_text(render_pdf(schedule_document(load_contract(EXAMPLE), "9.9.9"))))
    assert "Service time and measurement" not in text and "Hours not charged" not in text
    assert "whether or not the target is met" in text


def test_review_shows_hours_not_charged_and_remedy():
    lc = load_contract(CONTRACT)
    log = load_incidents(LOG, lc)
    res = compute(lc, log, ["2027-02"], incidents=True)
    result = res.to_json()
    p = result["periods"][0]
    doc, _ = review_document(lc, res, review_extras(res),
                             ReviewInputs(CONTRACT.name, lc.sha256, LOG.name, log.sha256, "9.9.9", "2027-02"))
    text = _flat(pdf_text(render_pdf(doc)))
    nc = f"{float(p['not_charged_total']):,.2f}"
    remedy = f"{float(p['remedy_total']):,.2f}"
    assert f"Hours not charged: USD {nc}" in text
    assert f"Remedy (credit owed + hours not charged) USD {remedy}" in text
    assert "Minimum (more than 1.00)" in text
    # the clauses behind the figures, in words
    assert "counted from the moment the customer reports the incident" in text
    assert "n4 from 2027-02-15" in text and "Hours not charged: each clock interval of 1 hour" in text


def test_many_service_windows_are_summed_up_in_the_schedule():
    from calculators.reports.rev11_terms import MAX_WINDOWS, downtime_clauses
    from slaschema.loader import load_contract_text

    nodes = ", ".join("{name: n%d, in_service: {from: 2027-01-%02d}}" % (i, i) for i in range(1, 13))
    text = ("slakit: 1\ncontract: {id: t, provider: P, customer: C, timezone: UTC, currency: USD}\n"
            "topology: {architecture: custom, gpus_per_node: 8, sites: [{id: s, clusters: [{id: c, racks: "
            f"[{{id: r, nodes: [{nodes}]}}]}}]}}]}}\npricing: {{per_gpu_hour: 2}}\n"
            "service_levels: {node: {credits: [{below: 99%, credit: 10%}]}}\n")
    (clause,) = downtime_clauses(load_contract_text(text))
    assert f"n{MAX_WINDOWS} from 2027-01-0{MAX_WINDOWS}" in clause and "n9 from" not in clause
    assert f"{12 - MAX_WINDOWS} more nodes with {12 - MAX_WINDOWS} other windows" in clause


def test_schedule_without_service_levels_names_the_remedy():
    lc = load_contract(FIX.parent.parent / "templates" / "contracts" / "public" / "aws-ec2-instance.yaml")
    text = _flat(pdf_text(render_pdf(schedule_document(lc, "9.9.9"))))
    assert "no monthly availability target and no service credits; its remedy is the hours not charged" in text
    assert "more than 3 minutes is not billed" in text
