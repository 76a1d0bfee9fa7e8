"""`security.access`: who can get in, and what is exposed.

- SSH daemon: PasswordAuthentication, KbdInteractiveAuthentication, PermitRootLogin from
  `sshd -T` when it runs, else from sshd_config and its Include files (first value wins, as
  in sshd; `Match` blocks that loosen a setting are reported).
- authorized_keys of every account, compared with the contract's `access.provider_staff_keys`
  and `access.customer_keys` (same key = same key type and blob; comments/options ignored).
- munge key, slurm.conf and slurmdbd.conf owners and modes.
- TCP sockets listening on non-loopback addresses (/proc/net/tcp, /proc/net/tcp6) against
  `access.allowed_ports`.
- world-writable directories without the sticky bit on shared storage mounts.

collect(host, params) -> AccessRaw (IO); evaluate(parse(raw), access, ...) -> list[Verdict] (pure).
"""

from __future__ import annotations

import ipaddress
import os
import re
import stat as st
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acceptance.results import Status, Verdict

from .host import CommandResult, FileStat, Host
from .sshkeys import BadLine, FoundKey, KeyError_, PublicKey, key_text, parse_authorized_keys, parse_key

if TYPE_CHECKING:
    from typing import TypeAlias

    from slaschema.models import Contract

    # The contract the security checks read: the loaded model, or the plain data `security
    # audit` builds when command-line options add params to every security criterion.
    ContractData: TypeAlias = Contract | Mapping[str, Any]

CHECK = "security.access"
SSHD_CONFIG = "/etc/ssh/sshd_config"
MUNGE_KEY = "/etc/munge/munge.key"
SLURM_CONFS = ["/etc/slurm/slurm.conf", "/etc/slurm-llnl/slurm.conf"]
SLURMDBD_CONFS = ["/etc/slurm/slurmdbd.conf", "/etc/slurm-llnl/slurmdbd.conf"]
SHARED_FS_TYPES = frozenset({
    "nfs", "nfs4", "lustre", "gpfs", "beegfs", "ceph", "cephfs", "wekafs", "glusterfs",
    "fuse.glusterfs", "fuse.cephfs", "fuse.juicefs", "fuse.s3fs", "fuse.gcsfuse", "virtiofs",
    "cifs", "smb3", "9p", "panfs", "vast", "orangefs", "fuse.weka", "fuse.sshfs",
})
DEFAULT_AUTHORIZED_KEYS_FILE = ".ssh/authorized_keys .ssh/authorized_keys2"
SSHD_DEFAULTS = {
    "passwordauthentication": "yes",
    "kbdinteractiveauthentication": "yes",
    "permitrootlogin": "prohibit-password",
    "usepam": "no",
    "authorizedkeysfile": DEFAULT_AUTHORIZED_KEYS_FILE,
}
WATCHED = ("passwordauthentication", "kbdinteractiveauthentication", "challengeresponseauthentication",
           "permitrootlogin", "usepam", "authorizedkeysfile", "authorizedkeyscommand")


# ---------------------------------------------------------------- parameters

@dataclass(frozen=True)
class AccessParams:
    provider_staff_keys: tuple[str, ...] | None = None   # None: the contract has no list
    customer_keys: tuple[str, ...] | None = None
    allowed_ports: tuple[str, ...] | None = None         # "22", "22/tcp", "60000-61000"
    shared_mounts: tuple[str, ...] = ()                  # extra paths to audit besides detected shared mounts
    walk_max_depth: int = 3
    walk_max_dirs: int = 20000


