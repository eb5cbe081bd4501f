"""The one way tests run the command line: in this process (``main``) or as a user's shell does
(``python -m jtop_roof``). Both give the exit status, stdout and stderr; neither reads the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from jtop_roof.commands.main import main

ROOT = Path(__file__).resolve().parents[1]


class Ran(NamedTuple):
    """What ``main`` gave, named as ``subprocess.CompletedProcess`` names it (and a tuple to unpack)."""

    returncode: int
    stdout: str
    stderr: str


def run_main(capsys: pytest.CaptureFixture[str], *args: object) -> Ran:
    """``main(ARGS)`` in this process: argparse's own refusals (``SystemExit``) are their status.
    Output captured before the call is dropped, so that the result is this command's alone."""
    capsys.readouterr()
    try:
        code = main([str(arg) for arg in args])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    return Ran(code, out, err)


def jroof(*args: object, cwd: Path | str = ROOT, env: dict[str, str] | None = None, timeout: float = 120,
          text: bool = True, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """``python -m jtop_roof ARGS`` in ``cwd``. stdout and stderr are pipes and stdin is empty unless
    given (``input=``, ``stdin=``, ``stdout=``...); text is UTF-8 unless ``text=False`` or another
    ``encoding``. ``env`` is the whole environment (this one when None). ``PYTHONPATH`` is the
    caller's when set (tests run against another tree that way), else this checkout."""
    environ = dict(os.environ if env is None else env)
    environ.setdefault("PYTHONPATH", str(ROOT))
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    if kwargs.get("input") is None:
        kwargs.pop("input", None)
        kwargs.setdefault("stdin", subprocess.DEVNULL)
    if text:
        kwargs.setdefault("encoding", "utf-8")
    argv = [arg if isinstance(arg, (str, bytes, os.PathLike)) else str(arg) for arg in args]
    return subprocess.run([sys.executable, "-m", "jtop_roof", *argv], cwd=cwd, env=environ, timeout=timeout,
                          **kwargs)
