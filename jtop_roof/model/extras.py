"""How to install an optional extra, said the same way by every command (as the README says it)."""

from __future__ import annotations


def install_hint(extra: str, packages: str) -> str:
    """The README's way from a clone (``pip install '.[plot]'``), else the packages themselves,
    which fit any install (a registry's, pipx's or uv's environment)."""
    return f"pip install '.[{extra}]' in jroof's clone (as the README says), else pip install {packages}"
