"""A verdict never claims more than its evidence: bundles handed over as a provider would lay
them out (whole, partial, mixed nodes, mislabelled files, cut-off JSON, nothing but skips),
judged by `accept evaluate`, with their decision, reason codes, exit status and the
certificate read back: only a whole, passing bundle says ACCEPTED."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from acceptance.coverage import truncated_json
from slakit.cli import main
from tests.contracts import small_contract

from .conftest import FIXTURES, REPO

CRITERIA = """\
- id: sw
  check: software.versions
  expect: {driver: ">=570", kernel: ">=6", ofed: ">=24.04"}
- id: eth
  check: network.iperf3
  params: {server: 10.0.0.1, duration: 2}
  metric: throughput_gbps
  min: 1
- id: nccl
  check: network.nccl
  params: {collective: all_reduce, nodes: 2, size: 1G}
  metric: busbw_gbps
  min: 400
- id: drill
  check: health.detection
  max: 2m
"""
NODES = ("n1", "n2", "n3", "n4")        # racks r1 = n1, n2 and r2 = n3, n4; 8 GPUs per node


def contract(tmp_path: Path, criteria: str = CRITERIA) -> Path:
    path = tmp_path / "contract.yaml"
    body = "acceptance:\n  criteria:\n" + textwrap.indent(criteria, "    ")
    path.write_text(small_contract("cov", {"r1": "n[1-2]", "r2": "n[3-4]"}, body), encoding="utf-8")
    return path


def transcript(node: str, driver: str = "570.86.15") -> str:
    """What a provider's own collection prints for software.versions: standard commands."""
    return textwrap.dedent(f"""\
        $ hostname
        {node}
        $ nvidia-smi -q
        ==============NVSMI LOG==============
        Timestamp                                 : Tue Jan 12 10:00:00 2027
        Driver Version                            : {driver}
        CUDA Version                              : 12.8
        $ uname -r
        6.8.0-45-generic
        $ ofed_info -s
        MLNX_OFED_LINUX-24.07-0.6.1.0:
        $ dpkg -l
        ii  libnccl2       2.23.4-1+cuda12.6   amd64   NVIDIA Collective Communication Library (NCCL) Runtime
        ii  slurm-wlm      23.11.4-1.2u1       amd64   Simple Linux Utility for Resource Management
        """)


def iperf(node: str) -> str:
    return (FIXTURES / "iperf3" / "iperf3_tcp_loopback_t2.json").read_text().replace('"Linux vm ', f'"Linux {node} ')


def nccl_output(hosts: list[str], gpus: int = 8, busbw: float = 503.32, size: int = 1 << 30) -> str:
    """nccl-tests all_reduce_perf output as it prints it (rank lines name the hosts)."""
    ranks = "".join(f"#  Rank {i:2d} Group  0 Pid {1000 + i:6d} on {hosts[i // gpus]:>10} device {i % gpus:2d} "
                    "[0x07] NVIDIA H100 80GB HBM3\n" for i in range(len(hosts) * gpus))
    return (f"# nThread 1 nGpus 1 minBytes {size} maxBytes {size} step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n" + ranks + "#\n"
            "#                                                              out-of-place                       in-place\n"
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
            f"  {size:>10}     {size // 4:>9}     float     sum      -1   4000.0  268.44  {busbw:6.2f}      0   "
            f"4000.0  268.44  {busbw:6.2f}      0\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {busbw:.2f}\n#\n")


DRILL = json.dumps({"result": {"node": "n3", "fault": "xid79", "detection_s": 45.0, "detected_state": "drain"}})


def full_bundle(tmp_path: Path, name: str = "handover") -> Path:
    """Every criterion on every node and rack of the contract, all passing."""
    files = {f"sw/{n}.txt": transcript(n) for n in NODES}
    files.update({f"eth/{n}.txt": iperf(n) for n in NODES})
    files.update({"nccl/r1.txt": nccl_output(["n1", "n2"]), "nccl/r2.txt": nccl_output(["n3", "n4"]),
                  "drill/_cluster.txt": DRILL})
    return write_bundle(tmp_path / name, files)


