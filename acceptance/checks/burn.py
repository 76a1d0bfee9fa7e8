"""Stress the node for a while and sample it periodically; prints one JSON object.

    python burn.py --duration 60 --interval 5 [--stress gpu|cpu] [--size 8192]

gpu: a PyTorch matmul loop on every GPU, sampling `nvidia-smi --query-gpu=...` (temperature,
SM clock, power, active throttle reasons). cpu: a busy loop on every core, sampling the
hottest thermal zone and the load average (for hosts without GPUs and for testing the loop).
The kernel log is read before and after, so Xid lines raised during the run can be told
apart. {"skip": "no_torch" | "no_gpu"} when the GPU stress cannot run.
"""

import argparse
import glob
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time

QUERY = "index,temperature.gpu,clocks.sm,power.draw,clocks_throttle_reasons.active"


def kernel_log():
    try:
        p = subprocess.run(["dmesg"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           errors="replace", timeout=30)
        return p.stdout if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def gpu_sample():
    try:
        p = subprocess.run(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": str(exc)}
    gpus = []
    for line in p.stdout.strip().splitlines():
        parts = [x.strip() for x in line.split(",")]
        if len(parts) != 5:
            continue

        def num(s):
            try:
                return float(s)
            except ValueError:
                return None
        thr = parts[4]
        gpus.append({"index": int(parts[0]) if parts[0].isdigit() else None, "temp_c": num(parts[1]),
                     "sm_mhz": num(parts[2]), "power_w": num(parts[3]),
                     "throttle": int(thr, 16) if thr.startswith("0x") else None})
    return {"gpus": gpus}


def cpu_sample():
    temps = []
    for f in glob.glob("/sys/class/thermal/thermal_zone*/temp"):
        try:
            with open(f) as fh:
                temps.append(int(fh.read().strip()) / 1000.0)
        except (OSError, ValueError):
            pass
    try:
        load1 = os.getloadavg()[0]
    except OSError:
        load1 = None
    return {"temp_c": max(temps) if temps else None, "load1": load1}


def _spin(stop_at):
    x = 0
    while time.time() < stop_at:
        for i in range(10000):
            x = (x * 31 + i) % 1000003


def gpu_stress(torch, stop, size, errors):
    def work(i):
        try:
            dev = torch.device("cuda", i)
            a = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
            b = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
            while not stop.is_set():
                for _ in range(20):
                    a @ b
                torch.cuda.synchronize(dev)
        except Exception as exc:  # noqa: BLE001 - reported in the output, judged as an error
            errors.append(f"gpu {i}: {exc}"[:300])
    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(torch.cuda.device_count())]
    for t in threads:
        t.start()
    return threads


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--stress", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--size", type=int, default=8192)
    args = ap.parse_args(argv)
    doc = {"burn": "slakit-burn/1", "stress": args.stress, "duration_s": args.duration, "interval_s": args.interval}
    errors = []
    stop = threading.Event()
    workers = []
    if args.stress == "gpu":
        try:
            import torch
        except ImportError:
            doc["skip"] = "no_torch"
        else:
            if not torch.cuda.is_available():
                doc["skip"] = "no_gpu"
            else:
                workers = gpu_stress(torch, stop, args.size, errors)
        if "skip" in doc:
            json.dump(doc, sys.stdout)
            sys.stdout.write("\n")
            return 0
    log_before = kernel_log()
    start = time.time()
    stop_at = start + args.duration
    procs = []
    if args.stress == "cpu":
        for _ in range(os.cpu_count() or 1):
            p = multiprocessing.Process(target=_spin, args=(stop_at,), daemon=True)
            p.start()
            procs.append(p)
    samples = []
    next_at = start
    while True:
        now = time.time()
        if now >= next_at:
            s = gpu_sample() if args.stress == "gpu" else cpu_sample()
            s["t"] = round(now - start, 3)
            samples.append(s)
            next_at += args.interval
        if now >= stop_at:
            break
        time.sleep(max(0.0, min(next_at, stop_at) - time.time()))
    stop.set()
    for p in procs:
        p.join(timeout=5)
    for t in workers:
        t.join(timeout=30)
    log_after = kernel_log()
    doc.update(samples=samples, errors=errors, elapsed_s=round(time.time() - start, 3))
    if log_after is not None:
        doc["kernel_log_new"] = log_after[len(log_before):] if log_before and log_after.startswith(log_before) else log_after
    json.dump(doc, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
