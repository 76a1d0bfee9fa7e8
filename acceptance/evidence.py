"""The evidence bundle: a folder both parties can hash, hand over and re-judge.

Layout (format `slakit-acceptance-bundle/1`):

    run.json                          how the run was made: contract (id, file, SHA-256), executor,
                                      nodes, params overrides, state per criterion
                                      (pending | done | interrupted), run state
    raw/<criterion>/<node>.json       what one node's run of the tool produced: RawOutput JSON
                                      {node, rc, started, finished, timed_out, error, stdout, stderr}
    raw/<criterion>/<node>.txt        hand-over alternative: the tool's output as is (exit status 0)
    metrics/<criterion>/<node>.json   what `parse` made of it
    results.json                      the run document: every verdict (see acceptance.runner)
    junit.xml                         the same verdicts as JUnit XML
    manifest.json                     {"format", "algorithm": "sha256", "files": {path: sha256},
                                       "digest": sha256 over the canonical JSON of format+files}

`<node>` is the node name; `_cluster` holds a run across nodes (NCCL) or one made on the
runner host (the detection drill). A provider hands over a bundle by laying out `raw/` this
way (the criterion ids are those of the contract); `slakit accept evaluate CONTRACT DIR`
judges it without running anything.

    signatures/key-<fingerprint>.sig  OpenSSH signatures over manifest.json (namespace
                                      `slakit-evidence`), one per signer; not in the manifest

Every file is written atomically (temp file + rename) and its hash recorded as it is
written; the manifest is rewritten after every finished criterion, so a bundle is
consistent at every moment, including after Ctrl-C. `verify` reports changed, missing and
added files and a manifest whose digest does not match its own list. A bundle holds regular
files only: a symlink, FIFO, device or socket in it, or a manifest path that is absolute or
climbs out with `..`, is a problem that `verify` reports without opening the entry.

A manifest and its files can be rewritten consistently by anyone; a signature cannot.
`sign_bundle` signs the manifest with an SSH key (see slaschema.sshsig); `verify` with an
allowed-signers file names who signed and fails on a signature that does not match. The
manifest is rewritten by `evaluate --write` and `run --resume`: that removes the signatures
of the old manifest (they no longer match) and the bundle must be signed again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acceptance.executors.base import RawOutput
from slaschema.fileio import write_atomic
from slaschema.textsafe import no_lone_surrogates

FORMAT = "slakit-acceptance-bundle/1"
VERIFY_FORMAT = "slakit-verify/1"        # the first field of `accept verify --format json`
MANIFEST = "manifest.json"
SIGNATURES = "signatures"
_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,200}\Z")


def node_file(node: str) -> str:
    """A node name as a file name; names that are not plain host names are hex-escaped."""
    if _SAFE.match(node):
        return node
    return "x-" + node.encode("utf-8").hex()


def node_from_file(stem: str) -> str:
    if stem.startswith("x-"):
        try:
            return bytes.fromhex(stem[2:]).decode("utf-8")
        except ValueError:
            return stem
    return stem


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest_digest(files: dict[str, str]) -> str:
    canonical = json.dumps({"format": FORMAT, "files": dict(sorted(files.items()))}, sort_keys=True,
                           separators=(",", ":"))
    return sha256_bytes(canonical.encode("utf-8"))


def dumps(doc: Any, *, pretty: bool = True) -> str:
    """JSON text; `pretty=False` for the large machine documents (raw outputs, metrics, results)."""
    if pretty:
        return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
    return json.dumps(doc, ensure_ascii=False, default=str, separators=(",", ":")) + "\n"


def _write(path: Path, data: bytes, durable: bool) -> None:
    write_atomic(path, data, durable=durable)


class Bundle:
    """Writes files into a bundle folder and keeps their hashes for the manifest."""

    def __init__(self, root: Path | str, *, durable: bool = True) -> None:
        self.root = Path(root)
        self.durable = durable
        self.hashes: dict[str, str] = {}

    def path(self, rel: str) -> Path:
        return self.root / rel

    def write(self, rel: str, data: str | bytes) -> str:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        _write(self.root / rel, raw, self.durable)
        digest = sha256_bytes(raw)
        self.hashes[rel] = digest
        return digest

    def write_json(self, rel: str, doc: Any, *, pretty: bool = True) -> str:
        return self.write(rel, dumps(doc, pretty=pretty))

    def adopt_existing(self) -> None:
        """Hash the files already in the folder (resume, re-evaluation)."""
        self.hashes = {rel: sha256_file(self.root / rel) for rel in list_files(self.root)}

    def write_manifest(self) -> dict[str, Any]:
        files = {k: v for k, v in sorted(self.hashes.items()) if k != MANIFEST}
        doc = {"format": FORMAT, "algorithm": "sha256", "files": files, "digest": manifest_digest(files)}
        data = dumps(doc).encode("utf-8")
        mpath = self.root / MANIFEST
        if _regular(mpath) and mpath.read_bytes() == data:
            return doc                                # unchanged: its signatures still hold
        _write(mpath, data, self.durable)
        drop_signatures(self.root)                    # they signed the manifest just replaced
        return doc

    # raw outputs ------------------------------------------------------------------------
    def write_raw(self, criterion: str, node: str, raw: RawOutput) -> None:
        self.write_json(f"raw/{criterion}/{node_file(node)}.json", raw.to_json(), pretty=False)

    def write_metrics(self, criterion: str, node: str, metrics: dict[str, Any] | None) -> None:
        if metrics is not None:
            self.write_json(f"metrics/{criterion}/{node_file(node)}.json", metrics, pretty=False)


def make_folder(root: Path | str, option: str = "--out") -> None:
    """Make the bundle folder (and the folders above it): one that cannot be made (a name
    under a file, a folder that takes no new entry such as /proc, no permission) is an
    `output_unwritable` problem naming the option, before anything is written."""
    from slaschema.errors import InputError, Problem

    try:
        Path(root).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError([Problem("output_unwritable", f"{option} {root}: the folder cannot be made "
                                  f"({exc.strerror or type(exc).__name__})", file=str(root),
                                  fix="name a folder that exists and can be written, or one that can be made")]
                         ) from None


def _regular(path: Path) -> bool:
    """A regular file that is not a symlink (never opens the entry)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _walk(root: Path) -> tuple[list[str], list[str]]:
    """(regular files, other entries) under root as POSIX relative paths; symlinks are not
    followed, signatures/ and the temp files of atomic writes are left out."""
    files, odd = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in sorted(dirnames):
            if os.path.islink(here / name):
                odd.append((here / name).relative_to(root).as_posix())
        dirnames[:] = sorted(d for d in dirnames if not os.path.islink(here / d)
                             and not (here == Path(root) and d == SIGNATURES))
        for name in sorted(filenames):
            if name.startswith(".") and name.endswith(".tmp"):
                continue
            rel = (here / name).relative_to(root).as_posix()
            (files if _regular(here / name) else odd).append(rel)
    return files, odd


