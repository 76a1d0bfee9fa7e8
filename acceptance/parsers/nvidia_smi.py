"""nvidia-smi output → `NvidiaSmiRecord`; `nvidia-smi topo -m` → `TopoRecord`.

Formats recognised (auto-detected, `format` says which was found):
  "xml"    `nvidia-smi -q -x` (DTDs with an internal subset and entity declarations are refused;
           the usual `<!DOCTYPE nvidia_smi_log SYSTEM "...dtd">` line is dropped, never fetched)
  "query"  `nvidia-smi -q` text
  "csv"    `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`; for `noheader`
           output pass `query_fields`, or keep the `--query-gpu=` command line in the text
  "table"  the default `nvidia-smi` table, with the header of drivers before 610
           (`Driver Version:` / `CUDA Version:`) or from 610 on (`KMD Version:` /
           `CUDA UMD Version:`)
  "status" only status lines ("No devices were found", "NVIDIA-SMI has failed ...")
Launcher prefixes and the indentation around the output are removed first (`_prefix`).

Stable JSON of `NvidiaSmiRecord.to_json()`:
  tool "nvidia-smi", format, gpu_count (GPUs listed in the output), attached_gpus (the count
  nvidia-smi reports, None if absent), driver_version, cuda_version, timestamp (as printed),
  gpus: list of GPU objects with
    index, name, uuid, pci_bus_id, serial, vbios_version, memory_total_mib, memory_used_mib,
    persistence_mode (bool), ecc_mode (bool, current), ecc_mode_pending (bool),
    ecc_corrected_volatile, ecc_uncorrected_volatile, ecc_corrected_aggregate,
    ecc_uncorrected_aggregate (ints),
    retired_pages_single_bit, retired_pages_double_bit (ints), retired_pages_pending (bool),
    remapped_rows_correctable, remapped_rows_uncorrectable (ints),
    remapped_rows_pending, remapped_rows_failure (bool),
    power_draw_w, power_limit_w, power_default_limit_w, power_max_limit_w,
    temperature_c, clocks_graphics_mhz, clocks_sm_mhz, clocks_mem_mhz,
    clocks_max_graphics_mhz, clocks_max_sm_mhz, clocks_max_mem_mhz, pstate,
    utilization_gpu_pct, compute_mode, mig_mode (bool), pcie_link_gen, pcie_link_width,
    fabric_state, fabric_status
  Every field is None when that output format does not carry it (or prints N/A).
  nvidia_smi_version (table), version_labels ("Driver/CUDA" or "KMD/CUDA UMD": which header
  form gave driver_version / cuda_version), mig_devices: list of {gpu, gpu_instance_id,
  compute_instance_id, mig_device, memory_used_mib, memory_total_mib, bar1_used_mib,
  bar1_total_mib, sm_count, ecc_uncorrected} (table box, XML, -q text),
  sample_count and samples (a looping `-l`/`-lms` query: `gpus` is the first sample, every
  sample's GPUs in `samples`; empty for one sample),
  warnings, errors: lists of {code, message, device, line} for the status lines
  (inforom_corrupted; no_devices, driver_unreachable, gpu_fell_off_bus, gpu_lost,
  device_handle_unavailable, field_error for `ERR!` fields),
  source (the launcher prefix's {kind, host, rank, label}, or None).

`TopoRecord.to_json()`: tool "nvidia-smi-topo", devices (column order), gpus, nics,
  matrix {row: {column: link}}, cpu_affinity {gpu: text}, numa_affinity {gpu: text},
  nic_names {"NIC0": "mlx5_0"}, source. Link cells printed glued ("PXBNODE") are split; a row
  that still does not line up is refused with code `topo_matrix_misaligned`.
"""

from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from typing import Any, Iterable

from acceptance.parsers._common import Notice, ParseError, Record, clean_text, na_to_none, to_float, to_int
from acceptance.parsers._prefix import Source, cut_last_line, dedent_at, prepassed, strip_prefixes

TOOL = "nvidia-smi"


@dataclass(frozen=True)
class Gpu(Record):
    index: int | None = None
    name: str | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    serial: str | None = None
    vbios_version: str | None = None
    memory_total_mib: float | None = None
    memory_used_mib: float | None = None
    persistence_mode: bool | None = None
    ecc_mode: bool | None = None
    ecc_mode_pending: bool | None = None
    ecc_corrected_volatile: int | None = None
    ecc_uncorrected_volatile: int | None = None
    ecc_corrected_aggregate: int | None = None
    ecc_uncorrected_aggregate: int | None = None
    retired_pages_single_bit: int | None = None
    retired_pages_double_bit: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    power_default_limit_w: float | None = None
    power_max_limit_w: float | None = None
    temperature_c: float | None = None
    clocks_graphics_mhz: float | None = None
    clocks_sm_mhz: float | None = None
    clocks_mem_mhz: float | None = None
    clocks_max_graphics_mhz: float | None = None
    clocks_max_sm_mhz: float | None = None
    clocks_max_mem_mhz: float | None = None
    pstate: str | None = None
    utilization_gpu_pct: float | None = None
    compute_mode: str | None = None
    mig_mode: bool | None = None
    pcie_link_gen: int | None = None
    pcie_link_width: int | None = None
    fabric_state: str | None = None
    fabric_status: str | None = None


@dataclass(frozen=True)
class MigDevice(Record):
    """One MIG device: the GPU it lives on, its GPU instance, compute instance and memory."""

    gpu: int | None
    gpu_instance_id: int | None
    compute_instance_id: int | None
    mig_device: int | None
    memory_used_mib: float | None
    memory_total_mib: float | None
    bar1_used_mib: float | None
    bar1_total_mib: float | None
    sm_count: int | None
    ecc_uncorrected: int | None


@dataclass(frozen=True)
class NvidiaSmiRecord(Record):
    tool: str
    format: str
    gpu_count: int
    attached_gpus: int | None
    driver_version: str | None
    cuda_version: str | None
    timestamp: str | None
    gpus: tuple[Gpu, ...]
    nvidia_smi_version: str | None = None
    version_labels: str | None = None
    mig_devices: tuple[MigDevice, ...] = ()
    sample_count: int = 1
    samples: tuple[tuple[Gpu, ...], ...] = ()
    warnings: tuple[Notice, ...] = ()
    errors: tuple[Notice, ...] = ()
    source: Source | None = None

    def gpu(self, index: int) -> Gpu | None:
        for g in self.gpus:
            if g.index == index:
                return g
        return None


def to_bool(value: Any) -> bool | None:
    s = na_to_none(None if value is None else str(value))
    if s is None:
        return None
    s = s.lower()
    if s in {"enabled", "yes", "on", "active", "true"}:
        return True
    if s in {"disabled", "no", "off", "not active", "false"}:
        return False
    return None