def _get(obj: Any, name: str) -> Any:
    """A field of a model or mapping; None when absent. A pydantic field left at its default
    (not written in the file) counts as absent, so `access:` without `allowed_ports` means
    "no allow-list" rather than "no port allowed"."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    fields_set = getattr(obj, "model_fields_set", None)
    if fields_set is not None and name not in fields_set:
        return None
    return getattr(obj, name, None)


def params_from_contract(contract: ContractData | None, criterion_params: Mapping[str, Any] | None = None) -> AccessParams:
    """Read `access.{provider_staff_keys, customer_keys, allowed_ports}` from a contract
    (model or plain dict); criterion params may add `shared_mounts`, `walk_max_depth`."""
    access = _get(contract, "access")
    provider = _get(access, "provider_staff_keys")
    customer = _get(access, "customer_keys")
    if access is not None and (provider is not None or customer is not None):
        # One list written means the other is agreed to be empty.
        provider, customer = provider or [], customer or []

    def tup(v: Any) -> tuple[str, ...] | None:
        return None if v is None else tuple(key_text(x) if not isinstance(x, (int, str)) else str(x) for x in v)
    cp = dict(criterion_params or {})
    return AccessParams(
        provider_staff_keys=tup(provider),
        customer_keys=tup(customer),
        allowed_ports=tup(_get(access, "allowed_ports")),
        shared_mounts=tuple(str(p) for p in cp.get("shared_mounts", ()) or ()),
        walk_max_depth=int(cp.get("walk_max_depth", 3)),
        walk_max_dirs=int(cp.get("walk_max_dirs", 20000)),
    )


# ---------------------------------------------------------------- raw data

@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    home: str
    shell: str


@dataclass(frozen=True)
class Listener:
    proto: str                   # tcp | tcp6
    address: str
    port: int
    uid: int
    inode: int
    process: str | None = None


@dataclass(frozen=True)
class WalkResult:
    mount: str
    fstype: str
    world_writable: tuple[tuple[str, int], ...]   # (path, mode) of world-writable dirs, sticky or not
    dirs_seen: int
    truncated: bool
    error: str | None = None


@dataclass(frozen=True)
class AccessRaw:
    sshd_t: CommandResult | None
    sshd_files: tuple[tuple[str, int, str], ...]    # (path, first line, text) in the order sshd reads them
    accounts: tuple[Account, ...]
    groups: dict[int, str]
    key_files: tuple[tuple[str, str, str], ...]     # (user, path, text)
    files: dict[str, FileStat | None]               # munge key, slurm confs
    listeners: tuple[Listener, ...]
    proc_net_read: bool
    walks: tuple[WalkResult, ...]


def parse_passwd(text: str) -> list[Account]:
    out = []
    for line in text.splitlines():
        parts = line.split(":")
        if len(parts) >= 7 and parts[2].isdigit():
            out.append(Account(parts[0], int(parts[2]), parts[5], parts[6]))
    return out


def parse_group(text: str) -> dict[int, str]:
    out = {}
    for line in text.splitlines():
        parts = line.split(":")
        if len(parts) >= 3 and parts[2].isdigit():
            out[int(parts[2])] = parts[0]
    return out


def _hex_addr(hexaddr: str) -> str:
    raw = bytes.fromhex(hexaddr)
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw[::-1]))
    # IPv6: four 32-bit words, each in host (little-endian) order.
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    ip6 = ipaddress.IPv6Address(words)
    return f"::ffff:{ip6.ipv4_mapped}" if ip6.ipv4_mapped is not None else str(ip6)


def parse_proc_net_tcp(text: str, proto: str) -> list[Listener]:
    """Listening sockets (state 0A) from /proc/net/tcp or tcp6."""
    out = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 10 or f[3] != "0A":
            continue
        addr, port = f[1].split(":")
        out.append(Listener(proto, _hex_addr(addr), int(port, 16), int(f[7]), int(f[9])))
    return out


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _sshd_includes(host: Host, path: str, depth: int, out: list[tuple[str, int, str]]) -> None:
    """Append (path, first line number, text) segments in the order sshd reads them: an
    Include's files take the place of the Include line."""
    if depth > 16:
        return
    text = host.read_text(path)
    if text is None:
        return
    lines = text.splitlines()
    start = 0
    for i, line in enumerate(lines):
        tokens = line.split("#", 1)[0].split()
        if len(tokens) >= 2 and tokens[0].lower() == "include":
            out.append((path, start + 1, "\n".join(lines[start:i])))
            for pattern in tokens[1:]:
                full = pattern if pattern.startswith("/") else "/etc/ssh/" + pattern
                for hit in host.glob(full):
                    _sshd_includes(host, hit, depth + 1, out)
            start = i + 1
    out.append((path, start + 1, "\n".join(lines[start:])))


