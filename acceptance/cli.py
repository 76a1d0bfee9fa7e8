"""`slakit accept run | evaluate | verify | report`: acceptance testing with an evidence bundle.

Exit codes: 0 every criterion passed, warned or was skipped; 1 a criterion failed or could
not be judged (error), or the bundle does not verify; 2 usage error; 130 interrupted (the
bundle is consistent; continue with --resume).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from acceptance.cli_group import get_accept_group

USAGE_CODES = {"unknown_selection", "bad_param_override", "unknown_criterion", "unknown_executor", "bad_nodes"}


def _fail(exc) -> None:
    from slaschema.cli import emit_problems

    emit_problems(exc.problems, "table")
    sys.exit(2 if all(p.code in USAGE_CODES for p in exc.problems) else 1)


def _emit(doc: dict, fmt: str) -> None:
    from acceptance.report.render import render_json, render_junit, render_table

    if fmt == "json":
        click.echo(render_json(doc), nl=False)
    elif fmt == "junit":
        click.echo(render_junit(doc), nl=False)
    else:
        import shutil

        from rich.console import Console

        render_table(doc, Console(width=max(100, shutil.get_terminal_size((140, 24)).columns)))


def _nodes(expr: str | None) -> list[str] | None:
    if not expr:
        return None
    from slaschema.errors import InputError, Problem
    from slaschema.hostlist import HostlistError, expand

    try:
        return expand(expr)
    except HostlistError as exc:
        raise InputError([Problem("bad_nodes", f"--nodes {expr}: {exc}", value=expr,
                                  fix="a hostlist expression such as gpu[01-04]")]) from None


@click.command("run")
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Evidence bundle folder.")
@click.option("--only", multiple=True, metavar="ID|CHECK|AREA",
              help="Run only these criteria (criterion id, check name such as storage.fio, or area such as gpu). Repeatable.")
@click.option("--nodes", "nodes_expr", metavar="EXPR", help="Nodes to test (hostlist, e.g. gpu[01-04]). "
              "Default: this host for --executor local, the contract's nodes for slurm.")
@click.option("--executor", "executor_name", default="local", show_default=True,
              type=click.Choice(["local", "slurm"]), help="Where the checks run.")
@click.option("--partition", help="Slurm partition for --executor slurm.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1), help="Time limit per check in seconds "
              "(default: the check's own, or params.timeout_s).")
@click.option("--param", "params", multiple=True, metavar="ID.KEY=VALUE",
              help="Override one criterion parameter, e.g. --param shared-fs-read.path=/scratch. Repeatable.")
@click.option("--resume", is_flag=True, help="Continue an interrupted run in --out without repeating finished checks.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "junit"]), default="table", show_default=True)
@click.option("--no-progress", is_flag=True, help="No live progress display.")
@click.option("--as-incidents", "as_incidents", type=click.Path(dir_okay=False), metavar="LOG",
              help="Performance re-check: open/close `performance` incidents in LOG for nodes below/above the "
                   "contract's performance floors (see docs/performance.md).")
def run_cmd(contract, out, only, nodes_expr, executor_name, partition, timeout_s, params, resume, fmt,
            no_progress, as_incidents) -> None:
    """Run the acceptance criteria of CONTRACT and write the evidence bundle to --out."""
    from acceptance.runner import Interrupted, RunOptions, default_nodes, failed, make_executor, parse_overrides, run_acceptance
    from slaschema.cli import load_or_exit
    from slaschema.errors import InputError

    loaded = load_or_exit(contract)
    try:
        overrides = parse_overrides(params)
        nodes = _nodes(nodes_expr) or default_nodes(executor_name, loaded)
        executor = make_executor(executor_name, partition)
        opts = RunOptions(out=Path(out), nodes=nodes, executor_name=executor_name, only=tuple(only),
                          overrides=overrides, timeout_s=timeout_s, resume=resume)
        with _progress(no_progress or fmt != "table") as on_event:
            doc = run_acceptance(loaded, opts, executor, on_event=on_event)
    except InputError as exc:
        _fail(exc)
    except Interrupted as stop:
        click.echo(f"interrupted: the bundle in {out} is consistent; continue with --resume", err=True)
        _emit(stop.document, fmt)
        sys.exit(130)
    if as_incidents:
        from acceptance.performance_log import run_time, update_log

        try:
            changes = update_log(loaded.model, doc, Path(as_incidents), run_time(doc))
        except InputError as exc:
            _fail(exc)
        for ch in changes:
            click.echo(f"{as_incidents}: {ch.kind} {ch.incident} ({ch.node}, measured {ch.value:g})", err=True)
        if not changes:
            click.echo(f"{as_incidents}: no change", err=True)
    _emit(doc, fmt)
    click.echo(f"evidence: {out} (verify with: slakit accept verify {out})", err=True)
    sys.exit(1 if failed(doc) else 0)


class _progress:
    """Live progress on stderr: one line per criterion with its status as it finishes."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.progress = None
        self.tasks: dict[str, int] = {}

    def __enter__(self):
        if self.quiet:
            return None
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=False)
        self.progress.start()
        return self.on_event

    def on_event(self, kind, planned, info) -> None:
        from acceptance.report.render import STYLE

        p = self.progress
        cid = planned.criterion.id
        label = f"{cid} ({planned.criterion.check})"
        if kind == "start":
            self.tasks[cid] = p.add_task(f"{label} running (limit {info['timeout_s']:.0f}s)", total=1)
        elif kind in ("done", "resumed"):
            status = info["status"]
            text = f"{label} [{STYLE.get(status, '')}]{status}[/]" + (" (from the earlier run)" if kind == "resumed" else "")
            if cid in self.tasks:
                p.update(self.tasks[cid], description=text, completed=1)
            else:
                self.tasks[cid] = p.add_task(text, total=1, completed=1)
        elif kind == "interrupted" and cid in self.tasks:
            p.update(self.tasks[cid], description=f"{label} [magenta]interrupted[/]")

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()


