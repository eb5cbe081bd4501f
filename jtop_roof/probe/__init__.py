"""``jroof-tui probe``: measure this machine's ceilings (backends and orchestration). Reading a
result back is ``roofline.measured``: the board and the panes never import the measuring code.

The names below are the package's API for the command and the benchmarks."""

from jtop_roof.probe.probe import (
    BACKENDS,
    ProbeSizes,
    default_probe_path,
    run_probe,
    save_probe,
    summary_lines,
)

__all__ = ["BACKENDS", "ProbeSizes", "default_probe_path", "run_probe", "save_probe", "summary_lines"]