def list_files(root: Path) -> list[str]:
    """Every regular file under root, as POSIX relative paths, temp files of atomic writes and
    signatures excluded; symlinks, FIFOs, devices and sockets are not listed (see `unsafe_entries`)."""
    return _walk(Path(root))[0]


def unsafe_entries(root: Path) -> list[str]:
    """Entries under root that are no regular file: symlinks, FIFOs, devices, sockets."""
    return _walk(Path(root))[1]


def _unsafe_rel(rel: str) -> bool:
    parts = rel.split("/")
    return (not rel or rel.startswith("/") or "\\" in rel or "\x00" in rel or ":" in parts[0]
            or any(p in ("", ".", "..") for p in parts))


def read_raw_dir(root: Path, criterion: str) -> dict[str, RawOutput] | None:
    """The raw outputs of one criterion: {node: RawOutput}; None when the folder is absent."""
    folder = Path(root) / "raw" / criterion
    if not folder.is_dir():
        return None
    from slaschema.safefiles import max_file_bytes

    out: dict[str, RawOutput] = {}
    limit = max_file_bytes()
    for p in sorted(folder.iterdir()):
        if not _regular(p) or p.name.startswith("."):      # no symlink, FIFO or device is read
            continue
        node = node_from_file(p.stem)
        if p.suffix in (".json", ".txt", ".log", ".out", ".xml") and p.stat().st_size > limit:
            # a handed-over output is read whole: one of gigabytes would take that much memory
            out[node] = RawOutput("", f"{p.name}: {p.stat().st_size:,} bytes, over the limit of {limit:,} bytes "
                                  "for a file slakit reads (slakit --max-file-size BYTES raises it)", None, None, None,
                                  error="raw_output_too_large", node=node)
            continue
        if p.suffix == ".json":
            text = p.read_text(encoding="utf-8", errors="replace")
            try:
                doc = json.loads(text)
            except (ValueError, RecursionError):      # nested too deep for the decoder: text
                doc = None
            if isinstance(doc, dict) and "stdout" in doc and "rc" in doc:
                out[node] = raw_from_json(doc, node)
                continue
            out[node] = RawOutput(text, "", 0, None, None, node=node)
        elif p.suffix in (".txt", ".log", ".out", ".xml"):
            out[node] = RawOutput(p.read_text(encoding="utf-8", errors="replace"), "", 0, None, None, node=node)
    return out


