"""Tamper-evident evidence bundles: signatures, unsafe entries, SIGTERM, --out."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from acceptance.evidence import Bundle, manifest_digest, verify
from tests.acceptance.conftest import REPO, contract_with
from tests.hostile.conftest import assert_coded_failure, cli

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen (openssh-client) not installed")

SW = """
- id: sw
  check: software.versions
  expect: {kernel: ">=3"}
"""


def _key(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


def _allowed(folder: Path, **keys: Path) -> Path:
    lines = []
    for principal, key in keys.items():
        typ, blob = Path(f"{key}.pub").read_text().split()[:2]
        lines.append(f"{principal}@example {typ} {blob}\n")
    p = folder / "allowed_signers"
    p.write_text("".join(lines))
    return p


@pytest.fixture
def signed(tmp_path):
    contract = contract_with(tmp_path, SW)
    provider, customer = _key(tmp_path, "provider"), _key(tmp_path, "customer")
    out = tmp_path / "bundle"
    r = cli("accept", "run", contract, "--out", out, "--no-progress", "--sign", provider)
    assert r.exit_code == 0, r.output
    return out, provider, customer, _allowed(tmp_path, provider=provider, customer=customer)


def _forge(out: Path) -> None:
    """Rewrite results.json and the manifest consistently, as a forger would."""
    res = json.loads((out / "results.json").read_text())
    res["status"] = "pass"
    res["criteria"][0]["status"] = "pass"
    res["criteria"][0]["verdicts"][0]["measured"] = "forged"
    (out / "results.json").write_text(json.dumps(res))
    m = json.loads((out / "manifest.json").read_text())
    from acceptance.evidence import sha256_file

    m["files"]["results.json"] = sha256_file(out / "results.json")
    m["digest"] = manifest_digest(m["files"])
    (out / "manifest.json").write_text(json.dumps(m, indent=2) + "\n")


def test_signed_bundle_verifies_and_names_the_signer(signed):
    out, _, _, allowed = signed
    r = cli("accept", "verify", out, "--allowed-signers", allowed, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["ok"] and doc["signed"] and doc["trust_checked"]
    assert [s["principal"] for s in doc["signatures"]] == ["provider@example"]


def test_both_parties_sign(signed):
    out, _, customer, allowed = signed
    assert cli("accept", "sign", out, "--key", customer).exit_code == 0
    doc = json.loads(cli("accept", "verify", out, "--allowed-signers", allowed, "--format", "json").stdout)
    assert sorted(s["principal"] for s in doc["signatures"]) == ["customer@example", "provider@example"]
    assert doc["ok"]


def test_consistent_rewrite_of_results_and_manifest_is_caught_by_the_signature(signed):
    out, _, _, allowed = signed
    _forge(out)
    assert verify(out).files_ok                      # the hashes alone cannot tell
    r = cli("accept", "verify", out, "--allowed-signers", allowed)
    assert r.exit_code == 1 and "bad_signature" in r.output
    assert "allowed-signers file does not list" not in r.output      # the key may be listed: it is the signature
    r = cli("accept", "report", out, "-o", out.parent / "cert.pdf")
    assert_coded_failure(r, "bundle_not_verified")
    assert not (out.parent / "cert.pdf").exists()


def test_resigned_by_an_unknown_key_is_not_trusted(signed, tmp_path):
    out, _, _, allowed = signed
    _forge(out)
    shutil.rmtree(out / "signatures")
    assert cli("accept", "sign", out, "--key", _key(tmp_path, "mallory")).exit_code == 0
    r = cli("accept", "verify", out, "--allowed-signers", allowed, "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and not doc["ok"] and doc["signatures"][0]["reason"] == "unknown_signer"
    assert_coded_failure(cli("accept", "report", out, "-o", tmp_path / "c.pdf", "--allowed-signers", allowed),
                         "bundle_not_verified")
    # the table says the key is not in the file it was given, not to give one
    r = cli("accept", "verify", out, "--allowed-signers", allowed)
    assert "unknown_signer — a key the allowed-signers file does not list" in r.output
    assert "give --allowed-signers" not in r.output


def test_unsigned_bundle_certificate_says_unsigned_on_every_page(tmp_path):
    from pypdf import PdfReader

    contract = contract_with(tmp_path, SW)
    out = tmp_path / "bundle"
    assert cli("accept", "run", contract, "--out", out, "--no-progress").exit_code == 0
    pdf = tmp_path / "cert.pdf"
    r = cli("accept", "report", out, "-o", pdf)
    assert r.exit_code == 0, r.output
    pages = PdfReader(str(pdf)).pages
    assert len(pages) >= 1 and all("UNSIGNED" in p.extract_text() for p in pages)
    assert_coded_failure(cli("accept", "verify", out, "--allowed-signers", _allowed(tmp_path, p=_key(tmp_path, "p"))),
                         "unsigned")


def test_signed_certificate_names_the_signer_and_has_no_unsigned_mark(signed, tmp_path):
    from pypdf import PdfReader

    out, _, _, allowed = signed
    pdf = tmp_path / "cert.pdf"
    assert cli("accept", "report", out, "-o", pdf, "--allowed-signers", allowed).exit_code == 0
    text = "".join(p.extract_text() for p in PdfReader(str(pdf)).pages)
    assert "UNSIGNED" not in text and "provider@example" in text


def test_rewriting_the_manifest_drops_stale_signatures(signed, tmp_path):
    out, _, _, allowed = signed
    contract = tmp_path / "contract.yaml"
    assert cli("accept", "evaluate", contract, out, "--write", "--format", "json").exit_code == 0
    assert not list((out / "signatures").glob("*.sig"))
    assert verify(out).ok and not verify(out).signed


# ------------------------------------------------------------------ unsafe entries

@pytest.fixture
def plain_bundle(tmp_path):
    contract = contract_with(tmp_path, SW)
    out = tmp_path / "bundle"
    assert cli("accept", "run", contract, "--out", out, "--no-progress").exit_code == 0
    return contract, out


def _add_to_manifest(out: Path, rel: str, digest: str = "0" * 64) -> None:
    m = json.loads((out / "manifest.json").read_text())
    m["files"][rel] = digest
    m["digest"] = manifest_digest(m["files"])
    (out / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("rel", ["/etc/passwd", "../../etc/passwd", "raw/../../x", "raw//x"])
def test_verify_refuses_absolute_and_dotdot_manifest_paths(plain_bundle, rel):
    _, out = plain_bundle
    _add_to_manifest(out, rel)
    res = verify(out)
    assert not res.ok and any("unsafe path" in p for p in res.problems)


@pytest.mark.parametrize("kind", ["symlink", "fifo", "dev"])
def test_verify_and_evaluate_refuse_links_fifos_and_devices_without_hanging(plain_bundle, kind, tmp_path):
    contract, out = plain_bundle
    target = out / "raw" / "sw" / "evil.json"
    if kind == "symlink":
        os.symlink("/etc/passwd", target)
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        os.symlink("/dev/zero", target)
    _add_to_manifest(out, "raw/sw/evil.json")
    done: dict = {}

    def work():
        done["verify"] = verify(out)
        done["evaluate"] = cli("accept", "evaluate", contract, out, "--write")

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "verify/evaluate hung on a FIFO or device"
    assert not done["verify"].ok and any("not a regular file" in p for p in done["verify"].problems)
    assert_coded_failure(done["evaluate"], "bundle_unsafe_entry")


# ------------------------------------------------------------------ the run

LONG = """
- id: sw
  check: software.versions
  expect: {kernel: ">=3"}
