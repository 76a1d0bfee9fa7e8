"""The goodput section of the SLA review, read back from the PDF."""

import pytest
from click.testing import CliRunner

from slakit.cli import main
from tests.goodput._data import write
from tests.goodput.test_compute import INCIDENTS, JOBS


def test_review_pdf_has_goodput_section(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    from tests.goodput._data import CONTRACT

    c = write(tmp_path, "c.yaml", CONTRACT)
    inc = write(tmp_path, "inc.csv", INCIDENTS)
    jobs = write(tmp_path, "jobs.txt", JOBS)
    out = tmp_path / "review.pdf"
    r = CliRunner().invoke(main, ["review", str(c), str(inc), "--quarter", "2027-Q1", "-o", str(out),
                                  "--sacct", str(jobs), "--sacct-tz", "UTC", "--checkpoint-interval", "1h"])
    assert r.exit_code == 0, r.output
    text = " ".join("\n".join(p.extract_text() for p in pypdf.PdfReader(out).pages).split())
    assert "8. Goodput: useful GPU-hours from Slurm accounting" in text
    assert "Paid, available and useful GPU-hours per month" in text
    assert "8.1 Incidents that cost the most work" in text
    assert "inc-b" in text and "ToR switch" in text
    assert "Of 69,120.00 GPU-hours paid for, 308.00 held useful work" in text     # 32 GPUs x 2,160 h in Q1
    assert "1 of them matches no logged incident" in text
    assert "314.87" in text and "23,744.00" in text
    for job_id in ("102", "104", "106"):                 # customer job ids never appear in the review
        assert f"job {job_id}" not in text and f" {job_id} " not in text
    # without --sacct the review has no goodput section
    plain = tmp_path / "plain.pdf"
    assert CliRunner().invoke(main, ["review", str(c), str(inc), "--quarter", "2027-Q1", "-o", str(plain)]).exit_code == 0
    assert "Goodput" not in "\n".join(p.extract_text() for p in pypdf.PdfReader(plain).pages)
