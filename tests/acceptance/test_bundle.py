"""The runner and the evidence bundle: run, verify, tampering, resume, Ctrl-C, evaluate, report."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner

from acceptance.document import read_run_document
from acceptance.evidence import dumps, verify
from acceptance.executors.local import LocalExecutor
from acceptance.runner import RunOptions, evaluate_bundle, run_acceptance
from slakit.cli import main
from slaschema.errors import InputError
from tests.acceptance.conftest import REPO, contract_with, load, realdata
from tests.contracts import small_contract

CRITERIA = """
- id: fs-write
  check: storage.fio
  params: {path: TMP, rw: write, bs: 1M, size: 8M, numjobs: 1, ioengine: psync, iodepth: 1}
  metric: write_gbps
  min: 0.0001
- id: sw
  check: software.versions
  expect: {kernel: ">=3"}
- id: inv
  check: gpu.inventory
  expect: {gpus_per_node: 4}
- id: fs-impossible
  check: storage.fio
  params: {path: TMP, rw: write, bs: 1M, size: 8M, numjobs: 1, ioengine: psync, iodepth: 1}
  metric: write_gbps
  min: 100000
"""


@pytest.fixture
def contract(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    return contract_with(tmp_path, CRITERIA.replace("TMP", str(data)))


HOST = socket.gethostname().split(".")[0]     # the node a local run is filed under: this host


def run(contract_path: Path, out: Path, **kw):
    opts = RunOptions(out=out, nodes=[HOST], **kw)
    return run_acceptance(load(contract_path), opts, LocalExecutor())


@pytest.fixture
def bundle(contract, tmp_path):
    out = tmp_path / "bundle"
    doc = run(contract, out)
    return contract, out, doc


def test_run_writes_a_complete_verifiable_bundle(bundle):
    _, out, doc = bundle
    by_id = {c.id: c for c in doc.criteria}
    assert by_id["fs-write"].status == "pass"
    assert by_id["fs-impossible"].status == "fail" and by_id["fs-impossible"].reason == "below_min"
    assert by_id["sw"].status == "pass"
    assert doc.status == "fail" and doc.run.state == "complete"
    assert (out / "raw" / "fs-write" / f"{HOST}.json").is_file()
    assert (out / "metrics" / "fs-write" / f"{HOST}.json").is_file()
    assert (out / "results.json").read_text() == dumps(doc.to_json(), pretty=False)
    assert read_run_document(out / "results.json") == doc
    res = verify(out)
    assert res.ok and res.checked == len([p for p in out.rglob("*") if p.is_file()]) - 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["files"]) >= {"results.json", "junit.xml", "run.json", f"raw/fs-write/{HOST}.json"}
    # JUnit parses and counts what results.json says.
    root = ET.parse(out / "junit.xml").getroot()
    assert root.tag == "testsuites"
    assert int(root.get("failures")) == sum(1 for c in doc.criteria for v in c.verdicts if v.status == "fail")
    assert int(root.get("skipped")) >= 1          # gpu.inventory: no GPU here (or a GPU host: passes/fails)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert suites["fs-impossible"].find("testcase/failure").get("type") == "below_min"


def test_verify_detects_changed_missing_added_and_edited_manifest(bundle, tmp_path):
    _, out, _ = bundle
    for case in ("changed", "missing", "added", "manifest"):
        b = tmp_path / f"copy-{case}"
        shutil.copytree(out, b)
        if case == "changed":
            p = b / "raw" / "fs-write" / f"{HOST}.json"
            doc = json.loads(p.read_text())
            doc["stdout"] = doc["stdout"].replace('"bw_bytes"', '"bw_bytes" ', 1)
            p.write_text(json.dumps(doc))
        elif case == "missing":
            (b / "metrics" / "sw" / f"{HOST}.json").unlink()
        elif case == "added":
            (b / "raw" / "fs-write" / "extra.txt").write_text("planted")
        else:
            m = json.loads((b / "manifest.json").read_text())
            m["files"]["results.json"] = "0" * 64
            (b / "manifest.json").write_text(json.dumps(m))
        res = verify(b)
        assert not res.ok
        if case == "changed":
            assert res.changed == (f"raw/fs-write/{HOST}.json",)
        elif case == "missing":
            assert res.missing == (f"metrics/sw/{HOST}.json",)
        elif case == "added":
            assert res.added == ("raw/fs-write/extra.txt",)
        else:
            assert not res.digest_ok and res.changed == ("results.json",)
        r = CliRunner().invoke(main, ["accept", "verify", str(b)])
        assert r.exit_code == 1, r.output
    r = CliRunner().invoke(main, ["accept", "verify", str(out), "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.output)["ok"] is True


def test_resume_keeps_finished_checks_and_refuses_tampering_or_another_contract(bundle, tmp_path):
    contract, out, first = bundle
    raw_before = (out / "raw" / "fs-write" / f"{HOST}.json").read_bytes()
    with pytest.raises(InputError) as e:
        run(contract, out)
    assert e.value.problems[0].code == "bundle_exists"
    events = []
    doc = run_acceptance(load(contract), RunOptions(out=out, nodes=[HOST], resume=True), LocalExecutor(),
                         on_event=lambda kind, p, info: events.append((kind, p.criterion.id)))
    assert {k for k, _ in events} == {"resumed"}
    assert (out / "raw" / "fs-write" / f"{HOST}.json").read_bytes() == raw_before
    assert [c.status for c in doc.criteria] == [c.status for c in first.criteria]
    assert verify(out).ok
    other = contract_with(tmp_path, CRITERIA.replace("TMP", str(tmp_path)).replace("100000", "99999"), "other.yaml")
    with pytest.raises(InputError) as e:
        run(other, out, resume=True)
    assert e.value.problems[0].code == "resume_mismatch"
    (out / "results.json").write_text("{}")
    with pytest.raises(InputError) as e:
        run(contract, out, resume=True)
    assert e.value.problems[0].code == "bundle_tampered"


def test_evaluate_judges_an_existing_bundle_without_running(bundle, tmp_path):
    contract, out, doc = bundle
    again = evaluate_bundle(load(contract), out)
    assert [(c.id, c.status) for c in again.criteria] == [(c.id, c.status) for c in doc.criteria]
    assert again.run.mode == "evaluate"
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(out), "--format", "json"])
    assert r.exit_code == 1                       # fs-impossible fails
    assert json.loads(r.output)["status"] == "fail"
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(out), "--only", "sw", "--format", "json"])
    assert r.exit_code == 0 and [c["id"] for c in json.loads(r.output)["criteria"]] == ["sw"]
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(out), "--only", "nope"])
    assert r.exit_code == 2 and "unknown_selection" in r.output


REALDATA_CRITERIA = """
- id: nccl-1g
  check: network.nccl
  params: {collective: all_reduce, nodes: 1, size: 1G}
  metric: busbw_gbps
  min: 220