def _sum_ints(values: Iterable[Any]) -> int | None:
    total = None
    for v in values:
        n = to_int(na_to_none(v) if isinstance(v, str) else v)
        if n is not None:
            total = (total or 0) + n
    return total


# --------------------------------------------------------------------------- detection / samples

_XML_START = re.compile(r"<\?xml[^>]*\?>|<nvidia_smi_log\b")
_QUERY_START = re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$", re.M)
# Drivers before 610 print "Driver Version: ... CUDA Version: ...", from 610 on
# "KMD Version: ... CUDA UMD Version: ..." (groups: nvidia-smi version, label, driver, CUDA).
_TABLE_HEAD = re.compile(r"NVIDIA-SMI\s+(\S+)\s+(Driver|KMD) Version:\s*(\S+)(?:\s+CUDA(?: UMD)? Version:\s*(\S+))?")
_ANCHORS = ((re.compile(r"^[ \t]*[|+]?[ \t]*NVIDIA-SMI\s+\S+\s+(?:Driver|KMD) Version:"), "NVIDIA-SMI"),
            (re.compile(r"^[ \t]+=+\s*NVSMI LOG\s*=+\s*$"), "NVSMI LOG"))
_PCI = re.compile(r"(?<![0-9A-Fa-f])([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])(?![0-9A-Fa-f])")
# Status lines nvidia-smi prints instead of, or besides, its data: (pattern, code, kind).
_STATUS = [
    (re.compile(r"fallen off the bus", re.I), "gpu_fell_off_bus", "error"),
    (re.compile(r"\bGPU is lost\b", re.I), "gpu_lost", "error"),
    (re.compile(r"Unable to determine the device handle", re.I), "device_handle_unavailable", "error"),
    (re.compile(r"No devices were found", re.I), "no_devices", "error"),
    (re.compile(r"NVIDIA-SMI has failed|Failed to initialize NVML|couldn't find libnvidia-ml", re.I),
     "driver_unreachable", "error"),
    (re.compile(r"infoROM is corrupted", re.I), "inforom_corrupted", "warning"),
]
_STATUS_WORDS = ("fallen off the bus", "gpu is lost", "unable to determine the device handle", "no devices were found",
                 "nvidia-smi has failed", "failed to initialize nvml", "couldn't find libnvidia-ml", "inforom is corrupted")


def _has_status(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in _STATUS_WORDS)
_ERR_VALUES = {"err!", "[unknown error]", "unknown error"}
_XML_DOC = re.compile(r"(?:<\?xml[^>]*\?>\s*)?(?:<!DOCTYPE[^>]*>\s*)?<nvidia_smi_log\b.*?</nvidia_smi_log>", re.S)
_QUERY_GPU_CMD = re.compile(r"--query-gpu[= ]([A-Za-z0-9_.,\-]+)")


def _prepare(text: str) -> str:
    text = strip_prefixes(clean_text(text))
    for anchor, literal in _ANCHORS:
        text = dedent_at(text, anchor, literal)
    return text


def split_samples(text: str) -> list[str]:
    """Each nvidia-smi output in `text` (XML documents, -q logs, tables, CSV blocks), in order;
    the status lines after an output (up to the next one) stay with it."""
    text = _prepare(text)
    spans = _spans(text)
    out = []
    for k, (s, e) in enumerate(spans):
        nxt = spans[k + 1][0] if k + 1 < len(spans) else len(text)
        keep = _status_lines(text[e:nxt])
        # status lines printed before the first output ("Unable to determine the device handle ...")
        before = _status_lines(text[:s]) if k == 0 else ""
        out.append(before + text[s:e] + ("\n" if keep and not text[s:e].endswith("\n") else "") + keep)
    return out


def _status_lines(chunk: str) -> str:
    if not _has_status(chunk):
        return ""
    lines = [ln for ln in chunk.splitlines() if _status_of(ln) is not None]
    return "".join(ln + "\n" for ln in lines)


def _spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    if "<nvidia_smi_log" in text:
        for m in _XML_DOC.finditer(text):
            spans.append((m.start(), m.end()))
    starts = [m.start() for m in _QUERY_START.finditer(text)]
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else len(text)
        spans.append((s, _query_end(text, s, e)))
    for m in _TABLE_HEAD.finditer(text):
        spans.append(_table_span(text, text.rfind("\n", 0, m.start()) + 1))
    spans.extend(_csv_blocks(text))
    spans.sort()
    out: list[tuple[int, int]] = []
    last_end = -1
    for s, e in spans:
        if s < last_end:
            continue
        out.append((s, e))
        last_end = e
    return out


def _status_of(line: str) -> tuple[str, str] | None:
    if line.lstrip().startswith("#"):
        return None
    for pattern, code, kind in _STATUS:
        if pattern.search(line):
            return code, kind
    return None


def status_notices(text: str) -> tuple[tuple[Notice, ...], tuple[Notice, ...]]:
    """(warnings, errors): the status lines of `text` (see `_STATUS`)."""
    warnings: list[Notice] = []
    errors: list[Notice] = []
    if not _has_status(text):
        return (), ()
    for i, line in enumerate(text.splitlines()):
        st = _status_of(line)
        if st is None:
            continue
        pci = _PCI.search(line)
        notice = Notice(code=st[0], message=line.strip(), device=pci.group(1) if pci else None, line=i + 1)
        (errors if st[1] == "error" else warnings).append(notice)
    return tuple(warnings), tuple(errors)


def _err_notices(gpus: Iterable[Gpu], raw_fields: dict[int, list[str]]) -> tuple[Notice, ...]:
    out = []
    for pos, g in enumerate(gpus):
        bad = raw_fields.get(pos) or []
        if bad:
            out.append(Notice(code="field_error", device=g.pci_bus_id,
                              message=f"GPU {g.index} reports ERR! for {', '.join(bad)}: the driver could not read them"))
    return tuple(out)


def _table_span(text: str, head: int) -> tuple[int, int]:
    """The default table around its "NVIDIA-SMI ... Driver Version" line, processes box included."""
    start = text.rfind("\n", 0, max(0, head - 1)) + 1
    if not text[start:head].lstrip().startswith("+"):
        start = head
    pos = head
    blank_seen = False
    while pos < len(text):
        nl = text.find("\n", pos)
        line = text[pos: nl if nl != -1 else len(text)]
        stripped = line.strip()
        if stripped.startswith(("|", "+")):
            blank_seen = False
        elif not stripped and not blank_seen:
            blank_seen = True
        else:
            return start, pos
        if nl == -1:
            break
        pos = nl + 1
    return start, len(text)


