"""OpenSSH signatures over evidence manifests (`ssh-keygen -Y sign` / `-Y verify`).

A manifest (the SHA-256 of every file of an evidence package or bundle) is signed with an
SSH key the signer already has; anyone holding the public key checks it with stock OpenSSH:

    ssh-keygen -Y verify -f allowed_signers -I signer@example -n slakit-evidence \\
        -s manifest.json.sig < manifest.json

The namespace binds the signature to its purpose, so a signature made for slakit evidence
cannot be replayed as, say, a git commit signature. This module depends on nothing else in
slakit, so every layer that writes evidence (claim packages, acceptance bundles) signs the
same way. Errors are `InputError`s with a stable code: `signing_tool_missing`,
`signing_key_not_found`, `signing_failed`, `signature_invalid`.

`KEY` may be a private key file, or a public key whose private half is in the running
ssh-agent (`ssh-keygen -Y sign` asks the agent). ssh-keygen runs without a terminal, so a key
with a passphrase is used through ssh-agent; without one the error says so.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from slaschema.errors import InputError, Problem

NAMESPACE = "slakit-evidence"
SIGNATURE_SUFFIX = ".sig"
TIMEOUT_S = 60


def _tool(file: str) -> str:
    tool = shutil.which("ssh-keygen")
    if tool is None:
        raise InputError([Problem("signing_tool_missing", "ssh-keygen (OpenSSH) is not installed", file=file,
                                  fix="install openssh-client (scripts/setup does) or leave out --sign")])
    return tool


def _fail(code: str, message: str, file: str, fix: str) -> InputError:
    return InputError([Problem(code, message, file=file, fix=fix)])


def fingerprint(key: str | Path) -> str:
    """`SHA256:…` fingerprint of the key (private or public file)."""
    key = Path(key)
    if not key.is_file():
        raise _fail("signing_key_not_found", "no such key file", str(key), "name an SSH private key (or a public "
                    "key whose private half is in ssh-agent)")
    out = subprocess.run([_tool(str(key)), "-l", "-E", "sha256", "-f", str(key)], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=TIMEOUT_S)
    if out.returncode != 0:
        raise _fail("signing_failed", f"not an SSH key: {out.stderr.strip() or 'ssh-keygen -l failed'}", str(key),
                    "name an OpenSSH key file, e.g. ~/.ssh/id_ed25519")
    parts = out.stdout.split()
    return parts[1] if len(parts) > 1 else out.stdout.strip()


def sign(data: bytes, key: str | Path, namespace: str = NAMESPACE) -> bytes:
    """The armored OpenSSH signature (`-----BEGIN SSH SIGNATURE-----`) of `data`."""
    key = Path(key)
    if not key.is_file():
        raise _fail("signing_key_not_found", "no such key file", str(key), "name an SSH private key (or a public "
                    "key whose private half is in ssh-agent)")
    tool = _tool(str(key))
    with tempfile.TemporaryDirectory(prefix="slakit-sign-") as tmp:
        msg = Path(tmp) / "message"
        msg.write_bytes(data)
        try:
            # a session of its own: no terminal to prompt for a passphrase on (use ssh-agent instead)
            out = subprocess.run([tool, "-Y", "sign", "-f", str(key), "-n", namespace, str(msg)], capture_output=True,
                                 text=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT_S, start_new_session=True)
        except subprocess.TimeoutExpired:
            raise _fail("signing_failed", "ssh-keygen did not finish (is it waiting for a passphrase?)", str(key),
                        "add the key to ssh-agent (ssh-add KEY) and pass KEY.pub") from None
        sig = msg.with_name(msg.name + SIGNATURE_SUFFIX)
        if out.returncode != 0 or not sig.is_file():
            why = (out.stderr or out.stdout).strip().splitlines()
            raise _fail("signing_failed", f"ssh-keygen -Y sign failed: {why[-1] if why else 'no output'}", str(key),
                        "use an unencrypted key, or add it to ssh-agent (ssh-add KEY) and pass KEY.pub")
        return sig.read_bytes()


def verify(data: bytes, signature: bytes, *, allowed_signers: str | Path | None = None, identity: str | None = None,
           namespace: str = NAMESPACE, file: str = "signature") -> str:
    """Check `signature` over `data`; returns ssh-keygen's confirmation line.

    With `allowed_signers` and `identity` the signer must be listed there (`-Y verify`);
    without them only the signature's integrity is checked (`-Y check-novalidate`: it proves
    the data is unchanged since some key signed it, not whose key). Raises `InputError`
    `signature_invalid` when it does not verify."""
    tool = _tool(file)
    with tempfile.TemporaryDirectory(prefix="slakit-verify-") as tmp:
        sig = Path(tmp) / "data.sig"
        sig.write_bytes(signature)
        if allowed_signers is not None:
            if identity is None:
                raise _fail("signature_invalid", "an allowed-signers file needs the signer's identity", file,
                            "pass the identity (principal) listed in the allowed-signers file")
            cmd = [tool, "-Y", "verify", "-f", str(allowed_signers), "-I", identity, "-n", namespace, "-s", str(sig)]
        else:
            cmd = [tool, "-Y", "check-novalidate", "-n", namespace, "-s", str(sig)]
        out = subprocess.run(cmd, input=data, capture_output=True, timeout=TIMEOUT_S)
    text = (out.stdout + out.stderr).decode("utf-8", errors="replace").strip()
    if out.returncode != 0:
        raise _fail("signature_invalid", f"the signature does not verify: {text.splitlines()[-1] if text else ''}",
                    file, "the signed file changed after signing, or it was signed by another key or namespace")
    return text.splitlines()[0] if text else "Good signature"


def sign_file(path: str | Path, key: str | Path, namespace: str = NAMESPACE) -> Path:
    """Sign a file in place: writes `PATH.sig` beside it (atomically) and returns its path; the
    form an evidence folder (e.g. an acceptance bundle's manifest.json) keeps its signature in."""
    from slaschema.fileio import write_atomic

    path = Path(path)
    sig = path.with_name(path.name + SIGNATURE_SUFFIX)
    write_atomic(sig, sign(path.read_bytes(), key, namespace))
    return sig


def verify_file(path: str | Path, *, allowed_signers: str | Path | None = None, identity: str | None = None,
                namespace: str = NAMESPACE) -> str:
    """Check `PATH.sig` over `PATH` (see `verify`); a missing signature is `signature_invalid`."""
    path = Path(path)
    sig = path.with_name(path.name + SIGNATURE_SUFFIX)
    if not sig.is_file():
        raise _fail("signature_invalid", "no signature beside the file", str(sig),
                    "sign it (e.g. with --sign KEY) or check without a signature")
    return verify(path.read_bytes(), sig.read_bytes(), allowed_signers=allowed_signers, identity=identity,
                  namespace=namespace, file=str(sig))
