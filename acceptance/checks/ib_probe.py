"""Snapshot /sys/class/infiniband and measure ib_write_bw per device; prints one JSON object.

    python ib_probe.py [--devices mlx5_0,mlx5_1] [--size 65536] [--duration 5] [--no-bandwidth]

The sysfs snapshot is written as `DEVICE/ports/N/FILE: CONTENT` lines (the format the ibstat
parser reads). Bandwidth is measured per device in loopback: an `ib_write_bw` server and a
client to localhost on the same HCA (`--report_gbits`). Without /sys/class/infiniband the
output is {"skip": "no_infiniband"}.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = "/sys/class/infiniband"


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return None


def snapshot(devices):
    lines = []
    for dev in devices:
        base = os.path.join(ROOT, dev)
        for name in ("fw_ver", "hca_type", "node_guid"):
            v = read(os.path.join(base, name))
            if v is not None:
                lines.append(f"{dev}/{name}: {v}")
        ports = os.path.join(base, "ports")
        for port in sorted(os.listdir(ports)) if os.path.isdir(ports) else []:
            pdir = os.path.join(ports, port)
            for name in ("state", "phys_state", "rate", "link_layer", "lid", "sm_lid"):
                v = read(os.path.join(pdir, name))
                if v is not None:
                    lines.append(f"{dev}/ports/{port}/{name}: {v}")
            for group in ("counters", "hw_counters"):
                gdir = os.path.join(pdir, group)
                for name in sorted(os.listdir(gdir)) if os.path.isdir(gdir) else []:
                    v = read(os.path.join(gdir, name))
                    if v is not None:
                        lines.append(f"{dev}/ports/{port}/{group}/{name}: {v}")
    return "\n".join(lines) + "\n"


def bandwidth(dev, port, size, duration):
    common = ["ib_write_bw", "-d", dev, "-p", str(port), "-s", str(size), "-D", str(duration),
              "--report_gbits", "-F"]
    try:
        server = subprocess.Popen(common, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, errors="replace")
    except FileNotFoundError:
        return {"missing": True}
    time.sleep(1.0)
    try:
        client = subprocess.run(common + ["localhost"], stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, errors="replace", timeout=duration + 60)
        out = client.stdout + client.stderr
        rc = client.returncode
    except subprocess.TimeoutExpired:
        out, rc = "client timed out", None
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
    return {"rc": rc, "output": out, "server": (server.stdout.read() if server.stdout else "")[-4000:]}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="")
    ap.add_argument("--size", type=int, default=65536)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--no-bandwidth", action="store_true")
    args = ap.parse_args(argv)
    doc = {"probe": "slakit-ib/1"}
    if not os.path.isdir(ROOT) or not os.listdir(ROOT):
        doc["skip"] = "no_infiniband"
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
        return 0
    present = sorted(os.listdir(ROOT))
    devices = [d for d in args.devices.split(",") if d] or present
    doc["present"] = present
    doc["devices"] = devices
    doc["sysfs"] = snapshot([d for d in devices if d in present])
    doc["bw"] = {}
    if not args.no_bandwidth:
        for i, dev in enumerate(devices):
            if dev in present:
                doc["bw"][dev] = bandwidth(dev, 18515 + i, args.size, args.duration)
    json.dump(doc, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
