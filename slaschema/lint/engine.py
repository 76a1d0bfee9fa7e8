"""Run the rules over one contract: findings with line numbers, disables applied.

`lint(lc, doc)` is pure: the contract and (optionally) its parsed YAML for positions in,
a frozen `LintReport` out. `lint_file(path)` is the IO edge used by the CLI.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from slaschema.errors import _jsonable
from slaschema.lint import rules as _rules  # noqa: F401  (registers the rule set)
from slaschema.lint.base import RULES, SEVERITIES, Hit, Rule
from slaschema.loader import LoadedContract, load_contract
from slaschema.strict_yaml import YamlDoc, format_path, read_yaml

SETTINGS_RULE = "SLA000"
_ORDER = {s: i for i, s in enumerate(SEVERITIES)}
FORMAT = "slakit-lint/1"

# Profiles: which rules do not apply to a kind of contract. A published public-cloud SLA has
# no handover, so no acceptance tests, burn-in, security evidence at handover, access list
# or detection drill; those rules are reported as suppressed by the profile, not run.
PROFILES: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    "default": ("every rule", frozenset(), frozenset()),
    "public": ("published public-cloud SLA: no acceptance, burn-in or handover clauses expected",
               frozenset({"acceptance", "security"}), frozenset({"SLA049"})),
}


def profile_skips(profile: str, r: Rule) -> bool:
    _, topics, ids = PROFILES[profile]
    return r.topic in topics or r.id in ids


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    title: str
    message: str
    path: str
    line: int | None
    col: int | None
    value: Any
    why: str
    fix: str
    file: str | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["value"] = _jsonable(self.value)
        return d

    def location(self) -> str:
        loc = self.file or "<input>"
        if self.line is not None:
            loc += f":{self.line}"
            if self.col is not None:
                loc += f":{self.col}"
        return loc


@dataclass(frozen=True)
class Suppressed:
    rule: str
    reason: str
    findings: int


@dataclass(frozen=True)
class LintReport:
    contract: str
    file: str
    findings: tuple[Finding, ...]
    suppressed: tuple[Suppressed, ...] = field(default=())
    profile: str = "default"

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def ok(self) -> bool:
        return self.count("error") == 0

    def rule_ids(self) -> set[str]:
        return {f.rule for f in self.findings}

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "contract": self.contract, "file": self.file, "profile": self.profile,
                "ok": self.ok,
                "counts": {s: self.count(s) for s in SEVERITIES},
                "findings": [f.to_json() for f in self.findings],
                "suppressed": [asdict(s) for s in self.suppressed]}


def _settings_rule() -> Rule:
    return Rule(SETTINGS_RULE, "error", "lint", "Lint disable without a reason or for an unknown rule",
                why="A rule switched off in the file must say why, so a reviewer of the contract can "
                    "judge the exception; a disable naming no known rule hides nothing and is a typo.",
                fix='lint:\n  disable:\n    - {rule: SLA012, reason: "force majeure is defined in the master '
                    'agreement, section 14"}',
                check=lambda lc: [])


SETTINGS = _settings_rule()


def _settings_hits(lc: LoadedContract) -> tuple[list[Hit], dict[str, str]]:
    hits: list[Hit] = []
    disabled: dict[str, str] = {}
    settings = lc.model.lint
    for i, d in enumerate(settings.disable if settings else []):
        path = ("lint", "disable", i)
        if d.rule not in RULES:
            hits.append(Hit(path + ("rule",), f"`{d.rule}` is not a lint rule", d.rule,
                            fix="use an id listed by `slakit lint --rules`"))
            continue
        if not (d.reason or "").strip():
            hits.append(Hit(path, f"disable of {d.rule} gives no `reason`", d.rule))
            continue
        disabled[d.rule] = d.reason.strip()  # type: ignore[union-attr]
    return hits, disabled


def _finding(r: Rule, h: Hit, doc: YamlDoc | None, file: str) -> Finding:
    line = col = None
    if doc is not None:
        line, col = doc.locate(h.path)
    return Finding(r.id, r.severity, r.title, h.message, format_path(h.path) or "(document)", line, col,
                   h.value, r.why, h.fix or r.fix, file)


def lint(lc: LoadedContract, doc: YamlDoc | None = None, profile: str = "default") -> LintReport:
    """All findings for one contract, in the order of the file (line, column, then severity
    and rule); `doc` (the parsed YAML) adds line and column. `profile` leaves out the rules
    that do not apply to that kind of contract (see `PROFILES`), listing them as suppressed."""
    if profile not in PROFILES:
        raise ValueError(f"unknown lint profile {profile!r}; known: {', '.join(PROFILES)}")
    settings_hits, disabled = _settings_hits(lc)
    findings = [_finding(SETTINGS, h, doc, lc.file) for h in settings_hits]
    suppressed: list[Suppressed] = []
    for rid in sorted(RULES):
        r = RULES[rid]
        hits = r.check(lc)
        if rid in disabled:
            suppressed.append(Suppressed(rid, disabled[rid], len(hits)))
            continue
        if profile_skips(profile, r):
            if hits:
                suppressed.append(Suppressed(rid, f"profile {profile}: {PROFILES[profile][0]}", len(hits)))
            continue
        findings.extend(_finding(r, h, doc, lc.file) for h in hits)
    findings.sort(key=lambda f: (f.line or 0, f.col or 0, _ORDER[f.severity], f.rule))
    return LintReport(lc.id, lc.file, tuple(findings), tuple(suppressed), profile)


def lint_file(path: str | Path, profile: str = "default") -> LintReport:
    """Load (raising InputError for an invalid contract) and lint one file."""
    lc = load_contract(path)
    doc = read_yaml(Path(path).read_bytes(), str(path))
    return lint(lc, doc, profile)


def all_rules() -> list[Rule]:
    return [SETTINGS] + [RULES[k] for k in sorted(RULES)]
