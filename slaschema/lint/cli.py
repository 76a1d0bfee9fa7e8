"""`slakit lint CONTRACT`: review a contract against the buyer's checklist."""

from __future__ import annotations

import json
import sys

import click


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
        console.print(f"disabled {s.rule} ({s.findings} finding(s)): {s.reason}", markup=False)
    console.print(f"{report.count('error')} error(s), {report.count('warning')} warning(s), "
                  f"{report.count('info')} info")


def _render_rules() -> None:
    from slaschema.lint.engine import all_rules

    for r in all_rules():
        click.echo(f"{r.id}  {r.severity:7s}  {r.topic:10s}  {r.title}")


@click.command()
@click.argument("contract", required=False, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--rules", "list_rules", is_flag=True, help="List every rule (id, severity, topic, title) and exit.")
def lint(contract: str | None, fmt: str, list_rules: bool) -> None:
    """Review CONTRACT against the buyer's checklist (downtime scopes, exclusions, credits,
    support, acceptance, security, exit rights).

    Each finding names the rule, the line, what is wrong in this contract, why it matters and
    a fix as YAML. Rules can be switched off in the file with a reason:
    `lint: {disable: [{rule: SLA012, reason: "..."}]}`. Exit 1 on any error-level finding
    (or an invalid contract).
    """
    if list_rules:
        if fmt == "json":
            from slaschema.lint.engine import all_rules

            click.echo(json.dumps([r.describe() for r in all_rules()], indent=2))
        else:
            _render_rules()
        return
    if contract is None:
        raise click.UsageError("missing argument CONTRACT")
    from slaschema.lint.engine import lint_file

    report = lint_file(contract)          # a bad contract: problems printed, exit 1 (report_input_errors)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        _render_table(report)
    sys.exit(0 if report.ok else 1)


def register(group: click.Group) -> None:
    group.add_command(lint)
