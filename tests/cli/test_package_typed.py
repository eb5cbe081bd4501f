"""The package says `Typing :: Typed`, so it ships the PEP 561 marker: `py.typed` sits in the package
and setuptools' package-data names it, so that wheels and sdists carry it and mypy reads jroof's own
annotations in a user's code."""

from __future__ import annotations

import sys
from pathlib import Path

from paths import REPO

import jtop_roof

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest needs tomli on 3.10
    import tomli as tomllib

ROOT = REPO


def test_py_typed_is_in_the_package_and_its_package_data():
    assert (Path(jtop_roof.__file__).parent / "py.typed").is_file()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "Typing :: Typed" in project["project"]["classifiers"]
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["jtop_roof"]
