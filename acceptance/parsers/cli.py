"""`slakit parse [TOOL] FILE`: show what the parsers read from a tool's raw output.

TOOL is a check name (`gpu.inventory`, `gpu.dcgm`, `network.nccl`, ...) or a parser name
(`nvidia-smi`, `dcgmi`, `nccl-tests`, ...); without it the tool is detected from the text and
named on stderr (`detected tool: ...`).

Exit codes: 0 parsed, 1 nothing parseable in FILE (`unparseable_output`, naming the file),
no tool recognised (`tool_not_detected`) or FILE unreadable, 2 usage error.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from acceptance.parsers import CHECK_NAMES, PARSERS, TOOL_NAMES, ParseError, detect_tool, parse_all, resolve_tool

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
        # the same limit as a file: `slakit parse - < /dev/zero` read until the memory ran out
        from slaschema.errors import InputError, Problem
        from slaschema.safefiles import max_file_bytes

        limit = max_file_bytes()
        data = sys.stdin.buffer.read(limit + 1)
        if len(data) > limit:
            raise InputError([Problem("file_too_large", f"tool output: more than {limit:,} bytes", file="-",
                                      fix="raise it with `slakit --max-file-size BYTES` if the output is right")])
        return data.decode("utf-8", errors="replace")
    import errno
    import os

    from slaschema.safefiles import read_regular

    if not os.path.exists(path):            # file_unreadable, as before
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    # a regular file within the size limit: /dev/zero, /dev/urandom or a FIFO would never end
    return read_regular(path, what="tool output").decode("utf-8", errors="replace")


def _cell(value: Any) -> str:
    """A field as a table cell: None is "-", an empty list or mapping is empty (not "0")."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        if not value:
            return ""
        if isinstance(value[0], (list, tuple)):
            return f"{len(value)} entries"
        if isinstance(value[0], dict):
            if "code" in value[0] and "message" in value[0]:
                return "\n".join(f"[{v.get('code')}] {v.get('message')}" for v in value)
            return f"{len(value)} entries"
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        if not value:
            return ""
        if "kind" in value and "label" in value:
            extra = [f"host {value['host']}" if value.get("host") else "",
                     f"rank {value['rank']}" if value.get("rank") is not None else ""]
            return f"{value['label']} ({', '.join([value['kind']] + [e for e in extra if e])})"
        return f"{len(value)} entries"
    return str(value)


def _check_of(parser: str) -> str:
    return next((c for c, ps in CHECK_NAMES.items() if parser in ps), parser)


def _render_table(doc: dict[str, Any], title: str) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    summary = Table(title=title, show_header=False)
    summary.add_column("field", style="bold")
    summary.add_column("value")
    main_key = next((k for k in _MAIN_LIST if isinstance(doc.get(k), list)), None)
    for key, value in doc.items():
        if key == main_key or isinstance(value, dict) and len(value) > 8:
            continue
        summary.add_row(key, escape(_cell(value)))
    console.print(summary)
    items = doc.get(main_key) if main_key else None
    if items:
        cols = [c for c in _COLUMNS[main_key] if c in items[0]]
        table = Table(title=main_key)
        for c in cols:
            table.add_column(c, overflow="fold")
        for item in items:
            table.add_row(*(escape(_cell(item.get(c))) if c != "warnings" else str(len(item[c])) if item.get(c) else ""
                            for c in cols))
        console.print(table)


PARSE_FORMAT = "slakit-parse/1"


def _tool_record(rec: dict) -> dict:
    """A parser's record as `parse --format json` prints it: `tool`, then the variant of the
    tool's output the parser read as `tool_format` (the record's own `format`: csv, xml, table,
    json_v4, ibstat, sysfs, ...; only parsers that read several have it), then the rest."""
    out = {"tool": rec["tool"]} if "tool" in rec else {}
    if "format" in rec:
        out["tool_format"] = rec["format"]
    out.update((k, v) for k, v in rec.items() if k not in ("tool", "format"))
    return out


def parse_document(tool: str, records: list[dict], all_samples: bool) -> dict:
    """The `slakit-parse/1` document: `format` first, as in every slakit JSON document, then the
    one record's members (`_tool_record`), or, with `--all`, the tool and every record under
    `records`."""
    if all_samples:
        return {"format": PARSE_FORMAT, "tool": tool, "records": [_tool_record(r) for r in records]}
    return {"format": PARSE_FORMAT, **_tool_record(records[0])}


@click.command("parse")
@click.argument("args", nargs=-1, required=True, metavar="[TOOL] FILE")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--all", "all_samples", is_flag=True, help="Parse every output in FILE (pasted logs often hold several).")
def parse_command(args: tuple[str, ...], fmt: str, all_samples: bool) -> None:
    """Parse FILE as raw output of TOOL and print the record (JSON is a stable interface).

    TOOL is a check name (gpu.inventory, gpu.topology, gpu.dcgm, gpu.xid, network.nccl,
    network.ib, network.iperf3, storage.fio) or a parser name (nvidia-smi, nvidia-smi-topo,
    dcgmi, xid, nccl-tests, ib_write_bw, ibstat, iperf3, fio). Without TOOL the tool is
    detected from FILE and named on stderr. The format variant (CSV/XML/text, DCGM 3/4 JSON,
    ...) and launcher prefixes (SkyPilot/Ray, mpirun, srun --label, pdsh) are detected.
    Exit 1 with code unparseable_output when FILE holds no output of TOOL.
    """
    from slaschema.errors import InputError, Problem

    if len(args) > 2:
        raise click.UsageError("expected [TOOL] FILE")
    tool_name, file = (args[0], args[1]) if len(args) == 2 else (None, args[0])
    if tool_name is not None and tool_name not in TOOL_NAMES:
        raise click.BadParameter(f"{tool_name!r} is not one of: {', '.join(TOOL_NAMES)}", param_hint="TOOL")
    # an InputError is printed in --format, exit 1 (slaschema.cli.report_input_errors)
    try:
        text = _read(file)
    except OSError as exc:
        raise InputError([Problem(code="file_unreadable", message=f"cannot read file: {exc.strerror}",
                                  file=file)]) from None
    if tool_name is None:
        tool = detect_tool(text)
        if tool is None:
            raise InputError([Problem(code="tool_not_detected", file=file,
                                      message="no output of a known tool found (nvidia-smi, dcgmi, nccl-tests, "
                                              "perftest, ibstat, kernel log with Xid, fio, iperf3)",
                                      fix="name the tool: slakit parse TOOL FILE")])
        click.echo(f"detected tool: {tool} (check {_check_of(tool)})", err=True)
    else:
        tool = resolve_tool(tool_name, text)
    parser = PARSERS[tool]
    try:
        if all_samples:
            records = [r.to_json() for r in parse_all(tool, text)]
        else:
            records = [parser(text).to_json()]
    except ParseError as exc:
        raise exc.with_file(file) from None
    if fmt == "json":
        click.echo(json.dumps(parse_document(tool, records, all_samples), indent=2, sort_keys=False))
        return
    for i, rec in enumerate(records):
        _render_table(rec, f"{tool}: {file}" + (f" [{i + 1}/{len(records)}]" if all_samples else ""))


def register(group: click.Group) -> None:
    group.add_command(parse_command)
