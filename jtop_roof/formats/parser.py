"""Parse one tegrastats line into a ``Sample``.

Token based, not positional: field order differs between boards and releases (SWAP after CPU on
some TX2 builds, NVENC between power rails, TK1's GR3D after its engines), so a master regex with
one named alternative per field walks the line and each match is dispatched on its name. Whatever
no alternative recognises is kept verbatim in ``Sample.unknown`` and the rest of the line is still
read. A line is a sample when it has a RAM or a CPU field; anything else (a ``date`` header, a
blank line) gives ``Sample(is_sample=False, raw=...)``.

Units and engines are read by their grammar, not by the shapes seen so far, since boards print
shapes no capture shows: ``NAME_FREQ`` or ``NAME_LOAD`` followed by ``N%``, ``@N``, ``N%@N``,
``N%@[N,N...]`` or ``@[N,N...]`` (or ``off``) is a load and clock wherever it appears. EMC and
GR3D are the memory controller and the GPU (``EMC_FREQ @3199`` is a clock with no load), any other
name an engine (``NVENC_LOAD 7%``). The engine names tegrastats prints without a suffix (``NVENC
off``, ``APE 174``, TK1's ``VDE 120``) are known by name.

Speed matters (a 24 h log at 1 Hz is 86,400 lines; sub-second intervals give more), so:

* a line in the usual field order with single spaces is matched in one go by ``_LINE``, built
  from the same field patterns; only other lines take the token walk (``_TOKEN``). Both read
  each field with the same functions, so they agree (the tests check this on every real line);
* runs of like tokens (all temperatures, all rails, all engines) are one match, split in C;
* text that repeats from line to line (CPU entries, temperature and rail readings, engine runs,
  RAM/SWAP/EMC/GPU fields) is read once: its frozen model objects are cached and shared between
  samples, and a hit builds the sample's own list or dict in C (``dict(zip(...))``, ``list(map(...))``).
  Every sample still gets its own lists and dicts, which sources fill in place.
"""

from __future__ import annotations

import re
from re import Match, Pattern
from typing import Any, TypeVar

from jtop_roof.model.records import Clocked, CpuCore, Engine, Gpu, Iram, Memory, Rail, Sample

# Digit runs are bounded so that int() never meets Python's 4300-digit limit on hostile input.
_INT = r"\d{1,12}"
_DEC = r"\d{1,12}(?:\.\d{1,12})?"
_GPC_LIST = rf"{_INT}(?:,{_INT})*"

