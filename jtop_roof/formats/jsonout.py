"""The lines ``jroof-tui parse`` prints, fast: one JSON object per record, written straight from the
model objects instead of through ``sample_to_json`` and ``json.dumps``.

The text is the same, byte for byte, as ``json_line`` of ``sample_to_json`` (with ``"line"`` for a
line that is not a sample) or of ``record_to_json``: compact separators, UTF-8 text as is, integral
readings as integers, null for NaN and infinities. The tests check this on every real log and on
generated samples.

Where the time goes otherwise is building a dict per sample and walking it in ``json.dumps``. Here
the parser's sharing does the work: it hands out the same frozen objects (a CPU core's
``CpuCore(5.0, 729)``, a rail's reading, a temperature's float) for text that repeats from line to
line, so the JSON text of each such object is made once and kept, by the object's identity, in a
bounded cache that holds the object itself (its identity cannot be reused while it is kept). A hit
is a dict lookup; a whole CPU list, temperature, rail or engine object is joined in C.

``parse`` goes further for a plain log's lines in the usual field order (``line_json``): their
fields' texts become JSON text without a Sample in between (the section "straight from a line's
text" below says how, and which lines it leaves to the Sample).

Anything outside the model's types (a bool or a float subclass where a reading belongs, a key that
is not a string) takes the plain route, ``json_line(sample_to_json(...))``, so the output never
differs; only the speed does. No third-party JSON library is needed: once the dicts are gone, the
encoder is no longer where the time goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from json.encoder import encode_basestring  # C; what ensure_ascii=False uses
from typing import Any, TypeVar

from jtop_roof.formats.parser import (
    USUAL_SHAPE,
    cpu_core,
    is_usual,
    rail_reading,
    read_engines,
    read_field,
    temp_pair,
)
from jtop_roof.model.codec import MAX_CORES, MAX_GPCS, MAX_NAMED, json_line, record_to_json, sample_to_json
from jtop_roof.model.records import (
    Clocked,
    CpuCore,
    Engine,
    Gpu,
    Iram,
    Memory,
    PowerPlan,
    PowerTotal,
    Rail,
    Record,
    Sample,
    power_plan,
)

__all__ = ["clear_caches", "line_json", "parse_line_json", "sample_line"]

_quote: Callable[[str], str] = encode_basestring

#: Entries a cache holds before it is emptied (a live stream or a long log stays bounded), and the
#: longest text it keeps (real ones are under 100 characters, a board's engines under 600): what a
#: hostile file holds is rendered each time, not kept.
CACHE_LIMIT = 16384
CACHE_TEXT_CHARS, ENGINE_SET_CHARS = 512, 4096
ENGINE_SETS_LIMIT = 1024  # whole engine sets: long texts, so fewer of them (4 MB at most)


class _Unusual(Exception):
    """A value outside the model's types: the caller takes the plain route."""


T = TypeVar("T")
K = TypeVar("K")


def _kept(cache: dict[K, T], key: K, value: T, limit: int | None = None) -> T:
    """``value``, kept under ``key``; a full cache is emptied first."""
    if len(cache) >= (CACHE_LIMIT if limit is None else limit):
        cache.clear()
    cache[key] = value
    return value


def _kept_if_short(cache: dict[str, str], key: str, text: str) -> str:
    """``text``, kept only when short (what a hostile file holds is made each time)."""
    return _kept(cache, key, text) if len(text) <= CACHE_TEXT_CHARS else text


class _Cache:
    """JSON text of objects by identity. ``keep`` holds each object, so that its id stays its own
    for as long as its text is here; both are emptied together when full."""

    __slots__ = ("text", "keep")

    def __init__(self) -> None:
        self.text: dict[int, str] = {}
        self.keep: list[object] = []

    def put(self, obj: object, text: str) -> str:
        if len(text) > CACHE_TEXT_CHARS:  # a hostile value: rendered each time, never kept
            return text
        if len(self.text) >= CACHE_LIMIT:
            self.text.clear()
            self.keep.clear()
        self.text[id(obj)] = text
        self.keep.append(obj)
        return text