def write_bundle(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / "raw" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def evaluate(c: Path, b: Path, *args: str):
    r = CliRunner().invoke(main, ["accept", "evaluate", str(c), str(b), "--write", "--format", "json", *args])
    doc = json.loads(r.stdout) if r.stdout.strip().startswith("{") else None
    return r, doc


def certificate(b: Path, tmp_path: Path) -> str:
    pdf = tmp_path / f"{b.name}.pdf"
    r = CliRunner().invoke(main, ["accept", "report", str(b), "-o", str(pdf)])
    assert r.exit_code == 0, r.output
    return "\n".join(page.extract_text() for page in PdfReader(str(pdf)).pages)


def table(c: Path, b: Path, *args: str) -> str:
    r = CliRunner().invoke(main, ["accept", "evaluate", str(c), str(b), "--format", "table", *args],
                           env={"COLUMNS": "220"})
    return r.output


def by_id(doc):
    return {c["id"]: c for c in doc["criteria"]}


def verdicts(doc, cid):
    return sorted(((v["node"] or v["details"].get("unit"), v["status"], v["reason"]) for v in by_id(doc)[cid]["verdicts"]),
                  key=str)


# --------------------------------------------------------------------------- whole and partial


def test_a_whole_passing_bundle_is_accepted(tmp_path):
    c, b = contract(tmp_path), full_bundle(tmp_path)
    r, doc = evaluate(c, b)
    assert r.exit_code == 0, r.output
    d = doc["decision"]
    assert (d["result"], d["accepted"], d["partial"], d["exit_status"]) == ("accepted", True, False, 0)
    assert {cid: c["status"] for cid, c in by_id(doc).items()} == {"sw": "pass", "eth": "pass", "nccl": "pass",
                                                                    "drill": "pass"}
    assert verdicts(doc, "nccl") == [("r1", "pass", "within_bounds"), ("r2", "pass", "within_bounds")]
    suite = ET.fromstring((b / "junit.xml").read_bytes()).find("testsuite[@name='acceptance.decision']")
    assert suite.get("failures") == "0" and suite.get("skipped") == "0"
    text = certificate(b, tmp_path)
    assert "ACCEPTED" in text and "PARTIAL" not in text and "the whole contract: 4 criteria x 4 nodes" in text


def test_one_criterion_on_one_node_is_no_acceptance(tmp_path):
    """The reported case: one criterion's evidence for one node of the contract."""
    c = contract(tmp_path)
    b = write_bundle(tmp_path / "one", {"sw/n1.txt": transcript("n1")})
    r, doc = evaluate(c, b)
    assert r.exit_code == 1
    assert doc["decision"]["result"] == "incomplete" and not doc["scope"]["partial"]
    assert verdicts(doc, "sw") == [("n1", "pass", "as_expected")] * 3 + [
        ("n2", "not_run", "no_evidence"), ("n3", "not_run", "no_evidence"), ("n4", "not_run", "no_evidence")]
    assert verdicts(doc, "nccl") == [("r1", "not_run", "no_evidence"), ("r2", "not_run", "no_evidence")]
    assert verdicts(doc, "drill") == [("_cluster", "not_run", "no_evidence")]
    assert doc["decision"]["blocking"] == {"not_run": 3 + 4 + 2 + 1}
    assert by_id(doc)["eth"]["reason_text"].startswith("no_evidence: 4 of 4 nodes not run")
    text = certificate(b, tmp_path)
    assert "ACCEPTED" not in text and "INCOMPLETE" in text and "NOT RUN" in text


@pytest.mark.parametrize("args", [("--only", "sw"), ("--nodes", "n[1-2]"), ("--only", "network", "--nodes", "n1")])
def test_a_run_limited_by_only_or_nodes_is_partial_on_every_output(tmp_path, args):
    c, b = contract(tmp_path), full_bundle(tmp_path)
    r, doc = evaluate(c, b, *args)
    d = doc["decision"]
    assert d["result"] == "partial" and not d["accepted"] and d["headline"] == "PARTIAL — not an acceptance"
    assert r.exit_code == 0                                     # everything in the subset passed
    assert d["subset_result"] == "everything in the subset passed"
    scope = doc["scope"]
    if "--only" in args:
        assert scope["criteria_not_covered"] and set(scope["criteria_not_covered"]) | set(scope["criteria"]) == {
            "sw", "eth", "nccl", "drill"}
    if "--nodes" in args:
        assert scope["nodes_not_covered_count"] == 4 - len(scope["nodes"])
        left_out = set(by_id(doc)["sw"]["evidence_outside_scope"]) if "sw" in by_id(doc) else set()
        assert left_out == ({"n1", "n2", "n3", "n4"} - set(scope["nodes"]) if "sw" in by_id(doc) else set())
    # table, JSON (above), JUnit and the PDF all say so and name the subset
    out = table(c, b, *args)
    assert "PARTIAL — not an acceptance" in out and "subset:" in out and "not covered:" in out
    decision = ET.fromstring((b / "junit.xml").read_bytes()).find("testsuite[@name='acceptance.decision']")
    case = decision.find("testcase/skipped")
    assert decision.get("skipped") == "1" and case.get("message") == "PARTIAL — not an acceptance"
    assert decision.find("properties/property[@name='subset']").get("value")
    text = certificate(b, tmp_path)
    assert "ACCEPTED" not in text
    pdf = PdfReader(str(tmp_path / f"{b.name}.pdf"))
    assert all("PARTIAL — not an acceptance" in page.extract_text() for page in pdf.pages)
    assert "Not covered" in text and "not an acceptance of the cluster" in text


def test_a_node_the_contract_does_not_list_is_not_counted_as_one_of_its_nodes(tmp_path):
    """`--nodes n1,vm` (or a local run on a host named vm) covers one contract node, not two:
    the subset line of the table and the certificate's page mark count vm apart."""
    c, b = contract(tmp_path), full_bundle(tmp_path)
    r, doc = evaluate(c, b, "--nodes", "n1,vm")
    assert r.exit_code == 1 and doc["scope"]["nodes_not_in_contract"] == ["vm"]
    line = "1 of the contract's 4 nodes (n1), and 1 node the contract does not list (vm)"
    assert f"subset: {line}" in table(c, b, "--nodes", "n1,vm")
    text = " ".join(certificate(b, tmp_path).split())
    assert f"PARTIAL — not an acceptance: {line}" in text and "2 of the contract's" not in text
    r, doc = evaluate(c, b, "--nodes", "vm")
    assert "subset: 0 of the contract's 4 nodes (none), and 1 node the contract does not list (vm)" in table(
        c, b, "--nodes", "vm")


def test_a_partial_run_with_a_failure_exits_1(tmp_path):
    c = contract(tmp_path)
    b = full_bundle(tmp_path)
    (b / "raw" / "sw" / "n1.txt").write_text(transcript("n1", driver="535.104.05"))
    r, doc = evaluate(c, b, "--only", "sw")
    assert r.exit_code == 1 and doc["decision"]["result"] == "partial"
    assert doc["decision"]["subset_result"] == "in the subset a criterion failed"
    assert by_id(doc)["sw"]["reason_text"] == "constraint_not_met: 535.104.05 != driver >=570 on n1"
    assert "ACCEPTED" not in certificate(b, tmp_path)


def test_evaluate_on_a_missing_folder_says_no_such_directory(tmp_path):
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract(tmp_path)), str(tmp_path / "nope")])
    assert r.exit_code == 1 and "no such directory" in r.output and "[no_such_directory]" in r.output
    assert "has no raw/ folder" not in r.output
    (tmp_path / "empty").mkdir()
    r = CliRunner().invoke(main, ["accept", "evaluate", str(contract(tmp_path)), str(tmp_path / "empty")])
    assert r.exit_code == 1 and "[not_a_bundle]" in r.output