def _query_end(text: str, start: int, limit: int) -> int:
    pos = text.find("\n", start) + 1
    while 0 < pos < limit:
        nl = text.find("\n", pos)
        line = text[pos: nl if nl != -1 else len(text)]
        if line.strip() and not (line.startswith(" ") or ":" in line or line.startswith("GPU ")):
            return pos
        if line.startswith("#"):
            return pos
        if nl == -1:
            return len(text)
        pos = nl + 1
    return limit


_CSV_KNOWN = {
    "name", "gpu_name", "pci.bus_id", "gpu_bus_id", "uuid", "gpu_uuid", "index", "driver_version",
    "memory.total", "count", "serial", "vbios_version", "persistence_mode", "ecc.mode.current",
    "temperature.gpu", "power.limit", "clocks.sm", "clocks.current.sm", "compute_cap", "timestamp",
}
_CSV_NOT_GPU = {"retired_pages.address", "pid", "process_name", "used_memory", "used_gpu_memory"}


def _header_key(col: str) -> str:
    return col.split("[", 1)[0].strip()


_HEADER_LINE = re.compile(r"^\s*[A-Za-z0-9_.]+(?: \[[^\]]*\])?(?:\s*,\s*[A-Za-z0-9_.]+(?: \[[^\]]*\])?)*\s*$")


def _is_csv_header(line: str) -> bool:
    if not _HEADER_LINE.match(line):
        return False
    cols = [_header_key(c) for c in line.split(",")]
    keys = set(cols)
    return bool(keys & _CSV_KNOWN) and not (keys & _CSV_NOT_GPU) and ("," in line or cols[0] in _CSV_KNOWN)


def _csv_blocks(text: str) -> list[tuple[int, int]]:
    blocks: list[tuple[int, int]] = []
    lines = text.splitlines(keepends=True)
    offsets = []
    pos = 0
    for ln in lines:
        offsets.append(pos)
        pos += len(ln)
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\n")
        if _is_csv_header(line):
            ncols = len(line.split(","))
            j = i + 1
            # a looping query may print its header again before each sample: the block goes on
            while j < len(lines) and (
                lines[j].strip() in ("[...]", line.strip())
                or (lines[j].strip() and len(next(csv.reader([lines[j]]), [])) == ncols and not lines[j].startswith("#"))
            ):
                j += 1
            if j > i + 1:
                blocks.append((offsets[i], offsets[j - 1] + len(lines[j - 1])))
            i = j
            continue
        m = _QUERY_GPU_CMD.search(line)
        if m and "noheader" in line:
            fields = [f for f in m.group(1).split(",") if f]
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("#"):
                j += 1
            k = j
            while k < len(lines) and lines[k].strip() and len(next(csv.reader([lines[k]]), [])) == len(fields):
                k += 1
            if k > j:
                blocks.append((offsets[i], offsets[k - 1] + len(lines[k - 1])))
            i = max(k, i + 1)
            continue
        i += 1
    return blocks


def detect_format(text: str) -> str | None:
    if _XML_START.search(text):
        return "xml"
    if _QUERY_START.search(text):
        return "query"
    if _TABLE_HEAD.search(text) and re.search(r"^\|\s+\d+\s+\S", text, re.M):
        return "table"
    if _csv_blocks(text):
        return "csv"
    return None


@prepassed(_ANCHORS)
def parse_nvidia_smi(text: str, query_fields: list[str] | None = None) -> NvidiaSmiRecord:
    """Parse the first nvidia-smi output found in `text` (any supported format).

    Text holding only status lines ("No devices were found", "NVIDIA-SMI has failed ...")
    gives a record of format "status" with no GPUs and the lines in `errors`."""
    text = clean_text(text)
    if query_fields:
        return _with_status(_parse_csv(text, query_fields), text)
    samples = split_samples(text)
    if samples:
        text = samples[0]
    fmt = detect_format(text)
    if fmt == "xml":
        return _with_status(_parse_xml(text), text)
    if fmt == "query":
        return _with_status(_parse_query(text), text)
    if fmt == "table":
        return _with_status(_parse_table(text), text)
    if fmt == "csv":
        return _with_status(_parse_csv(text, None), text)
    warnings, errors = status_notices(text)
    if errors:
        return NvidiaSmiRecord(tool=TOOL, format="status", gpu_count=0, attached_gpus=None, driver_version=None,
                               cuda_version=None, timestamp=None, gpus=(), warnings=warnings, errors=errors)
    raise ParseError(TOOL, "no -q -x XML, -q log, default table or --query-gpu CSV found")


def _with_status(rec: NvidiaSmiRecord, text: str) -> NvidiaSmiRecord:
    warnings, errors = status_notices(text)
    return replace(rec, warnings=rec.warnings + warnings, errors=rec.errors + errors)


# --------------------------------------------------------------------------- CSV

_CSV_MAP: dict[str, tuple[str, str]] = {
    # query field -> (Gpu field, kind)
    "index": ("index", "int"),
    "name": ("name", "str"), "gpu_name": ("name", "str"),
    "uuid": ("uuid", "str"), "gpu_uuid": ("uuid", "str"),
    "pci.bus_id": ("pci_bus_id", "str"), "gpu_bus_id": ("pci_bus_id", "str"),
    "serial": ("serial", "str"), "gpu_serial": ("serial", "str"),
    "vbios_version": ("vbios_version", "str"),
    "memory.total": ("memory_total_mib", "float"),
    "memory.used": ("memory_used_mib", "float"),
    "persistence_mode": ("persistence_mode", "bool"),
    "ecc.mode.current": ("ecc_mode", "bool"),
    "ecc.mode.pending": ("ecc_mode_pending", "bool"),
    "ecc.errors.corrected.volatile.total": ("ecc_corrected_volatile", "int"),
    "ecc.errors.uncorrected.volatile.total": ("ecc_uncorrected_volatile", "int"),
    "ecc.errors.corrected.aggregate.total": ("ecc_corrected_aggregate", "int"),
    "ecc.errors.uncorrected.aggregate.total": ("ecc_uncorrected_aggregate", "int"),
    "retired_pages.single_bit_ecc.count": ("retired_pages_single_bit", "int"),
    "retired_pages.sbe": ("retired_pages_single_bit", "int"),
    "retired_pages.double_bit.count": ("retired_pages_double_bit", "int"),
    "retired_pages.dbe": ("retired_pages_double_bit", "int"),
    "retired_pages.pending": ("retired_pages_pending", "bool"),
    "remapped_rows.correctable": ("remapped_rows_correctable", "int"),
    "remapped_rows.uncorrectable": ("remapped_rows_uncorrectable", "int"),
    "remapped_rows.pending": ("remapped_rows_pending", "bool"),
    "remapped_rows.failure": ("remapped_rows_failure", "bool"),
    "power.draw": ("power_draw_w", "float"),
    "power.limit": ("power_limit_w", "float"),
    "enforced.power.limit": ("power_limit_w", "float"),
    "power.default_limit": ("power_default_limit_w", "float"),
    "power.max_limit": ("power_max_limit_w", "float"),
    "temperature.gpu": ("temperature_c", "float"),
    "clocks.gr": ("clocks_graphics_mhz", "float"), "clocks.current.graphics": ("clocks_graphics_mhz", "float"),
    "clocks.sm": ("clocks_sm_mhz", "float"), "clocks.current.sm": ("clocks_sm_mhz", "float"),
    "clocks.mem": ("clocks_mem_mhz", "float"), "clocks.current.memory": ("clocks_mem_mhz", "float"),
    "clocks.max.gr": ("clocks_max_graphics_mhz", "float"), "clocks.max.graphics": ("clocks_max_graphics_mhz", "float"),
    "clocks.max.sm": ("clocks_max_sm_mhz", "float"),
    "clocks.max.mem": ("clocks_max_mem_mhz", "float"), "clocks.max.memory": ("clocks_max_mem_mhz", "float"),
    "pstate": ("pstate", "str"),
    "utilization.gpu": ("utilization_gpu_pct", "float"),
    "compute_mode": ("compute_mode", "str"),
    "mig.mode.current": ("mig_mode", "bool"),
    "pcie.link.gen.current": ("pcie_link_gen", "int"), "pcie.link.gen.gpucurrent": ("pcie_link_gen", "int"),
    "pcie.link.width.current": ("pcie_link_width", "int"),
    "fabric.state": ("fabric_state", "str"),
    "fabric.status": ("fabric_status", "str"),
}