# --- scalars, exactly as json.dumps prints them ---------------------------------------------------


def _num(value: object) -> str:
    """A reading as ``json.dumps(model._num(value))`` prints it: integral floats as integers, NaN
    and infinities as null (``json_line``)."""
    kind = type(value)
    if kind is float:
        number: float = value  # type: ignore[assignment]
        if number.is_integer():
            return int(number).__repr__()
        if number - number == 0.0:  # finite (inf - inf and NaN give NaN)
            return float.__repr__(number)
        return "null"
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    raise _Unusual


def _scalar(value: object) -> str:
    """Any other value as ``json.dumps`` prints it (``json_line``: non-finite floats as null)."""
    kind = type(value)
    if kind is float:
        number: float = value  # type: ignore[assignment]
        return float.__repr__(number) if number - number == 0.0 else "null"
    if kind is int:
        return int.__repr__(value)
    if kind is str:
        return _quote(value)  # type: ignore[arg-type]
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise _Unusual


# --- the model's objects -------------------------------------------------------------------------

_names: dict[str, str] = {}  # "cpu" -> '"cpu":'


def _name(name: object) -> str:
    if type(name) is not str:
        raise _Unusual
    text = _names.get(name)
    return text if text is not None else _kept_if_short(_names, name, _quote(name) + ":")


def _ram(ram: Memory) -> str:
    return (f'{{"used":{_num(ram.used_mb)},"total":{_num(ram.total_mb)},'
            f'"lfb_count":{_scalar(ram.lfb_count)},"lfb_size_kb":{_num(ram.lfb_size_kb)}}}')


def _swap(swap: Memory) -> str:
    return f'{{"used":{_num(swap.used_mb)},"total":{_num(swap.total_mb)},"cached":{_num(swap.cached_mb)}}}'


def _iram(iram: Iram) -> str:
    return f'{{"used":{_num(iram.used_kb)},"total":{_num(iram.total_kb)},"lfb":{_num(iram.lfb_kb)}}}'


def _cpu(core: CpuCore | None) -> str:
    if core is None:
        return "null"
    return f'{{"load_pct":{_num(core.load_pct)},"mhz":{_scalar(core.mhz)}}}'


def _gpu(gpu: Gpu) -> str:
    clocks = ",".join(map(_scalar, gpu.gpc_mhz))
    return f'{{"load_pct":{_num(gpu.load_pct)},"mhz":{_scalar(gpu.mhz)},"gpc_mhz":[{clocks}]}}'


def _clocked(emc: Clocked) -> str:
    return f'{{"load_pct":{_num(emc.load_pct)},"mhz":{_scalar(emc.mhz)}}}'


def _engine(engine: Engine) -> str:
    if engine.off:
        return '"off"'
    return f'{{"load_pct":{_num(engine.load_pct)},"mhz":{_scalar(engine.mhz)}}}'


def _rail(rail: Rail) -> str:
    if rail.peak_mw is None:
        return f'{{"now":{_num(rail.now_mw)},"avg":{_num(rail.avg_mw)}}}'
    return f'{{"now":{_num(rail.now_mw)},"avg":{_num(rail.avg_mw)},"peak":{_num(rail.peak_mw)}}}'


_ram_cache, _swap_cache, _iram_cache = _Cache(), _Cache(), _Cache()
_cpu_cache, _gpu_cache, _emc_cache = _Cache(), _Cache(), _Cache()


def _one(cache: _Cache, render: Callable[[T], str], obj: T) -> str:
    text = cache.text.get(id(obj))
    return text if text is not None else cache.put(obj, render(obj))


def _list(cache: _Cache, render: Callable[[Any], str], items: list[Any]) -> str:
    """``[...]`` of cached objects: joined in C when every one is cached."""
    try:
        return "[" + ",".join(map(cache.text.__getitem__, map(id, items))) + "]"
    except KeyError:
        return "[" + ",".join([_one(cache, render, item) for item in items]) + "]"


