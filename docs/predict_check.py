"""Checks ``predict`` on the real Orin Nano 8GB Super runs in ../shared, as a user would run it.

1. Leave one mode out: the ResNet-50 INT8 runs at MAXN_SUPER, 15W and 7W are each reported with
   ``--trtexec``, then ``compare --predict`` predicts each run's mode from each other run and prints
   the error against what was measured (the table in docs/validation.md).
2. Held out: from the ResNet-18 FP16 MAXN_SUPER run alone, the board's other modes. Nothing
   measured them, so only the predictions and their ranges are printed.

Run from the repository root: ``python docs/predict_check.py`` (../shared beside the repository).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DEVICE = "orin-nano-8gb-super"


def jroof(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "jtop_roof", *args], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    if done.returncode:
        sys.exit(f"jroof-tui {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def report(tmp: Path, run: str) -> str:
    name = f"orinnano8gb-super_jp6.2.1_benchlab_{run}.log"
    log, trt = SHARED / "tegrastats" / "logs" / name, SHARED / "trtexec" / name
    if not log.is_file() or not trt.is_file():
        sys.exit(f"{log} or {trt} is missing: put ../shared beside the repository")
    out = tmp / f"{run}.json"
    # the 7W caps are the same on the Orin Nano 8GB and its Super: the board is given
    jroof("report", str(log), "--trtexec", str(trt), "--device", DEVICE, "--format", "json",
          "--out", str(out))
    return str(out)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        triple = [report(Path(tmp), f"resnet50_int8_{mode}_run3") for mode in ("maxn", "15w", "7w")]
        compared = jroof("compare", *triple, "--predict")
        print("ResNet-50 INT8 " + compared[compared.index("## Leave one mode out") + 3:])
        print("Held out: ResNet-18 FP16, from its MAXN_SUPER run alone (nothing measured the others)\n")
        print(jroof("predict", report(Path(tmp), "resnet18_fp16_maxn_run1")))


if __name__ == "__main__":
    main()
