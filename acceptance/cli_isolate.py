"""`slakit accept isolate`: find the node(s) that make a multi-node criterion fail.

Exit codes: 0 the criterion passes on the whole set (nothing to isolate), 1 faulty nodes were
isolated or the criterion could not be judged, 2 usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("isolate")
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option("--criterion", "criterion", required=True, metavar="ID", help="The criterion to isolate.")
@click.option("--nodes", "nodes_expr", metavar="EXPR",
              help="The failing node set (hostlist); default: every node of the contract's topology.")
@click.option("-o", "--output", "--out", "out", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Evidence bundle folder: every run is kept under isolation/run-NN/ (--out is the older name).")
@click.option("--executor", "executor_name", default="slurm", show_default=True,
              type=click.Choice(["slurm", "local"]), help="Where the runs go.")
@click.option("--partition", help="Slurm partition.")
@click.option("--unit", "unit_size", type=click.IntRange(min=1), default=None,
              help="Smallest group of nodes a run may cover (default: from the criterion's layout).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1), help="Time limit per run in seconds.")
@click.option("--param", "params", multiple=True, metavar="ID.KEY=VALUE", help="Override a criterion parameter.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def isolate_cmd(contract, criterion, nodes_expr, out, executor_name, partition, unit_size, timeout_s, params,
                fmt) -> None:
    """Re-run CRITERION on halves of a failing node set until the faulty nodes remain."""
    import json

    from acceptance.cli import _called_wrongly, _nodes
    from acceptance.isolate import IsolateOptions, isolate_criterion
    from acceptance.runner import make_executor, parse_overrides
    from slaschema.cli import load_or_exit
    from slaschema.errors import InputError, Problem

    loaded = load_or_exit(contract, fmt)
    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputError([Problem("out_not_empty", f"--out {out}: exists and is not an empty folder", value=out,
                                  fix="name a new folder for the isolation bundle")])
    quiet = fmt != "table"

    def on_probe(p) -> None:
        if not quiet:
            state = "FAIL" if p.failed else "pass"
            click.echo(f"  run {p.index:2d} {p.purpose:<8} {state}  {','.join(p.nodes)}"
                       + (f"  [{p.reason}]" if p.failed else ""), err=True)

    try:
        nodes = _nodes(nodes_expr) or list(loaded.topology.nodes)
        executor = make_executor(executor_name, partition)
        opts = IsolateOptions(out=target, criterion=criterion, nodes=nodes, executor_name=executor_name,
                              overrides=parse_overrides(params), timeout_s=timeout_s, unit_size=unit_size)
        doc = isolate_criterion(loaded, opts, executor, on_probe=on_probe)
    except InputError as exc:       # printed, exit 1 or 2 (slaschema.cli.report_input_errors)
        raise _called_wrongly(exc)
    except OSError as exc:          # --out cannot be created or written (read-only, /proc, no space)
        raise InputError([Problem("out_unwritable", f"--out {out}: cannot be written ({exc.strerror or exc})",
                                  value=out, fix="name a folder this user can create and write")]) from None
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        base = doc["baseline"]
        click.echo(f"criterion {doc['criterion']} on {len(doc['nodes'])} nodes (unit: {doc['unit']}): "
                   f"baseline {base['status']}" + (f" [{base['reason']}]" if base["status"] == "fail" else ""))
        for u in doc["isolated_units"]:
            click.echo(f"  isolated  {','.join(u['nodes'])}  {u['reason']}" + (f": {u['detail']}" if u["detail"] else ""))
        for u in doc["intermittent"]:
            click.echo(f"  intermittent  {','.join(u['nodes'])}  (failed in the search, passed when confirmed)")
        if base["status"] == "fail" and not doc["isolated_units"] and not doc["intermittent"]:
            click.echo("  no single part failed on its own: the fault needs the whole set (e.g. a shared switch)"
                       + (" or did not come back (intermittent)" if doc.get("not_reproduced") else ""))
        click.echo(f"extra runs: {doc['runs']}; evidence: {out} (certificate: slakit accept report {out} -o cert.pdf)")
    sys.exit(0 if doc["baseline"]["status"] == "pass" else 1)


def register(group: click.Group) -> None:
    from acceptance.cli_group import get_accept_group

    get_accept_group(group).add_command(isolate_cmd)