class _Members:
    """``"name":value`` text of an object's members, by the name and the value's identity (the value
    is kept, as in ``_Cache``)."""

    __slots__ = ("text", "keep", "render")

    def __init__(self, render: Callable[[Any], str]) -> None:
        self.text: dict[tuple[str, int], str] = {}
        self.keep: list[object] = []
        self.render = render

    def put(self, name: str, value: object) -> str:
        text = _name(name) + self.render(value)
        if len(text) > CACHE_TEXT_CHARS:
            return text
        if len(self.text) >= CACHE_LIMIT:
            self.text.clear()
            self.keep.clear()
        self.text[name, id(value)] = text
        self.keep.append(value)
        return text

    def encode(self, items: dict[str, Any]) -> str:
        """``{...}``: joined in C when every member is cached."""
        if not items:
            return "{}"
        try:
            members = zip(items, map(id, items.values()), strict=True)
            return "{" + ",".join(map(self.text.__getitem__, members)) + "}"
        except KeyError:
            get = self.text.get
            return "{" + ",".join([get((name, id(value))) or self.put(name, value)
                                   for name, value in items.items()]) + "}"


_temps, _temps_max, _rails = _Members(_num), _Members(_num), _Members(_rail)
_engines = _Members(_engine)
# Engine states change seldom: the whole object, by its names and the identities of its engines.
_engine_sets: dict[tuple[object, ...], str] = {}
_engine_keep: list[object] = []


def _engine_set(engines: dict[str, Engine]) -> str:
    key = (*engines, *map(id, engines.values()))
    text = _engine_sets.get(key)
    if text is None:
        text = _engines.encode(engines)
        if len(text) > ENGINE_SET_CHARS:
            return text
        if len(_engine_sets) >= ENGINE_SETS_LIMIT:
            _engine_sets.clear()
            _engine_keep.clear()
        _engine_sets[key] = text
        _engine_keep.append(tuple(engines.values()))
    return text


def _texts(items: Iterable[object]) -> str:
    return "[" + ",".join(map(_scalar, items)) + "]"


def _sample(sample: Sample, line: bool) -> str:
    ram, swap, iram = sample.ram, sample.swap, sample.iram
    cpus, gpu, emc = sample.cpus, sample.gpu, sample.emc
    engines, temps_max = sample.engines, sample.temps_max_c
    reasons, oc_events, unknown = sample.throttle_reasons, sample.oc_events, sample.unknown
    tail = ""
    if reasons is not None:
        tail = ',"throttle_reasons":' + _texts(reasons)
    if oc_events is not None:
        tail += ',"oc_event_cnt":' + _counts(oc_events)
    if sample.fans is not None or sample.io is not None:  # a live sample's, once a second: plain route
        tail += "," + json_line({key: value for key, value in sample_to_json(sample).items()
                                 if key in ("fans", "io_mb_s")})[1:-2]
    tail += ',"unknown":' + (_texts(unknown) if unknown else "[]")
    if line:
        tail += ',"line":' + _scalar(sample.raw)
    return _layout(
        _scalar(sample.t_wall) if sample.is_sample else _scalar(sample.t_wall) + _NON_SAMPLE,
        "null" if ram is None else _one(_ram_cache, _ram, ram),
        "null" if swap is None else _one(_swap_cache, _swap, swap),
        "" if iram is None else ',"iram_kb":' + _one(_iram_cache, _iram, iram),
        "null" if cpus is None else _list(_cpu_cache, _cpu, cpus),
        "null" if gpu is None else _one(_gpu_cache, _gpu, gpu),
        "null" if emc is None else _one(_emc_cache, _clocked, emc),
        _engine_set(engines) if engines else "{}",
        _temps.encode(sample.temps_c)
        + (',"temps_max_c":' + _temps_max.encode(temps_max) if temps_max else ""),
        _rails.encode(sample.rails),
        _total(sample.power_total),
        tail,
    )


