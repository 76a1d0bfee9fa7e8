"""`slakit lint`: review a contract against the buyer's checklist before signing.

Rules live in `slaschema.lint.rules` (one registered function each, metadata as data);
`slaschema.lint.engine.lint` runs them and attaches line numbers.
"""

from slaschema.lint.base import RULES, Hit, Rule
from slaschema.lint.engine import Finding, LintReport, all_rules, lint, lint_file

__all__ = ["RULES", "Finding", "Hit", "LintReport", "Rule", "all_rules", "lint", "lint_file"]