def _convert(kind: str, raw: str) -> Any:
    value = na_to_none(raw)
    if value is None:
        return None
    if kind == "int":
        return to_int(value)
    if kind == "float":
        return to_float(value)
    if kind == "bool":
        return to_bool(value)
    return value


def _gpu_from_mapping(row: dict[str, str], position: int) -> Gpu:
    values: dict[str, Any] = {}
    for key, raw in row.items():
        target = _CSV_MAP.get(key)
        if target is None:
            continue
        field, kind = target
        converted = _convert(kind, raw)
        if converted is not None and values.get(field) is None:
            values[field] = converted
        elif field not in values:
            values[field] = converted
    if values.get("index") is None:
        values["index"] = position
    return Gpu(**values)


def _parse_csv(text: str, query_fields: list[str] | None) -> NvidiaSmiRecord:
    lines = cut_last_line(text.split("\n"), text)
    header: list[str] | None = None
    rows: list[list[str]] = []
    breaks: set[int] = set()
    if query_fields:
        header = [f.strip() for f in query_fields]
        for line in lines:
            if not line.strip() or line.lstrip().startswith(("#", "$")):
                if rows:
                    break
                continue
            cells = [c.strip() for c in next(csv.reader([line], skipinitialspace=True), [])]
            if len(cells) == len(header) and not _is_csv_header(line):
                rows.append(cells)
            elif rows:
                break
    else:
        blocks = _csv_blocks(text)
        if not blocks:
            raise ParseError(TOOL, "no --query-gpu CSV header found")
        s, e = blocks[0]
        block = text[s:e].splitlines()
        if e >= len(text) and not text.endswith("\n") and len(block) > 1:
            block = block[:-1]  # the last row may be cut part way
        first = block[0]
        m = _QUERY_GPU_CMD.search(first)
        if m and not _is_csv_header(first):
            header = [f for f in m.group(1).split(",") if f]
            body = [ln for ln in block[1:] if not ln.strip().startswith("#")]
        else:
            header = [_header_key(c) for c in first.split(",")]
            body = block[1:]
        for line in body:
            if line.strip() == "[...]":
                continue
            if line.strip() == first.strip():
                breaks.add(len(rows))  # the header again: a new sample of a looping query
                continue
            cells = [c.strip() for c in next(csv.reader([line], skipinitialspace=True), [])]
            if len(cells) == len(header):
                rows.append(cells)
    if not rows or header is None:
        raise ParseError(TOOL, "CSV header without data rows")
    # `-l`/`-lms` loops print every GPU once per sample: a GPU seen again starts a new sample.
    ident = next((c for c in ("uuid", "gpu_uuid", "pci.bus_id", "gpu_bus_id", "serial", "gpu_serial", "index")
                  if c in header), None)
    samples: list[list[dict[str, str]]] = []
    seen: set[str] = set()
    for n, cells in enumerate(rows):
        row = dict(zip(header, cells))
        key = row.get(ident, "") if ident else ""
        if not samples or (ident and key in seen) or (n in breaks and samples[-1]):
            samples.append([])
            seen = set()
        seen.add(key)
        samples[-1].append(row)
    built = [tuple(_gpu_from_mapping(row, pos) for pos, row in enumerate(sample)) for sample in samples]
    gpus = built[0]
    driver = attached = timestamp = None
    err_fields: dict[int, list[str]] = {}
    for pos, row in enumerate(samples[0]):
        driver = driver or na_to_none(row.get("driver_version"))
        timestamp = timestamp or na_to_none(row.get("timestamp"))
        if attached is None:
            attached = to_int(na_to_none(row.get("count")))
        bad = [k for k, v in row.items() if v.strip().lower() in _ERR_VALUES]
        if bad:
            err_fields[pos] = bad
    return NvidiaSmiRecord(
        tool=TOOL, format="csv", gpu_count=len(gpus), attached_gpus=attached, driver_version=driver,
        cuda_version=None, timestamp=timestamp, gpus=gpus,
        sample_count=len(built), samples=tuple(built) if len(built) > 1 else (),
        errors=_err_notices(gpus, err_fields),
    )


# --------------------------------------------------------------------------- XML

def _safe_xml(text: str) -> ET.Element:
    m = _XML_START.search(text)
    assert m is not None
    end = text.find("</nvidia_smi_log>", m.start())
    if end == -1:
        raise ParseError(TOOL, "XML document is cut off (no </nvidia_smi_log>)")
    doc = text[m.start(): end + len("</nvidia_smi_log>")]
    if re.search(r"<!ENTITY", doc, re.I) or re.search(r"<!DOCTYPE[^>]*\[", doc, re.I):
        raise ParseError(TOOL, "XML with DTD declarations or entities is not accepted")
    doc = re.sub(r"<!DOCTYPE[^>\[]*>", "", doc, flags=re.I)
    doc = re.sub(r"^<\?xml[^>]*\?>", "", doc.lstrip())
    try:
        return ET.fromstring(doc)
    except ET.ParseError as exc:
        raise ParseError(TOOL, f"malformed XML ({exc})") from None