# A unit's reading: N% | @N | N%@N | N%@[N,N...] | @[N,N...] (load and clock or per-GPC clocks).
_CLOCKS = rf"@(?:{_INT}|\[{_GPC_LIST}\])"
_UNIT = rf"(?:{_INT}%(?:{_CLOCKS})?|{_CLOCKS})"
# Engines that tegrastats prints without a _FREQ/_LOAD suffix. A name may carry an instance number
# (NVENC0, NVJPG1, NVDLA0, PVA0); the suffix is not part of the stored name (VIC_FREQ -> VIC).
_ENGINE_NAMES = "APE|VIC|NVENC|NVDEC|NVJPG|OFA|NVDLA|PVA|MSENC|AVP|VDE"
# NVENC off | VIC 36%@115 | APE 174 | NVENC0_FREQ @0 | NVENC_LOAD 7% | VIC_FREQ 5%@[115,230]
_ENGINE = rf"(?:{_ENGINE_NAMES})\d?(?:_FREQ|_LOAD)?\s+(?:off|{_UNIT}|{_INT})"
# cpu@52.5C | CV0@-256C (sensor off) | JetPack 7: cpu@52.968C/52.968C (current/max)
_NAME = r"[A-Za-z][A-Za-z0-9_]*"
# A line's stamp, in the forms standard tools print before a tegrastats line (model.timeline reads
# them): tegrastats --logfile's MM-DD-YYYY HH:MM:SS; YYYY-MM-DD HH:MM:SS[.fff] (date "+%F %T",
# python logging's ,fff); ISO 8601 with T, a fraction and an offset or Z where written (date
# -Iseconds, date -Ins); epoch seconds (date +%s, %s.%N, awk's strftime("%s")).
_STAMP_TEXT = (
    r"(?:\d\d-\d\d-\d{4} \d\d:\d\d:\d\d"
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d(?::?\d\d)?)?"
    r"|\d{1,11}(?:\.\d{1,9})?)"
)
_TEMP_NOW = rf"{_NAME}@-?{_DEC}C"
_TEMP = rf"{_TEMP_NOW}(?:/-?{_DEC}C)?"
# VDD_IN 5000mW/5000mW | POM_5V_IN 1234/1234 (mW) | JetPack 7: now/avg/peak
_RAIL_READING = rf"{_INT}(?:mW)?/{_INT}(?:mW)?(?:/{_INT}(?:mW)?)?"
_RAIL = rf"{_NAME}\s+{_RAIL_READING}"
# One pattern per field; its groups are the values read by _field_value / _read_*.
_FIELDS = {
    # RAM 4321/62801MB (lfb 1759x4MB); the lfb size comes in kB too (TX2: 1x512kB)
    "ram": rf"RAM\s+({_INT})/({_INT})MB(?:\s+\(lfb\s+({_INT})x({_INT})([kM])B\))?",
    "swap": rf"SWAP\s+({_INT})/({_INT})MB(?:\s+\(cached\s+({_INT})MB\))?",
    # IRAM 0/252kB(lfb 252kB): no space before "(lfb" in real lines
    "iram": rf"IRAM\s+({_INT})/({_INT})kB(?:\s*\(lfb\s+({_INT})kB\))?",
    # CPU [3%@729,off,...]; the entries are read one by one
    "cpu": r"CPU\s+\[([^\]\s]*)\]",
    # EMC_FREQ 0%@2133 | EMC_FREQ 0% (not root) | EMC_FREQ @3199 | TK1: EMC 3%@924
    "emc": rf"EMC(?:_FREQ|_LOAD)?\s+({_UNIT})",
    # GR3D_FREQ 0%@611 | 0%@[305,305] | 0% (not root) | Thor: @[0,0,0] | GR3D_FREQ @611
    # early JetPack 5: GR3D2_FREQ 0%@114 (the second GPC) | TK1: GR3D 0%@252
    "gpu": rf"GR3D(2)?(?:_FREQ|_LOAD)?\s+({_UNIT})",
    "engines": rf"{_ENGINE}(?:\s+{_ENGINE})*",
    "temps": rf"{_TEMP}(?:\s+{_TEMP})*",
    "rails": rf"{_RAIL}(?:\s+{_RAIL})*",
    # MTS fg 0% bg 0% (Denver cores: TX2, Xavier)
    "mts": rf"MTS\s+fg\s+({_INT})%\s+bg\s+({_INT})%",
    # TK1: cpu [25%,7%,1%,1%]@2218 (one clock for every core), EDP limit 0
    "tk1cpu": rf"cpu\s+\[([^\]\s]*)\]@({_INT})",
    "edp": rf"EDP\s+limit\s+({_INT})",
    # Any other NAME_FREQ/NAME_LOAD with a unit's reading is an engine (EMC and GR3D are above).
    # Last, and not in the one-match line: a name no board we know prints takes the token walk.
    "units": rf"(?!(?:EMC|GR3D2?)_(?:FREQ|LOAD)\s)[A-Z][A-Z0-9_]*_(?:FREQ|LOAD)\s+(?:off|{_UNIT})",
}
_FIELD_RE = {kind: re.compile(pattern, re.ASCII) for kind, pattern in _FIELDS.items()}


def _plain(pattern: str) -> str:
    """The pattern with its capturing groups made non-capturing (escaped parentheses stay)."""
    return re.sub(r"(?<!\\)\((?!\?)", "(?:", pattern)


# The token walk: each alternative starts with a literal or a class (quick rejection by the regex
# engine) and ends at whitespace; its empty named group at the end names the match (lastgroup).
_TOKEN = re.compile(
    "|".join(rf"{_plain(pattern)}(?!\S)(?P<{kind}>)" for kind, pattern in _FIELDS.items())
    + r"|(?P<unknown>\S+)",
    re.ASCII,
)


def _tight(pattern: str) -> str:
    """The pattern with the single spaces tegrastats prints instead of whitespace runs (cheaper)."""
    return _plain(pattern).replace(r"\s+", " ").replace(r"\s*", " ?")