def _layout(t: str, ram: str, swap: str, iram: str, cpu: str, gpu: str, emc: str, engines: str,
            temps: str, rails: str, total: str, tail: str) -> str:
    """A sample's JSON line from its members' texts: the one layout of both routes (``iram`` and
    ``temps``' maximum member come with their own keys, as they are optional)."""
    return (f'{{"t":{t},"ram_mb":{ram},"swap_mb":{swap}{iram},"cpu":{cpu},"gpu":{gpu},"emc":{emc}'
            f',"engines":{engines},"temps_c":{temps},"rails_mw":{rails},"power_total_mw":{total}{tail}}}\n')


_source_tail: dict[str, str] = {}  # "VDD_IN" -> ',"source":"VDD_IN"}'


def _total(total: PowerTotal | None) -> str:
    if total is None:
        return "null"
    tail = _source_tail.get(total.source)
    if tail is None:
        tail = _kept_if_short(_source_tail, total.source, ',"source":' + _scalar(total.source) + "}")
    return '{"value":' + _num(total.mw) + tail


_NON_SAMPLE = ',"non_sample":true'


def _counts(counts: dict[str, int]) -> str:
    return "{" + ",".join([_name(name) + _scalar(count) for name, count in counts.items()]) + "}"


# --- straight from a line's text ---------------------------------------------------------------
#
# ``parse`` needs no Sample for a line in the usual order: each field's text becomes its JSON text,
# made once from the parser's reading of that text (read_field, cpu_core, temp_pair, rail_reading,
# read_engines) with the renderers above, and kept by the text. The line is split by the parser's
# USUAL_SHAPE and each text is checked with ``is_usual`` when first met (the parser's comment there
# says why that reads what its one-match line pattern reads). Lines that need more than one field's
# text to read (a repeated name, GR3D2, MTS, maximum temperatures, ANSI codes, a CPU entry not
# understood) take the Sample route, as do lines past the decoder's caps (more than 256 cores, 64
# rails, zones, engines or GPCs): the reader holds their Sample to the caps and counts what it drops.
# The tests hold both routes to the same text.

_field_text: dict[str, str] = {}  # "RAM 6879/62841MB (lfb 3x4MB)" -> '{"used":6879,...}'
_cpu_text: dict[str, str] = {}  # "5%@729" -> '{"load_pct":5,"mhz":729}'
_temp_text: dict[str, str] = {}  # "cpu@47.6C" -> '"cpu":47.6'
_temp_name: dict[str, str] = {}  # "CPU@47.6C" -> "cpu" (names are lower-cased: "CPU" repeats "cpu")
_rail_of: dict[str, Rail] = {}  # "2801mW/2801mW" -> Rail
_rail_text: dict[tuple[str, str], str] = {}  # ("VDD_IN", "5000mW/5000mW") -> '"VDD_IN":{"now":5000,...}'
_engine_text: dict[str, str] = {}  # "NVENC off ... APE 174" -> '{"NVENC":"off",...}'
# rail names -> (whether they are distinct, which of them make the total)
_rail_plans: dict[tuple[str, ...], tuple[bool, PowerPlan | None]] = {}
_RENDER: dict[str, Callable[[Any], str]] = {"ram": _ram, "swap": _swap, "iram": _iram, "emc": _clocked,
                                             "gpu": _gpu}

#: What the text route takes, in characters (longer goes the Sample route): a line (real ones are
#: under 600), an engine or rail run (under 130), a zone's or a rail's name (under 20). Kept texts
#: stay small whatever a file holds: the caches of whole runs hold fewer entries than the others.
USUAL_LINE_CHARS, RUN_CHARS, NAME_CHARS = 4096, 512, 64
RUN_CACHE_LIMIT = 1024


def _short(text: str, chars: int) -> str:
    if len(text) > chars:
        raise _Unusual
    return text


def _checked(kind: str, text: str) -> str:
    if not is_usual(kind, text):
        raise _Unusual
    return text


def _field(kind: str, text: str) -> str:
    value = read_field(kind, _checked(kind, _short(text, RUN_CHARS)))
    if kind == "gpu" and len(value.gpc_mhz) > MAX_GPCS:
        raise _Unusual
    return _kept(_field_text, text, _RENDER[kind](value))


