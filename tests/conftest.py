"""Hypothesis examples: fixed under CI (``HYPOTHESIS_PROFILE=ci``, set by ``.ci/run``), so that a red
CI is a finding that reproduces, not the luck of a seed; random elsewhere, where new cases are wanted."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "default")
