"""Shared helpers for the parser tests: real outputs are read in place from ../shared/realdata."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Next to the repository in CI; SLAKIT_REALDATA points elsewhere (a checkout in another place).
REALDATA = Path(os.environ.get("SLAKIT_REALDATA") or REPO.parent / "shared" / "realdata")
FIXTURES = REPO / "tests" / "fixtures"


def read_realdata(name: str) -> str:
    path = REALDATA / name
    if not path.is_file():
        pytest.skip(f"real tool output {name} not available: {REALDATA} is absent (it sits next to the repository in CI)")
    return path.read_text(encoding="utf-8")


def read_fixture(rel: str) -> str:
    return (FIXTURES / rel).read_text(encoding="utf-8")


@pytest.fixture
def realdata():
    return read_realdata