# A line as tegrastats prints it: the usual field order, one space between tokens (all real lines
# but TK1's). Fields are named groups (_LINE_GROUPS, in order); any other line takes the token walk.
_LINE = re.compile(
    rf" ?(?P<ram>{_tight(_FIELDS['ram'])})"
    rf"(?: (?P<swap>{_tight(_FIELDS['swap'])}))?"
    rf"(?: (?P<iram>{_tight(_FIELDS['iram'])}))?"
    r" CPU \[(?P<cpu>[^\]\s]*)\]"
    rf"(?: (?P<emc>{_tight(_FIELDS['emc'])}))?"
    rf"(?: (?P<gpu>{_tight(_FIELDS['gpu'])}))?"
    rf"(?: (?P<gpu2>{_tight(_FIELDS['gpu'])}))?"
    rf"(?: (?P<engines>{_tight(_FIELDS['engines'])}))?"
    rf"(?: (?P<mts>{_tight(_FIELDS['mts'])}))?"
    rf"(?: (?P<temps>{_tight(_FIELDS['temps'])}))?"
    rf"(?: (?P<rails>{_tight(_FIELDS['rails'])}))?"
    r" *",
    re.ASCII,
)
_LINE_GROUPS = ("ram", "swap", "iram", "cpu", "emc", "gpu", "gpu2", "engines", "mts", "temps", "rails")

# The usual line's shape: the same fields in the same order, their readings looser ([^ ]+ and the
# like), cheaper to match: the regex engine's cost grows with groups, alternatives and repeated
# groups, so the engines, temperatures and rails, last, are one group, ``rest``, which the reader
# splits with string searches: temperatures start at the first token of a name and an @ (engine
# readings have a % or nothing before theirs), rails at the first / where no temperature is (engine
# readings have none), and the temperatures end at the last @. A reader that checks each field's text
# with ``is_usual`` (once per distinct text: it caches by text) reads what _LINE would: each
# field starts with a word no other field has (RAM, SWAP, IRAM, CPU, EMC, GR3D, an engine's name),
# a temperature is one token with an @ and a C, a rail two tokens with a /; so a line whose fields
# each pass is one _LINE matches, split into the same fields. (MTS and "now/max" temperatures
# do not pass: the Sample route reads them.)
# Public, with the field readers below (read_field, cpu_core, temp_pair, rail_reading, read_engines),
# for ``jsonout.line_json``, which reads a line's fields straight to JSON; ``_parse`` reads _LINE's
# match into a Sample. Groups, in order (``Match.groups()``): stamp ram swap iram cpu emc gpu gpu2 rest.
USUAL_SHAPE = re.compile(
    rf"(?:\s*(?P<stamp>{_STAMP_TEXT})(?!\S))?"  # as STAMP (a line in the usual order starts with RAM)
    r" ?(?P<ram>RAM [^ ]+(?: \(lfb [^ )]+\))?)"
    r"(?: (?P<swap>SWAP [^ ]+(?: \(cached [^ )]+\))?))?"
    r"(?: (?P<iram>IRAM [^ (]+(?: ?\(lfb [^ )]+\))?))?"
    r" CPU \[(?P<cpu>[^\]]*)\]"
    r"(?: (?P<emc>EMC[^ ]* [^ ]+))?"
    r"(?: (?P<gpu>GR3D[^ ]* [^ ]+))?"
    r"(?: (?P<gpu2>GR3D[^ ]* [^ ]+))?"
    r"(?: (?P<rest>(?s:.*)))?"  # all the rest, in one step (a newline in it fails its reader's check)
    r" *[\r\n]*",  # the line's end as read: what _parse's rstrip("\r\n") leaves out
    re.ASCII,
)
# Each field as _LINE reads it (single spaces), one temperature (without a maximum: JetPack 7's
# "now/max" reads into two members, so it takes the Sample route), one rail's reading.
_USUAL_FORM = {
    **{kind: re.compile(_tight(_FIELDS[kind]), re.ASCII)
       for kind in ("ram", "swap", "iram", "emc", "gpu", "engines")},
    "temp": re.compile(_TEMP_NOW, re.ASCII),  # maximum temperatures take the Sample route
    "rail_name": re.compile(_NAME, re.ASCII),
    "rail_reading": re.compile(_RAIL_READING, re.ASCII),
}


def is_usual(kind: str, text: str) -> bool:
    """Whether ``text`` is a whole ``kind`` field (or a temperature, ``temp``, a rail's name,
    ``rail_name``, or its reading, ``rail_reading``) as _LINE reads it."""
    return _USUAL_FORM[kind].fullmatch(text) is not None


