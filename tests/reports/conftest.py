from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gb200-contract.yaml"
TEMPLATES = sorted((ROOT / "templates" / "contracts").glob("*.yaml"))


def pdf_text(data: bytes) -> str:
    """All text of a PDF, whitespace collapsed to single spaces."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    return re.sub(r"\s+", " ", " ".join(p.extract_text() or "" for p in reader.pages))


def pdf_pages(data: bytes) -> int:
    from pypdf import PdfReader

    return len(PdfReader(io.BytesIO(data)).pages)


@pytest.fixture(scope="session")
def example_contract():
    from slaschema.loader import load_contract

    return load_contract(EXAMPLE)
