"""`slakit security audit`: the read-only security audit of this host, standalone."""

from __future__ import annotations

import json
import socket
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import click

from slaschema.cliconv import contract_argument, resolve_contract

if TYPE_CHECKING:
    from .audit_access import ContractData


@click.group("security")
def security() -> None:
    """Security evidence at handover: vulnerable versions, access and isolation."""


@security.command("audit")
@contract_argument(required=False, alias="--contract")
@click.option("--only", multiple=True, type=click.Choice(["versions", "access", "isolation"]),
              help="Run only these checks (repeatable).")
@click.option("--minimums", metavar="FILE|URL",
              help="Minimum-version table to use instead of the shipped one (our JSON, the CSV, or the "
                   "ClusterMAX JSON).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--bmc-address", metavar="HOST[:PORT]",
              help="BMC address to try one TCP connection to (port 443 by default); nothing else is probed.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), help="Audit Kubernetes anonymous access too.")
@click.option("--shared-mount", "shared_mounts", multiple=True, metavar="PATH",
              help="Also scan PATH for world-writable directories (network file systems are found by themselves).")
@click.option("--root", default="/", show_default=True, type=click.Path(file_okay=False, exists=True),
              help="Audit a file tree mounted here instead of this host (no commands are run).")
@click.option("--now", "now_text", metavar="ISO8601", help="Time to judge the table's age at (default: now).")
def audit_cmd(contract, contract_option, only, minimums, fmt, bmc_address, kubeconfig, shared_mounts, root,
              now_text) -> None:
    """Audit this host read-only, against CONTRACT's access lists and security criteria when
    given (`--contract FILE` is a deprecated alias). Exit 1 when any finding fails (or could
    not be judged).
    """
    from pathlib import Path


    from .audit import audit
    from .host import Host
    from .minimums import load_minimums

    contract_file = resolve_contract(contract, contract_option)
    now = datetime.fromisoformat(now_text.replace("Z", "+00:00")) if now_text else datetime.now(timezone.utc)
    if now.tzinfo is None:
        raise click.BadParameter("give an offset or Z", param_hint="--now")
    contract = None
    if contract_file:
        from slaschema.cli import load_or_exit

        contract = load_or_exit(contract_file, fmt).model
    table = None
    if not only or "versions" in only:
        table = load_minimums(minimums)   # bad minimums: problems printed, exit 1 (report_input_errors)
    extra = {}
    if bmc_address:
        extra["bmc_address"] = bmc_address
    if kubeconfig:
        extra["kubeconfig"] = str(Path(kubeconfig).resolve()) if root == "/" else kubeconfig
    if shared_mounts:
        extra["shared_mounts"] = list(shared_mounts)
    if extra:
        contract = _with_params(contract, extra)
    host = Host(Path(root))
    result = audit(host, contract, only=only or None, table=table, now=now, node=socket.gethostname())
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2, default=str))
    else:
        _render(result)
    if any(v.status in ("fail", "error") for v in result.verdicts):
        sys.exit(1)


def _with_params(contract: ContractData | None, extra: dict[str, Any]) -> dict[str, Any]:
    """Command-line options become params of every security criterion (a plain-dict contract)."""
    from .audit import CHECKS, _get, security_criteria

    crits = security_criteria(contract) if contract is not None else []
    if not crits:
        crits = [(c, c, {}, {}) for c in CHECKS]
    access = _get(contract, "access")
    access_dict = None
    if access is not None:
        access_dict = {k: _get(access, k) for k in ("provider_staff_keys", "customer_keys", "allowed_ports",
                                                    "bmc_address") if _get(access, k) is not None}
    doc = {"acceptance": {"criteria": [{"id": cid, "check": check, "params": {**params, **extra}, "expect": expect}
                                       for cid, check, params, expect in crits]}}
    if access_dict is not None:
        doc["access"] = access_dict
    return doc


def _render(result) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    colors = {"pass": "green", "warn": "yellow", "fail": "red", "skip": "dim", "error": "magenta"}
    table = Table(title=f"security audit — {result.status}", show_lines=False)
    for col in ("status", "check", "subject", "observed", "required", "reason"):
        table.add_column(col, overflow="fold")
    for v in result.verdicts:
        c = colors.get(str(v.status), "")
        table.add_row(f"[{c}]{v.status}[/{c}]", v.criterion, str(v.details.get("subject", "")),
                      "" if v.measured is None else str(v.measured), v.expected, v.reason)
    console.print(table)
    for v in result.verdicts:
        if v.status in ("fail", "warn", "error") and (v.remediation or v.details.get("advisories")):
            console.print(f"[bold]{v.details.get('subject', v.criterion)}[/bold] ({v.reason}): {v.remediation}")
            for adv in v.details.get("advisories", []) if v.status == "fail" else []:
                links = " ".join(adv.get("links", []))
                console.print(f"    {adv.get('advisory')} — fixed in {adv.get('minimum')}: {links}")
    counts = result.to_json()["counts"]
    console.print(", ".join(f"{n} {s}" for s, n in counts.items() if n))


def register(group: click.Group) -> None:
    group.add_command(security)