- id: burn
  check: gpu.burn
  params: {stress: cpu, duration_s: 60, interval_s: 0.5}
  expect: {max_xid_events: 0}
"""


def test_sigterm_during_a_run_stops_children_and_marks_the_run_interrupted(tmp_path):
    contract = contract_with(tmp_path, LONG)
    out = tmp_path / "b"
    cmd = [sys.executable, "-m", "slakit", "accept", "run", str(contract), "--out", str(out), "--no-progress",
           "--format", "json"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if json.loads((out / "run.json").read_text())["criteria"]["sw"]["state"] == "done":
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    time.sleep(1.0)                                     # the burn is running
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    run_doc = json.loads((out / "run.json").read_text())
    assert run_doc["state"] == "interrupted" and run_doc["criteria"]["burn"]["state"] == "interrupted"
    assert verify(out).ok
    time.sleep(0.5)
    assert "burn.py --duration 60" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_out_into_a_non_empty_folder_that_is_no_bundle_is_refused(tmp_path):
    contract = contract_with(tmp_path, SW)
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("precious")
    r = cli("accept", "run", contract, "--out", home, "--no-progress")
    assert_coded_failure(r, "out_not_empty")
    assert sorted(p.name for p in home.iterdir()) == ["thesis.tex"]


@pytest.mark.parametrize("damage", ["truncate", "not_json", "wrong_shape"])
def test_truncated_results_json_is_a_coded_error(plain_bundle, damage):
    _, out = plain_bundle
    res = out / "results.json"
    text = res.read_text()
    res.write_text({"truncate": text[: len(text) // 2], "not_json": "\x00\xff", "wrong_shape": "[1, 2]"}[damage])
    b = Bundle(out)
    b.adopt_existing()
    b.write_manifest()                                  # consistent manifest: only the content is bad
    r = cli("accept", "report", out, "--format", "json")
    assert_coded_failure(r, "results_invalid")
