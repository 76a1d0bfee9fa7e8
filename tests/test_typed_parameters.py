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
