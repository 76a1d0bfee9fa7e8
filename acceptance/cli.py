"""`slakit accept run | evaluate | verify | report`: acceptance testing with an evidence bundle.

Exit codes (run, evaluate): 0 accepted (every criterion of the contract passed, warned or was
waived on every node and group in scope), or, for a run limited by --only/--nodes, everything
in the subset did (the outputs still say PARTIAL — not an acceptance); 1 not accepted (a
fail, error, not_run or skip, or nothing judged), a bad waiver file, or a bundle that does not
verify; 2 usage error; 130 interrupted (the bundle is consistent; continue with --resume).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from acceptance.cli_group import get_accept_group
from slaschema.textsafe import shown_name

if TYPE_CHECKING:
    from acceptance.document import EvidenceManifest, RunDocument
    from acceptance.waivers import Waiver
    from slaschema.loader import LoadedContract

USAGE_CODES = {"unknown_selection", "bad_param_override", "unknown_criterion", "unknown_executor", "bad_nodes",
               "bad_as_of"}


def _as_of(text: str | None):
    """--as-of: an ISO date (midnight UTC) or an aware ISO time, read as every command reads
    one (`calculators.periods.parse_instant`); None for now."""
    if not text:
        return None
    from datetime import date, datetime, time, timezone

    from calculators.periods import parse_instant
    from slaschema.errors import InputError, Problem

    try:
        if len(text.strip()) == 10:
            return datetime.combine(date.fromisoformat(text.strip()), time(0), tzinfo=timezone.utc)
        return parse_instant(text.strip())
    except ValueError:              # PeriodError too: not ISO 8601, or a time without its offset
        raise InputError([Problem("bad_as_of", f"--as-of {text}: expected a date or a time with its offset",
                                  value=text, fix="e.g. --as-of 2027-01-15 or --as-of 2027-01-15T09:00:00+00:00")]
                         ) from None


def _waivers(path: str | None, loaded: LoadedContract) -> tuple[Waiver, ...]:
    if not path:
        return ()
    from zoneinfo import ZoneInfo

    from acceptance.waivers import load_waivers

    topo = loaded.topology
    try:
        tz = ZoneInfo(loaded.model.contract.timezone)
    except Exception:  # noqa: BLE001 - the loader validated the zone; UTC when it is absent
        from datetime import timezone as _tz

        tz = _tz.utc
    return tuple(load_waivers(path, criteria=_criterion_ids(loaded), units=[*topo.nodes, *topo.racks], tz=tz))


def _criterion_ids(loaded: LoadedContract) -> list[str]:
    """The ids a bundle's raw/ folders and a waiver may name: the contract's criteria and the
    scheduler's node list (`topology.node-list`)."""
    from acceptance.executors.slurm import NODE_LIST_ID

    return [c.id for c in loaded.model.acceptance.criteria] + [NODE_LIST_ID]