# --------------------------------------------------------------------------- mixed and mislabelled


INVENTORY = """\
- id: inv
  check: gpu.inventory
  expect: {gpus_per_node: 4, model: GB200, ecc: true}
"""


def smi_csv(*names: str, ecc: bool = True) -> str:
    head = "index, name, driver_version" + (", ecc.mode.current" if ecc else "")
    rows = [f"{i}, {n}, 570.86.15" + (", Enabled" if ecc else "") for i, n in enumerate(names)]
    return "\n".join([head, *rows]) + "\n"


def test_mixed_nodes_show_the_decisive_reason_not_a_missing_metric(tmp_path):
    c = contract(tmp_path, INVENTORY)
    b = write_bundle(tmp_path / "mixed", {
        "inv/n1.txt": smi_csv(*["NVIDIA GB200"] * 4),
        "inv/n2.txt": smi_csv("NVIDIA GB200"),                            # one GPU of four
        "inv/n3.txt": smi_csv(*["NVIDIA A100-SXM4-80GB"] * 4, ecc=False),  # wrong model, ECC not reported
        "inv/n4.txt": smi_csv(*["NVIDIA GB200"] * 4),
    })
    r, doc = evaluate(c, b)
    assert r.exit_code == 1 and doc["decision"]["result"] == "rejected"
    inv = by_id(doc)["inv"]
    assert inv["status"] == "fail" and inv["reason"] == "gpu_count_mismatch"
    assert inv["reason_text"] == "gpu_count_mismatch: 1 != 4 GPUs on n2"
    n3 = [(v["status"], v["reason"]) for v in inv["verdicts"] if v["node"] == "n3"]
    assert ("fail", "model_mismatch") in n3 and ("error", "metric_missing") in n3
    # On n3 alone the model mismatch decides, not the ECC value the CSV does not carry.
    (b / "raw" / "inv" / "n2.txt").write_text(smi_csv(*["NVIDIA GB200"] * 4))
    _, doc = evaluate(c, b)
    assert by_id(doc)["inv"]["reason_text"] == "model_mismatch: NVIDIA A100-SXM4-80GB != model GB200 on n3"
    assert "ACCEPTED" not in certificate(b, tmp_path)


def test_a_file_filed_under_another_node_is_an_evidence_node_mismatch(tmp_path):
    c = contract(tmp_path)
    b = full_bundle(tmp_path)
    (b / "raw" / "sw" / "n2.txt").write_text(transcript("n1"))       # n1's output copied as n2's
    (b / "raw" / "eth" / "n4.txt").write_text(iperf("n3"))
    r, doc = evaluate(c, b)
    assert r.exit_code == 1 and doc["decision"]["result"] == "unjudged"
    (sw_n2,) = [v for v in by_id(doc)["sw"]["verdicts"] if v["node"] == "n2"]
    assert (sw_n2["status"], sw_n2["reason"], sw_n2["measured"], sw_n2["expected"]) == (
        "error", "evidence_node_mismatch", "n1", "n2")
    assert sw_n2["details"]["judged"] == ["pass: as_expected"] * 3           # what it would have said
    assert ("n4", "error", "evidence_node_mismatch") in verdicts(doc, "eth")
    # A file under a name the contract does not know covers nothing: n4 is then not run.
    shutil.move(b / "raw" / "eth" / "n4.txt", b / "raw" / "eth" / "n-4.txt")
    _, doc = evaluate(c, b)
    assert ("n-4", "warn", "evidence_not_in_scope") in verdicts(doc, "eth")
    assert ("n4", "not_run", "no_evidence") in verdicts(doc, "eth")
    assert "ACCEPTED" not in certificate(b, tmp_path)


