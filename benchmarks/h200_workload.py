"""The proof workload, run under the monitor on a real GPU (PyTorch, CUDA):

    python3 -m jtop_roof run --headless --record h200_phases.jsonl --source host --interval 100 \
        --device h200 -- python3 benchmarks/h200_workload.py

Phases it marks itself through the hook: ``idle``; ``copy`` (device-to-device copies, memory-bound:
each reports its bytes read + written and 0 FLOPs); ``gemm-bf16`` (bf16 matrix products on random
data for ``--gemm-s`` seconds, compute-bound: each reports 2·N³ FLOPs and 3·N²·2 bytes); and
``idle-after``. Work is reported after a synchronize, so it is the work done by then.
"""

from __future__ import annotations

import argparse
import time

import torch

from jtop_roof import hook

BATCH = 10  # operations per report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-s", type=float, default=4.0)
    parser.add_argument("--copy-s", type=float, default=10.0)
    parser.add_argument("--gemm-s", type=float, default=35.0)
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--copy-gib", type=float, default=4.0)
    args = parser.parse_args()
    device = torch.device("cuda")
    n = args.n
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    c = torch.empty(n, n, device=device, dtype=torch.bfloat16)
    src = torch.empty(int(args.copy_gib * 2**30) // 4, device=device, dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    torch.matmul(a, b, out=c)
    dst.copy_(src)
    torch.cuda.synchronize()

    hook.mark("idle")
    time.sleep(args.idle_s)

    hook.mark("copy")
    started = time.monotonic()
    copies = 0
    while time.monotonic() - started < args.copy_s:
        for _ in range(BATCH):
            dst.copy_(src)
        torch.cuda.synchronize()
        copies += BATCH
        hook.work(iterations=BATCH, flops=0, bytes=BATCH * 2 * src.numel() * 4)
    copy_s = time.monotonic() - started

    hook.mark("gemm-bf16")
    started = time.monotonic()
    gemms = 0
    while time.monotonic() - started < args.gemm_s:
        for _ in range(BATCH):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        gemms += BATCH
        hook.work(iterations=BATCH, flops=BATCH * 2 * n**3, bytes=BATCH * 3 * n * n * 2, precision="bf16")
    gemm_s = time.monotonic() - started

    hook.mark("idle-after")
    time.sleep(args.idle_s)
    hook.end()
    print(f"copy: {copies} x {2 * src.numel() * 4 / 1e9:.1f} GB in {copy_s:.1f} s = "
          f"{copies * 2 * src.numel() * 4 / copy_s / 1e12:.2f} TB/s (read + written)")
    print(f"gemm-bf16: {gemms} x {n}^3 in {gemm_s:.1f} s = {gemms * 2 * n**3 / gemm_s / 1e12:.0f} TFLOP/s")


if __name__ == "__main__":
    main()
