"""OpenSSH public keys: parse authorized_keys lines and contract key lists, match by key blob.

Two keys are the same key when their decoded blobs are equal; comments and options
(`from="10.0.0.0/8",no-pty ...`) never matter for identity.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from dataclasses import dataclass

KEY_TYPES = frozenset({
    "ssh-rsa", "ssh-dss", "ssh-ed25519", "ssh-ed448",
    "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
    "rsa-sha2-256", "rsa-sha2-512",
})


def _is_key_type(tok: str) -> bool:
    return tok in KEY_TYPES or (tok.endswith("-cert-v01@openssh.com") and
                                tok.removesuffix("-cert-v01@openssh.com") in
                                {t.removesuffix("@openssh.com") for t in KEY_TYPES})


class KeyError_(ValueError):
    """A line that is not an OpenSSH public key."""


@dataclass(frozen=True)
class PublicKey:
    key_type: str
    blob: str                    # base64 as written
    comment: str = ""
    options: str = ""

    @property
    def identity(self) -> tuple[str, bytes]:
        return (self.key_type, base64.b64decode(self.blob))

    @property
    def fingerprint(self) -> str:
        digest = hashlib.sha256(base64.b64decode(self.blob)).digest()
        return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")

    def describe(self) -> str:
        return f"{self.key_type} {self.fingerprint}" + (f" ({self.comment})" if self.comment else "")


def _split_options(line: str) -> tuple[str, str]:
    """Split a leading options field (may contain quoted spaces) from the rest of the line."""
    in_quote = False
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and in_quote and i + 1 < len(line):
            i += 2
            continue
        if ch == '"':
            in_quote = not in_quote
        elif ch in " \t" and not in_quote:
            return line[:i], line[i:].lstrip()
        i += 1
    return line, ""


def parse_key(line: str) -> PublicKey:
    """Parse one authorized_keys / .pub line; raises KeyError_ when it is not a key."""
    text = line.strip()
    if not text or text.startswith("#"):
        raise KeyError_("empty or comment line")
    first = text.split(None, 1)[0]
    options = ""
    if not _is_key_type(first):
        options, text = _split_options(text)
        if not text:
            raise KeyError_("no key type")
    parts = text.split(None, 2)
    if len(parts) < 2 or not _is_key_type(parts[0]):
        raise KeyError_(f"unknown key type {parts[0]!r}" if parts else "no key type")
    key_type, blob = parts[0], parts[1]
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise KeyError_(f"key data is not base64: {exc}") from exc
    if len(raw) < 4:
        raise KeyError_("key data too short")
    (n,) = struct.unpack(">I", raw[:4])
    inner = raw[4:4 + n].decode("ascii", "replace")
    if inner != key_type and not (key_type.startswith("rsa-sha2-") and inner == "ssh-rsa"):
        raise KeyError_(f"key data is a {inner!r} key, line says {key_type!r}")
    return PublicKey(key_type, blob, parts[2].strip() if len(parts) > 2 else "", options)


@dataclass(frozen=True)
class FoundKey:
    user: str
    file: str
    line: int
    key: PublicKey


@dataclass(frozen=True)
class BadLine:
    user: str
    file: str
    line: int
    error: str


def parse_authorized_keys(text: str, user: str, file: str) -> tuple[list[FoundKey], list[BadLine]]:
    keys, bad = [], []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            keys.append(FoundKey(user, file, n, parse_key(line)))
        except KeyError_ as exc:
            bad.append(BadLine(user, file, n, str(exc)))
    return keys, bad


def key_text(item: object) -> str:
    """A contract key entry: a key line, or a mapping/object with `key` (and maybe `name`)."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        return str(item.get("key", ""))
    return str(getattr(item, "key", item))


def fingerprint_of(line: str) -> str | None:
    try:
        return parse_key(line).fingerprint
    except KeyError_:
        return None

