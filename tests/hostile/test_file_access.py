"""Files named by a contract stay in the contract's folder; nothing read is echoed back."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.acceptance.conftest import contract_with
from tests.hostile.conftest import SECRET, assert_coded_failure, cli

INVENTORY_CONTRACT = """slakit: 1
contract: {id: t, provider: P, customer: C, timezone: UTC, currency: USD}
topology:
  architecture: hgx-8gpu
  gpus_per_node: 8
  inventory: INV
pricing: {per_gpu_hour: 2.5}
service_levels:
  node:
    credits:
      - {below: 99.0%, credit: 10%}
"""


def _contract(folder: Path, inventory: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "c.yaml"
    p.write_text(INVENTORY_CONTRACT.replace("INV", json.dumps(inventory)), encoding="utf-8")
    return p


@pytest.mark.parametrize("fmt", ["table", "json"])
@pytest.mark.parametrize("target", ["/proc/self/environ", "/etc/shadow", "/etc/passwd", "../outside.csv",
                                    "/dev/zero"])
def test_inventory_outside_the_contract_folder_is_refused_without_echo(tmp_path, monkeypatch, target, fmt):
    monkeypatch.setenv("HOSTILE_PROBE", SECRET)               # what /proc/self/environ would leak
    (tmp_path / "outside.csv").write_text(f"{SECRET},rack,cluster,site\n", encoding="utf-8")
    c = _contract(tmp_path / "deal", target)
    r = cli("validate", c, "--format", fmt)
    assert_coded_failure(r, "path_forbidden" if target.startswith(("/proc", "/dev")) else "path_outside_contract")
    assert SECRET not in r.output and "root:" not in r.output


def test_symlink_out_of_the_contract_folder_is_refused(tmp_path):
    (tmp_path / "secret.csv").write_text(f"node,rack,cluster,site\n{SECRET},r,c,s\n", encoding="utf-8")
    folder = tmp_path / "deal"
    c = _contract(folder, "inv.csv")
    os.symlink(tmp_path / "secret.csv", folder / "inv.csv")
    r = cli("validate", c, "--format", "json")
    assert_coded_failure(r, "path_outside_contract")
    assert SECRET not in r.output


def test_fifo_inventory_is_refused_without_hanging(tmp_path):
    folder = tmp_path / "deal"
    c = _contract(folder, "inv.csv")
    os.mkfifo(folder / "inv.csv")
    r = cli("validate", c)
    assert_coded_failure(r, "not_a_regular_file")


def test_a_file_that_is_no_inventory_is_not_echoed(tmp_path):
    folder = tmp_path / "deal"
    c = _contract(folder, "inv.csv")
    (folder / "inv.csv").write_text(f"PASSWORD={SECRET}\nmore={SECRET}\n", encoding="utf-8")
    for fmt in ("table", "json"):
        r = cli("validate", c, "--format", fmt)
        assert_coded_failure(r, "inventory_columns")
        assert SECRET not in r.output


def test_inventory_inside_the_folder_still_loads(tmp_path):
    folder = tmp_path / "deal"
    (folder / "sub").mkdir(parents=True)
    c = _contract(folder, "sub/inv.csv")
    (folder / "sub" / "inv.csv").write_text("node,rack,cluster,site\nn1,r1,c1,s1\nn2,r1,c1,s1\n", encoding="utf-8")
    r = cli("validate", c)
    assert r.exit_code == 0, r.output


def test_non_utf8_inventory_is_a_coded_error(tmp_path):
    folder = tmp_path / "deal"
    c = _contract(folder, "inv.csv")
    (folder / "inv.csv").write_bytes(b"node,rack,cluster,site\n\xff\xfe\x00n1,r1,c1,s1\n")
    r = cli("validate", c)
    assert_coded_failure(r, "not_utf8")
    # located in the contract, where the inventory is named (it said inv.csv:LINE:COL, the
    # contract's line and column under the inventory's name), the inventory as the value
    (p,) = json.loads(cli("validate", c, "--format", "json").stdout)["files"][0]["problems"]
    assert (p["file"], p["path"], p["value"]) == (str(c), "topology.inventory", "inv.csv"), p
    assert p["line"] == next(i for i, line in enumerate(c.read_text(encoding="utf-8").splitlines(), 1)
                             if "inventory:" in line)


def test_inventory_under_dev_is_located_in_the_contract(tmp_path):
    folder = tmp_path / "deal"
    c = _contract(folder, "/dev/zero")
    r = cli("validate", c)
    assert_coded_failure(r, "path_forbidden")
    assert r.output.startswith(f"{c}:"), r.output          # was <input>:LINE:COL


def test_oversized_inventory_is_refused_by_size_and_the_limit_can_be_raised(tmp_path):
    folder = tmp_path / "deal"
    c = _contract(folder, "inv.csv")
    inv = folder / "inv.csv"
    with open(inv, "wb") as fh:                                # a sparse 1 GB file: no disk used
        fh.write(b"node,rack,cluster,site\nn1,r1,c1,s1\n")
        fh.truncate(1 << 30)
    r = cli("validate", c)
    assert_coded_failure(r, "file_too_large")
    inv.write_text("node,rack,cluster,site\n" + "".join(f"n{i},r1,c1,s1\n" for i in range(3000)), encoding="utf-8")
    assert_coded_failure(cli("--max-file-size", "1000", "validate", c), "file_too_large")
    assert cli("--max-file-size", "1000000", "validate", c).exit_code == 0


# ------------------------------------------------------------------ the drill result

DRILL = """
- id: drill
  check: health.detection
  max: 2m