def _xt(el: ET.Element | None, path: str) -> str | None:
    if el is None:
        return None
    found = el.find(path)
    if found is None or found.text is None:
        return None
    return na_to_none(found.text)


def _xml_ecc_sum(el: ET.Element | None, bucket: str, uncorrectable: bool) -> int | None:
    if el is None:
        return None
    b = el.find(f"ecc_errors/{bucket}")
    if b is None:
        return None
    values = []
    for leaf in b.iter():
        if len(leaf) or leaf.text is None:
            continue
        tag = leaf.tag.lower()
        if "threshold" in tag:
            continue
        if uncorrectable:
            if "uncorrectable" in tag or (tag == "total" and _parent_tag(b, leaf) == "double_bit"):
                values.append(leaf.text)
        elif ("correctable" in tag and "uncorrectable" not in tag) or (tag == "total" and _parent_tag(b, leaf) == "single_bit"):
            values.append(leaf.text)
    return _sum_ints(values)


def _parent_tag(root: ET.Element, child: ET.Element) -> str | None:
    for parent in root.iter():
        for c in parent:
            if c is child:
                return parent.tag
    return None


def _parse_xml(text: str) -> NvidiaSmiRecord:
    root = _safe_xml(text)
    if root.tag != "nvidia_smi_log":
        raise ParseError(TOOL, f"XML root is <{root.tag}>, not <nvidia_smi_log>")
    gpus = []
    for pos, g in enumerate(root.findall("gpu")):
        rr = g.find("remapped_rows")
        gpus.append(Gpu(
            index=pos,
            name=_xt(g, "product_name"),
            uuid=_xt(g, "uuid"),
            pci_bus_id=_xt(g, "pci/pci_bus_id") or na_to_none(g.get("id")),
            serial=_xt(g, "serial"),
            vbios_version=_xt(g, "vbios_version"),
            memory_total_mib=to_float(_xt(g, "fb_memory_usage/total")),
            memory_used_mib=to_float(_xt(g, "fb_memory_usage/used")),
            persistence_mode=to_bool(_xt(g, "persistence_mode")),
            ecc_mode=to_bool(_xt(g, "ecc_mode/current_ecc")),
            ecc_mode_pending=to_bool(_xt(g, "ecc_mode/pending_ecc")),
            ecc_corrected_volatile=_xml_ecc_sum(g, "volatile", False),
            ecc_uncorrected_volatile=_xml_ecc_sum(g, "volatile", True),
            ecc_corrected_aggregate=_xml_ecc_sum(g, "aggregate", False),
            ecc_uncorrected_aggregate=_xml_ecc_sum(g, "aggregate", True),
            retired_pages_single_bit=to_int(_xt(g, "retired_pages/multiple_single_bit_retirement/retired_count")),
            retired_pages_double_bit=to_int(_xt(g, "retired_pages/double_bit_retirement/retired_count")),
            retired_pages_pending=to_bool(_xt(g, "retired_pages/pending_retirement") or _xt(g, "retired_pages/pending_blacklist")),
            remapped_rows_correctable=to_int(_xt(rr, "remapped_row_corr")),
            remapped_rows_uncorrectable=to_int(_xt(rr, "remapped_row_unc")),
            remapped_rows_pending=to_bool(_xt(rr, "remapped_row_pending")),
            remapped_rows_failure=to_bool(_xt(rr, "remapped_row_failure")),
            power_draw_w=to_float(_xt(g, "gpu_power_readings/power_draw") or _xt(g, "gpu_power_readings/average_power_draw") or _xt(g, "power_readings/power_draw")),
            power_limit_w=to_float(_xt(g, "gpu_power_readings/current_power_limit") or _xt(g, "power_readings/power_limit") or _xt(g, "power_readings/enforced_power_limit")),
            power_default_limit_w=to_float(_xt(g, "gpu_power_readings/default_power_limit") or _xt(g, "power_readings/default_power_limit")),
            power_max_limit_w=to_float(_xt(g, "gpu_power_readings/max_power_limit") or _xt(g, "power_readings/max_power_limit")),
            temperature_c=to_float(_xt(g, "temperature/gpu_temp")),
            clocks_graphics_mhz=to_float(_xt(g, "clocks/graphics_clock")),
            clocks_sm_mhz=to_float(_xt(g, "clocks/sm_clock")),
            clocks_mem_mhz=to_float(_xt(g, "clocks/mem_clock")),
            clocks_max_graphics_mhz=to_float(_xt(g, "max_clocks/graphics_clock")),
            clocks_max_sm_mhz=to_float(_xt(g, "max_clocks/sm_clock")),
            clocks_max_mem_mhz=to_float(_xt(g, "max_clocks/mem_clock")),
            pstate=_xt(g, "performance_state"),
            utilization_gpu_pct=to_float(_xt(g, "utilization/gpu_util")),
            compute_mode=_xt(g, "compute_mode"),
            mig_mode=to_bool(_xt(g, "mig_mode/current_mig")),
            pcie_link_gen=to_int(_xt(g, "pci/pci_gpu_link_info/pcie_gen/current_link_gen")),
            pcie_link_width=to_int(_xt(g, "pci/pci_gpu_link_info/link_widths/current_link_width")),
            fabric_state=_xt(g, "fabric/state"),
            fabric_status=_xt(g, "fabric/status"),
        ))
    migs = []
    err_fields: dict[int, list[str]] = {}
    for pos, g in enumerate(root.findall("gpu")):
        for md in g.findall("mig_devices/mig_device"):
            migs.append(MigDevice(
                gpu=pos, gpu_instance_id=to_int(_xt(md, "gpu_instance_id")),
                compute_instance_id=to_int(_xt(md, "compute_instance_id")), mig_device=to_int(_xt(md, "index")),
                memory_used_mib=to_float(_xt(md, "fb_memory_usage/used")),
                memory_total_mib=to_float(_xt(md, "fb_memory_usage/total")),
                bar1_used_mib=to_float(_xt(md, "bar1_memory_usage/used")),
                bar1_total_mib=to_float(_xt(md, "bar1_memory_usage/total")),
                sm_count=to_int(_xt(md, "device_attributes/shared/multiprocessor_count")),
                ecc_uncorrected=_sum_ints(e.text for e in md.iter() if e.tag.endswith("uncorrectable") and e.text),
            ))
        bad = sorted({el.tag for el in g.iter() if el.text and el.text.strip().lower() in _ERR_VALUES})
        if bad:
            err_fields[pos] = bad
    kmd = _xt(root, "kmd_version")
    return NvidiaSmiRecord(
        tool=TOOL, format="xml", gpu_count=len(gpus), attached_gpus=to_int(_xt(root, "attached_gpus")),
        driver_version=_xt(root, "driver_version") or kmd,
        cuda_version=_xt(root, "cuda_version") or _xt(root, "cuda_umd_version"),
        timestamp=_xt(root, "timestamp"), gpus=tuple(gpus),
        version_labels="KMD/CUDA UMD" if kmd and not _xt(root, "driver_version") else "Driver/CUDA",
        mig_devices=tuple(migs), errors=_err_notices(gpus, err_fields),
    )


