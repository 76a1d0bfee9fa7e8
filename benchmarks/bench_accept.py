"""Acceptance speed: `slakit accept evaluate` on 1,000 nodes x 10 checks, and the runner's own
overhead per check beyond the tool it runs.

    .venv/bin/python benchmarks/bench_accept.py [--nodes 1000] [--checks 50]

1. Builds a synthetic bundle (raw/<criterion>/<node>.json for 10 criteria on N nodes, from
   outputs shaped like the real tools': fio JSON, iperf3 JSON, nvidia-smi CSV, dmesg, ...) and
   times the real command `slakit accept evaluate CONTRACT DIR --format json` end to end
   (target: <= 10 s for 1,000 nodes).
2. Runs a contract of M criteria through the runner with an executor that runs `true` for
   every check (and hands back a canned tool output); the overhead is the run's wall time
   minus the time spent inside the executor, per check (target: < 50 ms).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

FIO = (REPO / "tests" / "fixtures" / "fio" / "fio_seqwrite_1M_numjobs2_json.txt").read_text()
IPERF = (REPO / "tests" / "fixtures" / "iperf3" / "iperf3_tcp_loopback_t2.json").read_text()
SMI = ("index, name, driver_version, ecc.mode.current, persistence_mode, power.limit [W], "
       "retired_pages.pending, remapped_rows.pending\n"
       + "".join(f"{i}, NVIDIA GB200, 570.86.15, Enabled, Enabled, 1200.00 W, No, No\n" for i in range(4)))
GEMM = json.dumps({"bench": "slakit-gemm/1", "dtype": "bf16", "size": 8192,
                   "gpus": [{"index": i, "name": "GB200", "tflops": 2100.0 + i} for i in range(4)]})
BURN = json.dumps({"burn": "slakit-burn/1", "stress": "gpu", "duration_s": 60, "interval_s": 10,
                   "samples": [{"t": t, "gpus": [{"index": i, "temp_c": 70.0, "sm_mhz": 1980.0, "power_w": 1100.0,
                                                  "throttle": 0} for i in range(4)]} for t in range(0, 70, 10)],
                   "errors": [], "kernel_log_new": ""})
DMESG = "".join(f"[{i}.000000] usb 1-{i}: new high-speed USB device\n" for i in range(200))
VERSIONS = json.dumps({"probe": "slakit-versions/1", "kernel": "6.8.0-45-generic",
                       "commands": {"nvidia_smi_query": {"rc": 0, "stdout": "570.86.15\n"},
                                    "nvidia_smi": {"rc": 0, "stdout": "CUDA Version: 12.8"},
                                    "fabric_manager": {"rc": 0, "stdout": "active\n"}},
                       "files": {"os_release": 'ID=ubuntu\nVERSION_ID="24.04"\n'}, "nccl_libraries": []})
S3 = json.dumps({"bench": "slakit-s3/1", "objects": 16, "object_size": 8388608, "put_bytes": 134217728,
                 "put_s": 0.1, "get_bytes": 134217728, "get_s": 0.05, "integrity_errors": [], "list_count": 17,
                 "expected_count": 17, "multipart": {"ok": True, "parts": 8}, "errors": []})
IB = json.dumps({"probe": "slakit-ib/1", "present": ["mlx5_0"], "devices": ["mlx5_0"],
                 "sysfs": "mlx5_0/ports/1/state: 4: ACTIVE\nmlx5_0/ports/1/phys_state: 5: LinkUp\n"
                          "mlx5_0/ports/1/rate: 400 Gb/sec (4X NDR)\nmlx5_0/ports/1/link_layer: InfiniBand\n"
                          "mlx5_0/ports/1/counters/symbol_error: 0\n", "bw": {}})

CRITERIA = [
    ("inv", "gpu.inventory", "expect: {gpus_per_node: 4, model: GB200, ecc: true}", SMI),
    ("gemm", "gpu.gemm", "metric: tflops_bf16\n  min: 1800", GEMM),
    ("burn", "gpu.burn", "params: {duration_s: 60, interval_s: 10}\n  expect: {max_throttle_pct: 1, max_xid_events: 0}", BURN),
    ("xid", "gpu.xid", "max: 0", DMESG),
    ("eth", "network.iperf3", "params: {server: 10.0.0.1, duration: 2}\n  metric: throughput_gbps\n  min: 1", IPERF),
    ("fs-bw", "storage.fio", "params: {path: /data, rw: write, bs: 1M, size: 64M, numjobs: 2}\n  metric: write_gbps\n  min: 0.1", FIO),
    ("fs-iops", "storage.fio", "params: {path: /data, rw: write, bs: 1M, size: 64M, numjobs: 2}\n  metric: write_iops\n  min: 10", FIO),
    ("sw", "software.versions", 'expect: {driver: ">=570", cuda: ">=12.8", os: "ubuntu>=22.04", fabric_manager: running}', VERSIONS),
    ("s3", "storage.s3", "params: {bucket: acceptance}\n  metric: put_gbps\n  min: 0.5", S3),
    ("ib", "network.ib", "metric: port_rate_gbps\n  min: 400", IB),
]


def contract(tmp: Path, criteria: list[tuple[str, str, str, str]], nodes: int | None = None) -> Path:
    """The example contract with these criteria; with `nodes`, its topology is gpu0000.. in
    racks of 18, so a bundle of that many nodes covers the whole contract."""
    text = (REPO / "examples" / "gb200-contract.yaml").read_text()
    if nodes:
        first, last = text.index("            - {id: r01"), text.index("\n", text.index("            - {id: r04"))
        racks = "\n".join(f'            - {{id: r{k:03d}, nodes: "gpu[{a:04d}-{min(a + 17, nodes - 1):04d}]"}}'
                          for k, a in enumerate(range(0, nodes, 18)))
        text = text[:first] + racks + text[last:]
    start, end = text.index("  criteria:\n"), text.index("\nreview:")
    body = "".join(f"    - id: {cid}\n      check: {check}\n      " + extra.replace("\n  ", "\n      ") + "\n"
                   for cid, check, extra, _ in criteria)
    p = tmp / "contract.yaml"
    p.write_text(text[:start] + "  criteria:\n" + body + text[end:])
    return p


def bench_evaluate(nodes: int) -> float:
    from acceptance.evidence import Bundle

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        c = contract(tmp, CRITERIA, nodes)
        b = Bundle(tmp / "bundle", durable=False)
        for cid, _, _, out in CRITERIA:
            for n in range(nodes):
                # iperf3 names the client host; every output names the node it is filed under
                text = out.replace('"Linux vm ', f'"Linux gpu{n:04d} ')
                b.write(f"raw/{cid}/gpu{n:04d}.json", json.dumps({
                    "node": None, "rc": 0, "started": "2027-01-10T10:00:00+00:00",
                    "finished": "2027-01-10T10:00:05+00:00", "timed_out": False, "error": None,
                    "stdout": text, "stderr": ""}))
        size = sum(p.stat().st_size for p in (tmp / "bundle").rglob("*") if p.is_file())
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "slakit", "accept", "evaluate", str(c), str(tmp / "bundle"),
                            "--format", "json"], cwd=REPO, capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        doc = json.loads(r.stdout)
        verdicts = sum(len(c["verdicts"]) for c in doc["criteria"])
        print(f"evaluate: {nodes} nodes x {len(CRITERIA)} checks = {nodes * len(CRITERIA)} raw files "
              f"({size / 1e6:.1f} MB), {verdicts} verdicts, status {doc['status']}, exit {r.returncode}: "
              f"{elapsed:.2f} s (target <= 10 s)")
        bad = [(c["id"], c["status"], c["reason"]) for c in doc["criteria"] if c["status"] != "pass"]
        if bad:
            print(f"  unexpected statuses: {bad}")
        return elapsed


def bench_runner(n_checks: int) -> float:
    from acceptance.executors.local import LocalExecutor
    from acceptance.runner import RunOptions, run_acceptance
    from slaschema.loader import load_contract

    canned = {"fio": FIO, "iperf3": IPERF}

    class TrueExecutor(LocalExecutor):
        """Runs `true` in place of the check's tool and hands back a canned output of that tool."""

        inside = 0.0

        def run(self, argv, nodes, timeout_s):
            t0 = time.perf_counter()
            res = super().run(["true"], nodes, timeout_s)
            tool = "fio" if argv[0] == "fio" else "iperf3"
            out = {n: type(r)(canned[tool], "", r.rc, r.started, r.finished, node=n) for n, r in res.items()}
            TrueExecutor.inside += time.perf_counter() - t0
            return out

    crits = [(f"c{i:03d}", *(CRITERIA[5][1:3] if i % 2 else CRITERIA[4][1:3]), "") for i in range(n_checks)]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        loaded = load_contract(contract(tmp, crits))
        ex = TrueExecutor()
        t0 = time.perf_counter()
        doc = run_acceptance(loaded, RunOptions(out=tmp / "bundle", nodes=["node01"]), ex)
        total = time.perf_counter() - t0
        assert doc["run"]["state"] == "complete"
        per_check = (total - TrueExecutor.inside) / n_checks
        print(f"runner: {n_checks} checks in {total:.2f} s, {TrueExecutor.inside:.2f} s inside the tool (`true`), "
              f"overhead {per_check * 1000:.1f} ms per check (target < 50 ms)")
        return per_check


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--checks", type=int, default=50)
    args = ap.parse_args()
    bench_evaluate(args.nodes)
    bench_runner(args.checks)


if __name__ == "__main__":
    main()
