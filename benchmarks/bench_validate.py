"""`slakit validate` on a 12,500-node contract (hostlist topology). Target: < 2 s on 2 cores.

Run: .venv/bin/python benchmarks/bench_validate.py
Measures the whole command (process start, imports, YAML, models, topology) as a user sees it.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def make_contract(path: Path, racks: int = 695, per_rack: int = 18) -> int:
    """GB200-style fleet: racks x 18 nodes (695 x 18 = 12,510 nodes) over 2 sites, 7 clusters."""
    base = (REPO / "examples" / "gb200-contract.yaml").read_text()
    head, tail = base.split("  sites:\n", 1)
    tail = tail[tail.index("\npricing:"):]
    lines = ["  sites:\n"]
    rack = 0
    for s in range(2):
        lines.append(f"    - id: site{s + 1}\n      clusters:\n")
        for c in range(s * 4, min(7, s * 4 + 4)):
            lines.append(f"        - id: c{c + 1}\n          racks:\n")
            n_racks = racks // 7 + (1 if c < racks % 7 else 0)
            for _ in range(n_racks):
                rack += 1
                lines.append(f'            - {{id: r{rack:04d}, nodes: "r{rack:04d}-n[01-{per_rack:02d}]"}}\n')
    path.write_text(head + "".join(lines) + tail)
    return rack * per_rack


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "fleet.yaml"
        nodes = make_contract(f)
        slakit = str(Path(sys.executable).with_name("slakit"))
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            r = subprocess.run([slakit, "validate", str(f)], capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            assert r.returncode == 0, r.stdout + r.stderr
        print(f"validate {nodes} nodes ({f.stat().st_size / 1024:.0f} KiB): "
              f"median {statistics.median(times):.3f} s, max {max(times):.3f} s over {len(times)} runs "
              f"(target < 2 s)")
        print(r.stdout.strip())


if __name__ == "__main__":
    main()