def test_a_lone_surrogate_in_a_raw_json_is_read_as_a_replacement_character(tmp_path):
    # "\ud800" in the JSON a provider hands over decodes to a str that no UTF-8 output takes:
    # every format of the verdict that quotes it ended in UnicodeEncodeError [unexpected_error]
    c = contract(tmp_path)
    b = full_bundle(tmp_path)
    (b / "raw" / "sw" / "n2.txt").unlink()
    (b / "raw" / "sw" / "n2.json").write_text(
        '{"node": "n2\\ud800", "rc": 1, "stdout": "", "stderr": "bad \\udc80", "error": "x\\ud800"}',
        encoding="utf-8")
    r, doc = evaluate(c, b)
    assert r.exit_code == 1 and "unexpected_error" not in r.output, r.output
    (sw_n2,) = [v for v in by_id(doc)["sw"]["verdicts"] if v["node"] == "n2"]
    assert sw_n2["status"] == "error" and sw_n2["measured"] == "n2\ufffd", sw_n2
    for fmt in ("table", "junit"):
        r = CliRunner().invoke(main, ["accept", "evaluate", str(c), str(b), "--format", fmt])
        assert r.exit_code == 1 and "unexpected_error" not in r.output, r.output
    assert "ACCEPTED" not in certificate(b, tmp_path)


@pytest.mark.parametrize(("files", "expected"), [
    ({"r2.txt": nccl_output(["n3"])}, ("r2", "error", "layout_mismatch")),                 # 1 node, not 2
    ({"r2.txt": nccl_output(["n3", "n4"], gpus=4)}, ("r2", "error", "layout_mismatch")),   # 8 ranks, not 16
    ({"r2.txt": nccl_output(["n1", "n2"])}, ("r2", "error", "evidence_node_mismatch")),    # r1's nodes
    ({"_cluster.txt": nccl_output(["n3", "n4"])}, ("r2", "pass", "within_bounds")),        # filed by its hosts
    ({"_cluster.txt": nccl_output(["n2", "n3"])}, (None, "error", "layout_mismatch")),     # spans two racks
    ({"n3.txt": nccl_output(["n3", "n4"])}, ("r2", "pass", "within_bounds")),              # a node's file: its rack
])
def test_nccl_evidence_is_checked_against_the_rack_layout(tmp_path, files, expected):
    c = contract(tmp_path)
    b = full_bundle(tmp_path)
    (b / "raw" / "nccl" / "r2.txt").unlink()
    write_bundle(b, {f"nccl/{k}": v for k, v in files.items()})
    r, doc = evaluate(c, b)
    got = [(v["details"].get("unit") if expected[0] else None, v["status"], v["reason"])
           for v in by_id(doc)["nccl"]["verdicts"] if v["status"] == expected[1] and v["reason"] == expected[2]]
    assert got and got[0][1:] == expected[1:] and (expected[0] is None or got[0][0] == expected[0])
    if expected[1] == "pass":
        assert r.exit_code == 0 and doc["decision"]["accepted"]
    else:
        assert r.exit_code == 1 and doc["decision"]["result"] == "unjudged"
        assert ("r2", "not_run", "no_evidence") in verdicts(doc, "nccl") or expected[0] == "r2"
        assert "ACCEPTED" not in certificate(b, tmp_path)


# --------------------------------------------------------------------------- truncated JSON


TRUNCATED = """\
- id: fs
  check: storage.fio
  params: {path: /mnt/shared, rw: write, bs: 1M, size: 64M, numjobs: 2}
  metric: write_gbps
  min: 0.001
- id: eth
  check: network.iperf3
  params: {server: 10.0.0.1, duration: 2}
  metric: throughput_gbps
  min: 1
- id: dcgm
  check: gpu.dcgm
  expect: {overall: pass}
"""
DCGM_CUT = ('{"version": "4.2.3", "DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment", "tests": '
            '[{"name": "Denylist", "results": [{"gpu_id": "0", "status": "Pass"}]}, {"name": "NVML Library", '
            '"results": [{"gpu_id": "0", "status": "Pa')


def test_json_that_had_to_be_closed_is_truncated_output_never_a_pass(tmp_path):
    fio = (FIXTURES / "fio" / "fio_seqwrite_1M_numjobs2_json.txt").read_text()
    start = fio.index("{")
    files = {f"fs/{n}.txt": fio for n in NODES} | {f"eth/{n}.txt": iperf(n) for n in NODES} | {
        f"dcgm/{n}.txt": DCGM_CUT for n in NODES}
    files["fs/n2.txt"] = fio[: start + int(len(fio[start:]) * 0.6)]
    cut = iperf("n3")
    files["eth/n3.txt"] = cut[: cut.index('"end"') - 200]          # cut in the intervals
    b = write_bundle(tmp_path / "cut", files)
    r, doc = evaluate(contract(tmp_path, TRUNCATED), b)
    assert r.exit_code == 1
    (fs,) = [v for v in by_id(doc)["fs"]["verdicts"] if v["node"] == "n2"]
    assert (fs["status"], fs["reason"]) == ("error", "truncated_output")
    assert fs["details"]["recovered"]["fio_version"] and "jobs" in fs["details"]["recovered"]
    (eth,) = [v for v in by_id(doc)["eth"]["verdicts"] if v["node"] == "n3"]
    assert (eth["status"], eth["reason"]) == ("error", "truncated_output")
    assert eth["details"]["recovered"]["has_end_summary"] is False
    for n in NODES:
        (d,) = [v for v in by_id(doc)["dcgm"]["verdicts"] if v["node"] == n]
        assert (d["status"], d["reason"]) == ("error", "truncated_output")
        assert d["details"]["recovered"]["tests"] == ["Denylist", "NVML Library"]
    assert by_id(doc)["dcgm"]["reason_text"].startswith("truncated_output: JSON cut off")
    assert "ACCEPTED" not in certificate(b, tmp_path)


