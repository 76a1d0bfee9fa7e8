"""OpenSSH signatures over evidence manifests (`ssh-keygen -Y sign` / `-Y verify`).

A manifest (the SHA-256 of every file of an evidence package or bundle) is signed with an
SSH key the signer already has; anyone holding the public key checks it with stock OpenSSH:

    ssh-keygen -Y verify -f allowed_signers -I signer@example -n slakit-evidence \\
        -s manifest.json.sig < manifest.json

The namespace binds the signature to its purpose, so a signature made for slakit evidence
cannot be replayed as, say, a git commit signature. This module depends on nothing else in
slakit but `slaschema.sshsig` (the one wrapper of ssh-keygen), so every layer that writes
evidence (claim packages, acceptance bundles) signs the same way. Errors are `InputError`s
with a stable code: `signing_tool_missing`, `signing_key_not_found`, `signing_failed`,
`signature_invalid`.

`KEY` may be a private key file, or a public key whose private half is in the running
ssh-agent (`ssh-keygen -Y sign` asks the agent). ssh-keygen runs without a terminal, so a key
with a passphrase is used through ssh-agent; without one the error says so.
"""

from __future__ import annotations

from pathlib import Path

from slaschema import sshsig
from slaschema.errors import InputError, Problem

NAMESPACE = sshsig.EVIDENCE_NAMESPACE
SIGNATURE_SUFFIX = ".sig"

_KEY_FIX = "name an SSH private key (or a public key whose private half is in ssh-agent)"
# slaschema.sshsig's reasons -> (this module's code, the fix)
_CODES = {
    "ssh_keygen_missing": ("signing_tool_missing", "install openssh-client (scripts/setup does) or leave out --sign"),
    "signing_key_missing": ("signing_key_not_found", _KEY_FIX),
    "not_an_ssh_key": ("signing_failed", "name an OpenSSH key file, e.g. ~/.ssh/id_ed25519"),
    "signing_failed": ("signing_failed", "use an unencrypted key, or add it to ssh-agent (ssh-add KEY) and pass KEY.pub"),
    "ssh_keygen_timeout": ("signing_failed", "add the key to ssh-agent (ssh-add KEY) and pass KEY.pub"),
    "ssh_keygen_failed": ("signing_failed", "install openssh-client (scripts/setup does) or leave out --sign"),
    "allowed_signers_missing": ("signature_invalid", "name the allowed-signers file"),
}


def _fail(code: str, message: str, file: str, fix: str) -> InputError:
    return InputError([Problem(code, message, file=file, fix=fix)])


def _coded(exc: sshsig.SigningError, file: str) -> InputError:
    code, fix = _CODES.get(exc.code, ("signing_failed", "see the message"))
    return _fail(code, str(exc), file, fix)


def fingerprint(key: str | Path) -> str:
    """`SHA256:…` fingerprint of the key (private or public file)."""
    try:
        return sshsig.fingerprint(key)
    except sshsig.SigningError as exc:
        raise _coded(exc, str(key)) from None


def sign(data: bytes, key: str | Path, namespace: str = NAMESPACE) -> bytes:
    """The armored OpenSSH signature (`-----BEGIN SSH SIGNATURE-----`) of `data`."""
    try:
        return sshsig.sign(data, key, namespace).encode("ascii")
    except sshsig.SigningError as exc:
        raise _coded(exc, str(key)) from None


def verify(data: bytes, signature: bytes, *, allowed_signers: str | Path | None = None, identity: str | None = None,
           namespace: str = NAMESPACE, file: str = "signature") -> str:
    """Check `signature` over `data`; returns ssh-keygen's confirmation line.

    With `allowed_signers` and `identity` the signer must be listed there (`-Y verify`);
    without them only the signature's integrity is checked (`-Y check-novalidate`: it proves
    the data is unchanged since some key signed it, not whose key). Raises `InputError`
    `signature_invalid` when it does not verify."""
    if allowed_signers is not None and identity is None:
        raise _fail("signature_invalid", "an allowed-signers file needs the signer's identity", file,
                    "pass the identity (principal) listed in the allowed-signers file")
    text = signature.decode("ascii", errors="replace")
    try:
        res = (sshsig.verify(data, text, namespace, allowed_signers, identity=identity) if allowed_signers is not None
               else sshsig.check(data, text, namespace))
    except sshsig.SigningError as exc:
        raise _coded(exc, file) from None
    if not res.ok:
        raise _fail("signature_invalid", f"the signature does not verify: {res.output or res.message}", file,
                    "the signed file changed after signing, or it was signed by another key or namespace")
    return res.output or "Good signature"


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