def raw_from_json(doc: dict[str, Any], node: str) -> RawOutput:
    from datetime import datetime

    def ts(v: Any) -> datetime | None:
        try:
            return datetime.fromisoformat(v) if isinstance(v, str) else None
        except ValueError:
            return None

    def text(v: str) -> str:
        # a lone UTF-16 surrogate ("\\ud800" in the JSON) is no text and cannot be written as
        # UTF-8 (the verdicts that quote it ended in UnicodeEncodeError): U+FFFD, as the bytes
        # of a .txt output that are not UTF-8
        return no_lone_surrogates(v)

    rc = doc.get("rc")
    return RawOutput(
        stdout=text(str(doc.get("stdout") or "")),
        stderr=text(str(doc.get("stderr") or "")),
        rc=rc if isinstance(rc, int) and not isinstance(rc, bool) else None,
        started=ts(doc.get("started")),
        finished=ts(doc.get("finished")),
        timed_out=bool(doc.get("timed_out")),
        error=text(doc["error"]) if isinstance(doc.get("error"), str) else None,
        # the node(s) the executor recorded it ran on (checked against the file name by the judging)
        node=text(doc["node"]) if isinstance(doc.get("node"), str) and doc["node"] else node,
    )




# --------------------------------------------------------------------------- verify


@dataclass(frozen=True)
class VerifyResult:
    root: str
    manifest_present: bool
    digest_ok: bool
    changed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    checked: int = 0
    digest: str | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)
    signatures: tuple[dict[str, Any], ...] = ()      # per signature file: SignatureCheck.to_json + file
    trust_checked: bool = False                     # checked against an allowed-signers file
    # why there is nothing to judge the files against: manifest_missing (no manifest.json, so no
    # bundle) or manifest_invalid (not a bundle manifest); `accept verify` reports it as bad input
    manifest_error: str | None = None

    @property
    def files_ok(self) -> bool:
        return self.manifest_present and self.digest_ok and not (self.changed or self.missing or self.added or self.problems)

    @property
    def signed(self) -> bool:
        """At least one signature matches the manifest (and, with allowed signers, is trusted)."""
        return any(s["ok"] for s in self.signatures)

    @property
    def ok(self) -> bool:
        if not self.files_ok or any(s["reason"] == "bad_signature" for s in self.signatures):
            return False
        return self.signed if self.trust_checked else True

    def signers(self) -> list[str]:
        return [s["principal"] or s["fingerprint"] or "?" for s in self.signatures if s["ok"]]

    def to_json(self) -> dict[str, Any]:
        return {"format": VERIFY_FORMAT, "root": self.root, "ok": self.ok, "manifest_present": self.manifest_present,
                "digest_ok": self.digest_ok, "digest": self.digest, "checked": self.checked,
                "changed": list(self.changed), "missing": list(self.missing), "added": list(self.added),
                "problems": list(self.problems), "signed": self.signed, "trust_checked": self.trust_checked,
                "signatures": list(self.signatures)}


