"""Raw security observations to JSON and back, so a node can collect and the runner judge.

`probe.py` runs `collect` on the node and prints `probe_document(...)`; the runner reads it
back with `raw_from_json` and calls the same pure `evaluate` it would call locally. The
round trip is exact (tests check `raw_from_json(to_json(raw)) == raw`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .audit_access import AccessRaw, Account, Listener, WalkResult
from .audit_isolation import IsolationRaw, Probe
from .audit_versions import VersionsRaw
from .host import CommandResult, FileStat

FORMAT = "slakit-security-probe"
VERSION = 1


def to_json(raw: Any) -> Any:
    """Dataclasses, tuples and dicts to plain JSON values (dict keys become strings)."""
    if dataclasses.is_dataclass(raw) and not isinstance(raw, type):
        return {f.name: to_json(getattr(raw, f.name)) for f in dataclasses.fields(raw)}
    if isinstance(raw, (list, tuple)):
        return [to_json(x) for x in raw]
    if isinstance(raw, dict):
        return {str(k): to_json(v) for k, v in raw.items()}
    return raw


def _cmd(d: dict | None) -> CommandResult | None:
    if d is None:
        return None
    return CommandResult(tuple(d["argv"]), d["returncode"], d.get("stdout", ""), d.get("stderr", ""),
                         bool(d.get("missing")), bool(d.get("timed_out")))


def _stat(d: dict | None) -> FileStat | None:
    return None if d is None else FileStat(**d)


def _probe(d: dict | None) -> Probe | None:
    return None if d is None else Probe(**d)


def versions_raw_from_json(d: dict) -> VersionsRaw:
    return VersionsRaw({k: _cmd(v) for k, v in d["commands"].items()}, dict(d["files"]),
                       {k: dict(v) for k, v in d["ib_devices"].items()})


def access_raw_from_json(d: dict) -> AccessRaw:
    return AccessRaw(
        _cmd(d["sshd_t"]),
        tuple((p, int(n), t) for p, n, t in d["sshd_files"]),
        tuple(Account(**a) for a in d["accounts"]),
        {int(k): v for k, v in d["groups"].items()},
        tuple((u, p, t) for u, p, t in d["key_files"]),
        {k: _stat(v) for k, v in d["files"].items()},
        tuple(Listener(**x) for x in d["listeners"]),
        bool(d["proc_net_read"]),
        tuple(WalkResult(w["mount"], w["fstype"], tuple((p, int(m)) for p, m in w["world_writable"]),
                         w["dirs_seen"], w["truncated"], w.get("error")) for w in d["walks"]),
    )


def isolation_raw_from_json(d: dict) -> IsolationRaw:
    return IsolationRaw(
        d["cmdline"], d["iommu_groups"], bool(d["hypervisor"]),
        tuple(_stat(s) for s in d["gpu_nodes"]), d["constrain_devices"],
        tuple(_stat(s) for s in d["ipmi_nodes"]), _probe(d["bmc"]),
        d["kubeconfig_server"], d["kubeconfig_error"], _probe(d["api_probe"]),
        _probe(d["kubelet_ro_probe"]), _probe(d["kubelet_probe"]), d["kubelet_config"],
    )


READERS = {
    "security.versions": versions_raw_from_json,
    "security.access": access_raw_from_json,
    "security.isolation": isolation_raw_from_json,
}


def probe_document(check: str, raw: Any, collected_at: str, host: str | None) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "check": check, "collected_at": collected_at, "host": host,
            "raw": to_json(raw)}


class ProbeError(ValueError):
    """A probe document that is not one (wrong format, other check, missing fields)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def raw_from_json(doc: dict[str, Any], check: str) -> Any:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ProbeError("not_a_probe_document", "not a security probe document")
    if doc.get("check") != check:
        raise ProbeError("probe_check_mismatch", f"probe is for {doc.get('check')}, not {check}")
    try:
        return READERS[check](doc["raw"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ProbeError("probe_document_invalid", f"probe document is incomplete: {exc!r}") from exc