def _warn_unjudged_folders(bundle: Path, loaded: LoadedContract) -> None:
    """A warning on stderr for each folder of raw/ that names no criterion of the contract
    (`raw/inventroy/`): its outputs are not judged, and the criterion it was meant for is
    judged without them."""
    ids = set(_criterion_ids(loaded))
    try:
        folders = sorted(p for p in (bundle / "raw").iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return
    for folder in folders:
        if folder.name in ids:
            continue
        try:
            n = sum(1 for f in folder.iterdir() if not f.name.startswith("."))
        except OSError:
            n = 0
        click.echo(f"warning: raw/{shown_name(folder.name)}/ names no criterion of the contract: its {n} file(s) are "
                   "not judged; name the folder after the criterion's id [unknown_criterion_folder]", err=True)


def _called_wrongly(exc):
    """`exc` (an InputError), exiting 2 when each of its problems is in how the command was
    called (USAGE_CODES: a bad --only, --param, --nodes ...), else 1."""
    if exc.problems and all(p.code in USAGE_CODES for p in exc.problems):
        exc.exit_code = 2
    return exc


def _problem(code: str, message: str, file, fix: str | None = None):
    """One coded problem about `file`, as the InputError the commands raise (printed, exit 1)."""
    from slaschema.errors import InputError, Problem

    return InputError([Problem(code, message, file=str(file), fix=fix)])


def _emit(doc: RunDocument, fmt: str) -> None:
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
@click.option("-o", "--output", "--out", "out", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Evidence bundle folder (--out is the older name).")
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
@click.option("--waivers", "waivers_file", type=click.Path(dir_okay=False),
              help="YAML waiver file (criterion, nodes, reason, approved_by, expires); see docs/acceptance.md.")
@click.option("--as-of", "as_of", metavar="DATE|TIME", help="When waivers are judged (default: now).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "junit"]), default="table", show_default=True)
@click.option("--no-progress", is_flag=True, help="No progress on stderr (a live display on a terminal, a line per "
              "finished check when piped; also SLAKIT_NO_PROGRESS=1).")
@click.option("--sign", "sign_key", type=click.Path(dir_okay=False), metavar="KEY",
              help="Sign the finished bundle's manifest with this SSH key (as `accept sign`).")
@click.option("--as-incidents", "as_incidents", type=click.Path(dir_okay=False), metavar="LOG",
              help="Performance re-check: open/close `performance` incidents in LOG for nodes below/above the "
                   "contract's performance floors (see docs/performance.md).")
def run_cmd(contract, out, only, nodes_expr, executor_name, partition, timeout_s, params, resume, waivers_file,
            as_of, fmt, no_progress, sign_key, as_incidents) -> None:
    """Run the acceptance criteria of CONTRACT and write the evidence bundle to --out."""
    from acceptance.runner import Interrupted, RunOptions, default_nodes, failed, make_executor, parse_overrides, run_acceptance
    from acceptance.runner import select
    from slaschema.cli import load_or_exit
    from slaschema.errors import InputError

    loaded = load_or_exit(contract, fmt)
    if sign_key:
        _signing_key(sign_key)              # a missing key is found before anything runs
    try:
        if as_incidents:
            from acceptance.performance_log import check_log

            check_log(loaded.model, Path(as_incidents))     # before the run, not after hours of it
        overrides = parse_overrides(params)
        nodes = _nodes(nodes_expr) or default_nodes(executor_name, loaded)
        when = _as_of(as_of)
        waivers = _waivers(waivers_file, loaded)
        executor = make_executor(executor_name, partition)
        opts = RunOptions(out=Path(out), nodes=nodes, executor_name=executor_name, only=tuple(only),
                          overrides=overrides, timeout_s=timeout_s, resume=resume, waivers=waivers, as_of=when)
        total = len(select(loaded.model.acceptance.criteria, tuple(only)))
        with _progress(no_progress or fmt != "table", total) as on_event:
            doc = run_acceptance(loaded, opts, executor, on_event=on_event)
    except InputError as exc:               # printed, exit 1 or 2 (slaschema.cli.report_input_errors)
        raise _called_wrongly(exc)
    except Interrupted as stop:
        click.echo(f"interrupted: the bundle in {out} is consistent; continue with --resume", err=True)
        _emit(stop.document, fmt)
        sys.exit(130)
    if as_incidents:
        from acceptance.performance_log import run_time, update_log

        try:
            changes = update_log(loaded.model, doc, Path(as_incidents), run_time(doc))
        except InputError as exc:
            raise _called_wrongly(exc)
        for ch in changes:
            click.echo(f"{as_incidents}: {ch.kind} {ch.incident} ({ch.node}, measured {ch.value:g})", err=True)
        if not changes:
            click.echo(f"{as_incidents}: no change", err=True)
    _emit(doc, fmt)
    click.echo(f"evidence: {out} (verify with: slakit accept verify {out})", err=True)
    if sign_key:
        _sign(Path(out), sign_key)
    sys.exit(1 if failed(doc) else 0)


def _signing_key(key: str) -> None:
    if not Path(key).expanduser().is_file():
        raise _problem("signing_key_missing", "no such key file", key,
                       "name an SSH private key such as ~/.ssh/id_ed25519")


def _sign(bundle: Path, key: str) -> None:
    """Sign after the run's document went to stdout: a failure is printed as lines on stderr
    (never a second JSON document on stdout), exit 1."""
    from acceptance.evidence import sign_bundle
    from slaschema.cli import exit_on_input_error
    from slaschema.errors import InputError
    from slaschema.sshsig import SigningError

    try:
        made = sign_bundle(bundle, key)
    except InputError as exc:
        exit_on_input_error(_called_wrongly(exc), "table")
    except SigningError as exc:
        exit_on_input_error(_problem(exc.code, str(exc), bundle), "table")
    click.echo(f"signed: {bundle}/{made['file']} ({made['key_type']} key {made['fingerprint']})", err=True)


@click.command("sign")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("--key", "key", required=True, type=click.Path(dir_okay=False), metavar="KEY",
              help="SSH private key (or the public key of one held in ssh-agent), e.g. ~/.ssh/id_ed25519.")
def sign_cmd(bundle, key) -> None:
    """Sign BUNDLE's manifest with an SSH key (ssh-keygen -Y sign, namespace slakit-evidence).

    Writes signatures/key-<fingerprint>.sig; each party signs with its own key and the
    signatures sit side by side. Refuses a bundle that does not verify.
    """
    _signing_key(key)
    _sign(Path(bundle), key)


class _progress:
    """Progress on stderr: on a terminal a live line per criterion with its status as it
    finishes; piped, a plain line per finished check with the count and an ETA."""

    def __init__(self, quiet: bool, total: int = 0) -> None:
        self.quiet = quiet
        self.total = total
        self.progress = None
        self.lines = None
        self.tasks: dict[str, int] = {}

    def __enter__(self):
        from slaschema.cliconv import Progress, progress_wanted

        if self.quiet or not progress_wanted(piped=True):
            return None
        if not sys.stderr.isatty():
            self.lines = Progress("accept run", self.total, every_step=True)
            return self.on_line
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

    def on_line(self, kind, planned, info) -> None:
        if kind in ("done", "resumed"):
            note = f"{planned.criterion.id} ({planned.criterion.check}) {info['status']}"
            self.lines.step(note=note + (" (from the earlier run)" if kind == "resumed" else ""))

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()


@click.command("evaluate")
@click.argument("contract", type=click.Path(dir_okay=False))
@click.argument("bundle", type=click.Path(file_okay=False))
@click.option("--only", multiple=True, metavar="ID|CHECK|AREA", help="Judge only these criteria.")
@click.option("--param", "params", multiple=True, metavar="ID.KEY=VALUE",
              help="Parameter overrides (default: those recorded in the bundle's run.json).")
@click.option("--nodes", "nodes_expr", metavar="EXPR", help="Judge only these nodes (hostlist). Default: the nodes "
              "recorded in run.json, else every node of the contract's topology.")
@click.option("--waivers", "waivers_file", type=click.Path(dir_okay=False),
              help="YAML waiver file (criterion, nodes, reason, approved_by, expires); see docs/acceptance.md.")
@click.option("--as-of", "as_of", metavar="DATE|TIME", help="When waivers are judged (default: now).")
@click.option("--write", is_flag=True, help="Store results.json and junit.xml in the bundle and refresh its manifest.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "junit"]), default="table", show_default=True)
def evaluate_cmd(contract, bundle, only, params, nodes_expr, waivers_file, as_of, write, fmt) -> None:
    """Judge the raw outputs in BUNDLE against CONTRACT without running anything.

    BUNDLE holds raw/<criterion-id>/<node>.json (RawOutput JSON) or <node>.txt (the tool's
    output as is); see docs/acceptance.md for the layout a provider hands over.
    """
    from acceptance.runner import evaluate_bundle, failed, parse_overrides, write_evaluation
    from slaschema.cli import load_or_exit
    from slaschema.errors import InputError

    loaded = load_or_exit(contract, fmt)
    try:
        overrides = parse_overrides(params) if params else None
        doc = evaluate_bundle(loaded, Path(bundle), only=only, overrides=overrides, nodes=_nodes(nodes_expr),
                              waivers=_waivers(waivers_file, loaded), as_of=_as_of(as_of))
    except InputError as exc:               # printed, exit 1 or 2 (slaschema.cli.report_input_errors)
        raise _called_wrongly(exc)
    _warn_unjudged_folders(Path(bundle), loaded)
    if write:
        write_evaluation(Path(bundle), doc)
    _emit(doc, fmt)
    sys.exit(1 if failed(doc) else 0)


def _verified(bundle, allowed_signers):
    from acceptance.evidence import verify
    from slaschema.sshsig import SigningError

    try:
        return verify(bundle, allowed_signers)
    except SigningError as exc:             # printed, exit 1 (slaschema.cli.report_input_errors)
        raise _problem(exc.code, str(exc), bundle) from None


@click.command("verify")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("--allowed-signers", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="OpenSSH allowed-signers file: the bundle must carry a valid signature by a key it lists.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def verify_cmd(bundle, allowed_signers, fmt) -> None:
    """Check BUNDLE against its manifest: changed, missing or added files, entries that are no
    regular file, and its signatures (exit 1 when anything does not hold)."""
    import json

    res = _verified(bundle, allowed_signers)
    # no manifest to judge the files against: bad input (printed, exit 1, report_input_errors);
    # files that do not match it, or signatures that do not verify, are the verdict below
    if res.manifest_error == "manifest_missing":
        raise _problem("manifest_missing", "no manifest.json, so this is no evidence bundle", bundle,
                       "name the folder `slakit accept run -o` wrote")
    if res.manifest_error is not None:
        raise _problem(res.manifest_error, "not a bundle manifest (a JSON object with `files` and `digest`)",
                       Path(bundle) / "manifest.json", "name the folder `slakit accept run -o` wrote, with its "
                       "manifest as written")
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
        for s in res.signatures:
            who = s["principal"] or ("a key the allowed-signers file does not list"
                                     if allowed_signers and s["reason"] == "unknown_signer"
                                     else "signer not checked (give --allowed-signers)")
            click.echo(f"signature {s['file']}: {s['reason']} — {who} ({s['key_type'] or '?'} key "
                       f"{s['fingerprint'] or '?'})")
        if not res.signatures:
            click.echo("UNSIGNED: no signature over the manifest" + (" [unsigned]" if allowed_signers else ""))
        elif allowed_signers and not res.signed:
            click.echo("problem: no signature by a key of the allowed-signers file [untrusted_signature]")
        click.echo(f"{'OK' if res.ok else 'NOT OK'}: {res.checked} files checked, digest {res.digest or '-'}"
                   + (f", signed by {', '.join(res.signers())}" if res.signed else ""))
    sys.exit(0 if res.ok else 1)


@click.command("report")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Certificate to write: .pdf, .md (Markdown) or .html, the format its extension names.")
@click.option("--format", "fmt", type=click.Choice(["pdf", "markdown", "html", "json", "junit", "table"]), default=None,
              help="pdf, markdown or html (need -o; the default with -o follows its extension), or json / junit / "
                   "table to stdout.")
@click.option("--allowed-signers", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="OpenSSH allowed-signers file the bundle's signatures are checked against.")
def report_cmd(bundle, output, fmt, allowed_signers) -> None:
    """Acceptance certificate from BUNDLE's results.json (PDF), or another rendering.

    A bundle that does not verify (files changed, a signature that does not match, with
    --allowed-signers no trusted signature) is refused; an unsigned one is marked UNSIGNED
    on every page.
    """
    from acceptance.report.certificate import FORMATS

    by_suffix = FORMATS.get(Path(output).suffix.lower()) if output else None
    if output and by_suffix is None and fmt in (None, *FORMATS.values()):
        raise click.UsageError(f"-o {output}: a certificate is written as .pdf, .md or .html [output_extension]")
    fmt = fmt or by_suffix or "table"
    if output:
        from slaschema.cliconv import check_writable

        check_writable(output)              # a name under a file, a folder, /proc: refused before the work
    if output and fmt in FORMATS.values() and fmt != by_suffix:
        raise click.UsageError(f"--format {fmt} does not match -o {output}; name the file {Path(output).stem}"
                               f"{next(k for k, v in FORMATS.items() if v == fmt)}")
    path = Path(bundle) / "results.json"
    if not path.is_file():
        raise _problem("no_results", "no results.json", path,
                       f"run `slakit accept evaluate CONTRACT {bundle} --write` first")
    check = _verified(bundle, allowed_signers)
    if not check.ok:
        reasons = [*(f"changed {f}" for f in check.changed), *(f"missing {f}" for f in check.missing),
                   *(f"added {f}" for f in check.added), *check.problems,
                   *(f"{s['file']}: {s['reason']}" for s in check.signatures if not s["ok"])]
        if check.manifest_present and not check.digest_ok:
            reasons.append("the manifest's digest does not match its file list")
        if check.trust_checked and not check.signed:
            reasons.append("no signature by a key of the allowed-signers file")
        shown = "; ".join(reasons[:8]) or "see accept verify"
        raise _problem("bundle_not_verified", f"the bundle does not verify ({shown}); no certificate is made from it",
                       bundle, "run `slakit accept verify`")
    from acceptance.document import read_run_document

    doc, manifest = read_run_document(path), _read_manifest(Path(bundle))
    from acceptance.decision import inconsistencies
    from slaschema.errors import InputError

    inconsistent = inconsistencies(doc, str(path))
    if inconsistent:
        raise InputError(inconsistent)
    if fmt not in FORMATS.values():
        _emit(doc, fmt)
        return
    if not output:
        raise click.UsageError(f"--format {fmt} needs -o FILE")
    from acceptance.report.certificate import write_certificate

    signers = check.signers()
    mark = None if check.signed else "UNSIGNED"
    try:
        write_certificate(doc, manifest, Path(output), bundle_ok=check.ok, mark=mark, signers=signers)
    except OSError as exc:                  # the disk filled, the folder went away: nothing written
        from slaschema.cliconv import unwritable

        raise unwritable(output, exc) from None
    click.echo(f"wrote {shown_name(output)}" + (f" (signed by {', '.join(signers)})" if signers else
                                    " (UNSIGNED: sign with `slakit accept sign`)"), err=True)


def _read_manifest(bundle: Path) -> EvidenceManifest | None:
    import json

    from acceptance.document import EvidenceManifest

    try:
        return EvidenceManifest.of(json.loads((bundle / "manifest.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, RecursionError):
        return None


def criteria_params_problems(loaded) -> list:
    """The problems `accept run` would refuse the contract's criteria with (their params, as
    planned; the same codes), for `slakit validate`."""
    from acceptance.runner import plan
    from slaschema.errors import InputError

    acc = loaded.model.acceptance
    if acc is None or not acc.criteria:
        return []
    base = Path(loaded.file).parent if loaded.file and not loaded.file.startswith("<") else Path(".")
    try:
        plan(acc.criteria, contract=loaded.model, base_dir=base)
    except InputError as exc:
        return [_run_time_param(p) for p in exc.problems]
    return []


def _run_time_param(p):
    """A required param the contract leaves out can still come with `accept run --param`:
    a warning for `validate`, with that fix; any other problem stays an error."""
    import re
    from dataclasses import replace

    m = re.fullmatch(r"acceptance\.criteria\[([^\]]+)\]\.params\.(\w+)", p.path or "")
    if p.code != "missing" or m is None:
        return p
    return replace(p, severity="warning", message=f"{p.message}: accept run needs it",
                   fix=f"give it in the contract, or at run time: --param {m.group(1)}.{m.group(2)}=VALUE")


def register(group: click.Group) -> None:
    from slaschema.cli import register_contract_check

    register_contract_check(criteria_params_problems)
    accept = get_accept_group(group)
    for cmd in (run_cmd, evaluate_cmd, verify_cmd, sign_cmd, report_cmd):
        accept.add_command(cmd)
