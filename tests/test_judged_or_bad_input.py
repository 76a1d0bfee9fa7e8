"""`accept drill`, `accept verify` and `claim verify` tell an input they cannot judge from a
judged failure. What they cannot judge (a node the scheduler does not know, a fault that could
not be written, a folder or file that is no bundle or package, a signature tool that cannot
run) is bad input, printed by the one handler (`slaschema.cli.report_input_errors`) as
`file ... [code]` lines and `N error(s)` on stderr, or the slakit-problems/1 document with
--format json, exit 1. What they judge (a drill that detects late or never, files that do not
match their manifest, a signature that does not verify) keeps its own verdict output."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from slakit.cli import main

REPO = Path(__file__).resolve().parents[1]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def problems_json(res) -> list[dict]:
    doc = json.loads(res.stdout)
    assert doc["format"] == "slakit-problems/1" and doc["ok"] is False, doc
    return doc["problems"]


# --- accept drill ---------------------------------------------------------------------------

@pytest.fixture
def scheduler(monkeypatch):
    """The drill's view of Slurm, without Slurm: `states[node]` is what sinfo would say."""
    from acceptance import drill

    states: dict[str, object] = {}

    def read(node, env=None):
        got = states.get(node)
        if isinstance(got, Exception):
            raise got
        return got

    monkeypatch.setattr(drill, "read_node_state", read)
    monkeypatch.setattr(drill, "resume_node", lambda node, env=None: None)
    return states


def test_drill_on_a_node_the_scheduler_does_not_know_is_bad_input(scheduler, tmp_path):
    marker = tmp_path / "fault-{node}"
    res = run("accept", "drill", "--node", "gpu-99", "--marker", marker, "--max", "1m")
    assert res.exit_code == 1 and "Traceback" not in res.output
    lines = res.stderr.splitlines()
    assert lines[0].endswith("--node: the scheduler does not know node gpu-99; fix: name a node that "
                             "`sinfo -N` lists [node_unknown]"), lines
    assert lines[-1] == "1 error(s)" and res.stdout == ""
    res = run("accept", "drill", "--node", "gpu-99", "--marker", marker, "--max", "1m", "--format", "json")
    assert res.exit_code == 1
    [p] = problems_json(res)
    assert (p["code"], p["path"]) == ("node_unknown", "--node")
    assert not (tmp_path / "fault-gpu-99").exists()


def test_drill_that_cannot_read_the_scheduler_or_write_its_fault_is_bad_input(scheduler, tmp_path):
    from acceptance.drill import NodeState

    scheduler["gpu-01"] = FileNotFoundError(2, "No such file or directory", "sinfo")
    res = run("accept", "drill", "--node", "gpu-01", "--marker", tmp_path / "m", "--max", "1m")
    assert res.exit_code == 1
    assert res.stderr.splitlines() == ["sinfo: No such file or directory [drill_io_error]", "1 error(s)"]
    scheduler["gpu-01"] = NodeState("idle", "none")
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = run("accept", "drill", "--node", "gpu-01", "--marker", blocker / "fault", "--max", "1m",
              "--format", "json")
    assert res.exit_code == 1, res.output
    [p] = problems_json(res)
    assert p["code"] == "drill_io_error" and p["file"].startswith(str(blocker))


def test_a_drill_that_is_never_detected_is_a_verdict_not_an_error(scheduler, tmp_path):
    from acceptance.drill import NodeState

    scheduler["gpu-01"] = NodeState("idle", "none")          # the health check never drains it
    res = run("accept", "drill", "--node", "gpu-01", "--marker", tmp_path / "m", "--max", "1m",
              "--detect-timeout", "1s", "--poll", "0.05", "--format", "json")
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert (doc["format"], doc["ok"], doc["status"]) == ("slakit-drill/1", False, "fail")
    assert doc["result"]["detected"] is None and "error(s)" not in res.stderr


# --- accept verify --------------------------------------------------------------------------