@click.command("evaluate")
@click.argument("contract", type=click.Path(dir_okay=False))
@click.argument("bundle", type=click.Path(file_okay=False))
@click.option("--only", multiple=True, metavar="ID|CHECK|AREA", help="Judge only these criteria.")
@click.option("--param", "params", multiple=True, metavar="ID.KEY=VALUE",
              help="Parameter overrides (default: those recorded in the bundle's run.json).")
@click.option("--write", is_flag=True, help="Store results.json and junit.xml in the bundle and refresh its manifest.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "junit"]), default="table", show_default=True)
def evaluate_cmd(contract, bundle, only, params, write, fmt) -> None:
    """Judge the raw outputs in BUNDLE against CONTRACT without running anything.

    BUNDLE holds raw/<criterion-id>/<node>.json (RawOutput JSON) or <node>.txt (the tool's
    output as is); see docs/acceptance.md for the layout a provider hands over.
    """
    from acceptance.runner import evaluate_bundle, failed, parse_overrides, write_evaluation
    from slaschema.cli import load_or_exit
    from slaschema.errors import InputError

    loaded = load_or_exit(contract)
    try:
        overrides = parse_overrides(params) if params else None
        doc = evaluate_bundle(loaded, Path(bundle), only=only, overrides=overrides)
    except InputError as exc:
        _fail(exc)
    if write:
        write_evaluation(Path(bundle), doc)
    _emit(doc, fmt)
    sys.exit(1 if failed(doc) else 0)


@click.command("verify")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def verify_cmd(bundle, fmt) -> None:
    """Check BUNDLE against its manifest: changed, missing or added files (exit 1)."""
    import json

    from acceptance.evidence import verify

    res = verify(bundle)
    if fmt == "json":
        click.echo(json.dumps(res.to_json(), indent=2))
    else:
        for label, files in (("changed", res.changed), ("missing", res.missing), ("added", res.added)):
            for f in files:
                click.echo(f"{label}: {f}")
        for p in res.problems:
            click.echo(f"problem: {p}")
        if res.manifest_present and not res.digest_ok:
            click.echo("problem: the manifest's digest does not match its file list (manifest edited)")
        click.echo(f"{'OK' if res.ok else 'NOT OK'}: {res.checked} files checked, digest {res.digest or '-'}")
    sys.exit(0 if res.ok else 1)


@click.command("report")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="PDF certificate to write.")
@click.option("--format", "fmt", type=click.Choice(["pdf", "json", "junit", "table"]), default=None,
              help="pdf (needs -o; the default with -o), or json / junit / table to stdout.")
def report_cmd(bundle, output, fmt) -> None:
    """Acceptance certificate from BUNDLE's results.json (PDF), or another rendering."""
    import json

    from acceptance.evidence import verify

    fmt = fmt or ("pdf" if output else "table")
    path = Path(bundle) / "results.json"
    if not path.is_file():
        click.echo(f"{path}: no results.json; run `slakit accept evaluate CONTRACT {bundle} --write` first "
                   "[no_results]", err=True)
        sys.exit(1)
    doc = json.loads(path.read_text(encoding="utf-8"))
    if fmt != "pdf":
        _emit(doc, fmt)
        return
    if not output:
        raise click.UsageError("--format pdf needs -o FILE")
    from acceptance.report.pdf import render_pdf

    manifest_path = Path(bundle) / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else None
    check = verify(bundle)
    render_pdf(doc, manifest, Path(output), bundle_ok=check.ok)
    click.echo(f"wrote {output}" + ("" if check.ok else " (WARNING: the bundle does not verify)"), err=True)


def register(group: click.Group) -> None:
    from acceptance.cli_isolate import isolate_cmd

    accept = get_accept_group(group)
    for cmd in (run_cmd, evaluate_cmd, verify_cmd, report_cmd, isolate_cmd):
        accept.add_command(cmd)
