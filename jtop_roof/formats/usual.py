"""A tegrastats line in the usual order read straight to its timed ``Sample`` (``iter_records``).

``parser.parse_line`` checks a line's every field in one ``_LINE`` match, about half of a line's
cost; ``report`` of a day reads 86,400 of them. Here the line is matched with the looser
``USUAL_SHAPE`` (as ``parse``'s JSON route does) and each field's text is checked with
``is_usual`` once, when first met: checked texts are kept with what they read as, so a repeated
text costs one lookup. A line whose fields all pass is one that ``_LINE`` matches, split into the
same fields (the parser's comment at USUAL_SHAPE says why), and it is read by the parser's own
field readers, so its Sample is the one ``parse_line`` gives. Any other line gives None and the
caller parses it: MTS, JetPack 7's now/max temperatures, ANSI colours, CPU entries not
understood, and a line past the decoder's caps (so no ``cap_sample`` is needed here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jtop_roof.formats.jsonout import USUAL_LINE_CHARS, split_rest
from jtop_roof.formats.parser import (
    USUAL_SHAPE,
    is_usual,
    merge_gpu,
    rail_reading,
    read_cpus,
    read_engines,
    read_field,
    read_rails,
    read_temps,
    remember,
    temp_pair,
)
from jtop_roof.model.codec import MAX_CORES, MAX_GPCS, MAX_NAMED
from jtop_roof.model.records import CpuCore, Rail, Sample

# Texts that passed ``is_usual``, with what they read as. A field's kind follows from the word
# USUAL_SHAPE makes it start with (RAM, SWAP, IRAM, EMC, GR3D), so one cache holds them all.
_checked_fields: dict[str, Any] = {}  # "RAM 6879/62841MB (lfb 3x4MB)" -> Memory
_checked_runs: dict[str, bool] = {}  # engine runs: "NVENC off ... APE 174" -> True
_checked_temps: dict[str, tuple[str, float | None]] = {}  # "cpu@47.6C" -> ("cpu", 47.6)
_checked_rail_names: dict[str, bool] = {}  # "VDD_IN" -> True
_checked_rails: dict[str, Rail] = {}  # "2801mW/2801mW" -> Rail


class _Unusual(Exception):
    """A text that is not in the usual form: the line takes ``parse_line``."""


def usual_sample(line: str, place: Callable[[str | None], tuple[float | None, float]]) -> Sample | None:
    """``parse_line(line)`` timed by ``place(stamp)`` (``Timeline.place``: called once, last), or
    None for a line this route does not take (``place`` was not called)."""
    if "\x1b" in line or len(line) > USUAL_LINE_CHARS:
        return None
    raw = line.rstrip("\r\n")
    m = USUAL_SHAPE.fullmatch(raw)
    if m is None:
        return None
    stamp, ram, swap, iram, cpu, emc, gpu, gpu2, rest = m.groups()
    try:
        sample = _read(raw, stamp, ram, swap, iram, cpu, emc, gpu, gpu2, rest)
    except _Unusual:
        return None
    sample.t_wall, sample.t_mono = place(stamp)
    return sample


def _read(raw: str, stamp: str | None, ram: str, swap: str | None, iram: str | None, cpu: str,
          emc: str | None, gpu: str | None, gpu2: str | None, rest: str | None) -> Sample:
    unknown: list[str] = []
    cpus: list[CpuCore | None] = read_cpus(cpu, None, unknown)
    if unknown or len(cpus) > MAX_CORES:  # _LINE keeps them, or refuses a CPU field with a blank
        raise _Unusual
    gpu_value = None
    if gpu is not None:
        gpu_value = _field("gpu", gpu)
        if gpu2 is not None:
            _field("gpu", gpu2)
            gpu_value = merge_gpu(gpu_value, gpu2)
        if len(gpu_value.gpc_mhz) > MAX_GPCS:
            raise _Unusual
    engines = temps = rails = None
    if rest is not None:
        engines, temps, rails = split_rest(rest.rstrip(" "))
    return Sample(
        raw=raw,
        ram=_field("ram", ram),
        swap=None if swap is None else _field("swap", swap),
        iram=None if iram is None else _field("iram", iram),
        cpus=cpus,
        gpu=gpu_value,
        emc=None if emc is None else _field("emc", emc),
        engines={} if engines is None else _engines(engines),
        temps_c={} if temps is None else _temps(temps),
        temps_max_c={},  # now/max temperatures are not usual
        rails={} if rails is None else _rails(rails),
        stamp=stamp,
        unknown=unknown,
    )


def _field(kind: str, text: str) -> Any:
    value = _checked_fields.get(text)
    if value is None:
        if not is_usual(kind, text):
            raise _Unusual
        value = remember(_checked_fields, text, read_field(kind, text))
    return value


def _engines(run: str) -> dict[str, Any]:
    if run not in _checked_runs:
        if not is_usual("engines", run):
            raise _Unusual
        remember(_checked_runs, run, True)
    engines = read_engines(run)
    if len(engines) > MAX_NAMED:
        raise _Unusual
    return engines


def _learn(checked: dict[str, Any], kind: str, tokens: list[str], read: Callable[[str], Any]) -> None:
    """Each token not met before checked once (``is_usual``; _Unusual for one this route cannot
    vouch for) and kept with what it reads as (``remember``: the cache stays bounded)."""
    for token in tokens:
        if token not in checked:
            if not is_usual(kind, token):
                raise _Unusual
            remember(checked, token, read(token))


def _temps(run: str) -> dict[str, float | None]:
    tokens = run.split(" ")
    try:
        temps = dict(map(_checked_temps.__getitem__, tokens))
    except KeyError:
        _learn(_checked_temps, "temp", tokens, temp_pair)
        temps = dict(map(temp_pair, tokens))
    if len(temps) != len(tokens):  # a zone named twice: the parser numbers them
        temps = read_temps(run)[0]
    if len(temps) > MAX_NAMED:
        raise _Unusual
    return temps


def _rails(run: str) -> dict[str, Rail]:
    tokens = run.split(" ")
    if len(tokens) % 2:  # a rail is a name and its reading
        raise _Unusual
    names, readings = tokens[0::2], tokens[1::2]
    if not all(map(_checked_rail_names.__contains__, names)):
        _learn(_checked_rail_names, "rail_name", names, lambda _: True)
    try:
        rails = dict(zip(names, map(_checked_rails.__getitem__, readings), strict=True))
    except KeyError:
        _learn(_checked_rails, "rail_reading", readings, rail_reading)
        rails = dict(zip(names, map(rail_reading, readings), strict=True))
    if len(rails) != len(names):  # a rail named twice (AGX Orin's NC): the parser numbers them
        rails = read_rails(run)
    if len(rails) > MAX_NAMED:
        raise _Unusual
    return rails
