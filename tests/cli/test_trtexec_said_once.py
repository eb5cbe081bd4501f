"""trtexec's placement is said once on stderr and once in the md report: a window cut short is said
by its coverage alone (not also as "its timed window is cut"), a fit that fails its check adds only
what the check found to the line that says how the log was fitted, and the md report gives the
coverage note in its block of what the figures rest on, not again under the work. Real pairs from
../shared (skipped where absent); the padded log is the stamped maxn run without its stamps and with
idle lines around it, as tests/unit/test_trtexec_fit_rests_on.py makes it."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from paths import OUTSIDE

SHARED = OUTSIDE / "shared"
LOGS, TRTEXEC = SHARED / "tegrastats" / "logs", SHARED / "trtexec"
NANO = "nano_jp4.6_csc2231_1.log"
MAXN = "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_maxn_run3.log"

pytestmark = pytest.mark.skipif(not all((d / n).is_file() for d in (LOGS, TRTEXEC) for n in (NANO, MAXN)),
                                reason="../shared pairs not beside the repo")


def jroof(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jtop_roof", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def test_a_window_cut_short_is_said_once_by_its_coverage():
    """The nano pair placed a second early at its real 250 ms: the log stops before trtexec's end."""
    result = jroof("report", LOGS / NANO, "--trtexec", TRTEXEC / NANO, "--log-start", "2023-03-29 17:56:46",
                   "--interval", "250", "--tz", "UTC")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == len(set(lines)) == 1
    assert result.stderr.count("timed window") == 1 and "91.4%" in result.stderr
    assert "overlap" in result.stderr  # the whole run's overlap is still said, once
    md = result.stdout
    assert md.count("the log covers 91.4% of trtexec's timed window") == 1
    assert "- timed: no energy per iteration: see trtexec coverage above" in md


def test_a_fit_that_fails_its_check_is_said_once(tmp_path):
    import test_trtexec_fit_rests_on as fit

    padded = fit.stripped(tmp_path, MAXN, idle_before_s=30, idle_after_s=10)
    result = jroof("report", padded, "--trtexec", TRTEXEC / MAXN, "--tz", "UTC")
    assert result.returncode == 0, result.stderr
    err = result.stderr
    assert err.count("trtexec's first stamp") == 1 and err.count("--log-start") == 1
    assert "the fit does not line up with the GPU's load on the log" in err and "no J/inference" in err
