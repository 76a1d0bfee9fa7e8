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

Every file is written atomically (temp file + rename) and its hash recorded as it is
written; the manifest is rewritten after every finished criterion, so a bundle is
consistent at every moment, including after Ctrl-C. `verify` reports changed, missing and
added files and a manifest whose digest does not match its own list.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acceptance.executors.base import RawOutput
from slaschema.fileio import write_atomic

FORMAT = "slakit-acceptance-bundle/1"
MANIFEST = "manifest.json"
_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,200}$")


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
        _write(self.root / MANIFEST, dumps(doc).encode("utf-8"), self.durable)
        return doc

    # raw outputs ------------------------------------------------------------------------
    def write_raw(self, criterion: str, node: str, raw: RawOutput) -> None:
        self.write_json(f"raw/{criterion}/{node_file(node)}.json", raw.to_json(), pretty=False)

    def write_metrics(self, criterion: str, node: str, metrics: dict[str, Any] | None) -> None:
        if metrics is not None:
            self.write_json(f"metrics/{criterion}/{node_file(node)}.json", metrics, pretty=False)


def list_files(root: Path) -> list[str]:
    """Every regular file under root, as POSIX relative paths, temp files of atomic writes excluded."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.startswith(".") and name.endswith(".tmp"):
                continue
            rel = Path(dirpath, name).relative_to(root).as_posix()
            out.append(rel)
    return out


def read_raw_dir(root: Path, criterion: str) -> dict[str, RawOutput] | None:
    """The raw outputs of one criterion: {node: RawOutput}; None when the folder is absent."""
    folder = Path(root) / "raw" / criterion
    if not folder.is_dir():
        return None
    out: dict[str, RawOutput] = {}
    for p in sorted(folder.iterdir()):
        if not p.is_file() or p.name.startswith("."):
            continue
        node = node_from_file(p.stem)
        if p.suffix == ".json":
            text = p.read_text(encoding="utf-8", errors="replace")
            try:
                doc = json.loads(text)
            except ValueError:
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

    rc = doc.get("rc")
    return RawOutput(
        stdout=str(doc.get("stdout") or ""),
        stderr=str(doc.get("stderr") or ""),
        rc=rc if isinstance(rc, int) and not isinstance(rc, bool) else None,
        started=ts(doc.get("started")),
        finished=ts(doc.get("finished")),
        timed_out=bool(doc.get("timed_out")),
        error=doc.get("error") if isinstance(doc.get("error"), str) else None,
        # the node(s) the executor recorded it ran on (checked against the file name by the judging)
        node=doc["node"] if isinstance(doc.get("node"), str) and doc["node"] else node,
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

    @property
    def ok(self) -> bool:
        return self.manifest_present and self.digest_ok and not (self.changed or self.missing or self.added or self.problems)

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "ok": self.ok, "manifest_present": self.manifest_present,
                "digest_ok": self.digest_ok, "digest": self.digest, "checked": self.checked,
                "changed": list(self.changed), "missing": list(self.missing), "added": list(self.added),
                "problems": list(self.problems)}


def verify(root: Path | str) -> VerifyResult:
    """Compare the folder with its manifest: changed, missing and added files, and the digest."""
    root = Path(root)
    mpath = root / MANIFEST
    if not mpath.is_file():
        return VerifyResult(str(root), False, False, added=tuple(list_files(root)), problems=("no manifest.json",))
    try:
        doc = json.loads(mpath.read_text(encoding="utf-8"))
        files = {str(k): str(v) for k, v in doc["files"].items()}
        digest = str(doc["digest"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return VerifyResult(str(root), True, False, problems=("manifest.json is not a bundle manifest",))
    digest_ok = manifest_digest(files) == digest and doc.get("format") == FORMAT
    present = set(list_files(root)) - {MANIFEST}
    changed, missing = [], []
    for rel, want in sorted(files.items()):
        p = root / rel
        if not p.is_file():
            missing.append(rel)
        elif sha256_file(p) != want:
            changed.append(rel)
    added = sorted(present - set(files))
    return VerifyResult(str(root), True, digest_ok, tuple(changed), tuple(missing), tuple(added),
                        checked=len(files), digest=digest)
