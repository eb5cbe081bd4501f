"""jroof: a terminal monitor and benchmark flight recorder for NVIDIA Jetson boards.

The package is a house of layers, one folder each, lowest first; a module imports only from its
own layer and the ones below (tests/unit/test_layering.py holds every import to it, lazy ones too):

- ``model``: records and their JSON, stream time, the source's description, metric registry;
- ``formats``: the tegrastats grammar, fast JSON, the log and recording reader, the recorder,
  trtexec and Nsight Compute output, safe reading of user files;
- ``roofline``: the device database, ceilings from clocks, the board, workloads, measured roofs;
- ``sources``: tegrastats, this host, replays, the demo, ssh;
- ``analysis``: the pipeline, display history, energy ledger, detectors, verdicts;
- ``probe``: measuring this machine's ceilings;
- ``runtime``: the configuration and the one runtime (source -> pipeline -> subscribers, one pump);
- ``outputs``: report, compare, export, plot, the Prometheus metrics;
- ``tui``: the Textual monitor (the only layer that imports Textual);
- ``commands``: one module per command.

``hook`` is the benchmark scripts' API (``from jtop_roof import hook``); ``jtop_roof.read(path)``
reads a recording or a log from Python (``jtop_roof.api``). Importing the package never imports
Textual.
"""

import importlib

__version__ = "0.1.0"

#: The layers, lowest first (the folders above).
LAYERS = ("model", "formats", "roofline", "sources", "analysis", "probe", "runtime", "outputs", "tui",
          "commands")


def __getattr__(name: str) -> object:
    """``jtop_roof.read``: the read API's ``read`` (``jtop_roof.api``), imported when first used, so
    that importing the package stays light (no numpy, no pipeline) and below every layer."""
    if name == "read":
        return importlib.import_module("jtop_roof.api").read
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