def _engine_run(run: str) -> str:
    engines = read_engines(_checked("engines", _short(run, RUN_CHARS)))
    if len(engines) > MAX_NAMED:
        raise _Unusual
    return _kept(_engine_text, run, _engines.encode(engines), RUN_CACHE_LIMIT)


def _cpu_entry(entry: str) -> str:
    unknown: list[str] = []
    core = cpu_core(entry, unknown)
    if unknown:  # kept in the sample's "unknown": the Sample route
        raise _Unusual
    return _kept(_cpu_text, entry, _cpu(core))


def _temp(token: str) -> tuple[str, str]:
    name, text = _temp_name.get(token), _temp_text.get(token)
    if name is None or text is None:
        name, celsius = temp_pair(_checked("temp", token))
        _short(name, NAME_CHARS)
        name, text = _kept(_temp_name, token, name), _kept(_temp_text, token, _name(name) + _num(celsius))
    return name, text


def _rail_reading(reading: str) -> Rail:
    rail = _rail_of.get(reading)
    if rail is None:
        rail = _kept(_rail_of, reading, rail_reading(_checked("rail_reading", reading)))
    return rail


def _rail_member(pair: tuple[str, str], rail: Rail) -> str:
    text = _rail_text.get(pair)
    if text is None:
        name = _checked("rail_name", _short(pair[0], NAME_CHARS))
        text = _kept(_rail_text, pair, _name(name) + _rail(rail))
    return text


_NAME_CHAR = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def split_rest(rest: str) -> tuple[str | None, str | None, str | None]:
    """(engines, temperatures, rails) of the text after the GPU field, by the parser's USUAL_SHAPE
    rule; each part is checked by its reader. Temperatures start at the first @ after a name
    character, rails after the last temperature or, without any, at the first token before a /."""
    at = rest.find("@")
    while at == 0 or (at > 0 and rest[at - 1] not in _NAME_CHAR):  # an engine's 5%@115 or @[...]
        at = rest.find("@", at + 1)
    if at > 0:
        start = rest.rfind(" ", 0, at) + 1
        last = rest.rfind("@")
        cut = rest.find(" ", last)
        temps = rest[start:] if cut < 0 else rest[start:cut]
        rails = None if cut < 0 else rest[cut + 1:] or None
    else:
        slash = rest.find("/")
        if slash < 0:
            return rest or None, None, None
        reading = rest.rfind(" ", 0, slash)
        start = rest.rfind(" ", 0, reading) + 1 if reading > 0 else 0
        temps, rails = None, rest[start:]
    return (rest[:start - 1] if start else None), temps, rails  # "" (a space first) is checked out