# --------------------------------------------------------------------------- -q text

class _Tree:
    """Indented `Key : Value` lines of `nvidia-smi -q` as a path → value mapping."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, ...], str] = {}

    def get(self, *path: str) -> str | None:
        return na_to_none(self.values.get(tuple(p.lower() for p in path)))

    def under(self, *prefix: str) -> dict[tuple[str, ...], str]:
        p = tuple(x.lower() for x in prefix)
        return {k[len(p):]: v for k, v in self.values.items() if k[: len(p)] == p}


def _parse_query(text: str) -> NvidiaSmiRecord:
    m = _QUERY_START.search(text)
    assert m is not None
    end = _query_end(text, m.start(), len(text))
    nxt = _QUERY_START.search(text, m.end())
    if nxt is not None:
        end = min(end, nxt.start())
    header: dict[str, str] = {}
    gpu_trees: list[tuple[str, _Tree]] = []
    stack: list[tuple[int, str]] = []
    body = text[m.end():end].split("\n")
    if end >= len(text):
        body = cut_last_line(body, text)
    mig_blocks: dict[int, list[_Tree]] = {}
    for raw in body:
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        if indent == 0:
            gm = re.match(r"GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$", line)
            if gm:
                gpu_trees.append((gm.group(1), _Tree()))
                stack = []
                continue
            if ":" in line:
                k, _, v = line.partition(":")
                header[k.strip().lower()] = v.strip()
            continue
        if not gpu_trees:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if ":" in line:
            k, _, v = line.partition(":")
            path = tuple(s for _, s in stack) + (k.strip().lower(),)
            if path[:2] == ("mig devices", "mig device") and mig_blocks.get(len(gpu_trees) - 1):
                mig_blocks[len(gpu_trees) - 1][-1].values[path[2:]] = v.strip()
            else:
                gpu_trees[-1][1].values[path] = v.strip()
        else:
            stack.append((indent, line.strip().lower()))
            if tuple(s for _, s in stack) == ("mig devices", "mig device"):
                mig_blocks.setdefault(len(gpu_trees) - 1, []).append(_Tree())  # one block per MIG device
    if not gpu_trees:
        raise ParseError(TOOL, "-q log without a GPU section")
    gpus = []
    for pos, (bus_id, t) in enumerate(gpu_trees):
        vol = t.under("ECC Errors", "Volatile")
        agg = t.under("ECC Errors", "Aggregate")
        gpus.append(Gpu(
            index=pos,
            name=t.get("Product Name"),
            uuid=t.get("GPU UUID"),
            pci_bus_id=t.get("PCI", "Bus Id") or bus_id,
            serial=t.get("Serial Number"),
            vbios_version=t.get("VBIOS Version"),
            memory_total_mib=to_float(t.get("FB Memory Usage", "Total")),
            memory_used_mib=to_float(t.get("FB Memory Usage", "Used")),
            persistence_mode=to_bool(t.get("Persistence Mode")),
            ecc_mode=to_bool(t.get("ECC Mode", "Current")),
            ecc_mode_pending=to_bool(t.get("ECC Mode", "Pending")),
            ecc_corrected_volatile=_ecc_text_sum(vol, False),
            ecc_uncorrected_volatile=_ecc_text_sum(vol, True),
            ecc_corrected_aggregate=_ecc_text_sum(agg, False),
            ecc_uncorrected_aggregate=_ecc_text_sum(agg, True),
            retired_pages_single_bit=to_int(t.get("Retired Pages", "Single Bit ECC")),
            retired_pages_double_bit=to_int(t.get("Retired Pages", "Double Bit ECC")),
            retired_pages_pending=to_bool(t.get("Retired Pages", "Pending Page Blacklist") or t.get("Retired Pages", "Pending")),
            remapped_rows_correctable=to_int(t.get("Remapped Rows", "Correctable Error")),
            remapped_rows_uncorrectable=to_int(t.get("Remapped Rows", "Uncorrectable Error")),
            remapped_rows_pending=to_bool(t.get("Remapped Rows", "Pending")),
            remapped_rows_failure=to_bool(t.get("Remapped Rows", "Remapping Failure Occurred")),
            power_draw_w=to_float(t.get("GPU Power Readings", "Power Draw") or t.get("GPU Power Readings", "Average Power Draw") or t.get("Power Readings", "Power Draw")),
            power_limit_w=to_float(t.get("GPU Power Readings", "Current Power Limit") or t.get("Power Readings", "Power Limit") or t.get("Power Readings", "Enforced Power Limit")),
            power_default_limit_w=to_float(t.get("GPU Power Readings", "Default Power Limit") or t.get("Power Readings", "Default Power Limit")),
            power_max_limit_w=to_float(t.get("GPU Power Readings", "Max Power Limit") or t.get("Power Readings", "Max Power Limit")),
            temperature_c=to_float(t.get("Temperature", "GPU Current Temp")),
            clocks_graphics_mhz=to_float(t.get("Clocks", "Graphics")),
            clocks_sm_mhz=to_float(t.get("Clocks", "SM")),
            clocks_mem_mhz=to_float(t.get("Clocks", "Memory")),
            clocks_max_graphics_mhz=to_float(t.get("Max Clocks", "Graphics")),
            clocks_max_sm_mhz=to_float(t.get("Max Clocks", "SM")),
            clocks_max_mem_mhz=to_float(t.get("Max Clocks", "Memory")),
            pstate=t.get("Performance State"),
            utilization_gpu_pct=to_float(t.get("Utilization", "GPU")),
            compute_mode=t.get("Compute Mode"),
            mig_mode=to_bool(t.get("MIG Mode", "Current")),
            pcie_link_gen=to_int(t.get("PCI", "GPU Link Info", "PCIe Generation", "Current")),
            pcie_link_width=to_int(t.get("PCI", "GPU Link Info", "Link Width", "Current")),
            fabric_state=t.get("Fabric", "State"),
            fabric_status=t.get("Fabric", "Status"),
        ))
    err_fields = {pos: sorted(" / ".join(k) for k, v in t.values.items() if v.strip().lower() in _ERR_VALUES)
                  for pos, (_, t) in enumerate(gpu_trees)}
    kmd = na_to_none(header.get("kmd version"))
    migs = tuple(
        MigDevice(
            gpu=pos, gpu_instance_id=to_int(b.get("GPU Instance ID")), compute_instance_id=to_int(b.get("Compute Instance ID")),
            mig_device=to_int(b.get("Index")),
            memory_used_mib=to_float(b.get("FB Memory Usage", "Used")), memory_total_mib=to_float(b.get("FB Memory Usage", "Total")),
            bar1_used_mib=to_float(b.get("BAR1 Memory Usage", "Used")), bar1_total_mib=to_float(b.get("BAR1 Memory Usage", "Total")),
            sm_count=to_int(b.get("Device Attributes", "Shared", "Multiprocessor count")),
            ecc_uncorrected=_sum_ints(v for k, v in b.values.items() if k and "uncorrectable" in k[-1]),
        )
        for pos in sorted(mig_blocks) for b in mig_blocks[pos]
    )
    return NvidiaSmiRecord(
        tool=TOOL, format="query", mig_devices=migs, gpu_count=len(gpus), attached_gpus=to_int(na_to_none(header.get("attached gpus"))),
        driver_version=na_to_none(header.get("driver version")) or kmd,
        cuda_version=na_to_none(header.get("cuda version")) or na_to_none(header.get("cuda umd version")),
        timestamp=na_to_none(header.get("timestamp")), gpus=tuple(gpus),
        version_labels="KMD/CUDA UMD" if kmd and not na_to_none(header.get("driver version")) else "Driver/CUDA",
        errors=_err_notices(gpus, err_fields),
    )


def _ecc_text_sum(bucket: dict[tuple[str, ...], str], uncorrectable: bool) -> int | None:
    values = []
    for path, v in bucket.items():
        key = " ".join(path)
        if "threshold" in key:
            continue
        if uncorrectable:
            if "uncorrectable" in key or (path[0] == "double bit" and path[-1] == "total"):
                values.append(v)
        elif ("correctable" in key and "uncorrectable" not in key) or (path[0] == "single bit" and path[-1] == "total"):
            values.append(v)
    return _sum_ints(values)


# --------------------------------------------------------------------------- default table

_ROW1 = re.compile(
    r"^\|\s*(\d+)\s+(.+?)\s+(On|Off|ERR!|N/A)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+(\S+)\s*\|\s*(.*?)\s*\|"
)
_ROW2 = re.compile(
    r"^\|\s*(\S+)\s+(\S+)\s+(P\d+|\S+)\s+(.*?)\s*\|\s*(\d+|ERR!)\s*(?:MiB)?\s*/\s*(\d+|ERR!)\s*(?:MiB)?\s*\|\s*(\S+)\s+(.*?)\s*\|"
)
_ROW3 = re.compile(r"^\|\s*\|\s*\|\s*(\S.*?)\s*\|")
_MIG_HEAD = re.compile(r"^\|\s*MIG devices:", re.M)
_MIG_ROW = re.compile(r"^\|\s*(\d+|N/A)\s+(\d+|N/A)\s+(\d+|N/A)\s+(\d+|N/A)\s*\|([^|]*)\|([^|]*)\|")
_MIB_PAIR = re.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")


def _parse_table(text: str) -> NvidiaSmiRecord:
    head = _TABLE_HEAD.search(text)
    assert head is not None
    lines = cut_last_line(text[head.end():].split("\n"), text)
    gpus: list[Gpu] = []
    err_fields: dict[int, list[str]] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^\|\s*(?:Processes|MIG devices):", line) or (gpus and not line.strip()):
            break
        m1 = _ROW1.match(line)
        if not m1:
            i += 1
            continue
        gpu = Gpu(
            index=int(m1.group(1)),
            name=m1.group(2).strip(),
            persistence_mode=True if m1.group(3) == "On" else False if m1.group(3) == "Off" else None,
            pci_bus_id=m1.group(4),
            ecc_uncorrected_volatile=to_int(na_to_none(m1.group(6))),
        )
        bad: list[str] = []
        if m1.group(3) == "ERR!":
            bad.append("persistence mode")
        if m1.group(6).strip() == "ERR!":
            bad.append("volatile uncorrected ECC")
        ecc_cell = na_to_none(m1.group(6))
        if ecc_cell is not None and ecc_cell.lower() == "off":
            gpu = replace(gpu, ecc_mode=False)
        if i + 1 < len(lines):
            m2 = _ROW2.match(lines[i + 1])
            if m2:
                power = re.match(r"\s*(\S+)\s*/\s*(\S+)", m2.group(4))
                gpu = replace(
                    gpu,
                    temperature_c=to_float(na_to_none(m2.group(2))),
                    pstate=na_to_none(m2.group(3)),
                    power_draw_w=to_float(na_to_none(power.group(1))) if power else None,
                    power_limit_w=to_float(na_to_none(power.group(2))) if power else None,
                    memory_used_mib=to_float(m2.group(5)),
                    memory_total_mib=to_float(m2.group(6)),
                    utilization_gpu_pct=to_float(na_to_none(m2.group(7))),
                    compute_mode=na_to_none(m2.group(8)),
                )
                names = ("fan", "temperature", "performance state")
                bad += [n for n, v in zip(names, m2.groups()[:3]) if v == "ERR!"]
                if power and "ERR!" in (power.group(1), power.group(2)):
                    bad.append("power")
                if "ERR!" in (m2.group(5), m2.group(6)):
                    bad.append("memory")
                if m2.group(7) == "ERR!":
                    bad.append("utilization")
            elif "ERR!" in lines[i + 1]:
                bad.append("sensor row")
        if i + 2 < len(lines):
            m3 = _ROW3.match(lines[i + 2])
            if m3:
                gpu = replace(gpu, mig_mode=to_bool(m3.group(1)))
                if m3.group(1) == "ERR!":
                    bad.append("MIG mode")
        if bad:
            err_fields[len(gpus)] = bad
        gpus.append(gpu)
        i += 1
    if not gpus:
        raise ParseError(TOOL, "nvidia-smi table without GPU rows")
    return NvidiaSmiRecord(
        tool=TOOL, format="table", gpu_count=len(gpus), attached_gpus=None,
        driver_version=head.group(3), cuda_version=na_to_none(head.group(4)), timestamp=None, gpus=tuple(gpus),
        nvidia_smi_version=head.group(1),
        version_labels="KMD/CUDA UMD" if head.group(2) == "KMD" else "Driver/CUDA",
        mig_devices=_table_mig(text, lines), errors=_err_notices(gpus, err_fields),
    )


def _table_mig(text: str, lines: list[str]) -> tuple[MigDevice, ...]:
    """The "MIG devices:" box of the default table: GPU, GI ID, CI ID, MIG Dev, memory, BAR1, SMs."""
    start = next((k for k, ln in enumerate(lines) if _MIG_HEAD.match(ln)), None)
    if start is None:
        return ()
    out: list[MigDevice] = []
    k = start + 1
    while k < len(lines) and not re.match(r"^\|\s*Processes:", lines[k]) and (lines[k].strip() or not out):
        m = _MIG_ROW.match(lines[k])
        if m and _MIB_PAIR.search(m.group(5)):
            mem = _MIB_PAIR.search(m.group(5))
            bar1 = None
            if k + 1 < len(lines):
                nxt = lines[k + 1].split("|")
                bar1 = _MIB_PAIR.search(nxt[2]) if len(nxt) > 3 and not _MIG_ROW.match(lines[k + 1]) else None
            sm = re.match(r"\s*(\d+|N/A)\s+(\d+|N/A)?", m.group(6))
            out.append(MigDevice(
                gpu=to_int(m.group(1)), gpu_instance_id=to_int(m.group(2)), compute_instance_id=to_int(m.group(3)),
                mig_device=to_int(m.group(4)),
                memory_used_mib=float(mem.group(1)), memory_total_mib=float(mem.group(2)),
                bar1_used_mib=float(bar1.group(1)) if bar1 else None,
                bar1_total_mib=float(bar1.group(2)) if bar1 else None,
                sm_count=to_int(sm.group(1)) if sm else None,
                ecc_uncorrected=to_int(sm.group(2)) if sm and sm.group(2) else None,
            ))
        k += 1
    return tuple(out)


# --------------------------------------------------------------------------- topo -m

@dataclass(frozen=True)
class TopoRecord(Record):
    tool: str
    devices: tuple[str, ...]
    gpus: tuple[str, ...]
    nics: tuple[str, ...]
    matrix: dict[str, dict[str, str]]
    cpu_affinity: dict[str, str]
    numa_affinity: dict[str, str]
    nic_names: dict[str, str]
    source: Source | None = None

    def link(self, a: str, b: str) -> str | None:
        return self.matrix.get(a, {}).get(b)


_TOPO_HEAD = re.compile(r"^[ \t]*GPU0[ \t]+(?:GPU1|NIC\d|mlx5_|CPU Affinity)", re.M)
_TOPO_COL = re.compile(r"GPU NUMA ID|CPU Affinity|NUMA Affinity|GPU\d+|NIC\d+|mlx5_\d+")


def split_topo_samples(text: str) -> list[str]:
    """Each `nvidia-smi topo -m` matrix in `text`, from its header line on."""
    text = strip_prefixes(clean_text(text))
    heads = [m.start() for m in _TOPO_HEAD.finditer(text)]
    return [text[s: heads[i + 1] if i + 1 < len(heads) else len(text)] for i, s in enumerate(heads)]


# The link cells nvidia-smi prints; with many columns it glues neighbours ("PXBNODE", "SYSSYS").
_LINK = re.compile(r"X|SYS|NODE|PHB|PXB|PIX|NV\d+")
_LINKS = re.compile(r"(?:X|SYS|NODE|PHB|PXB|PIX|NV\d+)+")
MISALIGNED = "topo_matrix_misaligned"


def _split_cells(cells: list[str], ncols: int) -> list[str] | None:
    """The row's cells with glued link cells split; None when the device cells do not line up."""
    out: list[str] = []
    for c in cells:
        if len(out) < ncols and _LINKS.fullmatch(c):
            out.extend(_LINK.findall(c))
        else:
            out.append(c)
    if len(out) < ncols or not all(_LINKS.fullmatch(c) for c in out[:ncols]):
        return None
    if len(out) > ncols and _LINKS.fullmatch(out[ncols]):
        return None  # a link cell where the affinity should be: more cells than header columns
    return out


