"""The evidence package sent with a claim letter: a tar file both parties can hash and check.

Layout (format `slakit-claim-evidence/1`):

    claim.json                    the claim's figures (`calculators.claim_case.ClaimRun.to_json`)
    contract/<file>               the contract the figures come from
    incidents/<log file>          the provider's incident-log rows of every incident touching a
                                  claimed month, values as in the log (CSV: header + rows;
                                  JSON Lines: the lines; JSON array: the elements)
    incidents/claimed.csv         per claimed month, the incidents counted in a credited unit:
                                  id, ticket, affected nodes, start, end, counted and down
                                  seconds, credited units
    monitor/<file>                the buyer's own monitor log (`slakit watch`), when given
    reconcile/<file>              the reconcile report (`slakit reconcile`), when given
    manifest.json                 {"format", "algorithm": "sha256", "contract", "months", "as_of",
                                   "files": {path: sha256}}
    manifest.json.sig             OpenSSH signature over manifest.json (namespace
                                  slakit-evidence), when a key is given (`slaschema.signing`)

The tar is byte-identical for the same inputs: members sorted, owner root, mode 0644 and the
modification time of every member set to the claim's as_of instant.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path

FORMAT = "slakit-claim-evidence/1"
MANIFEST = "manifest.json"
SIGNATURE = MANIFEST + ".sig"


def describe(name: str) -> str:
    """What a member holds, in words for the letter."""
    if name == "claim.json":
        return "the claim's figures per month: amounts, deadline, units with a credit, incidents (JSON)"
    if name == "incidents/claimed.csv":
        return "the incidents of this claim: ticket, affected nodes, start, end, counted and down seconds"
    if name.startswith("incidents/"):
        return "the provider's incident-log rows of every incident in the claimed months, as logged"
    if name.startswith("contract/"):
        return "the contract the figures are computed from"
    if name.startswith("monitor/"):
        return "the customer's own availability monitoring log (slakit watch)"
    if name.startswith("reconcile/"):
        return "the comparison of the customer's monitoring log with the provider's incident log"
    return "supporting file"


@dataclass(frozen=True)
class Package:
    data: bytes                                  # the tar file
    files: tuple[tuple[str, str], ...]           # (path, sha256) of every member except the manifest and signature
    manifest_sha256: str
    signed_by: str | None                        # key fingerprint when signed


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def log_rows(path: str | Path, rows: set[int]) -> bytes:
    """The rows `rows` (1-based, as `IncidentLog.frame['row']` numbers them) of an incident log,
    in its own format. Bytes that are not UTF-8 are kept as they are in the file (read and
    written back with `surrogateescape`): the evidence holds what the log says."""
    from calculators.incidents import detect_format

    raw = Path(path).read_bytes()
    text = raw.decode("utf-8-sig", errors="surrogateescape")
    fmt = detect_format(str(path), text[:4096])
    if fmt == "jsonl":
        lines = text.splitlines()
        return "".join(lines[n - 1] + "\n" for n in sorted(rows) if 0 < n <= len(lines)).encode(
            "utf-8", errors="surrogateescape")
    if fmt == "json":
        items = json.loads(text)
        chosen = [items[n - 1] for n in sorted(rows) if 0 < n <= len(items)]
        return (json.dumps(chosen, indent=2, ensure_ascii=False) + "\n").encode("utf-8", errors="surrogateescape")
    reader = csv.reader(io.StringIO(text, newline=""))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    header = next(reader, None)
    if header is None:
        return b""
    w.writerow(header)
    n = 0
    for row in reader:
        if not row:                 # blank lines are not rows (as the incident loader counts them)
            continue
        n += 1
        if n in rows:
            w.writerow(row)
    return buf.getvalue().encode("utf-8", errors="surrogateescape")


def claimed_csv(run) -> bytes:
    from calculators.result import iso
    from slaschema.textsafe import csv_cell

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(("period", "id", "ticket", "scope", "target", "nodes", "start", "end", "counted_seconds",
                "downtime_seconds", "category", "credited_units"))
    for m in run.claimed:
        for i in m.incidents:
            w.writerow([csv_cell(v) for v in (
                m.period, i.id, i.ticket or "", i.scope, i.target, " ".join(i.nodes), iso(i.start),
                iso(i.end) if i.end is not None else "", i.counted_seconds, i.downtime_seconds, i.category,
                " ".join(f"{s}:{u}:{c}" for s, u, c in i.credited_units))])
    return buf.getvalue().encode("utf-8")


def _member_name(prefix: str, path: Path, taken: set[str]) -> str:
    name = f"{prefix}/{path.name}"
    k = 2
    while name in taken:
        name = f"{prefix}/{path.stem}-{k}{path.suffix}"
        k += 1
    taken.add(name)
    return name


def _evidence_file(path: str | Path, kind: str) -> bytes:
    """A --monitor-log or --reconcile file, copied into the package handed to the provider only
    when it is what it claims to be: a regular file outside /proc, /sys and /dev, within the size
    limit, UTF-8, and an incident log (CSV with `id` and `start` columns, JSON or JSON Lines) or a
    `slakit reconcile --format json` report. Anything else is refused, never copied."""
    from slaschema.errors import InputError, Problem
    from slaschema.safefiles import decode_utf8, read_named

    what = "--monitor-log" if kind == "monitor" else "--reconcile"
    data = read_named(str(path), base_dir=None, from_cli=True, what=what)
    text = decode_utf8(data, shown=str(path), what=what)
    ok = False
    if kind == "monitor":
        head = text.lstrip()[:1]
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        ok = head in ("[", "{") or {"id", "start"} <= {c.strip().strip('"') for c in first.split(",")}
    else:
        try:
            doc = json.loads(text)
            ok = isinstance(doc, dict) and isinstance(doc.get("findings"), list) and "agree" in doc
        except (ValueError, RecursionError):
            ok = False
    if not ok:
        fix = ("give the incident log `slakit watch` writes" if kind == "monitor"
               else "give the report of `slakit reconcile ... --format json`")
        raise InputError([Problem("evidence_file_invalid", f"{what}: not a "
                                  + ("monitor log (incident log)" if kind == "monitor" else "slakit reconcile JSON report")
                                  + "; it is not copied into the package", file=str(path), fix=fix)])
    return data


def build(run, contract_file: str | Path, incidents_file: str | Path, monitor_logs: list[str | Path] = (),
          reconcile_reports: list[str | Path] = (), key: str | Path | None = None) -> Package:
    """The package of `run` (a `ClaimRun`), signed with `key` when given."""
    members: dict[str, bytes] = {}
    rows = {n for m in run.claimed for n in m.row_numbers}
    members["claim.json"] = (json.dumps(run.to_json(), indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    members[f"contract/{Path(contract_file).name}"] = Path(contract_file).read_bytes()
    members[f"incidents/{Path(incidents_file).name}"] = log_rows(incidents_file, rows)
    members["incidents/claimed.csv"] = claimed_csv(run)
    taken = set(members)
    for f in monitor_logs:
        members[_member_name("monitor", Path(f), taken)] = _evidence_file(f, "monitor")
    for f in reconcile_reports:
        members[_member_name("reconcile", Path(f), taken)] = _evidence_file(f, "reconcile")
    files = {name: sha256(data) for name, data in sorted(members.items())}
    from calculators.result import iso

    manifest = {"format": FORMAT, "algorithm": "sha256", "contract": run.contract_id,
                "contract_sha256": run.contract_sha256, "incidents_sha256": run.incidents_sha256,
                "as_of": iso(run.as_of), "months": [m.period for m in run.claimed], "files": files}
    manifest_bytes = (json.dumps(manifest, indent=2, sort_keys=False) + "\n").encode("utf-8")
    members[MANIFEST] = manifest_bytes
    signed_by = None
    if key is not None:
        from slaschema import signing

        members[SIGNATURE] = signing.sign(manifest_bytes, key)
        signed_by = signing.fingerprint(key)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(members):
            data = members[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = run.as_of
            info.mode = 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    return Package(data=buf.getvalue(), files=tuple(files.items()), manifest_sha256=sha256(manifest_bytes),
                   signed_by=signed_by)


def verify(data: bytes, allowed_signers: str | Path | None = None, identity: str | None = None,
           file: str = "package") -> list[str]:
    """The judged problems of a package, one line each (empty when every file matches the
    manifest and a signature, if present, verifies): changed, missing and added files, a
    signature that does not verify, no signature where a signer is expected.

    What leaves nothing to judge is raised as `InputError` instead (printed by
    `slaschema.cli.report_input_errors`, exit 1): `package_unreadable` (no tar file),
    `manifest_missing`, `manifest_invalid`, and a signature tool that cannot run
    (`signing_tool_missing`, `signing_failed`)."""
    from slaschema.errors import InputError, Problem

    def bad(code: str, message: str) -> InputError:
        return InputError([Problem(code, message, file=file)])

    problems: list[str] = []
    others: list[tuple[str, str]] = []
    try:
        members = _members(data, others)
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise bad("package_unreadable", f"not an evidence package (a tar file): {type(exc).__name__}") from None
    if MANIFEST not in members:
        raise bad("manifest_missing", f"no {MANIFEST}")
    try:
        manifest = json.loads(members[MANIFEST])
        listed = manifest.get("files") if isinstance(manifest, dict) else None
        if not isinstance(listed, dict) or not all(isinstance(v, str) for v in listed.values()):
            raise ValueError("no `files` object of SHA-256 strings")
    except (ValueError, RecursionError) as exc:
        raise bad("manifest_invalid", f"{MANIFEST} is not a slakit manifest ({str(exc)[:80]})") from None
    for name, digest in listed.items():
        if name not in members:
            problems.append(f"{name}: listed in the manifest but missing [member_missing]")
        elif sha256(members[name]) != digest:
            problems.append(f"{name}: changed (SHA-256 {sha256(members[name])[:16]}…, manifest {digest[:16]}…) "
                            "[member_changed]")
    for name in sorted(set(members) - set(listed) - {MANIFEST, SIGNATURE}):
        problems.append(f"{name}: not in the manifest [member_unlisted]")
    # a symlink, hard link, device or folder is in no manifest, and `tar xf` makes it (a link
    # to /etc/passwd beside the evidence): it was skipped, and the package said it matched
    for name, kind in others:
        problems.append(f"{name}: a {kind}, not a file; an evidence package holds files only [member_not_a_file]")
    if SIGNATURE in members:
        from slaschema import signing

        try:
            signing.verify(members[MANIFEST], members[SIGNATURE], allowed_signers=allowed_signers, identity=identity,
                           file=f"{file}:{SIGNATURE}")
        except InputError as e:
            if any(p.code != "signature_invalid" for p in e.problems):
                raise                   # ssh-keygen missing or failing: the signature is not judged
            problems.extend(p.format() for p in e.problems)
    elif allowed_signers is not None:
        problems.append(f"{file}: not signed, but a signer was expected [package_unsigned]")
    return problems


def _members(data: bytes, others: list[tuple[str, str]] | None = None) -> dict[str, bytes]:
    """Regular members of a package by name; a compressed one may not unpack past the file-size
    limit (`--max-file-size`), so a small bomb cannot fill the memory. `others` gets the name
    and kind of every other member (a symbolic link, ...)."""
    from slaschema.safefiles import max_file_bytes

    budget = max_file_bytes()
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        for m in tar:
            if not m.isfile():
                if others is not None:
                    kind = ("symbolic link" if m.issym() else "hard link" if m.islnk() else "folder" if m.isdir()
                            else "device or FIFO")
                    others.append((m.name, kind))
                continue
            if m.size > budget:
                raise ValueError("a member larger than the file-size limit")
            budget -= m.size
            fh = tar.extractfile(m)
            out[m.name] = fh.read() if fh is not None else b""
    return out
