"""software.versions from standard command outputs, for a provider who does not run slakit's
probe: a transcript of the commands with each output under a line naming the command.

    $ hostname
    r01-n01
    $ nvidia-smi -q                  (or nvidia-smi, nvidia-smi -q -x)
    ...
    $ uname -r                       (or uname -a)
    6.8.0-45-generic
    $ cat /etc/os-release
    ...
    $ ofed_info -s
    MLNX_OFED_LINUX-24.07-0.6.1.0:
    $ dpkg -l                        (an excerpt: the lines of the packages that matter)
    ii  libnccl2   2.23.4-1+cuda12.6   amd64   NVIDIA Collective Communication Library
    $ rpm -qa                        (an excerpt)
    slurm-slurmd-24.05.3-1.el9.x86_64
    $ systemctl is-active nvidia-fabricmanager
    active

A command line may also be written `# $ cmd` or `==> cmd <==`. Sections of other commands
are ignored. The result has the keys of `extract_versions`, plus `ofed`, `hostname` and
`sections` (the commands found). Pure.
"""

from __future__ import annotations

import re
from typing import Any

_HEADER = re.compile(r"^(?:#\s*)?\$\s+(\S.*?)\s*$|^==>\s*(\S.*?)\s*<==\s*$")
_NUM = r"(\d+(?:\.\d+)+)"


def split_transcript(text: str) -> list[tuple[str, str]]:
    """[(command, output)] in order; text before the first command line is dropped."""
    out: list[tuple[str, list[str]]] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        m = _HEADER.match(line)
        if m:
            out.append(((m.group(1) or m.group(2)).strip(), []))
        elif out:
            out[-1][1].append(line)
    return [(cmd, "\n".join(lines).strip("\n")) for cmd, lines in out]


def _first(pattern: str, text: str, flags: int = re.M) -> str | None:
    m = re.search(pattern, text, flags)
    return m.group(1) if m else None


def _dpkg(text: str) -> dict[str, str]:
    """`dpkg -l` lines -> {package: version}, epoch (`5:`) dropped."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and re.fullmatch(r"[a-z]{2,3}", parts[0]):
            out[parts[1].split(":")[0]] = parts[2].split(":", 1)[-1]
    return out


def _rpm(text: str) -> dict[str, str]:
    """`rpm -qa` lines (name-version-release.arch) -> {package: version-release}."""
    out = {}
    for line in text.split():
        name = re.sub(r"\.(x86_64|aarch64|noarch|i686|ppc64le)$", "", line.strip())
        m = re.match(r"^(.+)-([^-]+)-([^-]+)$", name)
        if m:
            out[m.group(1)] = f"{m.group(2)}-{m.group(3)}"
    return out


def _version(v: str | None) -> str | None:
    return _first(_NUM, v, 0) if v else None


def _package(pkgs: dict[str, str], *patterns: str) -> str | None:
    for pat in patterns:
        for name in sorted(pkgs):
            if re.fullmatch(pat, name):
                return _version(pkgs[name])
    return None


def versions_from_transcript(text: str) -> dict[str, Any] | None:
    """The versions a transcript shows; None when it holds no command slakit reads."""
    sections = split_transcript(text)
    known: list[str] = []
    smi = nvcc = kernel = host = osr = ofed = fm = None
    pkgs: dict[str, str] = {}
    for cmd, body in sections:
        word = cmd.split()[0].rsplit("/", 1)[-1] if cmd.split() else ""
        args = cmd.split()[1:]
        if word == "nvidia-smi":
            smi = (smi or "") + "\n" + body
        elif word == "nvcc":
            nvcc = body
        elif word == "uname":
            first = body.strip().splitlines()[0] if body.strip() else ""
            if "-a" in args and len(first.split()) >= 3:
                host, kernel = first.split()[1], first.split()[2]
            elif "-n" in args:
                host = first.strip() or None
            else:
                kernel = first.strip() or None
        elif word == "hostname":
            host = body.strip().splitlines()[0].strip() if body.strip() else None
        elif word == "cat" and any("os-release" in a for a in args):
            osr = body
        elif word == "ofed_info":
            ofed = _first(r"(?:MLNX_OFED_LINUX|OFED(?:-internal)?|DOCA[_-]OFED\w*)-([\w.\-]+?):?\s*$", body) or \
                _first(r"^\s*(\S+?):?\s*$", body)
        elif word == "dpkg":
            pkgs.update(_dpkg(body))
        elif word == "rpm":
            pkgs.update(_rpm(body))
        elif word == "systemctl" and any("fabricmanager" in a for a in args):
            state = body.strip().splitlines()[0].strip() if body.strip() else None
            fm = "running" if state == "active" else state
        else:
            continue
        known.append(cmd)
    if not known:
        return None
    smi = smi or ""
    driver = (_first(r"^\s*Driver Version\s*:\s*" + _NUM, smi) or _first(r"<driver_version>\s*" + _NUM, smi)
              or _first(r"Driver Version:\s*" + _NUM, smi)
              or _package(pkgs, r"nvidia-driver(-\d+)?(-open|-server|-server-open)?", r"nvidia-kernel-common-\d+",
                          r"kmod-nvidia.*", r"nvidia-driver-cuda"))
    cuda = (_first(r"^\s*CUDA Version\s*:\s*" + _NUM, smi) or _first(r"<cuda_version>\s*" + _NUM, smi)
            or _first(r"CUDA Version:\s*" + _NUM, smi) or _first(r"release\s+" + _NUM, nvcc or "", 0)
            or _package(pkgs, r"cuda-toolkit(-\d+-\d+)?", r"cuda-cudart-\d+-\d+", r"cuda-runtime-\d+-\d+"))
    nccl = _package(pkgs, r"libnccl2?", r"libnccl-dev")
    os_id = _first(r'^ID="?([^"\n]+)"?', osr or "")
    os_version = _first(r'^VERSION_ID="?([^"\n]+)"?', osr or "")
    runtimes = {}
    for key, pats in (("enroot", (r"enroot",)), ("docker", (r"docker-ce", r"docker\.io", r"docker")),
                      ("podman", (r"podman",)), ("apptainer", (r"apptainer",)),
                      ("nvidia_container_cli", (r"libnvidia-container-tools", r"libnvidia-container1"))):
        v = _package(pkgs, *pats)
        if v:
            runtimes[key] = v
    return {
        "driver": driver,
        "cuda": cuda,
        "nccl": nccl,
        "kernel": kernel,
        "os": f"{os_id} {os_version}" if os_id and os_version else os_version,
        "os_id": os_id,
        "os_version": os_version,
        "fabric_manager": fm,
        "container_runtime": ", ".join(f"{k} {v}" for k, v in runtimes.items()) or None,
        "runtimes": runtimes,
        "slurm": _package(pkgs, r"slurm", r"slurm-wlm", r"slurmd", r"slurm-slurmd", r"slurm-smd-slurmd"),
        "kubernetes": _package(pkgs, r"kubelet", r"kubernetes-node"),
        "ofed": ofed,
        "hostname": host,
        "sections": known,
    }