def line_json(line: str, place: Callable[[str | None], tuple[float | None, float]]) -> str | None:
    """``parse_line_json`` of ``line``'s sample, read straight from the text, timed by
    ``place(stamp)`` (``Timeline.place``: called once, last); None for a line this route does not
    take (the caller parses it; ``place`` was not called)."""
    if "\x1b" in line or len(line) > USUAL_LINE_CHARS:
        return None
    # without its newline, which a last field's [^ ]+ would take in; the shape takes any other end
    end = len(line)
    if line.endswith("\n"):
        end -= 2 if line.endswith("\r\n") else 1
    m = USUAL_SHAPE.fullmatch(line, 0, end)
    if m is None:
        return None
    stamp, ram, swap, iram, cpu, emc, gpu, gpu2, rest = m.groups()
    if gpu2 is not None:
        return None
    engines = temps = rails = None
    if rest is not None:
        engines, temps, rails = split_rest(rest.rstrip(" "))
    field = _field_text.get
    try:
        if not cpu:
            cpu_text = "[]"
        else:
            entries = cpu.split(",")
            if len(entries) > MAX_CORES:
                return None
            try:
                cpu_text = "[" + ",".join(map(_cpu_text.__getitem__, entries)) + "]"
            except KeyError:
                cpu_text = "[" + ",".join([_cpu_text.get(e) or _cpu_entry(e) for e in entries]) + "]"
        if temps is None:
            temps_text = "{}"
        else:
            tokens = temps.split(" ")
            if len(tokens) > MAX_NAMED:
                return None
            try:
                temps_text = "{" + ",".join(map(_temp_text.__getitem__, tokens)) + "}"
                distinct = len(set(map(_temp_name.__getitem__, tokens)))
            except KeyError:
                members = [_temp(token) for token in tokens]
                temps_text = "{" + ",".join([text for _, text in members]) + "}"
                distinct = len({name for name, _ in members})
            if distinct != len(tokens):  # a zone named twice: the Sample route numbers them
                return None
        if rails is None:
            rails_text, total_text = "{}", "null"
        else:
            tokens = rails.split(" ")
            if len(tokens) % 2:  # a rail is a name and its reading
                return None
            names, readings = tuple(tokens[0::2]), tokens[1::2]
            plan = _rail_plans.get(names)
            if plan is None:
                if len(names) > MAX_NAMED:
                    return None
                _short(rails, RUN_CHARS)
                plan = (len(set(names)) == len(names), power_plan(names))
                _kept(_rail_plans, names, plan, RUN_CACHE_LIMIT)
            distinct, power = plan
            if not distinct:  # a rail named twice (AGX Orin's NC): the Sample route numbers them
                return None
            try:
                rail_list = list(map(_rail_of.__getitem__, readings))
            except KeyError:
                rail_list = list(map(_rail_reading, readings))
            pairs = zip(names, readings, strict=True)
            try:
                rails_text = "{" + ",".join(map(_rail_text.__getitem__, pairs)) + "}"
            except KeyError:
                rail_members = map(_rail_member, zip(names, readings, strict=True), rail_list)
                rails_text = "{" + ",".join(rail_members) + "}"
            total_text = "null" if power is None else _total(power.total(rail_list))
        ram_text = field(ram) or _field("ram", ram)
        swap_text = "null" if swap is None else field(swap) or _field("swap", swap)
        iram_text = "" if iram is None else ',"iram_kb":' + (field(iram) or _field("iram", iram))
        gpu_text = "null" if gpu is None else field(gpu) or _field("gpu", gpu)
        emc_text = "null" if emc is None else field(emc) or _field("emc", emc)
        engines_text = "{}" if engines is None else _engine_text.get(engines) or _engine_run(engines)
    except _Unusual:
        return None
    # placed last: from here nothing may decline (a float subclass prints as its float would)
    t_wall = place(stamp)[0]
    t_text = "null" if t_wall is None else _scalar(float(t_wall))
    return _layout(t_text, ram_text, swap_text, iram_text, cpu_text, gpu_text, emc_text, engines_text,
                   temps_text, rails_text, total_text, ',"unknown":[]')


def clear_caches() -> None:
    """Forget every kept text (and let go of the objects kept with it)."""
    for cache in (_ram_cache, _swap_cache, _iram_cache, _cpu_cache, _gpu_cache, _emc_cache,
                  _temps, _temps_max, _rails, _engines):
        cache.text.clear()
        cache.keep.clear()
    _engine_sets.clear()
    _engine_keep.clear()
    _names.clear()
    for texts in (_field_text, _cpu_text, _temp_text, _temp_name, _rail_of, _rail_text, _engine_text,
                  _source_tail, _rail_plans):
        texts.clear()


def sample_line(sample: Sample) -> str:
    """``json_line(sample_to_json(sample))``, faster."""
    try:
        return _sample(sample, False)
    except _Unusual:
        return json_line(sample_to_json(sample))


def parse_line_json(record: Record) -> str:
    """The line ``jroof-tui parse`` prints for a record, with its newline: a sample's JSON object,
    with ``"line"`` (the text as read) for a line that is not a tegrastats sample; a marker's,
    event's, work report's or power reading's recording object."""
    if isinstance(record, Sample):
        line = not record.is_sample
        try:
            return _sample(record, line)
        except _Unusual:
            obj = sample_to_json(record)
            if line:
                obj["line"] = record.raw
            return json_line(obj)
    return json_line(record_to_json(record))