- id: inventory
  check: gpu.inventory
  expect: {gpus_per_node: 1, model: A100, ecc: true}
- id: dcgm
  check: gpu.dcgm
  expect: {overall: pass}
- id: xid
  check: gpu.xid
  metric: xid_events
  max: 0
"""


def test_evaluate_a_handed_over_bundle_of_real_outputs(tmp_path):
    files = {
        "nccl-1g/_cluster.txt": realdata("nccl_all_reduce_perf_a100_1node_gcm_fixture.txt"),
        "inventory/gpu01.txt": realdata("nvidia_smi_q_x_a100_sxm4_telegraf.xml.txt"),
        "dcgm/gpu01.txt": realdata("dcgmi_diag_r3_text_8xH100_FAIL_fabricmanager_nccl-tests-issue264.txt"),
        "xid/gpu01.txt": realdata("xid_kernel_log_samples.txt"),
    }
    b = tmp_path / "handover"
    for rel, src in files.items():
        (b / "raw" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, b / "raw" / rel)
    # A one-node contract (gpu01), so the bundle covers the whole scope.
    contract = tmp_path / "one-node.yaml"
    contract.write_text(small_contract("one-node", {"r1": "gpu01"}, "acceptance:\n  criteria:\n"
                                       + textwrap.indent(REALDATA_CRITERIA.strip("\n"), "    ") + "\n"))
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(b), "--write", "--format", "json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    status = {c["id"]: (c["status"], c["reason"]) for c in doc["criteria"]}
    assert status == {"nccl-1g": ("pass", "within_bounds"), "inventory": ("skip", "memory_health_not_reported"),
                      "dcgm": ("fail", "diag_test_failed"), "xid": ("fail", "above_max")}
    assert doc["decision"]["result"] == "rejected" and not doc["scope"]["partial"]
    assert verify(b).ok
    pdf = tmp_path / "acceptance.pdf"
    r = CliRunner().invoke(main, ["accept", "report", str(b), "-o", str(pdf)])
    assert r.exit_code == 0, r.output
    from pypdf import PdfReader

    text = "\n".join(page.extract_text() for page in PdfReader(str(pdf)).pages)
    assert "ACCEPTED" not in text
    for needle in ("Acceptance certificate", "REJECTED", "nccl-1g", "diag_test_failed", "gpu01",
                   "For the provider", "For the customer", json.loads((b / "manifest.json").read_text())["digest"][:16]):
        assert needle in text
    first = pdf.read_bytes()
    CliRunner().invoke(main, ["accept", "report", str(b), "-o", str(pdf)])
    assert pdf.read_bytes() == first                # invariant: same inputs, same bytes
    r = CliRunner().invoke(main, ["accept", "report", str(b), "--format", "junit"])
    assert ET.fromstring(r.output.encode()).tag == "testsuites"


def test_params_are_validated_before_anything_runs(tmp_path):
    bad = contract_with(tmp_path, """
