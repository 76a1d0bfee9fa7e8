"""`slakit parse TOOL FILE`: show what the parsers read from a tool's raw output.

Exit codes: 0 parsed, 1 nothing parseable in FILE (`unparseable_output`, naming the file) or
FILE unreadable, 2 usage error.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from acceptance.parsers import PARSERS, ParseError, parse_all

# The list field shown as the main table for each record type, and the columns it shows
# (the JSON output carries every field).
_MAIN_LIST = ("gpus", "rows", "tests", "events", "ports", "jobs")
_COLUMNS = {
    "gpus": ["index", "name", "pci_bus_id", "memory_total_mib", "ecc_mode", "persistence_mode",
             "power_limit_w", "temperature_c"],
    "rows": ["size_bytes", "type", "redop", "oop_time_us", "oop_busbw_gbps", "ip_busbw_gbps", "wrong",
             "bytes", "iterations", "bw_peak_gbps", "bw_avg_gbps", "msg_rate_mpps"],
    "tests": ["category", "name", "result", "warnings"],
    "events": ["line", "xid", "pci", "process", "action", "timestamp"],
    "ports": ["ca", "port", "state", "physical_state", "rate_gbps", "link_layer"],
    "jobs": ["name", "rw", "bs", "numjobs", "iodepth", "error"],
}


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", errors="replace")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value) if value and not isinstance(value[0], dict) else str(len(value))
    if isinstance(value, dict):
        return str(len(value))
    return str(value)


def _render_table(doc: dict[str, Any], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    summary = Table(title=title, show_header=False)
    summary.add_column("field", style="bold")
    summary.add_column("value")
    main_key = next((k for k in _MAIN_LIST if isinstance(doc.get(k), list)), None)
    for key, value in doc.items():
        if key == main_key or isinstance(value, dict) and len(value) > 8:
            continue
        summary.add_row(key, _cell(value))
    console.print(summary)
    items = doc.get(main_key) if main_key else None
    if items:
        cols = [c for c in _COLUMNS[main_key] if c in items[0]]
        table = Table(title=main_key)
        for c in cols:
            table.add_column(c, overflow="fold")
        for item in items:
            table.add_row(*(_cell(item.get(c)) if c != "warnings" else str(len(item.get(c) or ())) for c in cols))
        console.print(table)


@click.command("parse")
@click.argument("tool", type=click.Choice(sorted(PARSERS)))
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--all", "all_samples", is_flag=True, help="Parse every output in FILE (pasted logs often hold several).")
def parse_command(tool: str, file: str, fmt: str, all_samples: bool) -> None:
    """Parse FILE as raw output of TOOL and print the record (JSON is a stable interface).

    TOOL is one of: nvidia-smi, nvidia-smi-topo, nccl-tests, dcgmi, fio, ib_write_bw, ibstat,
    xid, iperf3. The format variant (CSV/XML/text, DCGM 3/4 JSON, ...) is detected.
    Exit 1 with code unparseable_output when FILE holds no output of TOOL.
    """
    from slaschema.cli import emit_problems
    from slaschema.errors import Problem

    try:
        text = _read(file)
    except OSError as exc:
        emit_problems([Problem(code="file_unreadable", message=f"cannot read file: {exc.strerror}", file=file)], fmt)
        sys.exit(1)
    parser = PARSERS[tool]
    try:
        if all_samples:
            records = [r.to_json() for r in parse_all(tool, text)]
        else:
            records = [parser(text).to_json()]
    except ParseError as exc:
        emit_problems(exc.with_file(file).problems, fmt)
        sys.exit(1)
    if fmt == "json":
        out = records if all_samples else records[0]
        click.echo(json.dumps(out, indent=2, sort_keys=False))
        return
    for i, rec in enumerate(records):
        _render_table(rec, f"{tool}: {file}" + (f" [{i + 1}/{len(records)}]" if all_samples else ""))


def register(group: click.Group) -> None:
    group.add_command(parse_command)