def test_truncated_json_detection():
    assert truncated_json('{"a": {"b": [1, 2]}}\ntrailing text') is None
    assert truncated_json("plain text without a document") is None
    # the last item may be cut itself, so it is left out
    assert truncated_json('note: {"a": 1, "b": {"c": [1, 2') == {"a": 1, "b": {"c": [1]}}
    assert truncated_json('{"a": 1, "b": "cut inside a str') == {"a": 1}
    assert truncated_json('{"s": "a } inside a string", "t": [') == {"s": "a } inside a string"}


def test_a_large_cut_off_document_no_try_can_close_is_truncated_in_seconds(monkeypatch):
    """2 MB cut off in a list of items that are no JSON (or nested too deep to decode): each
    of the 51 tries to close it read the whole text again (a minute here, an hour for 50 MB);
    the tries now stop after about four readings, and it is still a cut-off document. Counted
    in characters the tries read, not timed."""
    import acceptance.coverage as coverage

    read: list[int] = []
    load = coverage.load_truncated_json

    def counted(text):
        read.append(len(text))
        return load(text)

    monkeypatch.setattr(coverage, "load_truncated_json", counted)
    for text in ('{"start": {"x": [' + "x," * 1_000_000, ('{"jobs":[' + "1," * 500) * 2000):
        read.clear()
        assert truncated_json(text) == {}
        assert 0 < sum(read) <= 4 * len(text) + (1 << 16), (sum(read), len(text))   # (51 readings before)
    assert truncated_json('{"a": 1, "b": [x, x, x') == {"a": 1}          # a small one: every try, as before


# --------------------------------------------------------------------------- nothing but skips


def test_nothing_but_skips_is_no_acceptance(tmp_path):
    c = contract(tmp_path, INVENTORY)
    missing = {"node": None, "rc": 127, "started": None, "finished": None, "timed_out": False,
               "error": "launch_failed", "stdout": "", "stderr": "nvidia-smi: command not found"}
    b = write_bundle(tmp_path / "skips", {f"inv/{n}.json": json.dumps({**missing, "node": n}) for n in NODES})
    r, doc = evaluate(c, b)
    assert r.exit_code == 1
    assert doc["status"] == "skip" and doc["decision"]["result"] == "incomplete"
    assert verdicts(doc, "inv") == [(n, "skip", "no_gpu") for n in NODES]
    text = certificate(b, tmp_path)
    assert "ACCEPTED" not in text and "INCOMPLETE" in text


