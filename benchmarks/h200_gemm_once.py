"""One bf16 GEMM (after warm-ups) for Nsight Compute to measure:

    ncu --csv --clock-control none -k regex:nvjet --launch-skip 3 --launch-count 1 \
        --metrics gpu__time_duration.sum,dram__bytes.sum,... python3 benchmarks/h200_gemm_once.py
"""

from __future__ import annotations

import torch

N = 8192


def main() -> None:
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    for _ in range(4):
        c = torch.matmul(a, b)
    torch.cuda.synchronize()
    print(f"{N}^3 bf16 GEMM done: {float(c[0, 0]):.3f}")


if __name__ == "__main__":
    main()
