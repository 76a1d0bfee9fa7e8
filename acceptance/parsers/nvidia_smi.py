"""nvidia-smi output → `NvidiaSmiRecord`; `nvidia-smi topo -m` → `TopoRecord`.

Formats recognised (auto-detected, `format` says which was found):
  "xml"    `nvidia-smi -q -x` (DTDs with an internal subset and entity declarations are refused;
           the usual `<!DOCTYPE nvidia_smi_log SYSTEM "...dtd">` line is dropped, never fetched)
  "query"  `nvidia-smi -q` text
  "csv"    `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`; for `noheader`
           output pass `query_fields`, or keep the `--query-gpu=` command line in the text
  "table"  the default `nvidia-smi` table

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

`TopoRecord.to_json()`: tool "nvidia-smi-topo", devices (column order), gpus, nics,
  matrix {row: {column: link}}, cpu_affinity {gpu: text}, numa_affinity {gpu: text},
  nic_names {"NIC0": "mlx5_0"}.
"""

from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from typing import Any, Iterable

from acceptance.parsers._common import ParseError, Record, clean_text, na_to_none, to_float, to_int

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
class NvidiaSmiRecord(Record):
    tool: str
    format: str
    gpu_count: int
    attached_gpus: int | None
    driver_version: str | None
    cuda_version: str | None
    timestamp: str | None
    gpus: tuple[Gpu, ...]

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
_TABLE_HEAD = re.compile(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?")
_XML_DOC = re.compile(r"(?:<\?xml[^>]*\?>\s*)?(?:<!DOCTYPE[^>]*>\s*)?<nvidia_smi_log\b.*?</nvidia_smi_log>", re.S)
_QUERY_GPU_CMD = re.compile(r"--query-gpu[= ]([A-Za-z0-9_.,\-]+)")


def split_samples(text: str) -> list[str]:
    """Each nvidia-smi output in `text` (XML documents, -q logs, tables, CSV blocks), in order."""
    text = clean_text(text)
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
    out: list[str] = []
    last_end = -1
    for s, e in spans:
        if s < last_end:
            continue
        out.append(text[s:e])
        last_end = e
    return out


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
            while j < len(lines) and (
                lines[j].strip() == "[...]" or (lines[j].strip() and len(next(csv.reader([lines[j]]), [])) == ncols and not lines[j].startswith("#"))
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


def parse_nvidia_smi(text: str, query_fields: list[str] | None = None) -> NvidiaSmiRecord:
    """Parse the first nvidia-smi output found in `text` (any supported format)."""
    text = clean_text(text)
    if query_fields:
        return _parse_csv(text, query_fields)
    samples = split_samples(text)
    if samples:
        text = samples[0]
    fmt = detect_format(text)
    if fmt == "xml":
        return _parse_xml(text)
    if fmt == "query":
        return _parse_query(text)
    if fmt == "table":
        return _parse_table(text)
    if fmt == "csv":
        return _parse_csv(text, None)
    raise ParseError(TOOL, "no -q -x XML, -q log, default table or --query-gpu CSV found")


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
    lines = text.splitlines()
    header: list[str] | None = None
    rows: list[list[str]] = []
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
            cells = [c.strip() for c in next(csv.reader([line], skipinitialspace=True), [])]
            if len(cells) == len(header):
                rows.append(cells)
    if not rows or header is None:
        raise ParseError(TOOL, "CSV header without data rows")
    gpus = []
    driver = attached = timestamp = None
    for pos, cells in enumerate(rows):
        row = dict(zip(header, cells))
        gpus.append(_gpu_from_mapping(row, pos))
        driver = driver or na_to_none(row.get("driver_version"))
        timestamp = timestamp or na_to_none(row.get("timestamp"))
        if attached is None:
            attached = to_int(na_to_none(row.get("count")))
    return NvidiaSmiRecord(
        tool=TOOL, format="csv", gpu_count=len(gpus), attached_gpus=attached, driver_version=driver,
        cuda_version=None, timestamp=timestamp, gpus=tuple(gpus),
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
    return NvidiaSmiRecord(
        tool=TOOL, format="xml", gpu_count=len(gpus), attached_gpus=to_int(_xt(root, "attached_gpus")),
        driver_version=_xt(root, "driver_version"), cuda_version=_xt(root, "cuda_version"),
        timestamp=_xt(root, "timestamp"), gpus=tuple(gpus),
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
    for raw in text[m.end():end].splitlines():
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
            gpu_trees[-1][1].values[path] = v.strip()
        else:
            stack.append((indent, line.strip().lower()))
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
    return NvidiaSmiRecord(
        tool=TOOL, format="query", gpu_count=len(gpus), attached_gpus=to_int(na_to_none(header.get("attached gpus"))),
        driver_version=na_to_none(header.get("driver version")), cuda_version=na_to_none(header.get("cuda version")),
        timestamp=na_to_none(header.get("timestamp")), gpus=tuple(gpus),
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
    r"^\|\s*(\d+)\s+(.+?)\s+(On|Off)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+(\S+)\s*\|\s*(.*?)\s*\|"
)
_ROW2 = re.compile(
    r"^\|\s*(\S+)\s+(\S+)\s+(P\d+|\S+)\s+(.*?)\s*\|\s*(\d+)\s*MiB\s*/\s*(\d+)\s*MiB\s*\|\s*(\S+)\s+(.*?)\s*\|"
)
_ROW3 = re.compile(r"^\|\s*\|\s*\|\s*(\S.*?)\s*\|")


def _parse_table(text: str) -> NvidiaSmiRecord:
    head = _TABLE_HEAD.search(text)
    assert head is not None
    lines = text[head.end():].splitlines()
    gpus: list[Gpu] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^\|\s*Processes:", line) or (gpus and not line.strip()):
            break
        m1 = _ROW1.match(line)
        if not m1:
            i += 1
            continue
        gpu = Gpu(
            index=int(m1.group(1)),
            name=m1.group(2).strip(),
            persistence_mode=m1.group(3) == "On",
            pci_bus_id=m1.group(4),
            ecc_uncorrected_volatile=to_int(na_to_none(m1.group(6))),
        )
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
                    memory_used_mib=float(m2.group(5)),
                    memory_total_mib=float(m2.group(6)),
                    utilization_gpu_pct=to_float(na_to_none(m2.group(7))),
                    compute_mode=na_to_none(m2.group(8)),
                )
        if i + 2 < len(lines):
            m3 = _ROW3.match(lines[i + 2])
            if m3:
                gpu = replace(gpu, mig_mode=to_bool(m3.group(1)))
        gpus.append(gpu)
        i += 1
    if not gpus:
        raise ParseError(TOOL, "nvidia-smi table without GPU rows")
    return NvidiaSmiRecord(
        tool=TOOL, format="table", gpu_count=len(gpus), attached_gpus=None,
        driver_version=head.group(2), cuda_version=na_to_none(head.group(3)), timestamp=None, gpus=tuple(gpus),
    )


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

    def link(self, a: str, b: str) -> str | None:
        return self.matrix.get(a, {}).get(b)


_TOPO_HEAD = re.compile(r"^[ \t]*GPU0[ \t]+(?:GPU1|NIC\d|mlx5_|CPU Affinity)", re.M)
_TOPO_COL = re.compile(r"GPU NUMA ID|CPU Affinity|NUMA Affinity|GPU\d+|NIC\d+|mlx5_\d+")


def split_topo_samples(text: str) -> list[str]:
    """Each `nvidia-smi topo -m` matrix in `text`, from its header line on."""
    text = clean_text(text)
    heads = [m.start() for m in _TOPO_HEAD.finditer(text)]
    return [text[s: heads[i + 1] if i + 1 < len(heads) else len(text)] for i, s in enumerate(heads)]


def parse_nvidia_smi_topo(text: str) -> TopoRecord:
    """Parse the first `nvidia-smi topo -m` matrix in `text`."""
    text = clean_text(text)
    samples = split_topo_samples(text)
    if not samples:
        raise ParseError("nvidia-smi topo -m", "no matrix header starting with GPU0 found")
    lines = samples[0].splitlines()
    header = lines[0]
    cols = _TOPO_COL.findall(header)
    dev_cols = [c for c in cols if re.fullmatch(r"(GPU|NIC|mlx5_)\S*", c)]
    matrix: dict[str, dict[str, str]] = {}
    cpu_aff: dict[str, str] = {}
    numa_aff: dict[str, str] = {}
    nic_names: dict[str, str] = {}
    for line in lines[1:]:
        nm = re.match(r"^\s*(NIC\d+):\s*(\S+)\s*$", line)
        if nm:
            nic_names[nm.group(1)] = nm.group(2)
            continue
        parts = line.split()
        if not parts or not re.fullmatch(r"(GPU|NIC|mlx5_)\S*", parts[0]) or parts[0] not in dev_cols:
            continue
        cells = parts[1:]
        if len(cells) < len(dev_cols):
            continue
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
