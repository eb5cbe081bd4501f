"""Hypothesis examples: fixed under CI (``HYPOTHESIS_PROFILE=ci``, set by ``.ci/run``), so that a red
CI is a finding that reproduces, not the luck of a seed; random elsewhere, where new cases are wanted.

Every test runs in a house of its own: HOME and the XDG folders point into a fresh folder, and no
``JROOF_*`` variable is set, so that a user's ``~/.config/jroof/config.yaml`` (or a ``JROOF_`` in the
shell) changes no test. A test's own fixture or ``monkeypatch`` still sets what it needs: this one
runs first. The command line runs through ``cli_support`` (``jroof_main`` in this process).

``SLOW`` marks the tests that take seconds each (``pytest -m "not slow"`` leaves them out), in one
place so that moving files does not lose it: a file's name marks all its tests, ``file::test`` one
test with all its parameters."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_support import Ran, run_main
from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "default")

#: The XDG base folders (config, runtime sockets, cache, data, state), each its own under the home.
XDG_FOLDERS = {"XDG_CONFIG_HOME": ".config", "XDG_RUNTIME_DIR": "run", "XDG_CACHE_HOME": ".cache",
               "XDG_DATA_HOME": ".local/share", "XDG_STATE_HOME": ".local/state"}


def isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """HOME and the XDG folders (0700, as a runtime folder must be) under ``home``; no ``JROOF_*``."""
    monkeypatch.setenv("HOME", str(home))
    for name, folder in XDG_FOLDERS.items():
        path = home / folder
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        monkeypatch.setenv(name, str(path))
    for name in [name for name in os.environ if name.startswith("JROOF_")]:
        monkeypatch.delenv(name)
    return home


@pytest.fixture(scope="session", autouse=True)
def hermetic_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The same for module- and session-scoped fixtures, which are set up before any test's own."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture(autouse=True)
def hermetic_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty house for each test."""
    return isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture
def jroof_main(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``jroof_main("report", path, ...)``: the exit status, stdout and stderr of ``main`` here."""
    return functools.partial(run_main, capsys)


#: Measured with ``--durations=0`` over the whole suite on the project's 2-core machine: what takes
#: the fast subset past about 3 minutes there. A file name marks its every test.
SLOW: frozenset[str] = frozenset()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    for item in items:
        file = item.path.name
        name = getattr(item, "originalname", None) or item.name
        if file in SLOW or f"{file}::{name}" in SLOW:
            item.add_marker(slow)
