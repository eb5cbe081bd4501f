"""Parse one tegrastats line into a ``Sample``.

Token based, not positional: field order differs between boards and releases (SWAP after CPU on
some TX2 builds, NVENC between power rails, TK1's GR3D after its engines), so a master regex with
one named alternative per field walks the line and each match is dispatched on its name. Whatever
no alternative recognises is kept verbatim in ``Sample.unknown`` and the rest of the line is still
read. Every accepted form is backed by a real line (research/tegrastats_fields.md, the shared line
corpus and logs). A line is a sample when it has a RAM or a CPU field; anything else (a ``date``
header, a blank line) gives ``Sample(is_sample=False, raw=...)``.

Speed matters (a 24 h log at 1 Hz is 86,400 lines; sub-second intervals give more), so:

* a line in the usual field order with single spaces is matched in one go by ``_LINE``, built
  from the same field patterns; only other lines take the token walk (``_TOKEN``). Both read
  each field with the same functions, so they agree (the tests check this on every real line);
* runs of like tokens (all temperatures, all rails, all engines) are one match, split in C;
* values that repeat from line to line (CPU entries, temperature readings, engine runs,
  RAM/SWAP/EMC/GPU fields) are cached as plain tuples; every sample still gets its own objects.
"""

from __future__ import annotations

import re
from itertools import starmap

from jtop_roof.model import Clocked, CpuCore, Engine, Gpu, Iram, Memory, Rail, Sample

# Digit runs are bounded so that int() never meets Python's 4300-digit limit on hostile input.
_INT = r"\d{1,12}"
_DEC = r"\d{1,12}(?:\.\d{1,12})?"
_GPC_LIST = rf"{_INT}(?:,{_INT})*"

# Engines seen in real lines. A name may carry an instance number (NVENC0, NVJPG1, NVDLA0, PVA0)
# and a _FREQ/_LOAD suffix that is not part of the stored name (VIC_FREQ -> VIC).
_ENGINE_NAMES = "APE|VIC|NVENC|NVDEC|NVJPG|OFA|NVDLA|PVA|MSENC|AVP|VDE"
# NVENC off | VIC 36%@115 | NVENC0_FREQ @0 | VIC_FREQ 729, APE 174, NVENC 716
_ENGINE = rf"(?:{_ENGINE_NAMES})\d?(?:_FREQ|_LOAD)?\s+(?:off|{_INT}%@{_INT}|@{_INT}|{_INT})"
# cpu@52.5C | CV0@-256C (sensor off) | JetPack 7: cpu@52.968C/52.968C (current/max)
_TEMP = rf"[A-Za-z][A-Za-z0-9_]*@-?{_DEC}C(?:/-?{_DEC}C)?"
# VDD_IN 5000mW/5000mW | POM_5V_IN 1234/1234 (mW) | JetPack 7: now/avg/peak
_RAIL = rf"[A-Za-z][A-Za-z0-9_]*\s+{_INT}(?:mW)?/{_INT}(?:mW)?(?:/{_INT}(?:mW)?)?"

