"""Names in any script print as written: every PDF embeds subset TrueType fonts with a
fallback per character, and pdftotext reads the input text back."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from calculators.engine import compute
from calculators.incidents import load_incidents
from calculators.reports.pdf import render_pdf
from calculators.reports.review import ReviewInputs, review_document
from calculators.reports.review_model import review_extras
from calculators.reports.schedule import schedule_document
from calculators.reports.text import render_html, render_markdown
from calculators.reports.compare import comparison
from calculators.reports.compare import render_pdf as compare_pdf
from slaschema.loader import load_contract_text
from tests.reports.i18n import SAMPLES, sample_texts, sample_yaml

LANGS = sorted(SAMPLES)
POPPLER = shutil.which("pdftotext") and shutil.which("pdffonts")
needs_poppler = pytest.mark.skipif(not POPPLER, reason="poppler-utils (pdftotext, pdffonts) not installed")

LOG = ("id,scope,target,start,end,category,notice_at,cause,ticket\n"
       'INC-1,node,n01,2027-02-03T10:00:00Z,2027-02-03T19:00:00Z,,,"{cause}",PRV-77\n'
       "INC-2,node,n02,2027-02-10T00:00:00Z,2027-02-10T02:00:00Z,maintenance,2027-02-01T00:00:00Z,,\n")


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def pdftotext(data: bytes, tmp_path) -> str:
    p = tmp_path / "x.pdf"
    p.write_bytes(data)
    return subprocess.run(["pdftotext", "-enc", "UTF-8", str(p), "-"], check=True, capture_output=True,
                          text=True).stdout


def fonts_of(data: bytes, tmp_path) -> list[list[str]]:
    p = tmp_path / "f.pdf"
    p.write_bytes(data)
    out = subprocess.run(["pdffonts", str(p)], check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines()[2:] if line.strip()]


def assert_embedded(data: bytes, tmp_path) -> list[str]:
    rows = fonts_of(data, tmp_path)
    assert rows, "no fonts listed"
    for r in rows:
        # name type [type2] encoding emb sub uni object gen: emb/sub are the 5th/4th fields from the end
        assert r[-5] == "yes" and r[-4] == "yes", f"font not embedded as a subset: {' '.join(r)}"
    return [r[0] for r in rows]


def contract(lang: str):
    return load_contract_text(sample_yaml(lang), f"sample-{lang}.yaml")


def review_pdf(lc, tmp_path, cause: str) -> bytes:
    log_path = tmp_path / "log.csv"
    log_path.write_text(LOG.format(cause=cause), encoding="utf-8")
    log = load_incidents(log_path, lc)
    res = compute(lc, log, ["2027-02"], incidents=True)
    inputs = ReviewInputs("c.yaml", lc.sha256, "log.csv", log.sha256, "9.9.9", "2027-02")
    doc, _ = review_document(lc, res, review_extras(res), inputs)
    return render_pdf(doc)


def certificate_pdf(lc, tmp_path) -> bytes:
    from acceptance.report.pdf import render_pdf as cert_pdf

    info = lc.model.contract
    doc = {"format": "slakit-acceptance-run/1",
           "contract": {"id": info.id, "title": info.title, "provider": info.provider, "customer": info.customer,
                        "file": "c.yaml", "sha256": lc.sha256},
           "run": {"mode": "run", "state": "complete", "started": "2027-01-10T10:00:00+00:00",
                   "finished": "2027-01-10T11:00:00+00:00", "executor": "local", "nodes": ["n01"], "overrides": {}},
           "status": "pass", "counts": {"error": 0, "fail": 0, "warn": 0, "skip": 0, "pass": 1},
           "criteria": [{"id": "inv", "check": "gpu.inventory", "metric": None, "expected": "gpus_per_node: 8",
                         "unit": "", "status": "pass", "reason": "within_bounds", "duration_s": 0.1,
                         "source": info.provider,
                         "verdicts": [{"criterion": "inv", "node": "n01", "status": "pass", "measured": 8,
                                       "expected": "8", "reason": "within_bounds", "remediation": "",
                                       "details": {}}]}],
           "aggregate": {"overall": {"status": "pass", "nodes": 1}, "racks": [], "nodes": []}}
    from acceptance.document import EvidenceManifest, parse_run_document

    out = tmp_path / "cert.pdf"
    cert_pdf(parse_run_document(doc), EvidenceManifest(digest="ab" * 32, files={}), out)
    return out.read_bytes()


@needs_poppler
@pytest.mark.parametrize("lang", LANGS)
def test_every_pdf_reads_back_the_names_with_embedded_fonts(lang, tmp_path):
    lc = contract(lang)
    provider, customer, title, definition = sample_texts(lang)
    pdfs = {
        "schedule": (render_pdf(schedule_document(lc, "9.9.9")), (provider, customer, title, definition)),
        "review": (review_pdf(lc, tmp_path, definition), (provider, customer, title, definition)),
        "certificate": (certificate_pdf(lc, tmp_path), (provider, customer, title)),
        "compare": (compare_pdf(comparison([lc, contract("de" if lang != "de" else "pl")])), (provider, title)),
    }
    for kind, (data, needles) in pdfs.items():
        text = squash(pdftotext(data, tmp_path))
        for needle in needles:
            assert squash(needle) in text, f"{kind} ({lang}): {needle!r} not read back"
        names = assert_embedded(data, tmp_path)
        assert not any("Helvetica" in n or "Courier" in n or "Times" in n for n in names), (kind, names)
        if lang in ("zh", "ja"):
            assert any("WenQuanYi" in n for n in names), (kind, names)


@needs_poppler
def test_characters_outside_the_bmp_copy_out_as_written_or_show_as_code_points(tmp_path):
    # U+1F600 (which DejaVu Sans draws) copied out of the PDF as U+1F60 (reportlab's ToUnicode
    # CMap wrote five hex digits); U+1D401 (in no font) was dropped: "𝐁old" read "old"
    from slaschema.loader import load_contract_text
    from tests.contracts import small_contract

    text = small_contract("emoji", {"r1": "n[01-04]"})
    head = "contract: {id: emoji, provider: P, customer: C, timezone: UTC, currency: USD}\n"
    assert head in text
    lc = load_contract_text(text.replace(head, 'contract: {id: emoji, provider: "Cloud \U0001F600 Inc.", '
                                               'customer: "\U0001D401old Lab", timezone: UTC, currency: USD}\n'),
                            "emoji.yaml")
    got = pdftotext(render_pdf(schedule_document(lc, "9.9.9")), tmp_path)
    assert "Cloud \U0001F600 Inc." in got and "\u1f60" not in got, got[:400]
    assert "<U+1D401>old Lab" in got, got[:400]
    from calculators.reports import fonts

    assert fonts.runs("a\U0001D401b") == [(fonts.REGULAR, "a<U+1D401>b")]
    assert fonts.markup("<b>\U0001D401</b>") == "<b>&lt;U+1D401&gt;</b>"


def test_fallback_runs_pick_a_font_per_character():
    from calculators.reports import fonts

    runs = fonts.runs("某某智算云 Łódź Ελλάδα Москва")
    assert runs[0] == (fonts.CJK, "某某智算云 ")
    assert runs[1] == (fonts.REGULAR, "Łódź Ελλάδα Москва")
    assert fonts.markup("<b>云</b> &amp; Ł") == f'<b><font name="{fonts.CJK}">云</font></b> &amp; Ł'


def test_missing_fonts_fail_with_the_packages_to_install(monkeypatch, tmp_path):
    from calculators.reports import fonts

    monkeypatch.setattr(fonts, "_dirs", lambda: [tmp_path])
    fonts.register.cache_clear()
    try:
        with pytest.raises(fonts.FontsMissing) as e:
            fonts.register()
    finally:
        monkeypatch.undo()
        fonts.register.cache_clear()
        fonts.register()
    msg = e.value.format_message()
    assert "[SLA-FONT001]" in msg and "fonts-wqy-microhei" in msg and "fonts-dejavu-core" in msg
    assert str(tmp_path) in msg and e.value.exit_code == 1


@pytest.mark.parametrize("lang", ["zh", "pl"])
def test_html_declares_the_language_and_markdown_is_utf8(lang):
    lc = contract(lang)
    doc = schedule_document(lc, "9.9.9")
    html = render_html(doc)
    provider = sample_texts(lang)[0]
    assert f'lang="{lang}"' in html and provider in html
    assert '<meta charset="utf-8">' in html
    md = render_markdown(doc).encode("utf-8")
    assert provider.encode("utf-8") in md
