"""Helpers for the acceptance tests: contracts with chosen criteria, free ports, realdata."""

from __future__ import annotations

import os
import socket
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "gb200-contract.yaml"
REALDATA = Path(os.environ.get("SLAKIT_REALDATA") or Path(__file__).resolve().parents[1].parent.parent / "shared" / "realdata")
FIXTURES = REPO / "tests" / "fixtures"


def contract_with(tmp_path: Path, criteria_yaml: str, name: str = "contract.yaml") -> Path:
    """The example contract with its acceptance criteria replaced by `criteria_yaml`."""
    text = EXAMPLE.read_text(encoding="utf-8")
    start = text.index("  criteria:\n")
    end = text.index("\nreview:")
    body = textwrap.indent(textwrap.dedent(criteria_yaml).strip("\n"), "    ")
    out = tmp_path / name
    out.write_text(text[:start] + "  criteria:\n" + body + "\n" + text[end:], encoding="utf-8")
    return out


def load(path: Path):
    from slaschema.loader import load_contract

    return load_contract(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def realdata(name: str) -> Path:
    p = REALDATA / name
    if not p.is_file():
        pytest.skip(f"real tool output {name} not available (../shared/realdata is absent)")
    return p


def typed_doc(**parts):
    """A run document (`acceptance.document.RunDocument`) from plain data, the parts not given
    filled with an empty run: for renderer tests that need only some sections."""
    from acceptance.document import RUN_FORMAT, RunDocument

    base = {"format": RUN_FORMAT, "contract": {"id": "c"}, "run": {}, "status": "pass", "counts": {},
            "criteria": [], "aggregate": {"overall": {"status": "pass"}, "racks": [], "nodes": []}}
    return RunDocument.model_validate({**base, **parts})


def outcome(data):
    """A criterion's entry of the run document from plain data (check and expected filled in)."""
    from acceptance.document import CriterionOutcome

    return CriterionOutcome.model_validate({"check": "x.y", "expected": "", **data})
