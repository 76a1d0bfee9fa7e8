"""Collect the raw text software.versions judges; prints one JSON object.

Runs on the node under test with any Python 3. Only gathers text (command outputs and a few
files); every version is extracted later by the pure parser on the runner's side, so a
provider can hand over this JSON and have it judged the same way.

Format 2 keeps every text as a list of its lines and prints the JSON indented, one value per
line: `srun --label` breaks output lines longer than its buffer, which would cut a string
value of a one-line document.
"""

import glob
import json
import os
import platform
import subprocess
import sys

COMMANDS = {
    "nvidia_smi_query": ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
    "nvidia_smi": ["nvidia-smi"],
    "nvcc": ["nvcc", "--version"],
    "fabric_manager": ["systemctl", "is-active", "nvidia-fabricmanager"],
    "docker": ["docker", "--version"],
    "podman": ["podman", "--version"],
    "enroot": ["enroot", "version"],
    "apptainer": ["apptainer", "--version"],
    "nvidia_container_cli": ["nvidia-container-cli", "--version"],
    "sinfo": ["sinfo", "--version"],
    "slurmd": ["slurmd", "-V"],
    "kubelet": ["kubelet", "--version"],
    "ofed_info": ["ofed_info", "-s"],
}
FILES = {
    "os_release": "/etc/os-release",
    "nvidia_proc": "/proc/driver/nvidia/version",
}
NCCL_GLOBS = [
    "/usr/lib/x86_64-linux-gnu/libnccl.so.*",
    "/usr/lib/aarch64-linux-gnu/libnccl.so.*",
    "/usr/lib64/libnccl.so.*",
    "/usr/local/cuda*/lib64/libnccl.so.*",
    "/usr/local/cuda*/targets/*/lib/libnccl.so.*",
    "/opt/nccl*/lib/libnccl.so.*",
    "/opt/hpcx*/nccl*/lib/libnccl.so.*",
]


def run(argv, timeout):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           errors="replace", timeout=timeout)
        return {"rc": p.returncode, "stdout": p.stdout[-20000:].splitlines(), "stderr": p.stderr[-2000:].splitlines()}
    except FileNotFoundError:
        return {"rc": None, "missing": True}
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"rc": None, "error": str(exc)}


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(20000).splitlines()
    except OSError:
        return None


def main():
    timeout = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    out = {
        "probe": "slakit-versions/2",
        "hostname": platform.node(),
        # Under Slurm the node name the scheduler ran the probe on (several slurmd may share a host).
        "slurm_node": os.environ.get("SLURMD_NODENAME"),
        "kernel": platform.release(),
        "commands": {name: run(argv, timeout) for name, argv in COMMANDS.items()},
        "files": {name: read(path) for name, path in FILES.items()},
        "nccl_libraries": sorted({p for g in NCCL_GLOBS for p in glob.glob(g)}),
    }
    try:
        import torch  # noqa: F401  (NCCL bundled with PyTorch, when no system NCCL exists)
        v = torch.cuda.nccl.version() if torch.cuda.is_available() else None
        out["torch_nccl"] = ".".join(map(str, v)) if isinstance(v, tuple) else (str(v) if v else None)
    except Exception:  # noqa: BLE001 - no torch, no CUDA: simply not reported
        out["torch_nccl"] = None
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
