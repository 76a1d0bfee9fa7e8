"""The loaded contract is a typed parameter everywhere: every function parameter named `lc`
in the product packages is annotated `LoadedContract` (lambdas cannot carry annotations)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("slakit", "slaschema", "calculators", "acceptance", "templates")


def test_every_lc_parameter_is_a_loaded_contract():
    untyped = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                a = node.args
                for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                    if arg.arg == "lc" and (arg.annotation is None or ast.unparse(arg.annotation) != "LoadedContract"):
                        untyped.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}")
    assert untyped == []


def test_the_scopes_are_written_once():
    """The four scopes are spelled out once, as the contract format's `Scope` literal
    (slaschema.models); everything else names them through `SCOPES`."""
    names = ("node", "rack", "cluster", "site")
    spelled = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            literal_args = {id(n.slice) for n in ast.walk(tree)
                            if isinstance(n, ast.Subscript) and ast.unparse(n.value) == "Literal"}
            for node in ast.walk(tree):
                if (isinstance(node, (ast.Tuple, ast.List)) and id(node) not in literal_args
                        and tuple(getattr(e, "value", None) for e in node.elts) == names):
                    spelled.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert spelled == []
