"""The loader's reason codes are one `StrEnum`, and the docs page is generated from it."""

from __future__ import annotations

import ast
import inspect

import calculators.incidents as inc
from calculators.incident_reasons import Reason, markdown

from .conftest import REPO


def test_docs_page_matches_the_enum():
    page = REPO / "docs" / "incident-log-codes.md"
    assert page.read_text(encoding="utf-8") == markdown(), (
        "regenerate: .venv/bin/python -m calculators.incident_reasons > docs/incident-log-codes.md")


def test_codes_are_their_strings():
    assert Reason.MISSING_ID == "missing_id" and f"[{Reason.MISSING_ID}]" == "[missing_id]"
    assert len({r.value for r in Reason}) == len(Reason)
    assert all(r.value.islower() and " " not in r.value and r.doc for r in Reason)


def test_the_loader_names_codes_only_through_the_enum():
    """No reason code is written as a string literal in the loader: Problem(...) and the
    checks take `Reason` members, so the enum is the one list."""
    tree = ast.parse(inspect.getsource(inc))
    literal_codes = [node.value for node in ast.walk(tree)
                     if isinstance(node, ast.Constant) and isinstance(node.value, str)
                     and node.value in {r.value for r in Reason} and node.value not in inc.COLUMNS]
    assert literal_codes == []
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "Reason"}
    assert used == {r.name for r in Reason}


def test_the_other_codes_are_raised_where_the_page_says():
    """The codes the page lists beside the loader's are written by the modules named."""
    from calculators.incident_reasons import OTHER_CODES

    sources = "".join(inspect.getsource(m) for m in (__import__("slaschema.safefiles", fromlist=["x"]),
                                                      __import__("calculators.engine", fromlist=["x"])))
    for code, _, _ in OTHER_CODES:
        assert f'"{code}"' in sources, code
        assert code not in {r.value for r in Reason}