#: A line's leading stamp (after optional blanks); group 1 is the stamp.
STAMP = re.compile(rf"\s*({_STAMP_TEXT})(?!\S)", re.ASCII)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_CPU_ENTRY = re.compile(rf"({_INT})%(?:@({_INT}))?", re.ASCII)

_SENSOR_OFF = -256.0  # tegrastats prints -256C for a zone whose sensor is unavailable
_UNREAD = CpuCore(None, None)  # a CPU entry not understood (never cached: it goes to unknown)

# What text that repeats from line to line reads as, keyed on the exact text. Model objects here
# are frozen, so samples share them. Each cache is cleared when full, so a live stream stays bounded.
_CACHE_LIMIT = 16384
_CACHE_KEY_CHARS = 256  # real texts are far shorter (an engine run: under 130)
_cpu_cores: dict[str, CpuCore | None] = {}  # "5%@729" -> CpuCore; "off" -> None
_temp_pairs: dict[str, tuple[str, float | None]] = {}  # "cpu@47.6C" -> ("cpu", 47.6), for dict() of a run
# "cpu@52.9C/53.1C" -> ("cpu", 52.9, 53.1)
_temp_values: dict[str, tuple[str, float | None, float | None]] = {}
_rail_readings: dict[str, Rail] = {}  # "2801mW/2801mW" -> Rail
# "NVENC off ... APE 174" -> (((name, Engine), ...), whether a name repeats)
_engine_runs: dict[str, tuple[tuple[tuple[str, Engine], ...], bool]] = {}
_fields: dict[str, Any] = {}  # "RAM 6879/62841MB (lfb 3x4MB)" -> Memory, etc.


def stamp_of(line: str) -> str | None:
    """The leading stamp of a line (any form of _STAMP_TEXT), without parsing the rest (replay seek).
    ANSI colour codes before the stamp are not looked through: captured logs have none there."""
    match = STAMP.match(line)
    return match.group(1) if match else None


def parse_line(line: str) -> Sample:
    """One tegrastats line -> Sample. Pure and never raises: a line that is not a sample gives
    ``Sample(is_sample=False, raw=line)``; tokens not understood go to ``sample.unknown``."""
    try:
        return _parse(line)
    except Exception:  # a parser bug must not stop a live monitor; the tests call _parse
        raw = line.rstrip("\r\n") if isinstance(line, str) else line
        return Sample(is_sample=False, raw=raw, unknown=[raw])


def _parse(line: str, *, walk: bool = False) -> Sample:
    """``walk=True`` skips the one-match fast path (the tests compare both)."""
    raw = line.rstrip("\r\n")
    text = _ANSI.sub("", raw) if "\x1b" in raw else raw
    stamp = None
    pos = 0
    m = STAMP.match(text)
    if m is not None:
        stamp = m.group(1)
        pos = m.end()
    m = None if walk else _LINE.fullmatch(text, pos)
    if m is None:
        return _walk(raw, text, pos, stamp)

    ram, swap, iram, cpu, emc, gpu, gpu2, engines, mts, temps, rails = m.group(*_LINE_GROUPS)
    get = _fields.get
    unknown: list[str] = []
    temps_c, temps_max_c = read_temps(temps) if temps is not None else ({}, {})
    engine_map = read_engines(engines) if engines is not None else {}
    if mts is not None:
        _add_mts(engine_map, mts)
    gpu_value = None
    if gpu is not None:
        gpu_value = get(gpu) or _field_value("gpu", gpu)
        if gpu2 is not None:
            gpu_value = merge_gpu(gpu_value, gpu2)
    return Sample(
        raw=raw,
        ram=get(ram) or _field_value("ram", ram),
        swap=None if swap is None else (get(swap) or _field_value("swap", swap)),
        iram=None if iram is None else (get(iram) or _field_value("iram", iram)),
        cpus=read_cpus(cpu, None, unknown),
        gpu=gpu_value,
        emc=None if emc is None else (get(emc) or _field_value("emc", emc)),
        engines=engine_map,
        temps_c=temps_c,
        temps_max_c=temps_max_c,
        rails=read_rails(rails) if rails is not None else {},
        stamp=stamp,
        unknown=unknown,
    )


