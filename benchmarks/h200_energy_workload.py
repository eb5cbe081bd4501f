"""The energy proof workload, run under the monitor on a real GPU (PyTorch, NVML):

    python3 -m jtop_roof run --headless --record h200_energy.jsonl --source host --interval 100 \
        --power-hz 100 --device h200 -- python3 benchmarks/h200_energy_workload.py \
        --counters h200_energy_counters.json

It marks its own phases through the hook: ``idle`` 6 s, ``gemm-bf16`` 25 s, ``copy`` 10 s
(device-to-device), ``gemm-fp32`` 15 s, ``idle-after`` 6 s. At each phase edge it reads NVML's
total-energy counter itself (after a synchronize, just before the marker), and writes those
readings to ``--counters``: the reference that ``report``'s energy per phase is held to.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Callable

import pynvml
import torch

from jtop_roof import hook

BATCH = 10  # operations per work report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counters", required=True, help="where to write the counter readings (JSON)")
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--copy-gib", type=float, default=4.0)
    args = parser.parse_args()
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    n = args.n
    a16 = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c16 = torch.empty_like(a16)
    a32 = torch.randn(n, n, device="cuda", dtype=torch.float32)
    c32 = torch.empty_like(a32)
    src = torch.empty(int(args.copy_gib * 2**30) // 4, device="cuda", dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32
    torch.matmul(a16, a16, out=c16)
    torch.matmul(a32, a32, out=c32)
    dst.copy_(src)
    torch.cuda.synchronize()

    edges: list[tuple[float, int, str | None]] = []  # (unix time, counter mJ, the phase it starts)

    def edge(name: str | None) -> None:
        """Read the counter at a phase edge, then start phase ``name`` (None: end the last one)."""
        torch.cuda.synchronize()
        edges.append((time.time(), int(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)), name))
        if name is None:
            hook.end()
        else:
            hook.mark(name)

    def busy(seconds: float, step: Callable[[], None], flops: float, bytes_: float,
             precision: str | None) -> None:
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            for _ in range(BATCH):
                step()
            torch.cuda.synchronize()
            hook.work(iterations=BATCH, flops=BATCH * flops, bytes=BATCH * bytes_, precision=precision)

    edge("idle")
    time.sleep(6.0)
    edge("gemm-bf16")
    busy(25.0, lambda: torch.matmul(a16, a16, out=c16), 2 * n**3, 3 * n * n * 2, "bf16")
    edge("copy")
    busy(10.0, lambda: dst.copy_(src), 0, 2 * src.numel() * 4, None)
    edge("gemm-fp32")
    busy(15.0, lambda: torch.matmul(a32, a32, out=c32), 2 * n**3, 3 * n * n * 4, "fp32")
    edge("idle-after")
    time.sleep(6.0)
    edge(None)
    phases = [{"name": name, "start_wall": start_wall, "end_wall": end_wall,
               "energy_j": (end_mj - start_mj) / 1e3}
              for (start_wall, start_mj, name), (end_wall, end_mj, _) in itertools.pairwise(edges)]
    with open(args.counters, "w", encoding="utf-8") as out:
        json.dump({"counter": "nvmlDeviceGetTotalEnergyConsumption", "gpu": pynvml.nvmlDeviceGetName(handle),
                   "edges": [{"t_wall": t, "energy_mj": mj, "starts": name} for t, mj, name in edges],
                   "phases": phases}, out, indent=1)
    for phase in phases:
        print(f"{phase['name']}: {phase['energy_j']:.1f} J by the counter")


if __name__ == "__main__":
    main()
