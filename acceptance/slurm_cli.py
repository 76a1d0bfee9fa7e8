"""Slurm commands: `slakit accept drill`, `slakit accept burn-in` (`slakit watch --slurm`, which feeds
the incident log, is `calculators.watch_cli`).

The cluster is the one `srun`/`sinfo` would use from this environment (SLURM_CONF).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click

from acceptance.cli_group import get_accept_group
from slaschema.cliconv import DURATION, contract_argument, resolve_contract

DRILL_FORMAT = "slakit-drill/1"          # the first field of `accept drill --format json`
BURN_IN_FORMAT = "slakit-burn-in/1"      # of burn-in/results.json and `accept burn-in --format json`


def _print_verdicts(verdicts, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("criterion", "node", "status", "measured", "expected", "reason"):
        table.add_column(col)
    for v in verdicts:
        if v.measured is None:
            measured = ""
        elif v.criterion.startswith("health.") and isinstance(v.measured, float):
            measured = f"{v.measured} s"
        else:
            measured = str(v.measured)
        table.add_row(v.criterion, v.node or "", str(v.status), measured, v.expected, v.reason)
    Console().print(table)
    for v in verdicts:
        if v.remediation:
            click.echo(f"{v.node}: {v.criterion}: {v.remediation}")


# a DrillError's code -> the option it is about and the fix
_DRILL_FIXES = {
    "node_unknown": ("--node", "name a node that `sinfo -N` lists"),
    "node_not_in_service": ("--node", "resume it (scontrol update nodename=NODE state=resume) or name another node"),
    "holder_job_failed": ("--via", "check that the node takes a job (sbatch -w NODE), or use --via local"),
}


def _drill_problem(code: str, message: str, *, file=None, path: str | None = None, fix: str | None = None):
    """Why a drill could not run (no measurement was made, so no verdict): the InputError the
    one handler prints as `... [code]` lines (JSON problems with --format json), exit 1. A drill
    that ran and was detected late or never is a verdict instead (`judge_drill`)."""
    from slaschema.errors import InputError, Problem

    return InputError([Problem(code, message, file=None if file is None else str(file), path=path, fix=fix)])


@click.command("drill")
@contract_argument(required=False, alias="--contract")
@click.option("--node", required=True, help="Node to take out of service (Slurm node name).")
@click.option("--fault", type=click.Choice(["marker", "xid"]), default="marker", show_default=True,
              help="marker: create the file the provider's health check watches; xid: write a "
                   "synthetic NVIDIA Xid line to the kernel log (needs the confirmation flag).")
@click.option("--marker", "marker", envvar="SLAKIT_FAULT_MARKER", default="/run/slakit/fault/{node}",
              show_default=True,
              help="Marker file path; {node} is replaced by the node name. Env: SLAKIT_FAULT_MARKER.")
@click.option("--kmsg", default="/dev/kmsg", show_default=True, type=click.Path(dir_okay=False),
              help="Kernel log device for --fault xid.")
@click.option("--via", type=click.Choice(["local", "srun"]), default="local", show_default=True,
              help="local: write the fault on this host (run the drill on the node, or a marker on shared "
                   "storage); srun: write it on the node through a holder job and job steps.")
@click.option("--i-understand-this-drains-the-node", "confirmed", is_flag=True,
              help="Required for --fault xid: the Xid stays in the kernel log and the node stays "
                   "drained until resumed.")
@click.option("--max", "max_detection", type=DURATION, help="Detection target; overrides the contract.")
@click.option("--poll", "poll", type=click.FloatRange(min=0.05), default=1.0, show_default=True,
              help="Seconds between reads of the node state (the measurement's resolution).")
@click.option("--detect-timeout", type=DURATION, default="10m", show_default=True)
@click.option("--return-timeout", type=DURATION, default="10m", show_default=True)
@click.option("--resume-after", type=DURATION,
              help="Resume the node with scontrol when it is still out of service this long after "
                   "the fault was cleared (as the provider would after a repair).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def drill(contract, contract_option, node, fault, marker, kmsg, via, confirmed, max_detection, poll, detect_timeout,
          return_timeout, resume_after, fmt) -> None:
    """Inject a fault on NODE and time detection (DRAIN/DOWN) and return to service; CONTRACT
    (optional) gives the target, support.detection (`--contract FILE` is a deprecated alias).

    Exit 0 when detection is within the target, 1 when it is late or never happens.
    """
    import time
    from pathlib import Path

    from acceptance.drill import (
        DrillError, MarkerFault, OnNode, XidFault, check_node_name, cluster_name, judge_drill, read_node_state,
        resume_node, run_drill,
    )
    from acceptance.executors.base import utc_now
    from acceptance.results import Status, worst

    why = check_node_name(node)
    if why is not None:
        raise click.BadParameter(f"{node!r}: {why}; name one node that `sinfo -N` lists [node_name_invalid]",
                                 param_hint="--node")
    contract = resolve_contract(contract, contract_option)
    if fault == "xid" and not confirmed:
        raise click.UsageError("--fault xid writes to the kernel log and drains the node until it is "
                               "resumed; add --i-understand-this-drains-the-node")
    target = max_detection
    if target is None and contract:
        from slaschema.cli import load_or_exit

        target = load_or_exit(contract, fmt).model.support.detection
    if fault == "xid":
        flt = XidFault(node=node, kmsg=Path(kmsg), cluster=cluster_name())
    else:
        flt = MarkerFault(Path(marker.replace("{node}", node)))
    holder = None
    try:
        if via == "srun":
            holder = OnNode(flt, node)
            if read_node_state(node) is None:
                raise DrillError("node_unknown", f"the scheduler does not know node {node}")
            holder.start()
            flt = holder
        result = run_drill(
            node, flt, read_state=read_node_state, resume=resume_node, clock=utc_now, sleep=time.sleep,
            poll_s=poll, detect_timeout=detect_timeout, return_timeout=return_timeout,
            resume_after=resume_after,
        )
    except DrillError as exc:               # the drill could not run: printed, exit 1 (report_input_errors)
        option, fix = _DRILL_FIXES.get(exc.code, (None, None))
        raise _drill_problem(exc.code, str(exc), path=option, fix=fix) from None
    except OSError as exc:                  # the fault could not be written, sinfo/srun could not run
        raise _drill_problem("drill_io_error", exc.strerror or str(exc), file=exc.filename) from None
    except (RuntimeError, subprocess.SubprocessError) as exc:      # sinfo/scontrol/srun failed or hung
        raise _drill_problem("drill_io_error", str(exc)) from None
    finally:
        if holder is not None:
            holder.stop()
    verdicts = judge_drill(result, target)
    status = worst(v.status for v in verdicts)
    if fmt == "json":
        doc = {"format": DRILL_FORMAT, "ok": status not in (Status.FAIL, Status.ERROR), "status": str(status),
               "result": result.to_json(),
               "target_s": target.total_seconds() if target is not None else None,
               "verdicts": [_verdict_json(v) for v in verdicts]}
        click.echo(json.dumps(doc, indent=2))
    else:
        _print_verdicts(verdicts, f"Detection drill on {node} ({result.fault})")
    # a skip (no GPU, no PyTorch) stressed nothing: that is no burn-in passed
    sys.exit(1 if status in (Status.FAIL, Status.ERROR, Status.NOT_RUN, Status.SKIP) else 0)


def _verdict_json(v) -> dict:
    return {"criterion": v.criterion, "node": v.node, "status": str(v.status), "measured": v.measured,
            "expected": v.expected, "reason": v.reason, "remediation": v.remediation, "details": v.details}


@click.command("burn-in")
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option("--duration", type=DURATION, help="Total stress time [default: acceptance.burn_in.duration].")
@click.option("--executor", "executor_name", type=click.Choice(["slurm", "local"]), default="slurm",
              show_default=True, help="slurm: every node at once through srun; local: this host.")
@click.option("--nodes", "nodes_expr", help="Hostlist of nodes [default: the contract's nodes; this host for local].")
@click.option("--partition", help="Slurm partition to run in.")
@click.option("--stress", type=click.Choice(["gpu", "cpu"]), default="gpu", show_default=True,
              help="cpu proves the loop on hosts without GPUs.")
@click.option("--interval", type=DURATION, default="60s", show_default=True, help="Sampling interval.")
@click.option("--segment", type=DURATION, default="15m", show_default=True,
              help="Checkpoint length: an interruption repeats at most one segment.")
@click.option("--max-xid", type=click.IntRange(min=0), help="Xid events allowed [default: contract, else 0].")
@click.option("--max-throttle", "max_throttle", type=click.FloatRange(0, 100),
              help="Percent of GPU samples allowed to be throttled [default: contract].")
@click.option("-o", "--output", "--out", "out", default="evidence", show_default=True, type=click.Path(file_okay=False),
              help="Evidence bundle folder; the burn-in writes under burn-in/.")
@click.option("--resume", is_flag=True, help="Continue an interrupted burn-in in the same bundle.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def burn_in(contract, duration, executor_name, nodes_expr, partition, stress, interval, segment, max_xid,
            max_throttle, out, resume, fmt) -> None:
    """Stress all nodes at once for the contract's burn-in time and judge the samples.

    Progress and an ETA go to stderr after every segment. Exit 0 when every node passes,
    1 when a node fails, errs or is skipped (nothing stressed: no GPU, no PyTorch), or the
    burn-in is incomplete.
    """
    import time
    from pathlib import Path

    from acceptance.burnin import (
        RESULTS, STATE, Plan, done_s, judge, limits_from_contract, new_state, same_plan, segment_record,
    )
    from acceptance.checks.base import CollectContext
    from acceptance.checks.gpu_burn import BurnCheck, BurnParams
    from acceptance.evidence import Bundle, make_folder, node_file
    from acceptance.executors.base import utc_now
    from acceptance.executors.local import LocalExecutor
    from acceptance.executors.slurm import SlurmExecutor
    from acceptance.results import Status, worst
    from slaschema.cli import load_or_exit
    from slaschema.hostlist import HostlistError, expand

    lc = load_or_exit(contract, fmt)
    burn_cfg = lc.model.acceptance.burn_in if lc.model.acceptance is not None else None
    total = duration or (burn_cfg.duration if burn_cfg is not None else None)
    if total is None:
        raise click.UsageError("no burn-in duration: give --duration or acceptance.burn_in.duration in the contract")
    if nodes_expr:
        try:
            nodes = expand(nodes_expr)
        except HostlistError as exc:
            raise click.BadParameter(str(exc), param_hint="--nodes")
    elif executor_name == "local":
        import socket

        nodes = [socket.gethostname().split(".")[0] or "localhost"]
    else:
        nodes = list(lc.topology.nodes)
    plan = Plan(total.total_seconds(), min(segment.total_seconds(), total.total_seconds()),
                interval.total_seconds(), stress, tuple(nodes))
    limits = limits_from_contract(burn_cfg, max_xid, max_throttle)
    make_folder(out, "-o")
    bundle = Bundle(Path(out))
    state_path = bundle.path(STATE)
    if state_path.exists():
        if not resume:
            raise click.UsageError(f"{state_path} exists: continue it with --resume or choose another --out")
        bundle.adopt_existing()
        state = json.loads(state_path.read_text())
        if not same_plan(state, plan):
            raise click.UsageError(f"{state_path} was started with other settings: {state.get('plan')}")
    else:
        bundle.adopt_existing()
        state = new_state(plan)
        bundle.write_json(STATE, state)

    executor = SlurmExecutor(partition=partition) if executor_name == "slurm" else LocalExecutor()
    check = BurnCheck()
    ctx = CollectContext(executor=executor, nodes=tuple(nodes), timeout_s=0)
    lengths = plan.segments()
    first = len(state["segments"])
    t_run = time.monotonic()
    for index in range(first, len(lengths)):
        length = lengths[index]
        params = BurnParams(duration_s=length, interval_s=min(plan.interval_s, length), stress=stress)
        started = utc_now()
        raws = executor.run(check.argv(params, ctx), nodes, check.timeout(params))
        finished = utc_now()
        for node, raw in raws.items():
            bundle.write_json(f"burn-in/seg-{index:03d}/{node_file(node)}.json", raw.to_json(), pretty=False)
        record = segment_record(index, length, started, finished, raws, check.parse)
        state["segments"].append(record)
        bundle.write_json(STATE, state)
        done = done_s(state)
        ok = sum(1 for v in record["nodes"].values() if "metrics" in v)
        rate = (time.monotonic() - t_run) / max(done - sum(lengths[:first]), 1e-9)
        eta = (plan.duration_s - done) * rate
        click.echo(f"burn-in {_hms(done)}/{_hms(plan.duration_s)} ({done / plan.duration_s:.0%}), "
                   f"ETA {_hms(eta)}; segment {index + 1}/{len(lengths)}: {ok}/{len(nodes)} nodes answered",
                   err=True)
    verdicts = judge(state, limits)
    status = worst(v.status for v in verdicts)
    doc = {"format": BURN_IN_FORMAT, "status": str(status), "plan": plan.to_json(), "limits": limits,
           "done_s": done_s(state),
           "verdicts": [_verdict_json(v) for v in verdicts]}
    bundle.write_json(RESULTS, doc)
    bundle.write_manifest()
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        _print_verdicts(verdicts, f"Burn-in {_hms(done_s(state))} on {len(nodes)} nodes ({stress})")
    # a skip (no GPU, no PyTorch) stressed nothing: that is no burn-in passed
    sys.exit(1 if status in (Status.FAIL, Status.ERROR, Status.NOT_RUN, Status.SKIP) else 0)


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def register(group: click.Group) -> None:
    get_accept_group(group).add_command(drill)
    get_accept_group(group).add_command(burn_in)
