"""The one place the sources' flags become sources: the monitor, ``record``, ``run`` and ``serve``
check them (``refuse_unused``) and get their sources (``sources_of``) here, so a new source or a new
refusal is one edit, not four (tests/unit/test_layering.py holds every command to it)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from jtop_roof.commands.options import (
    check_trtexec,
    refuse_roof_only,
    refuse_unplaced,
    refuse_unread_meters,
    replay_of,
)
from jtop_roof.runtime.config import Config
from jtop_roof.sources.base import Source


def refuse_unused(args: argparse.Namespace, config: Config, *, roofless: str | None) -> None:
    """The sources' flags that would be taken and used for nothing, refused in one line each
    (FlagError): ``--workload``/``--probe`` where the command ``roofless`` keeps no roof (None: the
    monitor draws one), ``--trtexec`` without a replay, ``--power-hz``/``--sysfs-root`` for a
    source that reads no local monitor."""
    if roofless is not None:
        refuse_roof_only(args, roofless)
    refuse_unplaced(config, replay_of(args))
    refuse_unread_meters(args, config)


@dataclass(frozen=True)
class Chosen:
    """The sources the flags name (one per board: several only for the monitor's ``--ssh``), and
    what to tell the user of the choice (``auto`` fell back to this host), or None."""

    sources: tuple[Source, ...]
    hint: str | None

    @property
    def source(self) -> Source:
        return self.sources[0]


def sources_of(config: Config, replay: str | None, *, interactive: bool = False,
               several: bool = False) -> Chosen:
    """The sources ``config`` (defaults < file < environment < flags) and ``replay`` (the file
    ``--replay`` plays, standard input already spooled) name: ``auto`` resolved, the source built
    (``runtime.session``), and the user's ``--trtexec`` placed on it now, so that one that cannot be
    placed is exit 2 before anything starts. ``interactive``: a screen shows it (a replay waits at
    its end); ``several``: one source per ``--ssh`` board (the monitor), else one (SessionError)."""
    from jtop_roof.runtime.session import make_source, make_sources, resolve_source_kind

    kind, hint = resolve_source_kind(config, replay)
    sources = (make_sources(config, kind, replay, interactive=interactive) if several
               else [make_source(config, kind, replay, interactive=interactive)])
    check_trtexec(sources, config)
    return Chosen(tuple(sources), hint)