def _walk(raw: str, text: str, pos: int, stamp: str | None) -> Sample:
    """The token walk for lines in another order, with unknown tokens, or not samples at all."""
    ram = swap = iram = cpus = gpu = emc = None
    engines: dict[str, Engine] = {}
    temps: dict[str, float | None] = {}
    temps_max: dict[str, float] = {}
    rails: dict[str, Rail] = {}
    unknown: list[str] = []
    temp_counts: dict[str, int] = {}  # suffixes given to repeated names
    rail_counts: dict[str, int] = {}
    engine_counts: dict[str, int] = {}
    get = _fields.get
    for m in _TOKEN.finditer(text, pos):
        kind = m.lastgroup
        field = m.group()
        if kind == "unknown":
            unknown.append(field)
        elif kind == "temps":
            more, more_max = read_temps(field)
            for name, celsius in more.items():
                key = _put(temps, temp_counts, name, celsius)
                if name in more_max:
                    temps_max[key] = more_max[name]
        elif kind == "rails":
            for name, rail in read_rails(field).items():
                _put(rails, rail_counts, name, rail)
        elif kind == "engines" or kind == "units":
            for name, engine in _engine_run(field)[0]:
                _add_engine(engines, engine_counts, name, engine)
        elif kind == "cpu":
            cpus = read_cpus(field[field.index("[") + 1 : -1], None, unknown)
        elif kind == "ram":
            ram = get(field) or _field_value(kind, field)
        elif kind == "swap":
            swap = get(field) or _field_value(kind, field)
        elif kind == "iram":
            iram = get(field) or _field_value(kind, field)
        elif kind == "emc":
            emc = get(field) or _field_value(kind, field)
        elif kind == "gpu":
            gpu = merge_gpu(gpu, field)
        elif kind == "mts":
            _add_mts(engines, field)
        elif kind == "tk1cpu":
            entries, mhz = _matched(_FIELD_RE["tk1cpu"], field).groups()
            cpus = read_cpus(entries, int(mhz), unknown)
        else:  # edp
            engines["EDP_LIMIT"] = Engine(None, int(_matched(_FIELD_RE["edp"], field).group(1)))

    if ram is None and cpus is None:
        return Sample(is_sample=False, raw=raw, stamp=stamp)
    return Sample(
        raw=raw,
        ram=ram,
        swap=swap,
        iram=iram,
        cpus=cpus,
        gpu=gpu,
        emc=emc,
        engines=engines,
        temps_c=temps,
        temps_max_c=temps_max,
        rails=rails,
        stamp=stamp,
        unknown=unknown,
    )


# --- field readers (shared by both paths) ------------------------------------------------------


V = TypeVar("V")


def _matched(pattern: Pattern[str], text: str) -> Match[str]:
    """The match of text the tokenizer has already checked against this field's form."""
    m = pattern.fullmatch(text)
    assert m is not None, text
    return m


def remember(cache: dict[str, V], key: str, value: V) -> V:
    """``value``, kept under ``key`` in a cache bounded as the parser's are (``_CACHE_LIMIT``)."""
    if len(key) > _CACHE_KEY_CHARS:  # a hostile text is read each time, never kept
        return value
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value
    return value


def _put(target: dict[str, V], counts: dict[str, int], name: str, value: V) -> str:
    """Store under ``name``, or, for a name printed again (AGX Orin's two ``NC`` rails), under
    ``NC_2``, ``NC_3``...; ``counts`` remembers the last suffix so that hostile lines repeating one
    name thousands of times stay linear. Returns the key used."""
    if name in target:
        n = counts.get(name, 1)
        while True:
            n += 1
            key = f"{name}_{n}"
            if key not in target:
                break
        counts[name] = n
        name = key
    target[name] = value
    return name


def read_field(kind: str, text: str) -> Any:
    """The model object of a RAM/SWAP/IRAM/EMC/GPU field's text, as the fast path reads it (cached)."""
    return _fields.get(text) or _field_value(kind, text)


