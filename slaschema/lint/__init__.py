"""`slakit lint`: review a contract against the buyer's checklist before signing.

Rules live in `slaschema.lint.rules` (one registered function each, metadata as data);
`slaschema.lint.engine.lint` runs them and attaches line numbers. Names are loaded on first
use so `slakit --help` does not import pydantic.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {"RULES": "slaschema.lint.base", "Hit": "slaschema.lint.base", "Rule": "slaschema.lint.base",
            "Finding": "slaschema.lint.engine", "LintReport": "slaschema.lint.engine",
            "all_rules": "slaschema.lint.engine", "lint": "slaschema.lint.engine",
            "lint_file": "slaschema.lint.engine"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        module = importlib.import_module(_EXPORTS[name])
        if name == "RULES":
            importlib.import_module("slaschema.lint.rules")    # registers the rule set
        return getattr(module, name)
    raise AttributeError(name)