- id: fs
  check: storage.fio
  params: {path: "relative/dir", bs: "1 fortnight", numjobs: 0}
  metric: read_gbps
  min: 1
- id: eth
  check: network.iperf3
  params: {server: "-oProxyCommand=x"}
  metric: throughput_gbps
  min: 1
""")
    out = tmp_path / "never"
    r = CliRunner().invoke(main, ["accept", "run", str(bad), "--out", str(out), "--no-progress"])
    assert r.exit_code == 1
    for code in ("path_not_absolute", "size_invalid", "greater_than_equal", "host_invalid"):
        assert code in r.output
    assert not out.exists()
    r = CliRunner().invoke(main, ["accept", "run", str(bad), "--out", str(out), "--param", "nonsense"])
    assert r.exit_code == 2 and "bad_param_override" in r.output


LONG = """
- id: sw
  check: software.versions
  expect: {kernel: ">=3"}
- id: burn
  check: gpu.burn
  params: {stress: cpu, duration_s: 60, interval_s: 0.5}
  expect: {max_xid_events: 0}
- id: sw-again
  check: software.versions
  expect: {kernel: ">=3"}
"""


def test_sigint_leaves_a_consistent_bundle_and_resume_finishes(tmp_path):
    contract = contract_with(tmp_path, LONG)
    out = tmp_path / "b"
    cmd = [sys.executable, "-m", "slakit", "accept", "run", str(contract), "--out", str(out), "--no-progress",
           "--format", "json"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run_json = out / "run.json"
        if run_json.is_file():
            try:
                state = json.loads(run_json.read_text())["criteria"]["sw"]["state"]
            except (ValueError, KeyError):
                state = None
            if state == "done":
                break
        time.sleep(0.1)
    time.sleep(1.0)                                 # burn is running now
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 20               # stopped the 60 s burn instead of waiting for it
    assert proc.returncode == 130, stderr
    assert "--resume" in stderr
    assert verify(out).ok
    run_doc = json.loads((out / "run.json").read_text())
    assert run_doc["state"] == "interrupted"
    assert {k: v["state"] for k, v in run_doc["criteria"].items()} == {"sw": "done", "burn": "interrupted",
                                                                        "sw-again": "pending"}
    results = json.loads((out / "results.json").read_text())
    assert results["run"]["state"] == "interrupted" and results["status"] == "error"
    assert json.loads(stdout)["run"]["state"] == "interrupted"
    # No stray burn processes survive the interruption.
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "burn.py --duration 60" not in ps
    node = socket.gethostname().split(".")[0]
    sw_raw = (out / "raw" / "sw" / f"{node}.json").read_bytes()
    r = subprocess.run(cmd + ["--resume", "--param", "burn.duration_s=1"], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["run"]["state"] == "complete" and doc["run"]["resumed"] is True
    assert [c["status"] for c in doc["criteria"]] == ["pass", "pass", "pass"]
    assert verify(out).ok
    assert (out / "raw" / "sw" / f"{node}.json").read_bytes() == sw_raw      # not run again


def test_security_checks_run_through_the_same_runner(tmp_path):
    contract = contract_with(tmp_path, """
