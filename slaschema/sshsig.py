"""OpenSSH signatures (`ssh-keygen -Y`) over a file: sign, check, and name the signer.

Both parties to a contract already hold SSH keys, and `ssh-keygen` (OpenSSH 8.0 or later)
signs and verifies any data with them in a namespace, so a signature made for one purpose
cannot be replayed for another. This module is the one place that calls it (the evidence
bundles use it directly; `slaschema.signing` turns its errors into coded input problems for
the claim packages):

    sign(data, key, namespace)                      -> armored signature text
    check(data, signature, namespace)               -> SignatureCheck (integrity only)
    verify(data, signature, namespace, allowed)     -> SignatureCheck (and who signed)
    fingerprint(key)                                -> SHA256:... of a key file

`allowed` is an OpenSSH allowed-signers file (`principal key-type key [comment]` per line,
see ssh-keygen(1) "ALLOWED SIGNERS"). Nothing goes through a shell; data and signatures
travel through stdin and temporary files in a private folder. ssh-keygen runs in a session
of its own, without a terminal: a key with a passphrase is used through ssh-agent (pass the
public key), never prompted for.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from slaschema.errors import SlakitError

TIMEOUT_S = 30.0
EVIDENCE_NAMESPACE = "slakit-evidence"
_FINGERPRINT = re.compile(r"(SHA256:[A-Za-z0-9+/=]+)")
_KEYTYPE = re.compile(r"with ([A-Z0-9-]+) key")


class SigningError(SlakitError):
    """ssh-keygen is missing or refused; `code` is a stable reason."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class SignatureCheck:
    ok: bool                          # the signature is valid (and, for verify, trusted)
    reason: str                       # good_signature | bad_signature | unknown_signer | ...
    principal: str | None = None      # who signed, from the allowed-signers file
    fingerprint: str | None = None    # SHA256:... of the signing key
    key_type: str | None = None
    message: str = ""
    output: str = ""                  # ssh-keygen's own first line (`Good "ns" signature for ...`)

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "reason": self.reason, "principal": self.principal,
                "fingerprint": self.fingerprint, "key_type": self.key_type, "message": self.message}


def ssh_keygen() -> str:
    path = shutil.which("ssh-keygen")
    if path is None:
        raise SigningError("ssh_keygen_missing", "ssh-keygen is not installed (package openssh-client)")
    return path