# One pattern per field; its groups are the values read by _field_value / _read_*.
_FIELDS = {
    # RAM 4321/62801MB (lfb 1759x4MB); the lfb size comes in kB too (TX2: 1x512kB)
    "ram": rf"RAM\s+({_INT})/({_INT})MB(?:\s+\(lfb\s+({_INT})x({_INT})([kM])B\))?",
    "swap": rf"SWAP\s+({_INT})/({_INT})MB(?:\s+\(cached\s+({_INT})MB\))?",
    # IRAM 0/252kB(lfb 252kB): no space before "(lfb" in real lines
    "iram": rf"IRAM\s+({_INT})/({_INT})kB(?:\s*\(lfb\s+({_INT})kB\))?",
    # CPU [3%@729,off,...]; the entries are read one by one
    "cpu": r"CPU\s+\[([^\]\s]*)\]",
    # EMC_FREQ 0%@2133 | EMC_FREQ 0% (not root) | TK1: EMC 3%@924
    "emc": rf"EMC(?:_FREQ)?\s+({_INT})%(?:@({_INT}))?",
    # GR3D_FREQ 0%@611 | 0%@[305,305] | 0% (not root) | Thor: @[0,0,0]
    # early JetPack 5: GR3D2_FREQ 0%@114 (the second GPC) | TK1: GR3D 0%@252
    "gpu": rf"GR3D(2)?(?:_FREQ)?\s+(?:({_INT})%(?:@(?:\[({_GPC_LIST})\]|({_INT})))?|@\[({_GPC_LIST})\])",
    "engines": rf"{_ENGINE}(?:\s+{_ENGINE})*",
    "temps": rf"{_TEMP}(?:\s+{_TEMP})*",
    "rails": rf"{_RAIL}(?:\s+{_RAIL})*",
    # MTS fg 0% bg 0% (Denver cores: TX2, Xavier)
    "mts": rf"MTS\s+fg\s+({_INT})%\s+bg\s+({_INT})%",
    # TK1: cpu [25%,7%,1%,1%]@2218 (one clock for every core), EDP limit 0
    "tk1cpu": rf"cpu\s+\[([^\]\s]*)\]@({_INT})",
    "edp": rf"EDP\s+limit\s+({_INT})",
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
# but TK1's). Fields are named groups; any other line takes the token walk.
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

_STAMP = re.compile(r"\s*(\d\d-\d\d-\d{4} \d\d:\d\d:\d\d)(?!\S)", re.ASCII)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_CPU_ENTRY = re.compile(rf"({_INT})%(?:@({_INT}))?", re.ASCII)
_ENGINE_ITEM = re.compile(
    rf"({_ENGINE_NAMES})(\d?)(?:_FREQ|_LOAD)?\s+(?:(off)|(\d+)%@(\d+)|@(\d+)|(\d+))", re.ASCII
)

_SENSOR_OFF = -256.0  # tegrastats prints -256C for a zone whose sensor is unavailable
_OFF = (None, -1)  # an ``off`` CPU entry (compared by identity)
_UNREAD = (None, None)  # a CPU entry not understood (never cached)

# Parsed values of text that repeats from line to line, as plain tuples (never model objects).
# Each cache is cleared when full, so a live stream stays bounded.
_CACHE_LIMIT = 16384
_cpu_values: dict[str, tuple] = {}
_temp_values: dict[str, tuple] = {}
_engine_runs: dict[str, tuple] = {}
_field_values: dict[str, tuple] = {}


def stamp_of(line: str) -> str | None:
    """The leading ``MM-DD-YYYY HH:MM:SS`` stamp of a line, without parsing the rest (replay seek).
    ANSI colour codes before the stamp are not looked through: captured logs have none there."""
    match = _STAMP.match(line)
    return match.group(1) if match else None


def parse_line(line: str) -> Sample:
    """One tegrastats line -> Sample. Pure and never raises: a line that is not a sample gives
    ``Sample(is_sample=False, raw=line)``; tokens not understood go to ``sample.unknown``."""
    try:
        return _parse(line)
    except Exception:  # a parser bug must not stop a live monitor; the tests call _parse
        return Sample(is_sample=False, raw=line, unknown=[line])


def _parse(line: str, *, walk: bool = False) -> Sample:
    """``walk=True`` skips the one-match fast path (the tests compare both)."""
    raw = line.rstrip("\r\n")
    text = _ANSI.sub("", raw) if "\x1b" in raw else raw
    stamp = None
    pos = 0
    m = _STAMP.match(text)
    if m is not None:
        stamp = m.group(1)
        pos = m.end()
    m = None if walk else _LINE.fullmatch(text, pos)
    if m is None:
        return _walk(raw, text, pos, stamp)

    ram, swap, iram, cpu, emc, gpu, gpu2, engines, mts, temps, rails = m.group(*_LINE_GROUPS)
    get = _field_values.get
    unknown: list[str] = []
    temps_c, temps_max_c = _read_temps(temps) if temps is not None else ({}, {})
    engine_map = _read_engines(engines) if engines is not None else {}
    if mts is not None:
        _add_mts(engine_map, mts)
    gpu_value = None
    if gpu is not None:
        gpu_value = _merge_gpu(None, get(gpu) or _field_value("gpu", gpu))
        if gpu2 is not None:
            gpu_value = _merge_gpu(gpu_value, get(gpu2) or _field_value("gpu", gpu2))
    return Sample(
        raw=raw,
        ram=Memory(*(get(ram) or _field_value("ram", ram))),
        swap=None if swap is None else Memory(*(get(swap) or _field_value("swap", swap))),
        iram=None if iram is None else Iram(*(get(iram) or _field_value("iram", iram))),
        cpus=_read_cpus(cpu, None, unknown),
        gpu=gpu_value,
        emc=None if emc is None else Clocked(*(get(emc) or _field_value("emc", emc))),
        engines=engine_map,
        temps_c=temps_c,
        temps_max_c=temps_max_c,
        rails=_read_rails(rails) if rails is not None else {},
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
    get = _field_values.get
    for m in _TOKEN.finditer(text, pos):
        kind = m.lastgroup
        field = m.group()
        if kind == "unknown":
            unknown.append(field)
        elif kind == "temps":
            more, more_max = _read_temps(field)
            for name, celsius in more.items():
                key = _put(temps, temp_counts, name, celsius)
                if name in more_max:
                    temps_max[key] = more_max[name]
        elif kind == "rails":
            for name, rail in _read_rails(field).items():
                _put(rails, rail_counts, name, rail)
        elif kind == "engines":
            for name, engine in _read_engines(field).items():
                _put(engines, engine_counts, name, engine)
        elif kind == "cpu":
            cpus = _read_cpus(field[field.index("[") + 1 : -1], None, unknown)
        elif kind == "ram":
            ram = Memory(*(get(field) or _field_value(kind, field)))
        elif kind == "swap":
            swap = Memory(*(get(field) or _field_value(kind, field)))
        elif kind == "iram":
            iram = Iram(*(get(field) or _field_value(kind, field)))
        elif kind == "emc":
            emc = Clocked(*(get(field) or _field_value(kind, field)))
        elif kind == "gpu":
            gpu = _merge_gpu(gpu, get(field) or _field_value(kind, field))
        elif kind == "mts":
            _add_mts(engines, field)
        elif kind == "tk1cpu":
            entries, mhz = _FIELD_RE[kind].fullmatch(field).groups()
            cpus = _read_cpus(entries, int(mhz), unknown)
        else:  # edp
            engines["EDP_LIMIT"] = Engine(None, int(_FIELD_RE[kind].fullmatch(field).group(1)))

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


def _remember(cache: dict[str, tuple], key: str, value: tuple) -> tuple:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value
    return value


def _put(target: dict, counts: dict[str, int], name: str, value: object) -> str:
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


def _field_value(kind: str, text: str) -> tuple:
    """Constructor arguments of a RAM/SWAP/IRAM/EMC field, or (second GPC?, load, clocks) of a
    GPU field; cached by the field's text."""
    groups = _FIELD_RE[kind].fullmatch(text).groups()
    if kind == "ram":
        used, total, count, size, unit = groups
        value: tuple = (
            float(used),
            float(total),
            None,
            None if count is None else int(count),
            None if size is None else float(size) * (1024.0 if unit == "M" else 1.0),
        )
    elif kind == "swap":
        used, total, cached = groups
        value = (float(used), float(total), None if cached is None else float(cached))
    elif kind == "iram":
        used, total, lfb = groups
        value = (float(used), float(total), None if lfb is None else float(lfb))
    elif kind == "emc":
        load, mhz = groups
        value = (float(load), None if mhz is None else int(mhz))
    else:  # gpu
        second, load, clocks, mhz, thor_clocks = groups
        clocks = clocks or thor_clocks
        gpc = tuple(map(int, clocks.split(","))) if clocks else (int(mhz),) if mhz else ()
        value = (bool(second), None if load is None else float(load), gpc)
    return _remember(_field_values, text, value)


def _merge_gpu(gpu: Gpu | None, value: tuple) -> Gpu:
    """Early JetPack 5 prints the second GPC as its own field (GR3D2_FREQ): one more GPC clock;
    the load stays the first field's when it has one."""
    second, load, gpc = value
    if second and gpu is not None:
        return Gpu(gpu.load_pct if gpu.load_pct is not None else load, gpu.gpc_mhz + gpc)
    return Gpu(load, gpc)


def _add_mts(engines: dict[str, Engine], text: str) -> None:
    fg, bg = _FIELD_RE["mts"].fullmatch(text).groups()
    engines["MTS_FG"] = Engine(float(fg))
    engines["MTS_BG"] = Engine(float(bg))


def _read_cpus(text: str, shared_mhz: int | None, unknown: list[str]) -> list[CpuCore | None]:
    """Entries of ``CPU [...]``; ``off`` stays ``None`` so every core keeps its index. TK1 gives
    one clock for all cores (``shared_mhz``)."""
    if not text:
        return []
    entries = text.split(",")
    values = list(map(_cpu_values.get, entries))
    if shared_mhz is None and "off" not in text and None not in values:
        return list(starmap(CpuCore, values))
    values = [_cpu_value(e, unknown) if v is None else v for e, v in zip(entries, values, strict=True)]
    return [
        None if v is _OFF else CpuCore(v[0], v[1] if shared_mhz is None else shared_mhz) for v in values
    ]


def _cpu_value(entry: str, unknown: list[str]) -> tuple:
    """``5%@729`` -> (5.0, 729); an entry not understood goes to ``unknown`` and its core is kept
    with no values, so that the cores after it keep their index."""
    if entry == "off":
        return _remember(_cpu_values, entry, _OFF)
    m = _CPU_ENTRY.fullmatch(entry)
    if m is None:
        if entry:  # an empty entry ("[5%@729,]") has nothing to keep
            unknown.append(entry)
        return _UNREAD
    load, mhz = m.groups()
    return _remember(_cpu_values, entry, (float(load), None if mhz is None else int(mhz)))


def _read_temps(run: str) -> tuple[dict[str, float | None], dict[str, float]]:
    """A run of ``name@valueC`` -> ({name: celsius or None}, {name: max}); names lower-cased."""
    tokens = run.split()
    values = list(map(_temp_values.get, tokens))
    if None in values:
        values = [_temp_value(t) if v is None else v for t, v in zip(tokens, values, strict=True)]
    temps = {name: celsius for name, celsius, _ in values}
    if len(temps) == len(values):
        if "/" not in run:
            return temps, {}
        return temps, {name: top for name, _, top in values if top is not None}
    temps = {}
    temps_max = {}
    counts: dict[str, int] = {}
    for name, celsius, top in values:
        key = _put(temps, counts, name, celsius)
        if top is not None:
            temps_max[key] = top
    return temps, temps_max


def _temp_value(token: str) -> tuple:
    """``CPU@44.5C`` -> ("cpu", 44.5, None); ``cpu@52.9C/53.1C`` -> ("cpu", 52.9, 53.1);
    ``-256C`` (sensor off) -> None. The regex has checked the form."""
    name, _, reading = token.partition("@")
    now, _, top = reading.partition("/")
    celsius = float(now[:-1])
    value = (name.lower(), None if celsius == _SENSOR_OFF else celsius, float(top[:-1]) if top else None)
    return _remember(_temp_values, token, value)


def _read_rails(run: str) -> dict[str, Rail]:
    """A run of ``NAME now/avg[/peak]`` (mW, with or without the unit) -> {name: Rail}. Readings
    vary too much from line to line for a cache to pay."""
    tokens = run.split()
    rails: dict[str, Rail] = {}
    counts: dict[str, int] = {}
    for name, reading in zip(tokens[0::2], tokens[1::2], strict=True):
        now, _, rest = reading.replace("mW", "").partition("/")
        avg, _, peak = rest.partition("/")
        rail = Rail(float(now), float(avg), float(peak) if peak else None)
        if name in rails:
            _put(rails, counts, name, rail)
        else:
            rails[name] = rail
    return rails


def _read_engines(run: str) -> dict[str, Engine]:
    names, args, repeats = _engine_runs.get(run) or _engine_run(run)
    if not repeats:
        return dict(zip(names, starmap(Engine, args), strict=True))
    engines: dict[str, Engine] = {}
    counts: dict[str, int] = {}
    for name, arg in zip(names, args, strict=True):
        _put(engines, counts, name, Engine(*arg))
    return engines


def _engine_run(run: str) -> tuple:
    """(names, (load, MHz, off) per engine, whether a name repeats) of a run of engine tokens."""
    names = []
    args = []
    for name, index, off, load, mhz, at, clock in _ENGINE_ITEM.findall(run):
        names.append(name + index)
        if off:
            args.append((None, None, True))
        elif load:
            args.append((float(load), int(mhz), False))
        else:
            args.append((None, int(at or clock), False))
    return _remember(_engine_runs, run, (tuple(names), tuple(args), len(set(names)) != len(names)))
