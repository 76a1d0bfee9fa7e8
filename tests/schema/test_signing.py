"""`slaschema.signing`: OpenSSH signatures over evidence manifests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from slaschema import signing
from slaschema.errors import InputError

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen (openssh-client) not installed")


@pytest.fixture(scope="module")
def key(tmp_path_factory) -> Path:
    k = tmp_path_factory.mktemp("k") / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "signer@example", "-f", str(k)], check=True)
    return k


def _code(exc: pytest.ExceptionInfo) -> list[str]:
    return [p.code for p in exc.value.problems]


def test_sign_and_verify_round_trip(key, tmp_path):
    data = b'{"files": {"a": "00"}}\n'
    sig = signing.sign(data, key)
    assert sig.startswith(b"-----BEGIN SSH SIGNATURE-----")
    assert "slakit-evidence" in signing.verify(data, sig)
    allowed = tmp_path / "allowed"
    allowed.write_text("signer@example " + key.with_suffix(".pub").read_text())
    assert "signer@example" in signing.verify(data, sig, allowed_signers=allowed, identity="signer@example")
    fp = signing.fingerprint(key)
    assert fp.startswith("SHA256:") and fp == signing.fingerprint(key.with_suffix(".pub"))


def test_changed_data_other_namespace_and_other_signer_fail(key, tmp_path):
    data = b"manifest\n"
    sig = signing.sign(data, key)
    with pytest.raises(InputError) as exc:
        signing.verify(b"manifest!\n", sig)
    assert _code(exc) == ["signature_invalid"]
    with pytest.raises(InputError) as exc:
        signing.verify(data, sig, namespace="git")
    assert _code(exc) == ["signature_invalid"]
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    allowed = tmp_path / "allowed"
    allowed.write_text("signer@example " + other.with_suffix(".pub").read_text())
    with pytest.raises(InputError) as exc:
        signing.verify(data, sig, allowed_signers=allowed, identity="signer@example")
    assert _code(exc) == ["signature_invalid"]


def test_key_problems_have_codes(tmp_path, monkeypatch):
    with pytest.raises(InputError) as exc:
        signing.sign(b"x", tmp_path / "missing")
    assert _code(exc) == ["signing_key_not_found"]
    junk = tmp_path / "junk"
    junk.write_text("not a key\n")
    with pytest.raises(InputError) as exc:
        signing.sign(b"x", junk)
    assert _code(exc) == ["signing_failed"]
    assert "[signing_failed]" in exc.value.problems[0].format()


def test_passphrase_key_without_agent_fails_cleanly(tmp_path, monkeypatch):
    k = tmp_path / "locked"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-f", str(k)], check=True)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.setenv("SSH_ASKPASS_REQUIRE", "never")
    with pytest.raises(InputError) as exc:
        signing.sign(b"x", k)
    assert _code(exc) == ["signing_failed"]


def test_missing_tool(monkeypatch, key):
    monkeypatch.setenv("PATH", "")
    with pytest.raises(InputError) as exc:
        signing.sign(b"x", key)
    assert _code(exc) == ["signing_tool_missing"]


@pytest.mark.skipif(shutil.which("ssh-agent") is None or shutil.which("ssh-add") is None, reason="no ssh-agent")
def test_public_key_with_its_private_half_in_ssh_agent(tmp_path, monkeypatch):
    import os
    import signal

    k = tmp_path / "locked"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-f", str(k)], check=True)
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        askpass = tmp_path / "askpass.sh"
        askpass.write_text("#!/bin/sh\necho secret\n")
        askpass.chmod(0o700)
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock), "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force",
               "DISPLAY": ":0"}
        for _ in range(50):
            if sock.exists():
                break
            subprocess.run(["sleep", "0.1"])
        added = subprocess.run(["ssh-add", str(k)], env=env, stdin=subprocess.DEVNULL, capture_output=True,
                               start_new_session=True)
        assert added.returncode == 0, added.stderr
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        sig = signing.sign(b"manifest\n", k.with_suffix(".pub"))
        assert "slakit-evidence" in signing.verify(b"manifest\n", sig)
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=10)


def test_sign_and_verify_a_file_in_place(key, tmp_path):
    manifest = tmp_path / "manifest.json"
    manifest.write_text('{"files": {}}\n')
    sig = signing.sign_file(manifest, key)
    assert sig == tmp_path / "manifest.json.sig" and sig.read_bytes().startswith(b"-----BEGIN SSH SIGNATURE")
    assert "slakit-evidence" in signing.verify_file(manifest)
    manifest.write_text('{"files": {"x": "1"}}\n')
    with pytest.raises(InputError) as exc:
        signing.verify_file(manifest)
    assert _code(exc) == ["signature_invalid"]
    sig.unlink()
    with pytest.raises(InputError) as exc:
        signing.verify_file(manifest)
    assert _code(exc) == ["signature_invalid"] and exc.value.problems[0].file.endswith("manifest.json.sig")