- id: sec-isolation
  check: security.isolation
""")
    out = tmp_path / "b"
    doc = run(contract, out)
    (crit,) = doc.criteria
    assert crit.check == "security.isolation" and crit.verdicts
    assert all(v.reason not in ("unknown_check", "unparseable_output", "tool_missing") for v in crit.verdicts)
    assert any((out / "raw" / "sec-isolation").iterdir()) and verify(out).ok


def test_an_output_folder_or_certificate_that_cannot_be_made_is_output_unwritable(bundle, tmp_path):
    """`--out`/`-o` under a file or in /proc: a coded problem naming the option, exit 1, nothing
    written (they were [unexpected_error] NotADirectoryError, FileExistsError, FileNotFoundError)."""
    contract, out, _ = bundle
    afile = tmp_path / "afile"
    afile.write_text("x\n", encoding="utf-8")
    runs = [["accept", "run", str(contract), "--out", str(afile / "sub"), "--only", "sw", "--no-progress"],
            ["accept", "run", str(contract), "--out", "/proc/slakit-test-bundle", "--only", "sw", "--no-progress"],
            ["accept", "burn-in", str(contract), "--executor", "local", "--stress", "cpu", "--duration", "1s",
             "-o", str(afile / "sub")],
            ["accept", "report", str(out), "-o", str(afile / "cert.pdf")],
            ["accept", "report", str(out), "-o", "/proc/slakit-test-cert.md"]]
    for argv in runs:
        r = CliRunner().invoke(main, argv)
        assert r.exit_code == 1, (argv, r.output)
        assert "[output_unwritable]" in r.output and "unexpected_error" not in r.output, r.output
    assert afile.read_text(encoding="utf-8") == "x\n"
    r = CliRunner().invoke(main, ["accept", "report", str(out), "-o", str(tmp_path / "new" / "cert.md")])
    assert r.exit_code == 0 and (tmp_path / "new" / "cert.md").is_file()       # a folder that can be made is


@pytest.mark.parametrize("text", ["nope", "[1]", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",
                                  '{"contract": 5}', '{"criteria": 5}', '{"criteria": {"sw": 5}}'])
def test_resume_of_a_bundle_whose_run_json_is_no_run_record_is_refused(bundle, tmp_path, text):
    """A bundle that verifies (its manifest rewritten by whoever handed it over) but whose run.json
    is not the record `accept run` writes: not_a_bundle, exit 1; it was [unexpected_error]."""
    from acceptance.evidence import Bundle

    contract, out, _ = bundle
    (out / "run.json").write_text(text, encoding="utf-8")
    b = Bundle(out)
    b.adopt_existing()
    b.write_manifest()
    r = CliRunner().invoke(main, ["accept", "run", str(contract), "--out", str(out), "--resume", "--no-progress"])
    assert r.exit_code == 1 and "[not_a_bundle]" in r.output and "unexpected_error" not in r.output, r.output
    assert "run.json: not the run record `accept run` writes" in r.output


def test_evaluate_reads_the_overrides_run_json_recorded_for_the_criteria_it_judges(contract, tmp_path):
    """`accept evaluate --only sw` on a bundle run with `--param fs-write.size=4M` judged nothing:
    "--param names criterion 'fs-write', which is not selected", exit 2, with no --param given.
    A recorded override the check refuses names run.json (exit 1); node names that are no
    strings are no scope (the contract's), not a TypeError."""
    out = tmp_path / "b"
    run(contract, out, overrides={"fs-write": {"size": "4M"}})
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(out), "--only", "sw", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert [c["id"] for c in json.loads(r.stdout)["criteria"]] == ["sw"]
    meta = json.loads((out / "run.json").read_text())
    meta["overrides"] = {"fs-write": {"size": "zz"}}
    (out / "run.json").write_text(json.dumps(meta))
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(out)])
    assert r.exit_code == 1 and "[size_invalid]" in r.output and "unexpected_error" not in r.output, r.output
    assert f"{out / 'run.json'}: overrides.fs-write.size: expected a size" in r.output and "--param" not in r.output
    meta["overrides"], meta["nodes"] = {}, [5, None]
    (out / "run.json").write_text(json.dumps(meta))
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(out), "--format", "json"])
    assert r.exit_code == 1 and "unexpected_error" not in r.output, r.output
    assert json.loads(r.stdout)["scope"]["partial"] is False


