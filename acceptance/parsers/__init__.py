"""Pure parsers that turn raw tool output into frozen, typed records.

Every parser is `parse_<tool>(text: str) -> Record`: it finds the tool's output inside
whatever surrounds it (prompts, headers, markdown fences, launcher tags), returns a frozen
record whose `to_json()` is a stable interface (field names are documented in each module),
and raises only `ParseError` (code `unparseable_output`) when there is nothing to parse.
A run that failed but said why (mpirun errors, iperf3 "error", perftest connection errors)
is parsed into a record with `error` set, so a check can report the reason.

`PARSERS` maps the tool names of `slakit parse TOOL FILE` to the entry points;
`SPLITTERS` maps them to `split_samples(text) -> list[str]`, which cuts a file holding
several outputs into one text per output.
"""

from __future__ import annotations

from typing import Callable

from acceptance.parsers._common import UNPARSEABLE, ParseError, Record
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


def parse(tool: str, text: str) -> Record:
    """Parse `text` as output of `tool` (a key of PARSERS)."""
    try:
        parser = PARSERS[tool]
    except KeyError:
        raise ValueError(f"unknown tool {tool!r}; known: {', '.join(sorted(PARSERS))}") from None
    return parser(text)


def parse_all(tool: str, text: str) -> list[Record]:
    """Parse every output of `tool` in `text` (a file holding several pasted runs).

    Raises ParseError when there is none."""
    if tool not in PARSERS:
        raise ValueError(f"unknown tool {tool!r}; known: {', '.join(sorted(PARSERS))}")
    samples = SPLITTERS[tool](text)
    if not samples:
        raise ParseError(tool, "no output of this tool found")
    return [PARSERS[tool](s) for s in samples]


__all__ = [
    "PARSERS", "PARSE_CODES", "SPLITTERS", "UNPARSEABLE", "ParseError", "Record", "parse", "parse_all",
    "DcgmRecord", "FioRecord", "IbBwRecord", "IbstatRecord", "Iperf3Record", "NcclRecord",
    "NvidiaSmiRecord", "TopoRecord", "XidRecord",
    "parse_dcgmi", "parse_fio", "parse_ib_write_bw", "parse_ibstat", "parse_iperf3",
    "parse_nccl_tests", "parse_nvidia_smi", "parse_nvidia_smi_topo", "parse_xid",
]
