"""`slakit compare -o x.md`: an offer's provider, title and values cannot put raw HTML or
script links into the comparison handed round the buying team."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.conftest import cli

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "gb200-contract.yaml"


def test_compare_markdown_escapes_the_offers_text(tmp_path):
    text = EXAMPLE.read_text(encoding="utf-8")
    text = text.replace("provider: Example Neocloud Inc.", 'provider: "Evil</td><script>alert(5)</script>"')
    text = text.replace("title: GB200 NVL72 managed cluster — Schedule B, Service Levels",
                        'title: "[x](javascript:alert(1)) <img src=x onerror=alert(2)>"')
    hostile = tmp_path / "offer.yaml"
    hostile.write_text(text, encoding="utf-8")
    out = tmp_path / "cmp.md"
    r = cli("compare", hostile, EXAMPLE, "--runs", "0", "-o", out)
    assert r.exit_code == 0, r.output
    md = out.read_text(encoding="utf-8")
    assert "<script" not in md and "<img" not in md and "](javascript:" not in md
    assert "&lt;script&gt;" in md
