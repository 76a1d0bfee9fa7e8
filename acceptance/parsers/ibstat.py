"""`ibstat` output, or a `/sys/class/infiniband` snapshot, → `IbstatRecord`.

Formats (auto-detected, `format` says which):
  "ibstat"  `CA 'mlx5_0'` blocks with indented `Key: value` lines and `Port N:` sections
            (a CA list without ports, e.g. `ibstat | grep mlx5`, gives CAs and no ports)
  "sysfs"   lines `DEVICE/ports/N/FILE: CONTENT` (and `DEVICE/FILE: CONTENT`), the files of
            /sys/class/infiniband: state, phys_state, rate, link_layer, lid, sm_lid,
            counters/*, hw_counters/*; `DEVICE/fw_ver`, `DEVICE/hca_type`, `DEVICE/node_guid`

Port state is given in ibstat's words ("Active", "Down", "Init", "Armed"), physical state as
"LinkUp", "Disabled", "Polling", ... in both formats.

Stable JSON of `IbstatRecord.to_json()`:
  tool "ibstat", format, cas (CA names in order), ports: list of
    ca, port, state, physical_state, rate_gbps, width (e.g. "4X"; sysfs only), speed (e.g.
    "NDR"; sysfs only), link_layer, lid, sm_lid, port_guid, ca_type, firmware, node_guid,
    counters {name: int} (port counters and hw_counters; sysfs only)
  complete (False when ibstat stopped part way, `ibpanic: ...`, or a sysfs port has no state),
  errors: list of {code, message, device, line} (listing_incomplete, port_state_missing),
  source (the launcher prefix, or None).
`IbstatRecord.port(ca, n)` finds one port; `active_ports()` the ports whose state is Active.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from acceptance.parsers._common import Notice, ParseError, Record, clean_text, to_float, to_int
from acceptance.parsers._prefix import Source, cut_last_line, prepassed, strip_prefixes

TOOL = "ibstat"

_CA = re.compile(r"^\s*CA\s+'([^']+)'\s*$")
_KV = re.compile(r"^\s+([A-Za-z][A-Za-z ]*?):\s*(.*?)\s*$")
_PORT = re.compile(r"^\s+Port\s+(\d+):\s*$")
_SYSFS = re.compile(r"^\s*([A-Za-z0-9_.\-]+)/(?:ports/(\d+)/)?([A-Za-z0-9_/\-]+):\s?(.*?)\s*$")
_STATE_WORDS = {"ACTIVE": "Active", "DOWN": "Down", "INIT": "Init", "ARMED": "Armed", "ACTIVE_DEFER": "ActiveDefer"}
_PHYS_WORDS = {"LINKUP": "LinkUp", "DISABLED": "Disabled", "POLLING": "Polling", "SLEEP": "Sleep",
               "LINKERRORRECOVERY": "LinkErrorRecovery", "PHYTEST": "PhyTest"}


@dataclass(frozen=True)
class IbPort(Record):
    ca: str
    port: int
    state: str | None
    physical_state: str | None
    rate_gbps: float | None
    width: str | None
    speed: str | None
    link_layer: str | None
    lid: int | None
    sm_lid: int | None
    port_guid: str | None
    ca_type: str | None
    firmware: str | None
    node_guid: str | None
    counters: dict[str, int]


@dataclass(frozen=True)
class IbstatRecord(Record):
    tool: str
    format: str
    cas: tuple[str, ...]
    ports: tuple[IbPort, ...]
    complete: bool = True
    errors: tuple[Notice, ...] = ()
    source: Source | None = None

    def port(self, ca: str, port: int = 1) -> IbPort | None:
        for p in self.ports:
            if p.ca == ca and p.port == port:
                return p
        return None

    def active_ports(self) -> tuple[IbPort, ...]:
        return tuple(p for p in self.ports if p.state == "Active")


def _state(raw: str | None) -> str | None:
    if raw is None:
        return None
    word = re.sub(r"^\s*\d+\s*:\s*", "", raw).strip()
    return _STATE_WORDS.get(word.upper(), word) if word else None


def _phys(raw: str | None) -> str | None:
    if raw is None:
        return None
    word = re.sub(r"^\s*\d+\s*:\s*", "", raw).strip()
    return _PHYS_WORDS.get(word.upper().replace(" ", ""), word) if word else None


def _is_sysfs(text: str) -> bool:
    return len(re.findall(r"^\s*[A-Za-z0-9_.\-]+/ports/\d+/(?:state|rate|phys_state|link_layer):", text, re.M)) >= 1


# ibstat stops part way when it cannot read a device: "ibpanic: [1400444] main: stat of IB
# device 'mlx5_8' failed: No such file or directory" (exit 255); "ibwarn:" lines may precede it.
_PANIC = re.compile(r"^\s*(ibpanic|ibwarn|iberror):.*$", re.M)
_PANIC_DEV = re.compile(r"device '([^']+)'")


def split_samples(text: str) -> list[str]:
    """Each ibstat listing in `text`; a new one starts when a CA name repeats."""
    text = strip_prefixes(clean_text(text))
    if _is_sysfs(text) and not any(_CA.match(ln) for ln in text.splitlines()):
        return [text]
    lines = cut_last_line(text.split("\n"), text)
    samples: list[list[str]] = []
    seen: set[str] = set()
    current: list[str] | None = None
    for ln in lines:
        m = _CA.match(ln)
        if m:
            if current is None or m.group(1) in seen:
                current = []
                samples.append(current)
                seen = set()
            seen.add(m.group(1))
        if current is not None:
            current.append(ln)
    return ["\n".join(s) + "\n" for s in samples]


@prepassed()
def parse_ibstat(text: str) -> IbstatRecord:
    """Parse the first ibstat listing (or the sysfs snapshot) in `text`.

    An `ibpanic:` line (ibstat gave up on a device) makes the record `complete: false` with
    the line in `errors` (code `listing_incomplete`): the CAs after it were never listed."""
    text = clean_text(text)
    samples = split_samples(text) if any(_CA.match(ln) for ln in text.splitlines()) else []
    if samples:
        rec = _parse_ibstat(samples[0])
    elif _is_sysfs(text):
        rec = _parse_sysfs(text)
    elif re.search(r"^\s*ibpanic:", text, re.M):
        # ibstat gave up before listing any CA: no CA is a finding, with the reason
        rec = IbstatRecord(tool=TOOL, format="ibstat", cas=(), ports=())
    else:
        raise ParseError(TOOL, "no CA 'name' block and no /sys/class/infiniband lines found")
    region = samples[0] if samples else text
    errors = []
    for m in _PANIC.finditer(region):
        if m.group(1) == "ibwarn":
            continue
        dev = _PANIC_DEV.search(m.group(0))
        errors.append(Notice(code="listing_incomplete", message=m.group(0).strip(), device=dev.group(1) if dev else None,
                             line=region.count("\n", 0, m.start()) + 1))
    missing = [p for p in rec.ports if rec.format == "sysfs" and p.state is None]
    for p in missing:
        errors.append(Notice(code="port_state_missing", message=f"{p.ca}/ports/{p.port} has no state file in the snapshot",
                             device=p.ca))
    return replace(rec, complete=not errors, errors=tuple(errors)) if errors else rec


def _parse_ibstat(text: str) -> IbstatRecord:
    cas: list[str] = []
    ca_info: dict[str, dict[str, str]] = {}
    port_info: list[tuple[str, int, dict[str, str]]] = []
    ca: str | None = None
    port: dict[str, str] | None = None
    port_indent = 0
    for ln in cut_last_line(text.split("\n"), text):
        m = _CA.match(ln)
        if m:
            ca = m.group(1)
            if ca not in cas:
                cas.append(ca)
            ca_info.setdefault(ca, {})
            port = None
            continue
        if ca is None:
            continue
        pm = _PORT.match(ln)
        if pm:
            port = {}
            port_indent = len(ln) - len(ln.lstrip())
            port_info.append((ca, int(pm.group(1)), port))
            continue
        km = _KV.match(ln)
        if not km:
            continue
        indent = len(ln) - len(ln.lstrip())
        key, value = km.group(1).strip().lower(), km.group(2)
        if port is not None and indent > port_indent:
            port[key] = value
        else:
            port = None
            ca_info[ca][key] = value
    ports = []
    for ca_name, n, p in port_info:
        info = ca_info.get(ca_name, {})
        ports.append(IbPort(
            ca=ca_name, port=n, state=_state(p.get("state")), physical_state=_phys(p.get("physical state")),
            rate_gbps=to_float(p.get("rate")), width=None, speed=None, link_layer=p.get("link layer"),
            lid=to_int(p.get("base lid")), sm_lid=to_int(p.get("sm lid")), port_guid=p.get("port guid"),
            ca_type=info.get("ca type"), firmware=info.get("firmware version"), node_guid=info.get("node guid"),
            counters={},
        ))
    return IbstatRecord(tool=TOOL, format="ibstat", cas=tuple(cas), ports=tuple(ports))


def _parse_sysfs(text: str) -> IbstatRecord:
    cas: list[str] = []
    dev: dict[str, dict[str, str]] = {}
    ports: dict[tuple[str, int], dict[str, str]] = {}
    counters: dict[tuple[str, int], dict[str, int]] = {}
    for ln in cut_last_line(text.split("\n"), text):
        m = _SYSFS.match(ln)
        if not m:
            continue
        name, port, path, value = m.group(1), m.group(2), m.group(3), m.group(4)
        if name not in cas:
            cas.append(name)
        if port is None:
            dev.setdefault(name, {})[path] = value
            continue
        key = (name, int(port))
        if path.startswith(("counters/", "hw_counters/")):
            n = to_int(value)
            if n is not None:
                counters.setdefault(key, {})[path.split("/", 1)[1]] = n
            ports.setdefault(key, {})
        else:
            ports.setdefault(key, {})[path] = value
    if not ports:
        raise ParseError(TOOL, "sysfs snapshot without ports/N entries")
    out = []
    for (name, n), p in ports.items():
        rate = p.get("rate", "")
        rm = re.match(r"\s*([0-9.]+)\s*Gb/sec(?:\s*\((\d+X)\s*([A-Za-z]+)\))?", rate)
        info = dev.get(name, {})
        out.append(IbPort(
            ca=name, port=n, state=_state(p.get("state")), physical_state=_phys(p.get("phys_state")),
            rate_gbps=float(rm.group(1)) if rm else None, width=rm.group(2) if rm else None,
            speed=rm.group(3) if rm else None, link_layer=p.get("link_layer"),
            lid=to_int(p.get("lid")), sm_lid=to_int(p.get("sm_lid")), port_guid=None,
            ca_type=info.get("hca_type"), firmware=info.get("fw_ver"), node_guid=info.get("node_guid"),
            counters=dict(sorted(counters.get((name, n), {}).items())),
        ))
    return IbstatRecord(tool=TOOL, format="sysfs", cas=tuple(cas), ports=tuple(out))