def test_accept_verify_of_a_folder_that_is_no_bundle_is_bad_input(tmp_path):
    folder = tmp_path / "not-a-bundle"
    folder.mkdir()
    (folder / "notes.txt").write_text("x")
    res = run("accept", "verify", folder)
    assert res.exit_code == 1 and res.stdout == "", res.output
    assert res.stderr.splitlines() == [
        f"{folder}: no manifest.json, so this is no evidence bundle; fix: name the folder `slakit accept run -o` "
        "wrote [manifest_missing]", "1 error(s)"]
    [p] = problems_json(run("accept", "verify", folder, "--format", "json"))
    assert (p["code"], p["file"]) == ("manifest_missing", str(folder))
    (folder / "manifest.json").write_text("[1, 2]")
    res = run("accept", "verify", folder)
    assert res.exit_code == 1 and res.stderr.splitlines()[0].startswith(f"{folder / 'manifest.json'}: ")
    assert res.stderr.splitlines()[0].endswith("[manifest_invalid]") and "NOT OK" not in res.output


def test_accept_verify_of_a_changed_bundle_is_a_verdict(tmp_path):
    bundle = tmp_path / "ev"
    r = run("accept", "run", CONTRACT, "--executor", "local", "--only", "software.versions", "-o", bundle,
            "--no-progress", "--format", "json")
    assert r.exit_code in (0, 1), r.output
    (bundle / "results.json").write_text((bundle / "results.json").read_text() + " ")
    res = run("accept", "verify", bundle)
    assert res.exit_code == 1 and "changed: results.json" in res.stdout and "NOT OK" in res.stdout
    assert "error(s)" not in res.stderr
    doc = json.loads(run("accept", "verify", bundle, "--format", "json").stdout)
    assert (doc["format"], doc["ok"], doc["changed"]) == ("slakit-verify/1", False, ["results.json"])


# --- claim verify ---------------------------------------------------------------------------

def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("members, line", [
    (None, "{p}: not an evidence package (a tar file): ReadError [package_unreadable]"),
    ({"claim.json": b"{}"}, "{p}: no manifest.json [manifest_missing]"),
])
def test_claim_verify_of_a_file_that_is_no_package_is_bad_input(tmp_path, members, line):
    p = tmp_path / "claim.evidence.tar"
    if members is None:
        p.write_bytes(b"hello")
    else:
        _tar(p, members)
    res = run("claim", "verify", p)
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr.splitlines() == [line.format(p=p), "1 error(s)"]


def test_claim_verify_of_a_changed_member_is_a_verdict(tmp_path):
    import hashlib

    claim = b'{"claimed_total": "1.00"}'
    manifest = json.dumps({"files": {"claim.json": hashlib.sha256(claim).hexdigest()}}).encode()
    p = _tar(tmp_path / "claim.evidence.tar", {"manifest.json": manifest, "claim.json": claim + b" "})
    res = run("claim", "verify", p)
    assert res.exit_code == 1
    lines = res.stderr.splitlines()
    assert lines[0].startswith("claim.json: changed") and lines[-1] == f"{p}: 1 problem(s)"


def test_claim_verify_with_allowed_signers_needs_the_identity(tmp_path):
    p = _tar(tmp_path / "claim.evidence.tar", {"manifest.json": b'{"files": {}}'})
    signers = tmp_path / "allowed"
    signers.write_text("")
    res = run("claim", "verify", p, "--allowed-signers", signers)
    assert res.exit_code == 2 and "--identity" in res.output and "[identity_missing]" in res.output, res.output


def test_claim_verify_when_ssh_keygen_is_missing_is_bad_input_not_a_verdict(tmp_path, monkeypatch):
    """A signed package checked where ssh-keygen cannot run: the signature is not judged, so
    this is the coded error `[signing_tool_missing]`, not a line among the verdict's problems."""
    import shutil

    from slaschema import sshsig

    monkeypatch.setattr(sshsig.shutil, "which", lambda name, *a, **k: None if name == "ssh-keygen"
                        else shutil.which(name, *a, **k))
    p = _tar(tmp_path / "claim.evidence.tar", {"manifest.json": b'{"files": {}}',
                                               "manifest.json.sig": b"-----BEGIN SSH SIGNATURE-----\n"})
    res = run("claim", "verify", p)
    assert res.exit_code == 1, res.output
    lines = res.stderr.splitlines()
    assert lines[0].startswith(f"{p}:manifest.json.sig: ssh-keygen is not installed") and \
        lines[0].endswith("[signing_tool_missing]") and lines[-1] == "1 error(s)", lines
