"""Which tool printed a text, for `slakit parse FILE` without a tool name.

Each tool has marks only its output carries (the nvidia-smi table header, the dcgmi result
box, nccl-tests' `# nThread` banner, perftest's `#bytes #iterations` header, ...). The tool
whose first mark comes earliest in the text (launcher prefixes stripped) is the one; None when
no tool's mark is found. A file holding the output of several tools (a support bundle) is
named after the first; name the tool to read another.
"""

from __future__ import annotations

import re

from acceptance.parsers._prefix import strip_prefixes

_MARKS: dict[str, list[re.Pattern[str]]] = {
    "nvidia-smi-topo": [re.compile(r"^[ \t]*GPU0[ \t]+(?:GPU1|NIC\d|mlx5_|CPU Affinity)", re.M)],
    "dcgmi": [re.compile(r"\"DCGM (?:GPU )?Diagnostic\"\s*:"), re.compile(r"^\s*\|\s*Diagnostic\s*\|\s*Result\s*\|", re.M)],
    "nvidia-smi": [
        re.compile(r"<nvidia_smi_log\b"), re.compile(r"^\s*=+\s*NVSMI LOG\s*=+", re.M),
        re.compile(r"NVIDIA-SMI\s+\S+\s+(?:Driver|KMD) Version:"),
        re.compile(r"^\s*(?:index|name|pci\.bus_id|uuid|timestamp|driver_version)(?: \[[^\]]*\])?\s*,\s*[a-z_.]+", re.M),
        re.compile(r"--query-gpu[= ]"),
        re.compile(r"No devices were found|NVIDIA-SMI has failed"),
    ],
    "nccl-tests": [re.compile(r"^\s*#\s*nThread\s+\d+", re.M), re.compile(r"^\s*#\s+size\s+count\s+type\s+redop", re.M),
                   re.compile(r"\b(?:all_reduce|all_gather|alltoall|broadcast|reduce_scatter|reduce|sendrecv|scatter|gather|"
                              r"hypercube)_perf\b")],
    "ib_write_bw": [re.compile(r"#bytes\s+#iterations\s+BW peak"), re.compile(r"^\s*(?:RDMA_Write|RDMA_Read|Send|Atomic)\b.*BW Test\s*$", re.M)],
    "ibstat": [re.compile(r"^\s*CA\s+'[^']+'\s*$", re.M), re.compile(r"^\s*[A-Za-z0-9_.\-]+/ports/\d+/(?:state|rate|phys_state):", re.M)],
    "xid": [re.compile(r"NVRM: Xid \("), re.compile(r"NVRM:.*fallen off the bus", re.I)],
    "fio": [re.compile(r"\"fio version\"\s*:"), re.compile(r"\"jobname\"\s*:")],
    "iperf3": [re.compile(r"\"intervals\"\s*:\s*\["), re.compile(r"\"sum_sent\"\s*:"), re.compile(r"iperf3: error")],
}


def detect_tool(text: str) -> str | None:
    """The parser name (a key of PARSERS) for `text`, or None when no tool's output is found."""
    body = strip_prefixes(text)
    best: tuple[int, str] | None = None
    for tool, marks in _MARKS.items():
        for mark in marks:
            m = mark.search(body)
            if m and (best is None or m.start() < best[0]):
                best = (m.start(), tool)
    return best[1] if best else None