def _inventory_handover(tmp_path, nodes=("gpu01",), folder="inventory",
                        expect="{gpus_per_node: 1}") -> tuple[Path, Path, Path]:
    """(contract, bundle, the real output) for an inventory criterion on `nodes` (rack r1), the
    same real `nvidia-smi -q -x` filed under raw/FOLDER/ for each node."""
    src = realdata("nvidia_smi_q_x_a100_sxm4_telegraf.xml.txt")
    b = tmp_path / "handover"
    (b / "raw" / folder).mkdir(parents=True)
    for node in nodes:
        shutil.copy(src, b / "raw" / folder / f"{node}.txt")
    contract = tmp_path / "contract.yaml"
    contract.write_text(small_contract("inventory-handover", {"r1": ",".join(nodes)}, "acceptance:\n  criteria:\n"
                                       "    - id: inventory\n      check: gpu.inventory\n"
                                       f"      expect: {expect}\n"))
    return contract, b, src


def test_one_real_output_handed_over_for_two_nodes_is_not_evidence_for_either(tmp_path):
    """The same `nvidia-smi -q -x` filed under gpu01 and gpu02 (a copy, or one node's output
    under the other's name) shows one GPU UUID and serial on both: the inventory criterion is
    an error on both nodes (`gpu_identity_repeated`, naming the other node), not their pass or
    skip, and the acceptance cannot be granted on it."""
    contract, b, src = _inventory_handover(tmp_path, ("gpu01", "gpu02"), expect="{gpus_per_node: 1, model: A100}")
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(b), "--format", "json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    (crit,) = doc["criteria"]
    assert (crit["status"], crit["reason"]) == ("error", "gpu_identity_repeated")
    repeated = {v["node"]: v for v in crit["verdicts"] if v["reason"] == "gpu_identity_repeated"}
    assert sorted(repeated) == ["gpu01", "gpu02"]
    assert repeated["gpu01"]["details"]["also_reported_by"] == ["gpu02"]
    assert {i["kind"] for i in repeated["gpu02"]["details"]["identifiers"]} >= {"uuid"}
    assert "collect it again on the node itself" in repeated["gpu01"]["remediation"]
    assert doc["decision"]["result"] != "accepted"
    # the node's own output alone (gpu02 given another GPU's UUID and serial) is judged as before
    other = src.read_text(encoding="utf-8")
    import re

    other = re.sub(r"<uuid>[^<]*</uuid>", "<uuid>GPU-00000000-1111-2222-3333-444444444444</uuid>", other)
    other = re.sub(r"<serial>[^<]*</serial>", "<serial>1650000000002</serial>", other)
    (b / "raw" / "inventory" / "gpu02.txt").write_text(other, encoding="utf-8")
    doc = json.loads(CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(b), "--format", "json"]).output)
    assert not [v for c in doc["criteria"] for v in c["verdicts"] if v["reason"] == "gpu_identity_repeated"]