def verify(root: Path | str, allowed_signers: Path | str | None = None) -> VerifyResult:
    """Compare the folder with its manifest: changed, missing and added files, the digest,
    entries that are no regular file, unsafe manifest paths, and the signatures (against
    `allowed_signers` when given). Raises slaschema.sshsig.SigningError when ssh-keygen is
    needed (signatures present or allowed signers given) but cannot run."""
    root = Path(root)
    mpath = root / MANIFEST
    odd = unsafe_entries(root)
    odd_problems = tuple(f"not a regular file (symlink, FIFO, device or socket): {rel}" for rel in odd)
    if not _regular(mpath):
        return VerifyResult(str(root), False, False, added=tuple(list_files(root)),
                            problems=("no manifest.json",) + odd_problems, trust_checked=allowed_signers is not None,
                            manifest_error="manifest_missing")
    manifest_bytes = mpath.read_bytes()
    try:
        doc = json.loads(manifest_bytes.decode("utf-8"))
        files = {str(k): str(v) for k, v in doc["files"].items()}
        digest = str(doc["digest"])
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return VerifyResult(str(root), True, False, problems=("manifest.json is not a bundle manifest",) + odd_problems,
                            trust_checked=allowed_signers is not None, manifest_error="manifest_invalid")
    digest_ok = manifest_digest(files) == digest and doc.get("format") == FORMAT
    present = set(list_files(root)) - {MANIFEST}
    changed, missing = [], []
    problems = list(odd_problems)
    for rel, want in sorted(files.items()):
        if _unsafe_rel(rel):
            problems.append(f"unsafe path in the manifest (absolute or `..`): {rel[:200]!r}")
            continue
        p = root / rel
        try:
            st = os.lstat(p)
        except OSError:
            missing.append(rel)
            continue
        if not stat.S_ISREG(st.st_mode):
            if rel not in odd:
                problems.append(f"not a regular file (symlink, FIFO, device or socket): {rel}")
        elif sha256_file(p) != want:
            changed.append(rel)
    added = sorted(present - set(files))
    sigs = tuple(_check_signatures(root, manifest_bytes, allowed_signers))
    return VerifyResult(str(root), True, digest_ok, tuple(changed), tuple(missing), tuple(added),
                        checked=len(files), digest=digest, problems=tuple(problems), signatures=sigs,
                        trust_checked=allowed_signers is not None)


def signature_files(root: Path) -> list[Path]:
    folder = Path(root) / SIGNATURES
    if not folder.is_dir() or folder.is_symlink():
        return []
    return [p for p in sorted(folder.iterdir()) if p.suffix == ".sig" and _regular(p)]


def _check_signatures(root: Path, manifest: bytes, allowed: Path | str | None) -> list[dict[str, Any]]:
    from slaschema import sshsig

    out = []
    for sig in signature_files(root):
        text = sig.read_text(encoding="ascii", errors="replace")[:65536]
        res = (sshsig.verify(manifest, text, sshsig.EVIDENCE_NAMESPACE, allowed) if allowed is not None
               else sshsig.check(manifest, text, sshsig.EVIDENCE_NAMESPACE))
        out.append({"file": f"{SIGNATURES}/{sig.name}", **res.to_json()})
    return out


def drop_signatures(root: Path) -> None:
    for sig in signature_files(root):
        sig.unlink()


def sign_bundle(root: Path | str, key: Path | str) -> dict[str, Any]:
    """Sign the bundle's manifest with an SSH key; writes signatures/key-<fingerprint>.sig.
    Refuses a bundle that does not verify. Raises SigningError or InputError."""
    from slaschema import sshsig
    from slaschema.errors import InputError, Problem

    root = Path(root)
    res = verify(root)
    if not res.files_ok:
        raise InputError([Problem("bundle_not_verified", "the bundle does not match its manifest; only an intact "
                                  "bundle is signed", file=str(root), fix="run `slakit accept verify` to see why")])
    manifest = (root / MANIFEST).read_bytes()
    signature = sshsig.sign(manifest, key, sshsig.EVIDENCE_NAMESPACE)
    made = sshsig.check(manifest, signature, sshsig.EVIDENCE_NAMESPACE)
    name = f"{SIGNATURES}/{sshsig.signature_name(made.fingerprint)}"
    write_atomic(root / name, signature)
    return {"file": name, **made.to_json()}