def _run(argv: list[str], data: bytes | None = None) -> subprocess.CompletedProcess:
    try:
        # a session of its own: no terminal to prompt for a passphrase on (use ssh-agent instead)
        return subprocess.run(argv, input=data, capture_output=True, timeout=TIMEOUT_S,
                              stdin=None if data is not None else subprocess.DEVNULL, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise SigningError("ssh_keygen_timeout", f"ssh-keygen did not finish within {TIMEOUT_S:g} s "
                           "(a key with a passphrase needs ssh-agent)") from None
    except OSError as exc:
        raise SigningError("ssh_keygen_failed", f"ssh-keygen could not run: {exc.strerror}") from None


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").strip()


def fingerprint(key: str | Path) -> str:
    """`SHA256:...` fingerprint of a key file (private or public)."""
    key = Path(key).expanduser()
    if not key.is_file():
        raise SigningError("signing_key_missing", f"no key file {key}")
    proc = _run([ssh_keygen(), "-l", "-E", "sha256", "-f", str(key)])
    found = _FINGERPRINT.search(_text(proc.stdout))
    if proc.returncode != 0 or found is None:
        raise SigningError("not_an_ssh_key", "not an SSH key: " + (_text(proc.stderr) or "ssh-keygen -l failed"))
    return found.group(1)


def sign(data: bytes, key: str | Path, namespace: str) -> str:
    """An armored SSH signature over `data` made with the private `key` (or its public key
    when the private half is in ssh-agent)."""
    key = Path(key).expanduser()
    if not key.is_file():
        raise SigningError("signing_key_missing", f"no key file {key}")
    with tempfile.TemporaryDirectory(prefix="slakit-sign-") as tmp:
        src = Path(tmp) / "data"
        src.write_bytes(data)
        proc = _run([ssh_keygen(), "-Y", "sign", "-q", "-f", str(key), "-n", namespace, str(src)])
        sig = Path(tmp) / "data.sig"
        if proc.returncode != 0 or not sig.is_file():
            raise SigningError("signing_failed", "ssh-keygen -Y sign failed: "
                               + (_text(proc.stderr)[-300:] or f"exit {proc.returncode}"))
        return sig.read_text(encoding="ascii")


def _with_files(signature: str, allowed: str | Path | None, fn):
    with tempfile.TemporaryDirectory(prefix="slakit-verify-") as tmp:
        sig = Path(tmp) / "sig"
        sig.write_text(signature, encoding="ascii", errors="replace")
        return fn(str(sig), str(Path(allowed).expanduser()) if allowed is not None else None)


def check(data: bytes, signature: str, namespace: str) -> SignatureCheck:
    """Whether `signature` is a valid signature over `data` in `namespace`, by any key
    (ssh-keygen -Y check-novalidate): integrity, not trust."""
    def run(sig: str, _allowed: str | None) -> SignatureCheck:
        proc = _run([ssh_keygen(), "-Y", "check-novalidate", "-n", namespace, "-s", sig], data)
        out = _text(proc.stdout) + " " + _text(proc.stderr)
        fp = _FINGERPRINT.search(out)
        kt = _KEYTYPE.search(out)
        first = _first_line(proc)
        if proc.returncode == 0:
            return SignatureCheck(True, "good_signature", None, fp.group(1) if fp else None,
                                  kt.group(1) if kt else None, "valid signature (signer not checked)", first)
        return SignatureCheck(False, "bad_signature", None, fp.group(1) if fp else None, None,
                              "the signature does not match the data (or is not an SSH signature)", first)
    return _with_files(signature, None, run)


def _first_line(proc: subprocess.CompletedProcess) -> str:
    lines = (_text(proc.stdout) + "\n" + _text(proc.stderr)).strip().splitlines()
    return lines[0] if lines else ""


def verify(data: bytes, signature: str, namespace: str, allowed: str | Path,
           identity: str | None = None) -> SignatureCheck:
    """Check `signature` over `data` against an allowed-signers file; names the principal
    (the one the file lists for the key, or only `identity` when given)."""
    allowed_path = Path(allowed).expanduser()
    if not allowed_path.is_file():
        raise SigningError("allowed_signers_missing", f"no allowed-signers file {allowed_path}")
    integrity = check(data, signature, namespace)
    if not integrity.ok:
        return integrity

    def run(sig: str, allowed_file: str | None) -> SignatureCheck:
        assert allowed_file is not None
        if identity is not None:
            principals = [identity]
        else:
            found = _run([ssh_keygen(), "-Y", "find-principals", "-s", sig, "-f", allowed_file])
            principals = [p for p in _text(found.stdout).splitlines() if p.strip()] if found.returncode == 0 else []
        if not principals:
            return SignatureCheck(False, "unknown_signer", None, integrity.fingerprint, integrity.key_type,
                                  "valid signature by a key the allowed-signers file does not list")
        for principal in principals:
            proc = _run([ssh_keygen(), "-Y", "verify", "-f", allowed_file, "-I", principal, "-n", namespace,
                         "-s", sig], data)
            if proc.returncode == 0:
                return SignatureCheck(True, "good_signature", principal, integrity.fingerprint,
                                      integrity.key_type, f"signed by {principal}", _first_line(proc))
        return SignatureCheck(False, "signer_not_allowed", principals[0], integrity.fingerprint,
                              integrity.key_type, f"the key is not listed for {principals[0]} in this namespace "
                              "or at this time" if identity is not None else
                              "the key is listed but not for this namespace or time", _first_line(proc))
    return _with_files(signature, allowed_path, run)


def signature_name(fingerprint: str | None) -> str:
    """A file name for a signature by the key with this fingerprint (one file per signer)."""
    if not fingerprint:
        return "signature.sig"
    return "key-" + re.sub(r"[^A-Za-z0-9_-]", "_", fingerprint.replace("SHA256:", "")) + ".sig"


def available() -> bool:
    return shutil.which("ssh-keygen") is not None and os.name == "posix"
