from __future__ import annotations

from pathlib import Path

import pytest

from slaschema.loader import LoadedContract, load_contract

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_CONTRACT = REPO / "examples" / "gb200-contract.yaml"
EXAMPLE_LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="session")
def lc() -> LoadedContract:
    return load_contract(EXAMPLE_CONTRACT)


@pytest.fixture
def write(tmp_path):
    """write("name.csv", text) -> path of a file with that text."""
    def _write(name: str, text: str) -> Path:
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        return p
    return _write
