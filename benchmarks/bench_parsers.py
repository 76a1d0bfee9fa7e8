"""Parse speed of every tool parser on the real outputs in ../shared/realdata.

Prints, per tool, the input size and the median time of one parse over repeated runs, plus
the time for a 1,000-node batch (one output per node), which is what `accept evaluate`
pays for parsing a large bundle. Run: .venv/bin/python benchmarks/bench_parsers.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from acceptance.parsers import PARSERS  # noqa: E402

REALDATA = REPO.parent / "shared" / "realdata"
FIXTURES = REPO / "tests" / "fixtures"

INPUTS = {
    "nvidia-smi": REALDATA / "nvidia_smi_query_gpu_csv_h100_1gpu.txt",
    "nvidia-smi:xml": REALDATA / "nvidia_smi_q_x_a100_sxm4_telegraf.xml.txt",
    "nvidia-smi:-q": REALDATA / "nvidia_smi_q_text_h100_1gpu.txt",
    "nvidia-smi:table": REALDATA / "nvidia_smi_default_table_8xH100_nccl-tests-issue264.txt",
    "nvidia-smi-topo": REALDATA / "nvidia_smi_topo_m_samples.txt",
    "nccl-tests": REALDATA / "nccl_all_reduce_perf_h100_p5_awsbatch.txt",
    "dcgmi": REALDATA / "dcgmi_diag_json_samples.txt",
    "fio": REALDATA / "fio_json_cbt_nvme_randwrite_fio3.42.txt",
    "ib_write_bw": REALDATA / "ib_write_bw_samples.txt",
    "ibstat": REALDATA / "ibstat_samples.txt",
    "xid": REALDATA / "xid_kernel_log_samples.txt",
    "iperf3": FIXTURES / "iperf3" / "iperf3_tcp_loopback_t2_P2_reverse.json",
}


def main() -> None:
    print(f"{'tool':<16}{'bytes':>8}{'median ms':>12}{'1000 nodes s':>14}")
    for tool, path in INPUTS.items():
        if not path.is_file():
            print(f"{tool:<16}{'absent':>8}")
            continue
        text = path.read_text(encoding="utf-8")
        parser = PARSERS[tool.split(":")[0]]
        times = []
        for _ in range(50):
            t0 = time.perf_counter()
            parser(text)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        t0 = time.perf_counter()
        for _ in range(1000):
            parser(text)
        batch = time.perf_counter() - t0
        print(f"{tool:<16}{len(text):>8}{med * 1000:>12.3f}{batch:>14.2f}")


if __name__ == "__main__":
    main()
