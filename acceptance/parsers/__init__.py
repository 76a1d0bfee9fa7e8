"""Pure parsers that turn raw tool output into frozen, typed records.

Every parser is `parse_<tool>(text: str) -> Record`: it finds the tool's output inside
whatever surrounds it (prompts, headers, markdown fences, launcher tags), returns a frozen
record whose `to_json()` is a stable interface (field names are documented in each module),
and raises only `ParseError` (code `unparseable_output`) when there is nothing to parse.
A run that failed but said why (mpirun errors, iperf3 "error", perftest connection errors)
is parsed into a record with `error` set, so a check can report the reason.

`PARSERS` maps the parser names to the entry points; `SPLITTERS` maps them to
`split_samples(text) -> list[str]`, which cuts a file holding several outputs into one text
per output. `slakit parse` also takes the name of the check that reads the output
(`CHECK_NAMES`: `gpu.dcgm` for dcgmi, ...); `resolve_tool` turns either into a parser name.

Before parsing, every parser strips a launcher prefix used consistently on the lines
(SkyPilot/Ray, mpirun --tag-output, srun --label, pdsh/clush) and the indentation a docs page
or log collector added (see `_prefix`); the record's `source` names the host / rank the
prefix gave (None without a prefix).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from acceptance.parsers._common import UNPARSEABLE, Notice, ParseError, Record
from acceptance.parsers._prefix import Source, segments
from acceptance.parsers.detect import detect_tool
from acceptance.parsers.dcgmi import DcgmRecord, parse_dcgmi
from acceptance.parsers.dcgmi import split_samples as split_dcgmi
from acceptance.parsers.fio import FioRecord, parse_fio
from acceptance.parsers.fio import split_samples as split_fio
from acceptance.parsers.ib_write_bw import IbBwRecord, parse_ib_write_bw
from acceptance.parsers.ib_write_bw import split_samples as split_ib_write_bw
from acceptance.parsers.ibstat import IbstatRecord, parse_ibstat
from acceptance.parsers.ibstat import split_samples as split_ibstat
from acceptance.parsers.iperf3 import Iperf3Record, parse_iperf3
from acceptance.parsers.iperf3 import split_samples as split_iperf3
from acceptance.parsers.nccl_tests import NcclRecord, parse_nccl_tests
from acceptance.parsers.nccl_tests import split_samples as split_nccl_tests
from acceptance.parsers.nvidia_smi import MISALIGNED, NvidiaSmiRecord, TopoRecord, parse_nvidia_smi, parse_nvidia_smi_topo
from acceptance.parsers.nvidia_smi import split_samples as split_nvidia_smi
from acceptance.parsers.nvidia_smi import split_topo_samples as split_nvidia_smi_topo
from acceptance.parsers.xid import XidRecord, parse_xid
from acceptance.parsers.xid import split_samples as split_xid

# The codes a parser refuses input with: nothing recognisable, or a matrix it cannot line up.
PARSE_CODES = frozenset({UNPARSEABLE, MISALIGNED})

PARSERS: dict[str, Callable[[str], Record]] = {
    "nvidia-smi": parse_nvidia_smi,
    "nvidia-smi-topo": parse_nvidia_smi_topo,
    "nccl-tests": parse_nccl_tests,
    "dcgmi": parse_dcgmi,
    "fio": parse_fio,
    "ib_write_bw": parse_ib_write_bw,
    "ibstat": parse_ibstat,
    "xid": parse_xid,
    "iperf3": parse_iperf3,
}

SPLITTERS: dict[str, Callable[[str], list[str]]] = {
    "nvidia-smi": split_nvidia_smi,
    "nvidia-smi-topo": split_nvidia_smi_topo,
    "nccl-tests": split_nccl_tests,
    "dcgmi": split_dcgmi,
    "fio": split_fio,
    "ib_write_bw": split_ib_write_bw,
    "ibstat": split_ibstat,
    "xid": split_xid,
    "iperf3": split_iperf3,
}


# The checks that read each parser's output, by check name. `network.ib` reads both the port
# listing and the perftest bandwidth: the text decides which (see `resolve_tool`).
CHECK_NAMES: dict[str, tuple[str, ...]] = {
    "gpu.inventory": ("nvidia-smi",),
    "gpu.topology": ("nvidia-smi-topo",),
    "gpu.dcgm": ("dcgmi",),
    "gpu.xid": ("xid",),
    "network.nccl": ("nccl-tests",),
    "network.ib": ("ib_write_bw", "ibstat"),
    "network.iperf3": ("iperf3",),
    "storage.fio": ("fio",),
}
# Other spellings of the parser names.
ALIASES: dict[str, str] = {
    "nvidia_smi": "nvidia-smi", "nvidia-smi-q": "nvidia-smi", "nvidia_smi_topo": "nvidia-smi-topo",
    "topo": "nvidia-smi-topo", "nccl_tests": "nccl-tests", "nccl": "nccl-tests", "dcgm": "dcgmi",
    "ib-write-bw": "ib_write_bw", "ib_send_bw": "ib_write_bw", "ib_read_bw": "ib_write_bw", "perftest": "ib_write_bw",
    "dmesg": "xid",
}
TOOL_NAMES = tuple(sorted(CHECK_NAMES)) + tuple(sorted(PARSERS)) + tuple(sorted(ALIASES))


def resolve_tool(name: str, text: str | None = None) -> str:
    """The parser name for `name`: a parser name, a check name or an alias. A check name read
    by several parsers (`network.ib`) picks the one whose output `text` holds. ValueError
    when the name is unknown."""
    if name in PARSERS:
        return name
    if name in ALIASES:
        return ALIASES[name]
    if name in CHECK_NAMES:
        options = CHECK_NAMES[name]
        if len(options) > 1 and text is not None:
            found = detect_tool(text)
            if found in options:
                return found
        return options[0]
    raise ValueError(f"unknown tool {name!r}; known: {', '.join(TOOL_NAMES)}")


def parse(tool: str, text: str) -> Record:
    """Parse `text` as output of `tool` (a parser name, check name or alias)."""
    return PARSERS[resolve_tool(tool, text)](text)


def parse_all(tool: str, text: str) -> list[Record]:
    """Parse every output of `tool` in `text` (a file holding several pasted runs, or the
    output of several hosts tagged by a launcher: one record per host and output).

    Raises ParseError when there is none."""
    tool = resolve_tool(tool, text)
    records: list[Record] = []
    for seg in segments(text):
        for sample in SPLITTERS[tool](seg.text):
            rec = PARSERS[tool](sample)
            if seg.source is not None and getattr(rec, "source", None) is None:
                rec = replace(rec, source=seg.source)  # type: ignore[type-var]
            records.append(rec)
    if not records:
        raise ParseError(tool, "no output of this tool found")
    return records


__all__ = [
    "ALIASES", "CHECK_NAMES", "PARSERS", "PARSE_CODES", "SPLITTERS", "TOOL_NAMES", "UNPARSEABLE", "Notice",
    "ParseError", "Record", "Source", "detect_tool", "parse", "parse_all", "resolve_tool",
    "DcgmRecord", "FioRecord", "IbBwRecord", "IbstatRecord", "Iperf3Record", "NcclRecord",
    "NvidiaSmiRecord", "TopoRecord", "XidRecord",
    "parse_dcgmi", "parse_fio", "parse_ib_write_bw", "parse_ibstat", "parse_iperf3",
    "parse_nccl_tests", "parse_nvidia_smi", "parse_nvidia_smi_topo", "parse_xid",
]
