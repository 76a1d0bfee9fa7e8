"""Dense matmul throughput per GPU; prints one JSON object.

    python gemm_bench.py --dtype bf16 --size 8192 --iters 50 --warmup 10

Output: {"bench": "slakit-gemm/1", "dtype", "size", "iters", "torch", "cuda",
"gpus": [{"index", "name", "tflops", "seconds"}]}; or {"bench": ..., "skip": REASON, "detail"}
with REASON one of no_torch, no_gpu, dtype_unsupported. Runs on the node with the Python
that has PyTorch; needs nothing else.
"""

import argparse
import json
import sys


def emit(doc):
    doc = {"bench": "slakit-gemm/1", **doc}
    json.dump(doc, sys.stdout)
    sys.stdout.write("\n")


def bench_one(torch, index, dtype, n, iters, warmup):
    dev = torch.device("cuda", index)
    torch.cuda.set_device(dev)
    if dtype == "fp8":
        if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
            raise RuntimeError("this PyTorch has no FP8 matmul")
        a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=dev)

        def step():
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32}[dtype]
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        a = torch.randn(n, n, device=dev, dtype=dt)
        b = torch.randn(n, n, device=dev, dtype=dt)

        def step():
            return a @ b
    for _ in range(warmup):
        step()
    torch.cuda.synchronize(dev)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        step()
    end.record()
    torch.cuda.synchronize(dev)
    seconds = start.elapsed_time(end) / 1000.0
    return {
        "index": index,
        "name": torch.cuda.get_device_name(index),
        "tflops": 2.0 * n * n * n * iters / seconds / 1e12,
        "seconds": seconds,
    }


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", choices=["bf16", "fp16", "fp8", "tf32", "fp32"], default="bf16")
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args(argv)
    base = {"dtype": args.dtype, "size": args.size, "iters": args.iters}
    try:
        import torch
    except ImportError as exc:
        emit({**base, "skip": "no_torch", "detail": str(exc)})
        return 0
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        emit({**base, "skip": "no_gpu", "detail": "torch.cuda.is_available() is False", "torch": torch.__version__})
        return 0
    if args.dtype == "fp8":
        caps = [torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())]
        if min(caps) < (8, 9) or not hasattr(torch, "_scaled_mm"):
            emit({**base, "skip": "dtype_unsupported", "torch": torch.__version__,
                  "detail": f"FP8 matmul needs compute capability 8.9 or newer (found {min(caps)})"})
            return 0
    gpus = []
    for i in range(torch.cuda.device_count()):
        try:
            gpus.append(bench_one(torch, i, args.dtype, args.size, args.iters, args.warmup))
        except RuntimeError as exc:
            if args.dtype == "fp8" and "FP8" in str(exc).upper():
                emit({**base, "skip": "dtype_unsupported", "detail": str(exc)[:300], "torch": torch.__version__})
                return 0
            gpus.append({"index": i, "name": torch.cuda.get_device_name(i), "tflops": None, "error": str(exc)[:300]})
    emit({**base, "torch": torch.__version__, "cuda": torch.version.cuda, "gpus": gpus})
    return 0


if __name__ == "__main__":
    sys.exit(main())