def _field_value(kind: str, text: str) -> Any:
    """The model object of a RAM/SWAP/IRAM/EMC/GPU field, cached by the field's text: a Memory,
    Iram, Clocked or Gpu as ``kind`` says (Any: the kind, a string, decides the type)."""
    groups = _matched(_FIELD_RE[kind], text).groups()
    if kind == "ram":
        used, total, count, size, unit = groups
        value: Memory | Iram | Clocked | Gpu = Memory(
            float(used),
            float(total),
            None,
            None if count is None else int(count),
            None if size is None else float(size) * (1024.0 if unit == "M" else 1.0),
        )
    elif kind == "swap":
        used, total, cached = groups
        value = Memory(float(used), float(total), None if cached is None else float(cached))
    elif kind == "iram":
        used, total, lfb = groups
        value = Iram(float(used), float(total), None if lfb is None else float(lfb))
    elif kind == "emc":
        load, clocks = _unit(groups[0])
        value = Clocked(load, max(clocks) if clocks else None)
    else:  # gpu; the GR3D2 group is told apart by merge_gpu
        value = Gpu(*_unit(groups[1]))
    return remember(_fields, text, value)


def _unit(text: str) -> tuple[float | None, tuple[int, ...]]:
    """``5%@[611,611]`` -> (5.0, (611, 611)); ``@3199`` -> (None, (3199,)); ``7%`` -> (7.0, ()).
    The regex has checked the form."""
    load, _, clocks = text.partition("@")
    gpc = tuple(map(int, clocks.strip("[]").split(","))) if clocks else ()
    return (float(load[:-1]) if load else None), gpc


def merge_gpu(gpu: Gpu | None, text: str) -> Gpu:
    """Early JetPack 5 prints the second GPC as its own field (GR3D2_FREQ): one more GPC clock;
    the load stays the first field's when it has one. Any other GPU field replaces ``gpu``."""
    value: Gpu = _fields.get(text) or _field_value("gpu", text)
    if gpu is not None and text.startswith("GR3D2"):
        load = gpu.load_pct if gpu.load_pct is not None else value.load_pct
        return Gpu(load, gpu.gpc_mhz + value.gpc_mhz)
    return value


def _add_mts(engines: dict[str, Engine], text: str) -> None:
    fg, bg = _matched(_FIELD_RE["mts"], text).groups()
    engines["MTS_FG"] = Engine(float(fg))
    engines["MTS_BG"] = Engine(float(bg))


def read_cpus(text: str, shared_mhz: int | None, unknown: list[str]) -> list[CpuCore | None]:
    """Entries of ``CPU [...]``; ``off`` stays ``None`` so every core keeps its index. TK1 gives
    one clock for all cores (``shared_mhz``)."""
    if not text:
        return []
    entries = text.split(",")
    if shared_mhz is None:
        try:  # every entry seen before: the usual case, one C-level pass
            return list(map(_cpu_cores.__getitem__, entries))
        except KeyError:
            pass
    cores = [cpu_core(entry, unknown) for entry in entries]
    if shared_mhz is None:
        return cores
    return [None if core is None else CpuCore(core.load_pct, shared_mhz) for core in cores]


def cpu_core(entry: str, unknown: list[str]) -> CpuCore | None:
    """``5%@729`` -> CpuCore(5.0, 729), ``off`` -> None; an entry not understood goes to
    ``unknown`` and its core is kept with no values, so that the cores after it keep their index."""
    if entry in _cpu_cores:
        return _cpu_cores[entry]
    if entry == "off":
        return remember(_cpu_cores, entry, None)
    m = _CPU_ENTRY.fullmatch(entry)
    if m is None:
        if entry:  # an empty entry ("[5%@729,]") has nothing to keep
            unknown.append(entry)
        return _UNREAD
    load, mhz = m.groups()
    return remember(_cpu_cores, entry, CpuCore(float(load), None if mhz is None else int(mhz)))


def read_temps(run: str) -> tuple[dict[str, float | None], dict[str, float]]:
    """A run of ``name@valueC`` -> ({name: celsius or None}, {name: max}); names lower-cased."""
    tokens = run.split()
    if "/" not in run:  # no max readings (all but JetPack 7): build the dict in C
        try:
            temps = dict(map(_temp_pairs.__getitem__, tokens))
        except KeyError:
            temps = dict(map(temp_pair, tokens))
        if len(temps) == len(tokens):
            return temps, {}
    values = [_temp_values.get(t) or remember(_temp_values, t, _temp_value(t)) for t in tokens]
    temps = {name: celsius for name, celsius, _ in values}
    if len(temps) == len(values):
        return temps, {name: top for name, _, top in values if top is not None}
    temps = {}
    temps_max = {}
    counts: dict[str, int] = {}
    for name, celsius, top in values:
        key = _put(temps, counts, name, celsius)
        if top is not None:
            temps_max[key] = top
    return temps, temps_max


