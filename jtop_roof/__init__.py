"""jroof: a terminal monitor and benchmark flight recorder for NVIDIA Jetson boards.

Importing the package never imports Textual: the data layer (model, parser, sources, recorder,
config, history) is usable from scripts and the headless ``record`` command.
"""

__version__ = "0.1.0"