def test_accept_run_only_gpu_on_a_host_without_gpus_exits_1(tmp_path):
    if shutil.which("nvidia-smi"):
        pytest.skip("this host has nvidia-smi: the GPU checks can run here")
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["accept", "run", str(REPO / "examples" / "gb200-contract.yaml"), "--out", str(out),
                                  "--only", "gpu", "--format", "json", "--no-progress"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert [c["id"] for c in doc["criteria"]] == ["gpu-inventory", "gemm-bf16", "dcgm-diag"]
    assert doc["status"] == "skip" and doc["decision"]["result"] == "partial"
    assert doc["scope"]["nodes_not_in_contract"] and doc["scope"]["nodes_not_covered_count"] == 72
    assert doc["decision"]["subset_result"] == "in the subset a criterion was not run or was skipped"
    assert "ACCEPTED" not in certificate(out, tmp_path)
    # Signed-off waivers for the three skips: the subset passes (exit 0), still no acceptance.
    w = waiver_file(tmp_path, "".join(
        f"- {{criterion: {cid}, reason: no GPU on the test host, approved_by: J. Roe, expires: 2099-01-01}}\n"
        for cid in ("gpu-inventory", "gemm-bf16", "dcgm-diag")))
    r = CliRunner().invoke(main, ["accept", "run", str(REPO / "examples" / "gb200-contract.yaml"), "--out",
                                  str(tmp_path / "run2"), "--only", "gpu", "--waivers", str(w), "--format", "json",
                                  "--no-progress"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["decision"]["result"] == "partial" and [x["state"] for x in doc["waivers"]] == ["applied"] * 3
    assert "ACCEPTED" not in certificate(tmp_path / "run2", tmp_path)


# --------------------------------------------------------------------------- waivers


def waiver_file(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "waivers.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def failing_bundle(tmp_path: Path) -> Path:
    """The whole bundle, but n4's driver is too old and r2's all-reduce was not run."""
    b = full_bundle(tmp_path)
    (b / "raw" / "sw" / "n4.txt").write_text(transcript("n4", driver="535.104.05"))
    (b / "raw" / "nccl" / "r2.txt").unlink()
    return b


WAIVERS = """\
    waivers:
      - criterion: sw
        nodes: n4
        reason: driver 570 rollout on n4 after the RMA; signed change CHG-1182
        approved_by: J. Roe (Example AI Lab)
        expires: 2027-02-15
      - criterion: nccl
        nodes: r2
        reason: rack r2 fabric re-cabled; all-reduce retest booked for 2027-02-03
        approved_by: A. Buyer (Example AI Lab)
        expires: 2027-02-15T00:00:00+00:00
    """


def test_a_valid_waiver_turns_a_fail_and_a_not_run_into_waived(tmp_path):
    c, b = contract(tmp_path), failing_bundle(tmp_path)
    r, doc = evaluate(c, b)
    assert r.exit_code == 1 and doc["decision"]["result"] == "rejected"
    w = waiver_file(tmp_path, WAIVERS)
    r, doc = evaluate(c, b, "--waivers", str(w), "--as-of", "2027-01-20")
    assert r.exit_code == 0, r.output
    assert doc["decision"]["result"] == "accepted_with_waivers" and doc["decision"]["accepted"]
    sw = [v for v in by_id(doc)["sw"]["verdicts"] if v["node"] == "n4" and v["status"] == "waived"]
    assert [v["details"]["waived"]["reason"] for v in sw] == ["constraint_not_met"]
    assert ("r2", "waived", "waived") in verdicts(doc, "nccl")
    assert [(x["index"], x["state"], x["verdicts_waived"]) for x in doc["waivers"]] == [(1, "applied", 1), (2, "applied", 1)]
    assert by_id(doc)["sw"]["reason_text"] == "waived fail constraint_not_met on n4 (approved by J. Roe (Example AI Lab))"
    junit = (b / "junit.xml").read_text()
    assert "WAIVED fail constraint_not_met" in junit and "approved by J. Roe" in junit
    out = table(c, b, "--waivers", str(w), "--as-of", "2027-01-20")
    assert "ACCEPTED WITH WAIVERS" in out and "waiver 1 (applied)" in out
    text = " ".join(certificate(b, tmp_path).split())
    for needle in ("ACCEPTED WITH WAIVERS", "Waivers", "J. Roe (Example AI Lab)", "A. Buyer (Example AI Lab)",
                   "CHG-1182", "2027-02-15"):
        assert needle in text, needle


def test_the_sign_off_of_an_acceptance_with_waivers_says_what_was_not_tested_or_not_passed(tmp_path):
    """The sentence the parties sign said every criterion "was tested on the nodes listed" also
    when waivers stood in for a fail and a rack that was never run; it now names them."""
    c, b = contract(tmp_path), failing_bundle(tmp_path)
    r, doc = evaluate(c, b, "--waivers", str(waiver_file(tmp_path, WAIVERS)), "--as-of", "2027-01-20")
    assert r.exit_code == 0 and doc["decision"]["result"] == "accepted_with_waivers"
    text = " ".join(certificate(b, tmp_path).split())
    assert ("The parties confirm that the criteria above were tested on the nodes listed, except for the verdicts "
            "the waivers above accept in place of a pass (1 failed, 1 not run)") in text, text
    (tmp_path / "whole").mkdir()
    c2, b2 = contract(tmp_path / "whole"), full_bundle(tmp_path / "whole")
    evaluate(c2, b2)
    text = " ".join(certificate(b2, tmp_path).split())
    assert "tested on the nodes listed, with the evidence identified by the digest above." in text


def test_an_expired_waiver_does_nothing_and_is_reported(tmp_path):
    c, b = contract(tmp_path), failing_bundle(tmp_path)
    w = waiver_file(tmp_path, WAIVERS)
    # Half-open: on the expiry date (midnight in the contract's zone, UTC here) it no longer applies.
    r, doc = evaluate(c, b, "--waivers", str(w), "--as-of", "2027-02-15")
    assert r.exit_code == 1 and doc["decision"]["result"] == "rejected"
    assert [x["state"] for x in doc["waivers"]] == ["expired", "expired"]
    assert not any(v["status"] == "waived" for crit in doc["criteria"] for v in crit["verdicts"])
    text = certificate(b, tmp_path)
    assert "ACCEPTED" not in text and "expired" in text and "J. Roe" in text


def test_a_waiver_never_covers_an_error_and_unused_ones_are_reported(tmp_path):
    c = contract(tmp_path)
    b = full_bundle(tmp_path)
    (b / "raw" / "sw" / "n2.txt").write_text(transcript("n1"))      # evidence_node_mismatch: an error
    w = waiver_file(tmp_path, """\
        - {criterion: sw, reason: mislabelled, approved_by: J. Roe, expires: 2030-01-01}
        - {criterion: eth, nodes: "n[1-2]", reason: not needed, approved_by: J. Roe, expires: 2030-01-01}
        """)
    r, doc = evaluate(c, b, "--waivers", str(w), "--as-of", "2027-01-20")
    assert r.exit_code == 1 and doc["decision"]["result"] == "unjudged"
    assert [x["state"] for x in doc["waivers"]] == ["unused", "unused"]
    assert "ACCEPTED" not in certificate(b, tmp_path)


def test_a_bad_waiver_file_lists_every_problem_with_its_code_and_line(tmp_path):
    c, b = contract(tmp_path), full_bundle(tmp_path)
    w = waiver_file(tmp_path, """\
        waivers:
          - criterion: sw
            nodes: n9
            reason: typo in the node
            approved_by: J. Roe
            expires: 2027-02-15
          - criterion: nope
            reason: no such criterion
            approved_by: J. Roe
            expires: 15/02/2027
          - criterion: eth
            reason: nobody signed it
            expires: 2027-02-15
            ticket: CHG-1
          - criterion: eth
            nodes: "n[1-"
            reason: bad hostlist
            approved_by: J. Roe
            expires: 2027-02-15T00:00:00
        """)
    r = CliRunner().invoke(main, ["accept", "evaluate", str(c), str(b), "--waivers", str(w)])
    assert r.exit_code == 1
    codes = {"waiver_unknown_node": ":3:", "waiver_unknown_criterion": ":7:", "waiver_bad_date": ":10:",
             "waiver_missing_field": ":11:", "waiver_unknown_field": ":14:", "waiver_bad_nodes": ":16:"}
    for code, line in codes.items():
        hits = [ln for ln in r.output.splitlines() if f"[{code}]" in ln]
        assert any(line in h for h in hits), (code, hits)
    assert r.output.count("[waiver_bad_date]") == 2                 # the naive time too
    assert "Traceback" not in r.output and not (b / "results.json").exists()
    r = CliRunner().invoke(main, ["accept", "evaluate", str(c), str(b), "--waivers", str(tmp_path / "none.yaml")])
    assert r.exit_code == 1 and "[waiver_file_missing]" in r.output


# --------------------------------------------------------------------------- versions from standard outputs


def test_software_versions_from_a_transcript_of_standard_commands():
    from acceptance.checks.versions_text import versions_from_transcript

    v = versions_from_transcript(transcript("n1"))
    assert (v["driver"], v["cuda"], v["kernel"], v["ofed"], v["nccl"], v["slurm"], v["hostname"]) == (
        "570.86.15", "12.8", "6.8.0-45-generic", "24.07-0.6.1.0", "2.23.4", "23.11.4", "n1")
    rpm = versions_from_transcript(textwrap.dedent("""\
        # $ uname -a
        Linux r07-n12 5.14.0-427.13.1.el9_4.x86_64 #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux
        # $ rpm -qa
        libnccl-2.21.5-1+cuda12.4.x86_64
        nvidia-driver-570.86.15-1.el9.x86_64
        slurm-slurmd-24.05.3-1.el9.x86_64
        enroot-3.4.1-1.el8.x86_64
        ==> cat /etc/os-release <==
        NAME="Rocky Linux"
        ID="rocky"
        VERSION_ID="9.4"
        ==> systemctl is-active nvidia-fabricmanager <==
        active
        """))
    assert (rpm["hostname"], rpm["kernel"], rpm["nccl"], rpm["driver"], rpm["slurm"], rpm["os"],
            rpm["fabric_manager"], rpm["runtimes"]) == (
        "r07-n12", "5.14.0-427.13.1.el9_4.x86_64", "2.21.5", "570.86.15", "24.05.3", "rocky 9.4", "running",
        {"enroot": "3.4.1"})
    assert versions_from_transcript("no command lines here") is None


def test_software_versions_from_real_nvidia_smi_q(tmp_path):
    from .conftest import realdata

    text = realdata("nvidia_smi_q_text_h100_1gpu.txt").read_text()
    section = text[text.index("==============NVSMI LOG"): text.index("#####", text.index("==============NVSMI LOG"))]
    handover = f"$ hostname\nn1\n$ nvidia-smi -q\n{section}\n$ uname -r\n5.15.0-185-generic\n"
    c = contract(tmp_path, """\
- id: sw
  check: software.versions
  expect: {driver: ">=590", cuda: ">=13", kernel: ">=5.15"}
""")
    b = write_bundle(tmp_path / "sw", {"sw/n1.txt": handover})
    r, doc = evaluate(c, b, "--nodes", "n1")
    assert [(v["status"], v["measured"]) for v in by_id(doc)["sw"]["verdicts"]] == [
        ("pass", "590.48.01"), ("pass", "13.1"), ("pass", "5.15.0-185-generic")]
    assert r.exit_code == 0 and doc["decision"]["result"] == "partial"


# --------------------------------------------------------------------------- the runner, one run per rack


class RackExecutor:
    """An executor that answers NCCL jobs with nccl-tests output naming the nodes it was given."""

    name = "fake"

    def __init__(self) -> None:
        self.jobs: list[list[str]] = []

    def run(self, argv, nodes, timeout_s):
        raise AssertionError("only NCCL runs here")

    def run_multi(self, argv, nodes, tasks_per_node, timeout_s):
        from datetime import datetime, timezone

        from acceptance.executors.base import RawOutput

        self.jobs.append(list(nodes))
        now = datetime.now(timezone.utc)
        return RawOutput(nccl_output(list(nodes)), "", 0, now, now, node="_cluster")


NCCL_ONLY = """\
- id: nccl
  check: network.nccl
  params: {collective: all_reduce, nodes: 2, size: 1G, gpus_per_node: 8}
  metric: busbw_gbps
  min: 400
"""


def test_the_runner_runs_a_rack_scoped_criterion_once_per_rack_in_scope(tmp_path):
    from acceptance.runner import RunOptions, run_acceptance
    from tests.acceptance.conftest import load

    c = contract(tmp_path, NCCL_ONLY)
    ex = RackExecutor()
    doc = run_acceptance(load(c), RunOptions(out=tmp_path / "run", nodes=list(NODES), durable=False), ex).to_json()
    assert ex.jobs == [["n1", "n2"], ["n3", "n4"]]
    assert sorted(p.name for p in (tmp_path / "run" / "raw" / "nccl").iterdir()) == ["r1.json", "r2.json"]
    assert doc["decision"]["result"] == "accepted"
    # Three nodes in scope: rack r2 has one, too few for a 2-node run, so it is not run (and the run is partial).
    ex = RackExecutor()
    doc = run_acceptance(load(c), RunOptions(out=tmp_path / "run3", nodes=["n1", "n2", "n3"], durable=False),
                         ex).to_json()
    assert ex.jobs == [["n1", "n2"]]
    assert verdicts(doc, "nccl") == [("r1", "pass", "within_bounds"), ("r2", "not_run", "no_evidence")]
    assert doc["decision"]["result"] == "partial" and doc["decision"]["exit_status"] == 1


def test_results_written_before_coverage_judging_are_never_shown_as_accepted(tmp_path):
    c, b = contract(tmp_path), full_bundle(tmp_path)
    r, doc = evaluate(c, b)
    assert doc["decision"]["accepted"]
    old = {k: v for k, v in doc.items() if k not in ("decision", "scope", "waivers", "as_of")}
    (b / "results.json").write_text(json.dumps(old))
    # A results.json changed after the manifest: no certificate at all.
    refused = CliRunner().invoke(main, ["accept", "report", str(b), "-o", str(tmp_path / "x.pdf")])
    assert refused.exit_code == 1 and "bundle_not_verified" in refused.output
    # Even with a manifest made afresh over it, an old document is never an acceptance.
    from acceptance.evidence import Bundle

    bundle = Bundle(b, durable=False)
    bundle.adopt_existing()
    bundle.write_manifest()
    text = certificate(b, tmp_path)
    assert "ACCEPTED" not in text and "NO VERDICT" in text


def test_a_rack_scoped_result_rolls_up_into_its_rack(tmp_path):
    c, b = contract(tmp_path), full_bundle(tmp_path)
    (b / "raw" / "nccl" / "r2.txt").write_text(nccl_output(["n3", "n4"], busbw=350.0))
    r, doc = evaluate(c, b)
    assert r.exit_code == 1 and doc["decision"]["result"] == "rejected"
    assert by_id(doc)["nccl"]["reason_text"] == "below_min: 350 GB/s (expected >= 400 GB/s) in r2"
    racks = {x["rack"]: x for x in doc["aggregate"]["racks"]}
    assert racks["r2"]["status"] == "fail" and racks["r2"]["counts"]["fail"] == 1
    assert racks["r1"]["status"] == "pass"
    assert doc["aggregate"]["overall"]["cluster_counts"]["fail"] == 0


def test_the_node_an_executor_recorded_is_checked_against_the_file_name(tmp_path):
    c = contract(tmp_path)
    b = full_bundle(tmp_path)
    (b / "raw" / "eth" / "n2.txt").unlink()
    # n1's RawOutput JSON (the executor recorded node n1) filed as n2's
    (b / "raw" / "eth" / "n2.json").write_text(json.dumps(
        {"node": "n1", "rc": 0, "started": None, "finished": None, "timed_out": False, "error": None,
         "stdout": iperf("n2"), "stderr": ""}))
    # an NCCL job whose recorded hostlist (Slurm's) is not the rack it is filed under
    (b / "raw" / "nccl" / "r2.txt").unlink()
    (b / "raw" / "nccl" / "r2.json").write_text(json.dumps(
        {"node": "n[1-2]", "rc": 0, "started": None, "finished": None, "timed_out": False, "error": None,
         "stdout": nccl_output(["{host1}", "{host2}"]), "stderr": ""}))     # masked rank-line hosts
    r, doc = evaluate(c, b)
    assert r.exit_code == 1
    assert ("n2", "error", "evidence_node_mismatch") in verdicts(doc, "eth")
    assert ("r2", "error", "evidence_node_mismatch") in verdicts(doc, "nccl")


def test_a_rack_criterion_with_no_rack_in_scope_is_not_run_never_a_pass(tmp_path):
    c = contract(tmp_path)
    b = full_bundle(tmp_path)
    r, doc = evaluate(c, b, "--nodes", "gpu-x1")          # a host the contract does not list
    nccl = by_id(doc)["nccl"]
    assert (nccl["status"], nccl["reason"]) == ("not_run", "no_group_in_scope")
    assert r.exit_code == 1 and doc["decision"]["result"] == "partial"
    assert all(c["verdicts"] for c in doc["criteria"])