def temp_pair(token: str) -> tuple[str, float | None]:
    name, celsius, _ = _temp_value(token)
    return _temp_pairs.get(token) or remember(_temp_pairs, token, (name, celsius))


def _temp_value(token: str) -> tuple[str, float | None, float | None]:
    """``CPU@44.5C`` -> ("cpu", 44.5, None); ``cpu@52.9C/53.1C`` -> ("cpu", 52.9, 53.1);
    ``-256C`` (sensor off) -> None. The regex has checked the form."""
    name, _, reading = token.partition("@")
    now, _, top = reading.partition("/")
    celsius = float(now[:-1])
    return (name.lower(), None if celsius == _SENSOR_OFF else celsius, float(top[:-1]) if top else None)


def read_rails(run: str) -> dict[str, Rail]:
    """A run of ``NAME now/avg[/peak]`` (mW, with or without the unit) -> {name: Rail}. Idle
    boards repeat most readings, so they are cached like the other fields."""
    tokens = run.split()
    names = tokens[0::2]
    readings = tokens[1::2]
    try:  # every reading seen before: build the dict in C
        rails = dict(zip(names, map(_rail_readings.__getitem__, readings), strict=True))
    except KeyError:
        rails = dict(zip(names, map(rail_reading, readings), strict=True))
    if len(rails) == len(names):
        return rails
    rails = {}  # a name printed again (AGX Orin's two NC rails)
    counts: dict[str, int] = {}
    for name, reading in zip(names, readings, strict=True):
        _put(rails, counts, name, rail_reading(reading))
    return rails


def rail_reading(reading: str) -> Rail:
    rail = _rail_readings.get(reading)
    if rail is None:
        now, _, rest = reading.replace("mW", "").partition("/")
        avg, _, peak = rest.partition("/")
        rail = Rail(float(now), float(avg), float(peak) if peak else None)
        remember(_rail_readings, reading, rail)
    return rail


def read_engines(run: str) -> dict[str, Engine]:
    items, repeats = _engine_runs.get(run) or _engine_run(run)
    if not repeats:
        return dict(items)
    engines: dict[str, Engine] = {}
    counts: dict[str, int] = {}
    for name, engine in items:
        _add_engine(engines, counts, name, engine)
    return engines


def _engine_run(run: str) -> tuple[tuple[tuple[str, Engine], ...], bool]:
    """((name, Engine) per engine, whether a name repeats) of a run of engine tokens (pairs of
    name and reading, as the regex has checked)."""
    cached = _engine_runs.get(run)
    if cached is not None:
        return cached
    tokens = run.split()
    items = []
    for token, reading in zip(tokens[0::2], tokens[1::2], strict=True):
        name, suffix = token, ""
        if token.endswith(("_FREQ", "_LOAD")):
            name, suffix = token[:-5], token[-4:]
        if reading == "off":
            engine = Engine(None, None, True)
        elif reading.isdigit():  # APE 174: a clock, unless the name says load
            engine = Engine(float(reading), None) if suffix == "LOAD" else Engine(None, int(reading))
        else:
            load, clocks = _unit(reading)
            engine = Engine(load, max(clocks) if clocks else None)
        items.append((name, engine))
    repeats = len({name for name, _ in items}) != len(items)
    return remember(_engine_runs, run, (tuple(items), repeats))


def _add_engine(engines: dict[str, Engine], counts: dict[str, int], name: str, engine: Engine) -> None:
    """An engine printed twice, once with its load (NVENC_LOAD 7%) and once with its clock
    (NVENC_FREQ @716), is one engine; any other repeat is kept apart (``_put``)."""
    seen = engines.get(name)
    if (
        seen is not None
        and not seen.off
        and not engine.off
        and (seen.load_pct is None) != (engine.load_pct is None)
        and (seen.mhz is None) != (engine.mhz is None)
        and (seen.load_pct is None) == (engine.mhz is None)
    ):
        engines[name] = Engine(
            seen.load_pct if seen.load_pct is not None else engine.load_pct,
            seen.mhz if seen.mhz is not None else engine.mhz,
        )
        return
    _put(engines, counts, name, engine)
