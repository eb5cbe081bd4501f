"""A held-out check of the energy roofline on a real GPU (PyTorch, CUDA): kernels the probe did not
run, each reporting its FLOPs and bytes through the hook, recorded under the monitor, then reported
beside the line the probe's figures draw:

    python3 -m jtop_roof run --headless --record h100_energy_roof.jsonl --source host --interval 100 \\
        --device h100-sxm -- python3 benchmarks/energy_roof_workload.py
    jroof-tui report h100_energy_roof.jsonl --probe tests/data/h100_probe_energy.json --format json

Phases: ``idle``; ``skinny-bf16`` (an 8192 × 8192 by 8192 × 64 bf16 product: about 63 FLOP per
byte, below the ridge); ``gemm-bf16-2048`` (square products of 2048: about 683 FLOP per byte, above
it); ``idle-after``. Bytes are each product's operands read and result written once (the least a
product moves); work is reported after a synchronize.
"""

from __future__ import annotations

import argparse
import time

import torch

from jtop_roof import hook

BATCH = 20  # products per report


def run_phase(name: str, seconds: float, m: int, k: int, n: int) -> None:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    flops, moved = 2 * m * k * n, 2 * (m * k + k * n + m * n)
    hook.mark(name)
    started, done = time.monotonic(), 0
    while time.monotonic() - started < seconds:
        for _ in range(BATCH):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        done += BATCH
        hook.work(iterations=BATCH, flops=BATCH * flops, bytes=BATCH * moved, precision="bf16")
    spent = time.monotonic() - started
    print(f"{name}: {done * flops / spent / 1e12:.1f} TFLOP/s, {done * moved / spent / 1e12:.2f} TB/s, "
          f"intensity {flops / moved:.0f} FLOP/byte")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-s", type=float, default=3.0)
    parser.add_argument("--phase-s", type=float, default=10.0)
    args = parser.parse_args()
    hook.mark("idle")
    time.sleep(args.idle_s)
    run_phase("skinny-bf16", args.phase_s, 8192, 8192, 64)
    run_phase("gemm-bf16-2048", args.phase_s, 2048, 2048, 2048)
    hook.mark("idle-after")
    time.sleep(args.idle_s)
    hook.end()


if __name__ == "__main__":
    main()
