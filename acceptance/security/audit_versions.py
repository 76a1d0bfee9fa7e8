"""`security.versions`: installed versions of the GPU-cluster stack against the minimum table.

collect(host) -> VersionsRaw          IO: runs the version commands, reads version files
parse(raw)    -> VersionsObservation   pure: turns tool output into versions per component
evaluate(obs, table, now, ...) -> list[Verdict]   pure: one verdict per component (per device
                                       for firmware) plus one for the table's age

A tool that is not installed is a `skip` with the reason, never a pass.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime

from acceptance.results import Status, Verdict

from .host import CommandResult, Host
from .minimums import MinimumEntry, MinimumTable, entries_for, staleness
from .versions import COMPONENTS, KERNEL_PREFIX, LineRule, VersionError, component_kind, line_of, line_sort_key, parse_version

CHECK = "security.versions"

# Commands per component, tried in order; the first that yields a version wins.
COMMANDS: dict[str, list[list[str]]] = {
    "nvidia_driver": [["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]],
    "cuda_toolkit": [["nvcc", "--version"]],
    "nvidia_container_toolkit": [["nvidia-ctk", "--version"], ["nvidia-container-cli", "--version"]],
    "runc": [["runc", "--version"]],
    "docker_engine": [["dockerd", "--version"], ["docker", "version", "--format", "{{.Server.Version}}"]],
    "containerd": [["containerd", "--version"]],
    "dcgm": [["dcgmi", "--version"]],
    "dcgm_exporter": [["dcgm-exporter", "--version"]],
    "connectx_firmware": [["ibv_devinfo"], ["mlxfwmanager", "--query"]],
    "kernel": [["uname", "-r"], ["dpkg-query", "-W", "-f", "${Package}\t${Version}\t${Status}\n", "linux-image-*"]],
}
FILES = [
    "/proc/driver/nvidia/version",
    "/usr/local/cuda/version.json",
    "/usr/local/cuda/version.txt",
    "/etc/os-release",
    "/proc/sys/kernel/osrelease",
]
IB_SYSFS = "/sys/class/infiniband"


@dataclass(frozen=True)
class VersionsRaw:
    commands: dict[str, CommandResult]           # "prog arg ..." -> result
    files: dict[str, str]                          # path -> content (only files that exist)
    ib_devices: dict[str, dict[str, str]]         # mlx5_0 -> {fw_ver, board_id, hca_type}


@dataclass(frozen=True)
class Installed:
    component: str
    version: str
    source: str                  # the command or file it came from
    device: str | None = None    # firmware: the HCA; driver: None
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NotFound:
    component: str
    reason: str                  # tool_not_found | tool_failed | unparseable_output | no_devices | ...
    detail: str


@dataclass(frozen=True)
class VersionsObservation:
    installed: tuple[Installed, ...]
    not_found: tuple[NotFound, ...]
    os_id: str | None = None          # "ubuntu", "debian"
    os_codename: str | None = None    # "noble", "bookworm"


# ---------------------------------------------------------------- collect (IO)

def collect(host: Host) -> VersionsRaw:
    commands: dict[str, CommandResult] = {}
    for argvs in COMMANDS.values():
        for argv in argvs:
            commands[" ".join(argv)] = host.run(argv)
    files = {p: t for p in FILES if (t := host.read_text(p)) is not None}
    ib: dict[str, dict[str, str]] = {}
    for dev in host.listdir(IB_SYSFS) or []:
        attrs = {}
        for attr in ("fw_ver", "board_id", "hca_type"):
            text = host.read_text(f"{IB_SYSFS}/{dev}/{attr}")
            if text is not None:
                attrs[attr] = text.strip()
        ib[dev] = attrs
    return VersionsRaw(commands, files, ib)


# ---------------------------------------------------------------- parse (pure)

_VER = r"v?(\d+(?:\.\d+)+(?:-[0-9A-Za-z.]+)?)"


def parse_nvidia_smi_driver(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if re.fullmatch(r"\d+(?:\.\d+)+", ln.strip())]


def parse_proc_driver_version(text: str) -> str | None:
    # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.211.01  Tue ..." (open module adds "Open")
    m = re.search(r"NVRM version:.*?Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def parse_nvcc(text: str) -> str | None:
    m = re.search(r"release \d+\.\d+, V(\d+\.\d+(?:\.\d+)?)", text)
    if m:
        return m.group(1)
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else None


def parse_cuda_version_file(path: str, text: str) -> str | None:
    if path.endswith(".json"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            return None
        v = (doc.get("cuda") or {}).get("version") if isinstance(doc, dict) else None
        return str(v) if v else None
    m = re.search(r"CUDA Version (\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def parse_version_line(text: str) -> str | None:
    """First `version X.Y.Z` (runc, nvidia-ctk, dcgmi, dcgm-exporter) or bare version token."""
    m = re.search(r"[Vv]ersion:?\s+" + _VER, text)
    if m:
        return m.group(1)
    m = re.search(r"(?<![\w.])" + _VER + r"(?![\w.])", text)
    return m.group(1) if m else None


def parse_dockerd(text: str) -> str | None:
    m = re.search(r"Docker version\s+" + _VER, text)
    if m:
        return m.group(1)
    t = text.strip()
    return t if re.fullmatch(r"v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?", t) else None


def parse_containerd(text: str) -> str | None:
    # "containerd containerd.io 1.7.27 05044ec..." / "containerd github.com/containerd/containerd/v2 v2.0.5 ..."
    for tok in text.split():
        if re.fullmatch(r"v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?(?:\+[0-9A-Za-z.]+)?", tok):
            return tok.lstrip("v")
    return None


def parse_dcgm_exporter(text: str) -> tuple[str | None, str | None]:
    """dcgm-exporter reports `DCGM-EXPORTER` (`4.5.3-4.8.2` = DCGM 4.5.3, exporter 4.8.2)."""
    v = parse_version_line(text)
    if v is None:
        return None, None
    m = re.fullmatch(r"(\d+\.\d+\.\d+)-(\d+\.\d+\.\d+)", v)
    if m:
        return m.group(2), m.group(1)
    return v, None


def parse_ibv_devinfo(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    dev = None
    for line in text.splitlines():
        m = re.match(r"\s*hca_id:\s*(\S+)", line)
        if m:
            dev = m.group(1)
            continue
        m = re.match(r"\s*fw_ver:\s*(\S+)", line)
        if m and dev:
            out[dev] = m.group(1)
    return out


def parse_mlxfwmanager(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    dev = None
    for line in text.splitlines():
        m = re.match(r"\s*PCI Device Name:\s*(\S+)", line) or re.match(r"\s*Device #\d+:", line)
        if m:
            dev = m.group(1) if m.groups() else line.strip().rstrip(":")
            continue
        m = re.match(r"\s*FW\s+(\d+\.\d+\.\d+)", line)
        if m and dev and dev not in out:
            out[dev] = m.group(1)
    return out


def parse_os_release(text: str) -> tuple[str | None, str | None]:
    kv = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            kv[k.strip()] = v.strip().strip('"')
    return kv.get("ID"), kv.get("VERSION_CODENAME") or kv.get("UBUNTU_CODENAME")


def parse_dpkg_kernels(text: str) -> dict[str, str]:
    """{package: version} for installed linux-image packages."""
    out = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and parts[1] and (len(parts) < 3 or "install ok installed" in parts[2]):
            out[parts[0]] = parts[1]
    return out


def _cmd(raw: VersionsRaw, argv: list[str]) -> CommandResult | None:
    return raw.commands.get(" ".join(argv))


def _from_commands(raw: VersionsRaw, component: str, parser) -> tuple[str, str] | NotFound:
    """(version, source) from the first command that works, else why not."""
    reasons = []
    for argv in COMMANDS[component]:
        res = _cmd(raw, argv)
        if res is None:
            continue
        if res.missing:
            reasons.append(("tool_not_found", res.why()))
            continue
        if not res.ok:
            reasons.append(("tool_failed", res.why()))
            continue
        v = parser(res.stdout + ("\n" + res.stderr if not res.stdout.strip() else ""))
        if v:
            return v, " ".join(argv)
        reasons.append(("unparseable_output", f"{' '.join(argv)}: no version in {res.stdout.strip()[:80]!r}"))
    if not reasons:
        return NotFound(component, "tool_not_found", "no command collected")
    # Report the most informative reason: a failure beats a missing fallback tool.
    for code in ("unparseable_output", "tool_failed", "tool_not_found"):
        hits = [d for c, d in reasons if c == code]
        if hits:
            return NotFound(component, code, "; ".join(d for _, d in reasons))
    return NotFound(component, reasons[0][0], reasons[0][1])


def parse(raw: VersionsRaw) -> VersionsObservation:
    installed: list[Installed] = []
    missing: list[NotFound] = []

    # NVIDIA driver: the kernel module's own report first, then nvidia-smi (one line per GPU).
    drv = parse_proc_driver_version(raw.files.get("/proc/driver/nvidia/version", ""))
    if drv:
        installed.append(Installed("nvidia_driver", drv, "/proc/driver/nvidia/version"))
    else:
        got = _from_commands(raw, "nvidia_driver",
                             lambda t: (sorted(set(parse_nvidia_smi_driver(t))) or [None])[0])
        if isinstance(got, NotFound):
            missing.append(got)
        else:
            installed.append(Installed("nvidia_driver", got[0], got[1]))

    # CUDA toolkit: nvcc, then the toolkit's version file.
    got = _from_commands(raw, "cuda_toolkit", parse_nvcc)
    if isinstance(got, NotFound):
        for path in ("/usr/local/cuda/version.json", "/usr/local/cuda/version.txt"):
            v = parse_cuda_version_file(path, raw.files.get(path, ""))
            if v:
                installed.append(Installed("cuda_toolkit", v, path))
                break
        else:
            missing.append(got)
    else:
        installed.append(Installed("cuda_toolkit", got[0], got[1]))

    simple = {
        "nvidia_container_toolkit": parse_version_line,
        "runc": parse_version_line,
        "docker_engine": parse_dockerd,
        "containerd": parse_containerd,
        "dcgm": parse_version_line,
    }
    for comp, parser in simple.items():
        got = _from_commands(raw, comp, parser)
        if isinstance(got, NotFound):
            if comp == "docker_engine":
                cli = _cmd(raw, ["docker", "version", "--format", "{{.Server.Version}}"])
                if cli is not None and not cli.missing:
                    got = NotFound(comp, "engine_not_reachable",
                                   "docker client present but no engine version: " + got.detail)
            missing.append(got)
        else:
            installed.append(Installed(comp, got[0], got[1]))

    res = _cmd(raw, ["dcgm-exporter", "--version"])
    if res is None or res.missing:
        missing.append(NotFound("dcgm_exporter", "tool_not_found", "dcgm-exporter not found"))
    elif not res.ok:
        missing.append(NotFound("dcgm_exporter", "tool_failed", res.why()))
    else:
        exp, dcgm_part = parse_dcgm_exporter(res.stdout + res.stderr)
        if exp is None:
            missing.append(NotFound("dcgm_exporter", "unparseable_output", res.stdout.strip()[:80]))
        else:
            installed.append(Installed("dcgm_exporter", exp, "dcgm-exporter --version",
                                       extra={"built_with_dcgm": dcgm_part} if dcgm_part else {}))

    # ConnectX/BlueField firmware: sysfs first (no tools needed), then ibv_devinfo / mlxfwmanager.
    fw: dict[str, tuple[str, str, dict[str, str]]] = {}
    for dev, attrs in sorted(raw.ib_devices.items()):
        if attrs.get("fw_ver"):
            extra = {k: v for k, v in attrs.items() if k != "fw_ver"}
            fw[dev] = (attrs["fw_ver"], f"{IB_SYSFS}/{dev}/fw_ver", extra)
    if not fw:
        for argv, parser in ((["ibv_devinfo"], parse_ibv_devinfo), (["mlxfwmanager", "--query"], parse_mlxfwmanager)):
            r = _cmd(raw, argv)
            if r is not None and r.ok:
                for dev, v in parser(r.stdout).items():
                    fw[dev] = (v, " ".join(argv), {})
                if fw:
                    break
    if fw:
        for dev, (v, src, extra) in sorted(fw.items()):
            installed.append(Installed("connectx_firmware", v, src, device=dev, extra=extra))
    else:
        missing.append(NotFound("connectx_firmware", "no_devices",
                                f"no {IB_SYSFS}/*/fw_ver, and ibv_devinfo/mlxfwmanager gave no firmware"))

    # Kernel: the package of the running kernel (`linux-image-$(uname -r)`).
    os_id, codename = parse_os_release(raw.files.get("/etc/os-release", ""))
    uname = _cmd(raw, ["uname", "-r"])
    release = (uname.stdout.strip() if uname is not None and uname.ok else "") or \
        raw.files.get("/proc/sys/kernel/osrelease", "").strip()
    dpkg = _cmd(raw, COMMANDS["kernel"][1])
    pkgs = parse_dpkg_kernels(dpkg.stdout) if dpkg is not None and dpkg.ok else {}
    comp = f"{KERNEL_PREFIX}{os_id}_{codename}" if os_id and codename else "linux_kernel"
    if not release:
        code = "tool_not_found" if uname is None or uname.missing else "tool_failed"
        missing.append(NotFound(comp, code, "no kernel release from uname -r or /proc/sys/kernel/osrelease"))
    elif (pkg := next((p for p in (f"linux-image-{release}", f"linux-image-unsigned-{release}") if p in pkgs), None)):
        installed.append(Installed(comp, pkgs[pkg], f"dpkg-query {pkg}", extra={"running": release}))
    elif dpkg is None or dpkg.missing:
        missing.append(NotFound(comp, "tool_not_found", f"running kernel {release}; dpkg-query not found"))
    else:
        others = ", ".join(f"{p} {v}" for p, v in sorted(pkgs.items())) or "none"
        missing.append(NotFound(comp, "kernel_not_packaged",
                                f"running kernel {release} is not from an installed linux-image package "
                                f"(installed: {others})"))
    return VersionsObservation(tuple(installed), tuple(missing), os_id, codename)


# ---------------------------------------------------------------- evaluate (pure)

REMEDIATION = {
    "nvidia_driver": "Install the fixed driver release of this branch (or move to a supported branch) and reboot.",
    "cuda_toolkit": "Install the fixed CUDA toolkit release.",
    "nvidia_container_toolkit": "Upgrade nvidia-container-toolkit to the fixed release.",
    "runc": "Upgrade runc (usually via containerd.io / the container runtime package) to the fixed release of its minor line.",
    "docker_engine": "Upgrade Docker Engine to the fixed release of its major line.",
    "containerd": "Upgrade containerd to the fixed release of its line.",
    "dcgm": "Upgrade datacenter-gpu-manager to the fixed release.",
    "dcgm_exporter": "Deploy the fixed dcgm-exporter image/binary.",
    "connectx_firmware": "Burn the fixed firmware for this train (mlxfwmanager -u / flint) and reset the adapter.",
    "virtio_net_bluefield": "Upgrade the BlueField virtio-net emulation to the fixed release of its line.",
}


def _remediation(component: str) -> str:
    if component.startswith(KERNEL_PREFIX) or component == "linux_kernel":
        return "Install the fixed kernel package (apt-get install the newer linux-image) and reboot into it."
    return REMEDIATION.get(component, "Upgrade to the fixed release.")


def _advisories(entries: list[MinimumEntry]) -> list[dict]:
    return [
        {"advisory": e.advisory, "cves": list(e.cves), "source": e.source, "links": e.links(),
         "minimum": e.minimum, "line": e.line, "published": e.published.isoformat() if e.published else None}
        for e in entries
    ]


def _subject(inst: Installed) -> str:
    return inst.component + (f"[{inst.device}]" if inst.device else "")


def evaluate_installed(inst: Installed, table: MinimumTable, criterion: str, node: str | None) -> Verdict:
    comp = inst.component
    kind = component_kind(comp)
    details = {"component": comp, "source": inst.source, **({"device": inst.device} if inst.device else {}),
               **inst.extra}
    all_entries = table.for_component(comp)
    if kind is None or not all_entries:
        return Verdict(criterion, node, Status.SKIP, inst.version, "no minimum in the table", "no_minimum_in_table",
                       "", {**details, "subject": _subject(inst)})
    try:
        pv = parse_version(inst.version, kind.scheme)
        lines = table.lines(comp)
        line = line_of(comp, inst.version, lines)
    except VersionError as exc:
        return Verdict(criterion, node, Status.ERROR, inst.version, f"a {kind.scheme} version",
                       "unparseable_version", "", {**details, "subject": _subject(inst), "error": str(exc)})
    details |= {"subject": _subject(inst), "line": line}
    applicable = entries_for(table, comp, line)
    if not applicable:
        listed = sorted(lines, key=line_sort_key)
        details["table_lines"] = listed
        newest = max(listed, key=line_sort_key) if listed else None
        software_line = kind.line_rule in (LineRule.MAJOR_MINOR, LineRule.MAJOR) and comp != "connectx_firmware"
        expected = f"a line listed in the table ({', '.join(listed)})"
        if software_line and newest is not None and line_sort_key(line) < line_sort_key(newest):
            return Verdict(criterion, node, Status.FAIL, inst.version, expected, "unsupported_line",
                           f"Line {line} has no fixed release in the table; move to a listed line. "
                           + _remediation(comp), details)
        return Verdict(criterion, node, Status.WARN, inst.version, expected, "line_not_in_table",
                       f"The table has no floor for line {line}; check the vendor's advisories for it.", details)
    failing = [e for e in applicable if pv < parse_version(e.minimum, kind.scheme)]
    floor = max(applicable, key=lambda e: parse_version(e.minimum, kind.scheme))
    expected = f">= {floor.minimum}" + (f" (line {line})" if line else "")
    if failing:
        details["advisories"] = _advisories(failing)
        details["cves"] = sorted({c for e in failing for c in e.cves})
        return Verdict(criterion, node, Status.FAIL, inst.version, expected, "below_minimum",
                       _remediation(comp), details)
    details["advisories"] = _advisories(applicable)
    if kind.line_rule is LineRule.LTS_YEAR and line != "GA":
        # The version number alone cannot tell an LTS build from a GA build of the same year.
        ga = [e for e in table.for_component(comp) if e.line == "GA"
              and parse_version(e.minimum, kind.scheme).release[:1] == pv.release[:1]
              and pv < parse_version(e.minimum, kind.scheme)]
        if ga:
            details["advisories"] = _advisories(ga)
            return Verdict(criterion, node, Status.WARN, inst.version, f"{expected}; >= {ga[0].minimum} if GA",
                           "line_ambiguous", "Confirm the release stream (LTS or GA); on GA upgrade to "
                           f"{ga[0].minimum} or later.", details)
    return Verdict(criterion, node, Status.PASS, inst.version, expected, "at_or_above_minimum", "", details)


def evaluate(obs: VersionsObservation, table: MinimumTable, now: datetime | date,
             criterion: str = CHECK, node: str | None = None, max_age_days: int | None = None,
             only: set[str] | None = None) -> list[Verdict]:
    """One verdict per installed component (firmware: per device), per missing tool, and the table's age."""
    out: list[Verdict] = []
    age = staleness(table, now, max_age_days) if max_age_days is not None else staleness(table, now)
    age_details = {"subject": "minimum-version table", "source": table.source, "date_basis": table.date_basis,
                   "as_of": age.as_of.isoformat() if age.as_of else None, "age_days": age.age_days,
                   "max_age_days": age.max_age_days}
    measured = f"{age.as_of.isoformat()} ({age.age_days} days old)" if age.as_of else "undated"
    out.append(Verdict(criterion, node, Status(age.status), measured, f"<= {age.max_age_days} days old",
                       age.reason, "" if age.status == "pass" else
                       "Load a current table with --minimums FILE|URL (the public ClusterMAX table is accepted).",
                       age_details))
    for inst in obs.installed:
        if only is None or inst.component in only:
            out.append(evaluate_installed(inst, table, criterion, node))
    for nf in obs.not_found:
        if only is not None and nf.component not in only:
            continue
        status = Status.SKIP
        remediation = ""
        if nf.reason in ("unparseable_output", "tool_failed"):
            status = Status.ERROR      # the tool is there but did not say: not a skip, not a pass
        out.append(Verdict(criterion, node, status, None, "installed version", nf.reason, remediation,
                           {"subject": nf.component, "component": nf.component, "detail": nf.detail}))
    return out


def known_components() -> list[str]:
    return sorted(COMPONENTS)
