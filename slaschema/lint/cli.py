"""`slakit lint CONTRACT`: review a contract against the buyer's checklist."""

from __future__ import annotations

import json
import sys

import click

RULES_FORMAT = "slakit-lint-rules/1"     # `lint --rules --format json`: {"format", "rules": [...]}


def _render_table(report) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"{report.file}: {report.contract}")
    for col in ("line", "rule", "severity", "finding"):
        table.add_column(col, overflow="fold")
    style = {"error": "bold red", "warning": "yellow", "info": "cyan"}
    for f in report.findings:
        table.add_row(str(f.line or ""), f.rule, f"[{style[f.severity]}]{f.severity}[/]",
                      f"[bold]{f.title}[/]: {f.message}")
    if report.findings:
        console.print(table)
        seen: set[str] = set()
        for f in report.findings:
            if f.rule in seen:
                continue
            seen.add(f.rule)
            console.print(f"[bold]{f.rule}[/] {f.title}\n  why: {f.why}", highlight=False)
            console.print("  fix:\n" + "\n".join("    " + line for line in f.fix.splitlines()),
                          highlight=False, markup=False)
    for s in report.suppressed:
        verb = "not run" if s.reason.startswith("profile ") else "disabled"
        console.print(f"{verb} {s.rule} ({s.findings} finding(s)): {s.reason}", markup=False)
    console.print(f"{report.count('error')} error(s), {report.count('warning')} warning(s), "
                  f"{report.count('info')} info")


def _render_rules() -> None:
    from slaschema.lint.engine import all_rules

    for r in all_rules():
        click.echo(f"{r.id}  {r.severity:7s}  {r.topic:10s}  {r.title}")


@click.command()
@click.argument("contracts", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json", "sarif"]), default="table", show_default=True,
              help="sarif: SARIF 2.1.0 for code-review tools (one run over all files).")
@click.option("--profile", type=click.Choice(["default", "public"]), default="default", show_default=True,
              help="public: a published public-cloud SLA, which has no acceptance, burn-in or handover "
                   "clauses by nature; those rules are listed as suppressed instead of reported.")
@click.option("--rules", "list_rules", is_flag=True, help="List every rule (id, severity, topic, title) and exit.")
def lint(contracts: tuple[str, ...], fmt: str, profile: str, list_rules: bool) -> None:
    """Review CONTRACTS against the buyer's checklist (downtime scopes, exclusions, credits,
    support, acceptance, security, exit rights).

    Each finding names the rule, the line, what is wrong in this contract, why it matters and
    a fix as YAML; findings are in the order of the file. Several files are linted in one
    run (an invalid file is reported and the others still linted). Rules can be switched off
    in the file with a reason: `lint: {disable: [{rule: SLA012, reason: "..."}]}`. Exit 1 on
    any error-level finding or invalid contract.
    """
    if list_rules:
        if fmt in ("json", "sarif"):
            from slaschema.lint.engine import all_rules

            click.echo(json.dumps({"format": RULES_FORMAT, "rules": [r.describe() for r in all_rules()]}, indent=2))
        else:
            _render_rules()
        return
    if not contracts:
        raise click.UsageError("missing argument CONTRACTS")
    from slaschema.cli import emit_problems
    from slaschema.errors import InputError
    from slaschema.lint.engine import FORMAT, lint_file

    reports, problems = [], []
    for contract in contracts:
        try:
            reports.append(lint_file(contract, profile))
        except InputError as e:
            problems.extend(e.problems)
            if fmt == "table":
                emit_problems(e.problems, fmt)
    if fmt == "sarif":
        from slakit import __version__
        from slaschema.lint.sarif import to_sarif

        click.echo(json.dumps(to_sarif(reports, problems, __version__), indent=2))
    elif fmt == "json":
        if len(contracts) == 1 and reports:
            click.echo(json.dumps(reports[0].to_json(), indent=2))
        elif len(contracts) == 1:
            emit_problems(problems, fmt)
        else:
            click.echo(json.dumps({"format": FORMAT, "profile": profile,
                                   "ok": not problems and all(r.ok for r in reports),
                                   "reports": [r.to_json() for r in reports],
                                   "invalid": [p.to_json() for p in problems]}, indent=2))
    else:
        for r in reports:
            _render_table(r)
    sys.exit(0 if not problems and all(r.ok for r in reports) else 1)


def register(group: click.Group) -> None:
    group.add_command(lint)