@prepassed()
def parse_nvidia_smi_topo(text: str) -> TopoRecord:
    """Parse the first `nvidia-smi topo -m` matrix in `text`.

    Glued link cells (`PXBNODE`) are split into the link tokens nvidia-smi prints (X, SYS,
    NODE, PHB, PXB, PIX, NV#); a row whose cells still do not line up with the header is
    refused (`topo_matrix_misaligned`), never read shifted."""
    text = clean_text(text)
    samples = split_topo_samples(text)
    if not samples:
        raise ParseError("nvidia-smi topo -m", "no matrix header starting with GPU0 found")
    sample = samples[0]
    lines = sample.split("\n")
    if len(samples) == 1:
        lines = cut_last_line(lines, text)
    if len(lines) < 2:
        raise ParseError("nvidia-smi topo -m", "matrix header without rows")
    header = lines[0]
    cols = _TOPO_COL.findall(header)
    dev_cols = [c for c in cols if re.fullmatch(r"(GPU|NIC|mlx5_)\S*", c)]
    matrix: dict[str, dict[str, str]] = {}
    cpu_aff: dict[str, str] = {}
    numa_aff: dict[str, str] = {}
    nic_names: dict[str, str] = {}
    rows_done = False
    for n, line in enumerate(lines[1:], start=2):
        nm = re.match(r"^\s*(NIC\d+):\s*(\S+)\s*$", line)
        if nm:
            nic_names[nm.group(1)] = nm.group(2)
            continue
        parts = line.split()
        if not parts or not re.fullmatch(r"(GPU|NIC|mlx5_)\S*", parts[0]) or parts[0] not in dev_cols:
            rows_done = rows_done or bool(matrix)  # the matrix is one block of rows under its header
            continue
        if rows_done:
            continue
        cells = _split_cells(parts[1:], len(dev_cols))
        if cells is None:
            raise ParseError("nvidia-smi topo -m",
                             f"line {n}: row {parts[0]} has cells {' '.join(parts[1:])!r} that do not line up with "
                             f"the {len(dev_cols)} device columns {' '.join(dev_cols)}", code=MISALIGNED,
                             fix="pass the matrix as nvidia-smi printed it, or `nvidia-smi topo -m` run in a wider "
                                 "terminal; a row cut or re-wrapped cannot be read without guessing")
        matrix[parts[0]] = {dev_cols[i]: cells[i] for i in range(len(dev_cols))}
        rest = cells[len(dev_cols):]
        if parts[0].startswith("GPU") and rest:
            cpu_aff[parts[0]] = rest[0]
            if len(rest) > 1:
                numa_aff[parts[0]] = rest[1]
    if not matrix:
        raise ParseError("nvidia-smi topo -m", "matrix header without rows")
    return TopoRecord(
        tool="nvidia-smi-topo", devices=tuple(dev_cols),
        gpus=tuple(c for c in dev_cols if c.startswith("GPU") and c in matrix),
        nics=tuple(c for c in dev_cols if not c.startswith("GPU")),
        matrix=matrix, cpu_affinity=cpu_aff, numa_affinity=numa_aff, nic_names=nic_names,
    )