def _walk(host: Host, mount: str, fstype: str, max_depth: int, max_dirs: int) -> WalkResult:
    base = host.path(mount)
    found: list[tuple[str, int]] = []
    seen = 0
    truncated = False
    try:
        base_dev = os.lstat(base).st_dev
    except OSError as exc:
        return WalkResult(mount, fstype, (), 0, False, str(exc))
    stack = [(base, 0)]
    while stack:
        path, depth = stack.pop()
        try:
            s = os.lstat(path)
        except OSError:
            continue
        if not st.S_ISDIR(s.st_mode) or s.st_dev != base_dev:
            continue
        seen += 1
        if s.st_mode & st.S_IWOTH:
            rel = "/" + str(path.relative_to(host.root)) if host.root != Path("/") else str(path)
            found.append((rel, st.S_IMODE(s.st_mode)))
        if seen >= max_dirs:
            truncated = bool(stack)
            break
        if depth >= max_depth:
            continue
        try:
            with os.scandir(path) as it:
                children = [Path(e.path) for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        stack.extend((c, depth + 1) for c in sorted(children, reverse=True))
    return WalkResult(mount, fstype, tuple(found), seen, truncated)


def parse_mounts(text: str) -> list[tuple[str, str]]:
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3:
            out.append((f[1].replace("\\040", " "), f[2]))
    return out


def _socket_owners(host: Host) -> dict[int, str]:
    """inode -> process name, from /proc/<pid>/fd links (best effort)."""
    owners: dict[int, str] = {}
    for pid in host.listdir("/proc") or []:
        if not pid.isdigit():
            continue
        fds = host.listdir(f"/proc/{pid}/fd")
        if not fds:
            continue
        comm = (host.read_text(f"/proc/{pid}/comm") or "").strip() or pid
        for fd in fds:
            link = host.readlink(f"/proc/{pid}/fd/{fd}") or ""
            m = re.fullmatch(r"socket:\[(\d+)\]", link)
            if m:
                owners.setdefault(int(m.group(1)), f"{comm}[{pid}]")
    return owners


def collect(host: Host, params: AccessParams) -> AccessRaw:
    sshd_t = host.run(["sshd", "-T"])
    files: list[tuple[str, int, str]] = []
    _sshd_includes(host, SSHD_CONFIG, 0, files)
    accounts = parse_passwd(host.read_text("/etc/passwd") or "")
    groups = parse_group(host.read_text("/etc/group") or "")
    # Which files hold keys: sshd's AuthorizedKeysFile (from -T or the files), %h/%u/%% expanded.
    eff = effective_sshd(sshd_t, tuple(files))
    patterns = eff.values.get("authorizedkeysfile", DEFAULT_AUTHORIZED_KEYS_FILE).split()
    key_files = []
    for acct in accounts:
        for pat in patterns:
            if pat.lower() == "none":
                continue
            p = pat.replace("%%", "\0").replace("%h", acct.home).replace("%u", acct.name).replace("\0", "%")
            if not p.startswith("/"):
                p = acct.home.rstrip("/") + "/" + p
            text = host.read_text(p)
            if text is not None:
                key_files.append((acct.name, p, text))
    stats = {p: host.stat(p) for p in [MUNGE_KEY, *SLURM_CONFS, *SLURMDBD_CONFS]}
    listeners: list[Listener] = []
    proc_read = False
    owners: dict[int, str] | None = None
    for proto in ("tcp", "tcp6"):
        text = host.read_text(f"/proc/net/{proto}")
        if text is None:
            continue
        proc_read = True
        found = parse_proc_net_tcp(text, proto)
        exposed = [x for x in found if not is_loopback(x.address)]
        if exposed and owners is None:
            owners = _socket_owners(host)
        listeners += [Listener(x.proto, x.address, x.port, x.uid, x.inode, (owners or {}).get(x.inode))
                      for x in found]
    mounts = [(m, t) for m, t in parse_mounts(host.read_text("/proc/mounts") or "") if t in SHARED_FS_TYPES]
    mounts += [(m, "configured") for m in params.shared_mounts if m not in {x for x, _ in mounts}]
    walks = tuple(_walk(host, m, t, params.walk_max_depth, params.walk_max_dirs) for m, t in mounts)
    return AccessRaw(sshd_t, tuple(files), tuple(accounts), groups, tuple(key_files), stats,
                     tuple(listeners), proc_read, walks)


# ---------------------------------------------------------------- sshd (pure)

@dataclass(frozen=True)
class SshdConfig:
    values: dict[str, str]                     # effective global values (lowercase keys)
    origin: dict[str, str]                     # key -> "file:line", "sshd -T" or "default"
    match_overrides: tuple[tuple[str, str, str], ...] = ()   # (where, key, value) inside Match blocks
    source: str = "sshd -T"


def parse_sshd_t(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            out.setdefault(parts[0].lower(), parts[1])
    return out


def parse_sshd_files(segments: Iterable[tuple[str, int, str]]) -> SshdConfig:
    """Effective global values from config segments in read order (first value wins)."""
    values: dict[str, str] = {}
    origin: dict[str, str] = {}
    overrides: list[tuple[str, str, str]] = []
    in_match = False
    current = None
    for path, first, text in segments:
        if path != current and first == 1:
            in_match = False           # a Match block ends with its file
        current = path
        for n, line in enumerate(text.splitlines(), start=first):
            body = line.split("#", 1)[0].strip()
            if not body:
                continue
            parts = re.split(r"\s*=\s*|\s+", body, maxsplit=1)
            key = parts[0].lower()
            value = parts[1].strip() if len(parts) > 1 else ""
            if key == "match":
                in_match = value.lower() != "all"
                continue
            if key == "include":
                continue
            if key not in WATCHED:
                continue
            if key == "challengeresponseauthentication":
                key = "kbdinteractiveauthentication"
            if in_match:
                overrides.append((f"{path}:{n}", key, value))
            elif key not in values:
                values[key] = value
                origin[key] = f"{path}:{n}"
    return SshdConfig(values, origin, tuple(overrides), source="config files")


def effective_sshd(sshd_t: CommandResult | None, files: tuple[tuple[str, int, str], ...]) -> SshdConfig:
    if sshd_t is not None and sshd_t.ok and sshd_t.stdout.strip():
        vals = parse_sshd_t(sshd_t.stdout)
        from_files = parse_sshd_files(files)
        return SshdConfig({**SSHD_DEFAULTS, **vals}, {k: "sshd -T" for k in vals},
                          from_files.match_overrides, "sshd -T")
    cfg = parse_sshd_files(files)
    values = {**SSHD_DEFAULTS, **{k.lower(): v for k, v in cfg.values.items()}}
    origin = {k: cfg.origin.get(k, "default") for k in values}
    return SshdConfig(values, origin, cfg.match_overrides, cfg.source)


# ---------------------------------------------------------------- evaluate (pure)

def _v(criterion: str, node: str | None, status: Status, subject: str, measured: Any, expected: str,
       reason: str, remediation: str = "", **details: Any) -> Verdict:
    return Verdict(criterion, node, status, measured, expected, reason, remediation,
                   {"subject": subject, **details})


def evaluate_sshd(raw: AccessRaw, criterion: str, node: str | None) -> list[Verdict]:
    if raw.sshd_t is not None and raw.sshd_t.missing and not raw.sshd_files:
        return [_v(criterion, node, Status.SKIP, "sshd", None, "sshd installed", "sshd_not_installed",
                   detail="no sshd binary and no /etc/ssh/sshd_config")]
    if not raw.sshd_files and not (raw.sshd_t and raw.sshd_t.ok):
        return [_v(criterion, node, Status.ERROR, "sshd", None, "readable sshd configuration",
                   "sshd_config_unreadable", detail=raw.sshd_t.why() if raw.sshd_t else "")]
    cfg = effective_sshd(raw.sshd_t, raw.sshd_files)
    src = cfg.source if cfg.source == "sshd -T" else \
        f"config files ({', '.join(dict.fromkeys(p for p, _, _ in raw.sshd_files))})"
    note = {} if cfg.source == "sshd -T" or raw.sshd_t is None else {"sshd_t": raw.sshd_t.why()}
    out = []
    pw = cfg.values["passwordauthentication"].lower()
    out.append(_v(criterion, node, Status.FAIL if pw == "yes" else Status.PASS, "sshd PasswordAuthentication",
                  pw, "no", "ssh_password_auth_enabled" if pw == "yes" else "ssh_password_auth_disabled",
                  "Set `PasswordAuthentication no` in /etc/ssh/sshd_config (before any Include that sets it) "
                  "and reload sshd." if pw == "yes" else "",
                  source=src, origin=cfg.origin.get("passwordauthentication"), **note))
    kbd = cfg.values["kbdinteractiveauthentication"].lower()
    pam = cfg.values["usepam"].lower()
    if kbd == "yes" and pam == "yes":
        out.append(_v(criterion, node, Status.FAIL, "sshd KbdInteractiveAuthentication", "yes (UsePAM yes)", "no",
                      "ssh_kbd_interactive_enabled",
                      "Set `KbdInteractiveAuthentication no`: with UsePAM it accepts passwords.",
                      source=src, origin=cfg.origin.get("kbdinteractiveauthentication"), **note))
    root = cfg.values["permitrootlogin"].lower()
    ok_root = {"no", "prohibit-password", "without-password", "forced-commands-only"}
    out.append(_v(criterion, node, Status.PASS if root in ok_root else Status.FAIL, "sshd PermitRootLogin", root,
                  "no | prohibit-password | forced-commands-only",
                  "ssh_root_login_restricted" if root in ok_root else "ssh_root_password_login",
                  "" if root in ok_root else "Set `PermitRootLogin prohibit-password` (or `no`) and reload sshd.",
                  source=src, origin=cfg.origin.get("permitrootlogin"), **note))
    for where, key, value in cfg.match_overrides:
        loosens = (key in ("passwordauthentication", "kbdinteractiveauthentication") and value.lower() == "yes") \
            or (key == "permitrootlogin" and value.lower() == "yes")
        if loosens:
            out.append(_v(criterion, node, Status.WARN, f"sshd Match block {key}", value, "no loosening in Match",
                          "ssh_match_override", f"Review the Match block at {where}.", origin=where))
    if cfg.values.get("authorizedkeyscommand", "none").lower() not in ("none", ""):
        out.append(_v(criterion, node, Status.WARN, "sshd AuthorizedKeysCommand",
                      cfg.values["authorizedkeyscommand"], "keys only from authorized_keys files",
                      "authorized_keys_command_in_use",
                      "Keys also come from AuthorizedKeysCommand; audit that source against the contract list too."))
    return out


def _parse_list(lines: Iterable[str], role: str, criterion: str, node: str | None,
                errors: list[Verdict]) -> dict[tuple[str, bytes], tuple[str, PublicKey]]:
    out = {}
    for i, line in enumerate(lines):
        try:
            k = parse_key(line)
        except KeyError_ as exc:
            errors.append(_v(criterion, node, Status.ERROR, f"access.{role}[{i}]", line[:60],
                             "an OpenSSH public key line", "contract_key_invalid",
                             "Fix the key in the contract's access list.", error=str(exc)))
            continue
        out[k.identity] = (role, k)
    return out


def evaluate_keys(raw: AccessRaw, params: AccessParams, criterion: str, node: str | None) -> list[Verdict]:
    found: list[FoundKey] = []
    bad: list[BadLine] = []
    for user, path, text in raw.key_files:
        k, b = parse_authorized_keys(text, user, path)
        found += k
        bad += b
    out: list[Verdict] = []
    for b in bad:
        out.append(_v(criterion, node, Status.WARN, f"{b.file}:{b.line}", None, "an OpenSSH public key line",
                      "authorized_keys_line_invalid", "Remove or fix the line.", user=b.user, error=b.error))
    inventory = [{"user": f.user, "file": f.file, "line": f.line, "key": f.key.describe()} for f in found]
    if params.provider_staff_keys is None and params.customer_keys is None:
        out.append(_v(criterion, node, Status.WARN, "authorized keys", f"{len(found)} keys",
                      "keys listed in the contract (access.provider_staff_keys, access.customer_keys)",
                      "no_access_list", "Add an `access` section listing who may log in.", keys=inventory))
        return out
    allowed: dict[tuple[str, bytes], tuple[str, PublicKey]] = {}
    allowed |= _parse_list(params.customer_keys or (), "customer_keys", criterion, node, out)
    allowed |= _parse_list(params.provider_staff_keys or (), "provider_staff_keys", criterion, node, out)
    unlisted = [f for f in found if f.key.identity not in allowed]
    for f in unlisted:
        out.append(_v(criterion, node, Status.FAIL, f"{f.user}: {f.file}:{f.line}", f.key.describe(),
                      "a key on the contract's access list", "unlisted_authorized_key",
                      f"Remove the key from {f.file} (line {f.line}) or add it to the contract's access list.",
                      user=f.user, file=f.file, line=f.line, fingerprint=f.key.fingerprint,
                      key_type=f.key.key_type, comment=f.key.comment))
    listed = [f for f in found if f.key.identity in allowed]
    if not unlisted:
        by_role = {}
        for f in listed:
            by_role.setdefault(allowed[f.key.identity][0], []).append(f"{f.user}:{f.key.fingerprint}")
        out.append(_v(criterion, node, Status.PASS, "authorized keys", f"{len(found)} keys",
                      "every key on the contract's access list", "authorized_keys_listed", keys=inventory,
                      by_role=by_role, accounts_scanned=len(raw.accounts)))
    return out


def _mode(s: FileStat) -> str:
    return f"{st.S_IMODE(s.mode):04o}"


def _owner(raw: AccessRaw, uid: int) -> str:
    for a in raw.accounts:
        if a.uid == uid:
            return a.name
    return str(uid)


def evaluate_files(raw: AccessRaw, criterion: str, node: str | None) -> list[Verdict]:
    out = []
    s = raw.files.get(MUNGE_KEY)
    if s is None:
        out.append(_v(criterion, node, Status.SKIP, MUNGE_KEY, None, "present", "munge_key_absent"))
    else:
        owner = _owner(raw, s.uid)
        measured = f"{_mode(s)} {owner}:{raw.groups.get(s.gid, s.gid)}"
        problems = []
        if st.S_IMODE(s.mode) & 0o077:
            problems.append("munge_key_mode")
        if owner != "munge":
            problems.append("munge_key_owner")
        if problems:
            for code in problems:
                out.append(_v(criterion, node, Status.FAIL, MUNGE_KEY, measured, "0400 or 0600, owner munge", code,
                              f"chown munge:munge {MUNGE_KEY}; chmod 0400 {MUNGE_KEY}; restart munged."))
        else:
            out.append(_v(criterion, node, Status.PASS, MUNGE_KEY, measured, "0400 or 0600, owner munge",
                          "munge_key_protected"))
    confs = [(p, raw.files.get(p)) for p in SLURM_CONFS if raw.files.get(p) is not None]
    if not confs:
        out.append(_v(criterion, node, Status.SKIP, "slurm.conf", None, "present", "slurm_conf_absent",
                      searched=SLURM_CONFS))
    for path, s in confs:
        owner = _owner(raw, s.uid)
        measured = f"{_mode(s)} {owner}:{raw.groups.get(s.gid, s.gid)}"
        if st.S_IMODE(s.mode) & 0o022:
            out.append(_v(criterion, node, Status.FAIL, path, measured, "not group/world-writable",
                          "slurm_conf_writable", f"chmod 0644 {path}"))
        elif owner not in ("root", "slurm"):
            out.append(_v(criterion, node, Status.FAIL, path, measured, "owner root or slurm", "slurm_conf_owner",
                          f"chown root:root {path}"))
        else:
            out.append(_v(criterion, node, Status.PASS, path, measured, "0644 or stricter, owner root or slurm",
                          "slurm_conf_protected"))
    for path in SLURMDBD_CONFS:
        s = raw.files.get(path)
        if s is None:
            continue
        measured = f"{_mode(s)} {_owner(raw, s.uid)}"
        bad = st.S_IMODE(s.mode) & 0o077
        out.append(_v(criterion, node, Status.FAIL if bad else Status.PASS, path, measured, "0600 (holds the DB password)",
                      "slurmdbd_conf_readable" if bad else "slurmdbd_conf_protected",
                      f"chmod 0600 {path}" if bad else ""))
    return out


def parse_port_rules(rules: Iterable[str]) -> list[tuple[int, int, str | None]]:
    """'22', '22/tcp', '60000-61000', '8443/tcp' -> (low, high, proto or None). Raises ValueError."""
    out = []
    for r in rules:
        text = str(r).strip().lower()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?(?:/(tcp|udp))?", text)
        if not m:
            raise ValueError(f"not a port, port range or port/proto: {r!r}")
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        if not (0 < lo <= hi <= 65535):
            raise ValueError(f"port out of range: {r!r}")
        out.append((lo, hi, m.group(3)))
    return out


def evaluate_ports(raw: AccessRaw, params: AccessParams, criterion: str, node: str | None) -> list[Verdict]:
    if not raw.proc_net_read:
        return [_v(criterion, node, Status.SKIP, "listening sockets", None, "/proc/net/tcp readable",
                   "proc_net_unreadable")]
    exposed = sorted({(x.address, x.port, x.proto, x.process or "") for x in raw.listeners if not is_loopback(x.address)})
    listing = [f"{a}:{p} ({proc})" if proc else f"{a}:{p}" for a, p, _, proc in exposed]
    if params.allowed_ports is None:
        return [_v(criterion, node, Status.WARN, "listening sockets", f"{len(listing)} non-loopback listeners",
                   "ports listed in the contract (access.allowed_ports)", "no_port_allow_list",
                   "Add `access.allowed_ports` to the contract.", listeners=listing)]
    try:
        rules = parse_port_rules(params.allowed_ports)
    except ValueError as exc:
        return [_v(criterion, node, Status.ERROR, "access.allowed_ports", list(params.allowed_ports),
                   "ports like 22, 22/tcp or 60000-61000", "allowed_ports_invalid", str(exc))]
    out = []
    for addr, port, proto, proc in exposed:
        if any(lo <= port <= hi and pr in (None, "tcp") for lo, hi, pr in rules):
            continue
        shown = f"{addr}:{port}" + (f" ({proc})" if proc else "")
        out.append(_v(criterion, node, Status.FAIL, f"tcp port {port}", shown,
                      f"allowed ports: {', '.join(params.allowed_ports) or 'none'}", "port_not_allowed",
                      f"Stop the service on port {port}, bind it to loopback, firewall it, or add it to "
                      "access.allowed_ports in the contract.", address=addr, port=port, proto=proto, process=proc or None))
    if not out:
        out.append(_v(criterion, node, Status.PASS, "listening sockets", f"{len(listing)} non-loopback listeners",
                      f"allowed ports: {', '.join(params.allowed_ports) or 'none'}", "ports_allowed",
                      listeners=listing))
    return out


def evaluate_shared(raw: AccessRaw, criterion: str, node: str | None) -> list[Verdict]:
    if not raw.walks:
        return [_v(criterion, node, Status.SKIP, "shared storage", None, "a shared mount to audit", "no_shared_mounts",
                   detail="no network/parallel file system mounted and none configured")]
    out = []
    for w in raw.walks:
        if w.error:
            out.append(_v(criterion, node, Status.ERROR, w.mount, None, "readable mount", "mount_unreadable",
                          error=w.error))
            continue
        open_dirs = [(p, m) for p, m in w.world_writable if not m & st.S_ISVTX]
        if open_dirs:
            out.append(_v(criterion, node, Status.FAIL, w.mount,
                          ", ".join(f"{p} ({m:04o})" for p, m in open_dirs[:10]) +
                          (f" and {len(open_dirs) - 10} more" if len(open_dirs) > 10 else ""),
                          "no world-writable directory without the sticky bit", "world_writable_dir",
                          "chmod o-w the directories, or chmod +t where a shared scratch area is intended.",
                          directories=[p for p, _ in open_dirs], fstype=w.fstype, dirs_scanned=w.dirs_seen))
        elif w.truncated:
            out.append(_v(criterion, node, Status.WARN, w.mount, f"{w.dirs_seen} directories scanned",
                          "a complete scan", "walk_truncated",
                          "Raise walk_max_dirs / walk_max_depth in the criterion params for a full scan.",
                          fstype=w.fstype))
        else:
            out.append(_v(criterion, node, Status.PASS, w.mount, f"{w.dirs_seen} directories scanned",
                          "no world-writable directory without the sticky bit", "no_world_writable_dirs",
                          fstype=w.fstype, sticky_world_writable=[p for p, _ in w.world_writable]))
    return out


def evaluate(raw: AccessRaw, params: AccessParams, criterion: str = CHECK, node: str | None = None) -> list[Verdict]:
    return (evaluate_sshd(raw, criterion, node) + evaluate_keys(raw, params, criterion, node)
            + evaluate_files(raw, criterion, node) + evaluate_ports(raw, params, criterion, node)
            + evaluate_shared(raw, criterion, node))