def test_placeholders_and_missing_identifiers_are_not_compared():
    from acceptance.identity import repeated_gpu_verdicts

    def node(*gpus):
        return {"gpus": [dict(g) for g in gpus]}

    same = {"uuid": "GPU-8f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f", "serial": "1321221027655"}
    placeholders = [{"uuid": "N/A", "serial": "[N/A]"}, {"uuid": None, "serial": "0000000000000"},
                    {"serial": "Not Supported"}, {"uuid": "GPU-1", "serial": "n/a"}]
    assert repeated_gpu_verdicts("inv", {"a": node(*placeholders), "b": node(*placeholders)}) == []
    assert repeated_gpu_verdicts("inv", {"a": node(same), "b": None, "_cluster": node(same)}) == []
    got = repeated_gpu_verdicts("inv", {"a": node(same), "b": node({"uuid": same["uuid"].lower()}),
                                        "c": node({"serial": same["serial"]})})
    assert [(v.node, v.status.value, v.details["also_reported_by"]) for v in got] == [
        ("a", "error", ["b", "c"]), ("b", "error", ["a"]), ("c", "error", ["a"])]


@pytest.fixture
def reset_file_limit():
    from slaschema import safefiles

    yield
    safefiles.set_max_file_bytes(None)          # the global flag is per process


def test_a_raw_output_over_the_file_size_limit_is_an_error_not_read(tmp_path, reset_file_limit):
    """A handed-over output is read whole; one over the limit for a file slakit reads
    (`--max-file-size`, 64 MiB by default) is an error verdict naming its size, not read."""
    contract, b, src = _inventory_handover(tmp_path)
    size = src.stat().st_size
    r = CliRunner().invoke(main, ["--max-file-size", str(size - 1), "accept", "evaluate", str(contract), str(b),
                                  "--format", "json"])
    assert r.exit_code == 1, r.output
    (crit,) = json.loads(r.output)["criteria"]
    assert (crit["status"], crit["reason"]) == ("error", "raw_output_too_large")
    (v,) = crit["verdicts"]
    assert f"{size:,} bytes, over the limit of {size - 1:,} bytes" in v["details"]["stderr"]
    r = CliRunner().invoke(main, ["--max-file-size", str(size), "accept", "evaluate", str(contract), str(b),
                                  "--format", "json"])
    assert json.loads(r.output)["criteria"][0]["reason"] != "raw_output_too_large"


def test_a_raw_folder_that_names_no_criterion_is_warned_about(tmp_path):
    """`raw/inventroy/` (a typo, or a criterion the contract does not have) was ignored without a
    word while `inventory` was judged without its output."""
    contract, b, _ = _inventory_handover(tmp_path, folder="inventroy")
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(b), "--format", "json"])
    assert r.exit_code == 1, r.output                       # inventory has no evidence: not run
    assert json.loads(r.stdout)["criteria"][0]["status"] == "not_run"
    assert ("warning: raw/inventroy/ names no criterion of the contract: its 1 file(s) are not judged"
            in r.stderr and "[unknown_criterion_folder]" in r.stderr), r.stderr
    (b / "raw" / "inventroy").rename(b / "raw" / "inventory")
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract), str(b), "--format", "json"])
    assert "unknown_criterion_folder" not in r.stderr
