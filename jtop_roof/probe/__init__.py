"""``jroof-tui probe``: measure this machine's ceilings. ``run`` orchestrates a probe with the
kernels of ``backends`` while ``sampler`` watches the clocks; ``result`` writes and describes it.
Reading a result back is ``roofline.measured``: the board and the panes never import the measuring
code.

The names below are the package's API for the command and the benchmarks."""

from jtop_roof.probe.backends import BACKENDS
from jtop_roof.probe.result import default_probe_path, save_probe, summary_lines
from jtop_roof.probe.run import ProbeSizes, run_probe

__all__ = ["BACKENDS", "ProbeSizes", "default_probe_path", "run_probe", "save_probe", "summary_lines"]