"""


def _run_drill(tmp_path: Path, *extra: str, criteria: str = DRILL):
    contract = contract_with(tmp_path, criteria)
    out = tmp_path / "bundle"
    return cli("accept", "run", contract, "--out", out, "--no-progress", "--format", "json", *extra), out


def _bundle_text(out: Path) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())


def test_param_result_pointing_at_a_secret_is_not_copied_into_the_bundle(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text(f"root:{SECRET}:19000:0:99999:7:::\n", encoding="utf-8")
    r, out = _run_drill(tmp_path, "--param", f"drill.result={secret}")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    drill = next(c for c in doc["criteria"] if c["id"] == "drill")
    assert drill["status"] == "error" and drill["reason"] == "not_a_drill_result"
    assert SECRET not in _bundle_text(out)


@pytest.mark.parametrize("target", ["/etc/shadow", "/proc/self/environ", "/dev/zero"])
def test_param_result_under_proc_dev_or_unreadable_is_refused(tmp_path, monkeypatch, target):
    monkeypatch.setenv("HOSTILE_PROBE", SECRET)
    r, out = _run_drill(tmp_path, "--param", f"drill.result={target}")
    assert r.exit_code == 1
    assert "Traceback" not in r.output
    if out.exists():
        assert SECRET not in _bundle_text(out) and "root:" not in _bundle_text(out)


def test_contract_result_outside_its_folder_is_refused_before_running(tmp_path):
    r, out = _run_drill(tmp_path, criteria=DRILL + "  params: {result: /etc/passwd}\n")
    assert_coded_failure(r, "path_outside_contract")
    assert not (out / "raw").exists()


def test_a_real_drill_result_next_to_the_contract_is_judged(tmp_path):
    (tmp_path / "drill.json").write_text(json.dumps({"result": {"node": "n1", "fault": "xid", "detection_s": 30.0,
                                                                "detected_state": "drain"}}), encoding="utf-8")
    r, out = _run_drill(tmp_path, criteria=DRILL + "  params: {result: drill.json}\n")
    doc = json.loads(r.stdout)
    drill = next(c for c in doc["criteria"] if c["id"] == "drill")
    assert drill["status"] == "pass", drill


# ------------------------------------------------------------------ minimums

def test_minimums_plain_http_and_other_schemes_are_refused():
    from acceptance.security.minimums import load_minimums
    from slaschema.errors import InputError

    for url in ("http://example.invalid/t.json", "file:///etc/passwd", "ftp://x/y"):
        with pytest.raises(InputError) as exc:
            load_minimums(url, timeout=1)
        assert exc.value.codes == ["minimums_url_refused"]


def test_minimums_answer_is_never_echoed_and_is_size_capped(tmp_path):
    import http.server
    import threading

    from acceptance.security import minimums
    from slaschema.errors import InputError

    (tmp_path / "page.html").write_text(f"<html>{SECRET}</html>", encoding="utf-8")
    (tmp_path / "big.json").write_bytes(b"{" + b" " * (minimums.MAX_TABLE_BYTES + 10) + b"}")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(tmp_path), **kw)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(InputError) as exc:
            minimums.load_minimums(f"{base}/page.html", timeout=5)
        assert exc.value.codes == ["minimums_unknown_shape"] and SECRET not in str(exc.value)
        with pytest.raises(InputError) as exc:
            minimums.load_minimums(f"{base}/big.json", timeout=5)
        assert exc.value.codes == ["minimums_too_large"]
    finally:
        server.shutdown()
        server.server_close()


def test_minimums_file_under_proc_is_refused(monkeypatch):
    from acceptance.security.minimums import load_minimums
    from slaschema.errors import InputError

    monkeypatch.setenv("HOSTILE_PROBE", SECRET)
    with pytest.raises(InputError) as exc:
        load_minimums("/proc/self/environ")
    assert exc.value.codes == ["minimums_unreadable"] and SECRET not in str(exc.value)
    assert "path_forbidden" in str(exc.value)


# ------------------------------------------------------------------ files named on the command line

@pytest.mark.parametrize("special", ["/dev/zero", "/proc/self/environ", "fifo"])
def test_command_line_files_under_dev_proc_or_fifos_are_refused_without_hanging(tmp_path, monkeypatch, special):
    import threading

    monkeypatch.setenv("HOSTILE_PROBE", SECRET)
    from tests.hostile.conftest import REPO

    if special == "fifo":
        special = str(tmp_path / "fifo")
        os.mkfifo(special)
    contract = REPO / "examples" / "gb200-contract.yaml"
    cases = [("validate", special), ("credits", contract, special, "--period", "2027-01"),
             ("credits", contract, REPO / "examples" / "gb200-incidents-2027Q1.csv", "--period", "2027-02",
              "--history", special),
             ("import", "csv", special, "--map", REPO / "examples" / "ticket-map.yaml"),
             ("simulate", contract, "--failure-model", special, "--runs", "1"),
             ("reconcile", special, special)]
    results = []

    def work():
        for args in cases:
            results.append(cli(*args))

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), f"hung after {len(results)} commands"
    for args, r in zip(cases, results):
        assert r.exit_code == 1 and "Traceback" not in r.output, (args, r.output)
        assert re.search(r"\[(path_forbidden|not_a_regular_file|history_unreadable|file_not_found)\]", r.output), r.output
        assert SECRET not in r.output


def test_parse_of_standard_input_that_never_ends_is_refused_by_size(tmp_path):
    """`slakit parse TOOL - < /dev/zero` read standard input to its end, which never comes (it
    ended in MemoryError, or the machine's memory): standard input has the file size limit."""
    import resource
    import subprocess
    import sys

    def two_gb():                               # the unbounded read fails here, not the test machine
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run([sys.executable, "-m", "slakit", "parse", "nvidia-smi", "-"], stdin=zero,
                              capture_output=True, text=True, timeout=60, preexec_fn=two_gb)
    assert proc.returncode == 1 and "[file_too_large]" in proc.stderr, proc.stderr
    assert "unexpected_error" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "slakit", "--max-file-size", "1000", "parse", "fio", "-"],
                          input="{" * 2000, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "-: tool output: more than 1,000 bytes" in proc.stderr, proc.stderr
