"""``jroof-tui serve``: the live metrics as a Prometheus ``/metrics`` endpoint, headless.

A source runs in a thread through the runtime's pump into a ``Pipeline`` (the same analysis as the
monitor, ``record`` and ``report``: phases, energy, the throttle detectors); the metrics subscribe to
it and keep the latest values after each sample as one snapshot, and a small ``http.server`` in
another thread renders it on ``GET /metrics`` through the official ``prometheus_client`` library
(its metric families and text exposition). Nothing else is served: any other path is 404, any
other method 405; a request line is at most 8 KiB and the whole head (request line and headers)
16 KiB (431 past it: a client's memory here never grows with what it sends), a body is refused;
connections wait in a backlog of 128 to be accepted; a connection has 10 s for
everything (a client trickling its header is cut off), at most 64 are open and 16 answers are
rendered at once (idle clients hold no answer slot). A full server makes room for a new connection
by closing the one that has waited longest without sending a whole request, so clients that
trickle and reconnect cannot hold every slot; a connection being answered is never closed.

It listens on loopback only (``127.0.0.1:9101``) unless the user names another address, and then it
says on stderr that anyone who can reach it can read the metrics. SIGINT and SIGTERM stop it; after
a replay ends it keeps serving the last values until then.

Metrics (Prometheus conventions: base units, ratios 0-1, ``_total`` counters; a value the board does
not report is absent, never 0; which board a series is from is Prometheus's target label, as
docs/fleet/prometheus.yml sets it, not this exporter's):

- ``jroof_info{device,model,power_mode,source,version}`` 1 (unknown values are empty strings), with
  ``board="NAME"`` when ``--board`` is given (printable UTF-8 text; the command refuses others)
- ``jroof_samples_total``; ``jroof_sample_timestamp_seconds`` (unix time of the latest sample)
- ``jroof_cpu_load_ratio{core}``, ``jroof_cpu_clock_hertz{core}`` (online cores)
- ``jroof_gpu_load_ratio``, ``jroof_gpu_clock_hertz``; ``jroof_emc_load_ratio``, ``jroof_emc_clock_hertz``
- ``jroof_engine_load_ratio{engine}``, ``jroof_engine_clock_hertz{engine}`` (engines not ``off``)
- ``jroof_memory_used_bytes{kind}``, ``jroof_memory_total_bytes{kind}`` (``ram``, ``swap``; tegrastats'
  MB are MiB)
- ``jroof_rail_power_watts{rail}`` (rails as tegrastats names them, e.g. ``VDD_CPU_GPU_CV``; never
  the rail that measures the whole input, so that a sum over rails means something),
  ``jroof_input_power_watts`` (the total input, ``model.total_power``)
- ``jroof_energy_joules_total{rail}`` (the same rails), ``jroof_input_energy_joules_total``: energy
  since ``serve`` started (a replay starts at 0 and grows with playback), the ledger's trapezoid,
  gaps not bridged
- ``jroof_temperature_celsius{zone}`` (zones in lower case, e.g. ``tj``; sensors that are off: absent)
- ``jroof_fan_speed_ratio{fan}`` (the pwm-fan's duty, ``pwm1`` / 255) and ``jroof_fan_speed_rpm{fan}``
  (its tachometer, where one is read); absent without a readable fan
- ``jroof_throttle_active{unit,reason}`` 0 or 1 for ``unit`` in gpu/emc/cpu (those the board
  reports) and every throttle ``reason`` of ``detectors.REASON_CODES``: the evidence (``thermal``,
  ``power``, ``over_current``, NVML's ``hw_slowdown``, ``board_limit``, ``reliability``, ``other``),
  else ``below_cap`` (held below the known mode's cap while busy)
- ``jroof_mode_cap_active{unit}`` 0 or 1: below the device's maximum while busy with the power mode
  unknown (information, not a throttle)
- ``jroof_M_seconds_total{unit}`` (and ``jroof_M_active{unit}``) of each event kind declaring a metric
  ``M`` (``model.event_kinds``): ``throttle``, ``mode_cap`` (the mode-unknown ones)
- ``jroof_throttled_seconds_total``: seconds inside a throttle of any unit, the union (the report's
  ``throttled_s`` of the whole run)
- ``jroof_phase_info{name}`` 1 while a phase is open
- ``jroof_assumption_info{what,value,source,note}`` 1 per item of ``analysis.assumptions``: what the
  device, power mode, throttle detection and energy rest on (``source``: measured, given, assumed,
  inferred, or empty where nothing says), the text literal (escaped by the client; in every label
  value a control, format or bidi character as its escape, ``\\x1b``: ``model.jsonsafe.shown_text``)

Gauges hold the latest sample's instantaneous values, never an average. The text is Prometheus's
0.0.4 format, or OpenMetrics when the scraper's Accept asks for it; gzip when it accepts that; HEAD
answers the headers alone. Nothing here imports Textual.
"""

from __future__ import annotations

import gzip
import http.client
import io
import math
import signal
import socket
import socketserver
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as OPENMETRICS_CONTENT_TYPE
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest
from prometheus_client.registry import Collector, CollectorRegistry

from jtop_roof import __version__
from jtop_roof.analysis.assumptions import Sourced, sourced_items
from jtop_roof.analysis.detectors import REASON_CODES
from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.model.event_kinds import EVENT_KINDS
from jtop_roof.model.jsonsafe import shown_text
from jtop_roof.model.metrics import for_terminal
from jtop_roof.model.records import Record, Sample
from jtop_roof.outputs.listen import DEFAULT_HOST as DEFAULT_HOST
from jtop_roof.outputs.listen import DEFAULT_PORT as DEFAULT_PORT
from jtop_roof.outputs.listen import ServeError as ServeError
from jtop_roof.outputs.listen import is_loopback as is_loopback
from jtop_roof.outputs.listen import parse_listen as parse_listen
from jtop_roof.outputs.slots import ConnectionSlots
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.lifecycle import Consumer, Outcome
from jtop_roof.runtime.runtime import start_runtime
from jtop_roof.sources.base import Source

CONTENT_TYPE = CONTENT_TYPE_LATEST
MAX_REQUEST_LINE = 8192
#: The whole request head, request line and headers together: http.server alone takes 100 lines of
#: 64 KiB each (6.4 MiB a connection).
MAX_HEAD_BYTES = 16384
#: Connections the kernel holds until they are accepted (``listen``): a burst of connections
#: waits there instead of timing out a scrape.
BACKLOG = 128
#: Connections at once, reading their request or being answered; a new one past them takes the
#: slot of the one idle longest (no whole request yet), or is closed when every one is answered.
MAX_CONNECTIONS = 64
#: Answers rendered at once; a request that finds them all taken is answered 503.
MAX_CONCURRENT = 16
#: The whole request, from the connection to the last byte of the answer, has this long: a client
#: that trickles its header a byte at a time is cut off, and holds no answer slot meanwhile.
REQUEST_DEADLINE_S = 10.0
MIB = 1024 * 1024
#: The reason of a mode-cap event: information, not a throttle (a gauge of its own).
MODE_UNKNOWN = "mode_unknown"
#: Signals that stop serving (a hangup does not: ``serve`` runs under systemd or ``nohup``).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


# ------------------------------------------------------------------------------------ metrics


@dataclass(frozen=True)
class Snapshot:
    """What ``/metrics`` shows: the latest sample and the pipeline's state after it."""

    sample: Sample | None = None
    samples: int = 0
    info: Mapping[str, str] = field(default_factory=dict)
    energy_j: float | None = None
    rails_j: Mapping[str, float] = field(default_factory=dict)
    active: frozenset[tuple[str, str]] = frozenset()  # (unit, reason code) of the open events
    throttle_s: Mapping[tuple[str, str], float] = field(default_factory=dict)  # (unit, kind) -> seconds
    phase: str | None = None
    #: Seconds of the whole run inside a throttle of any unit (the union: report's ``throttled_s``).
    throttled_s: float | None = None
    #: What the board, mode, throttle detection and energy rest on (``analysis.assumptions``).
    sourced: tuple[Sourced, ...] = ()
    active_kinds: frozenset[tuple[str, str]] = frozenset()  # (unit, kind) of the open events


class Metrics:
    """The pipeline's latest state for ``/metrics``: a subscriber of the pipeline (it hears each
    record in the pipeline's thread) whose snapshot is rendered in any thread."""

    def __init__(self, pipeline: Pipeline, *, source_kind: str, board: str | None = None) -> None:
        self.pipeline = pipeline
        self.board = board
        self._source_kind = source_kind
        self._lock = threading.Lock()
        self._samples = 0
        self._snapshot = Snapshot(info=self._info())
        pipeline.subscribe(self)

    @property
    def snapshot(self) -> Snapshot:
        with self._lock:
            return self._snapshot

    def on_record(self, record: Record, *, made_here: bool) -> None:
        if isinstance(record, Sample) and record.is_sample:
            self._samples += 1
            self._publish(record)

    def on_finish(self) -> None:
        """The detectors closed what was open: their time is in the last snapshot."""
        self._publish(self.snapshot.sample)

    def _info(self) -> dict[str, str]:
        board = self.pipeline.board
        info = self.pipeline.info
        return {"device": "" if board.device is None else board.device.id, "model": info.model or "",
                "power_mode": board.mode_name or "", "source": self._source_kind, "version": __version__}

    def _publish(self, sample: Sample | None) -> None:
        pipeline = self.pipeline
        whole = pipeline.ledger.whole
        open_events = [event for event in pipeline.active_events() if event.unit is not None]
        active = frozenset((event.unit or "", reason) for event in open_events for reason in event.reasons)
        snapshot = Snapshot(sample, self._samples, self._info(), whole.energy_j, dict(whole.rails_j),
                            active, pipeline.clock_events.totals(open_events), pipeline.ledger.current_phase,
                            pipeline.throttled_s(whole), sourced_items(pipeline),
                            frozenset((event.unit or "", event.kind) for event in open_events))
        with self._lock:
            self._snapshot = snapshot


class _Families:
    """Metric families for one scrape, built with the official client library's types."""

    def __init__(self) -> None:
        self.families: list[Metric] = []

    def add(self, name: str, kind: str, help_text: str,
            series: Iterable[tuple[Mapping[str, str], float | None]]) -> None:
        """One family; a value that is None or not finite is left out, and a family left empty too."""
        rows = [(labels, value) for labels, value in series if value is not None and math.isfinite(value)]
        if not rows:
            return
        label_names = list(rows[0][0])
        family: CounterMetricFamily | GaugeMetricFamily = (
            CounterMetricFamily(name, help_text, labels=label_names) if kind == "counter"
            else GaugeMetricFamily(name, help_text, labels=label_names))
        for labels, value in rows:
            family.add_metric([shown_text(str(labels[key])) for key in label_names], value)
        self.families.append(family)


class _SnapshotCollector(Collector):
    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return self._families


def _ratio(pct: float | None) -> float | None:
    return None if pct is None else pct / 100.0


def _hertz(mhz: float | None) -> float | None:
    return None if mhz is None else mhz * 1e6


def render(snap: Snapshot, board: str | None = None) -> str:
    """The exposition text of a snapshot, Prometheus's 0.0.4 format (names: the module docstring)."""
    return generate_latest(_registry(snap, board)).decode("utf-8")


def exposition(snap: Snapshot, board: str | None, accept: str) -> tuple[bytes, str]:
    """(body, content type): OpenMetrics when ``accept`` asks for it, else the 0.0.4 text."""
    if "application/openmetrics-text" in accept:
        body: bytes = openmetrics_latest(_registry(snap, board))  # type: ignore[no-untyped-call]
        return body, OPENMETRICS_CONTENT_TYPE
    return render(snap, board).encode("utf-8"), CONTENT_TYPE


def _registry(snap: Snapshot, board: str | None) -> CollectorRegistry:
    out = _Families()
    s = snap.sample
    identity = dict(snap.info) if board is None else {"board": board, **snap.info}
    out.add("jroof_info", "gauge", "Board, device, model, power mode, source and jroof version (always 1).",
            [(identity, 1.0)])
    out.add("jroof_assumption_info", "gauge",
            "What a number rests on (always 1): its value, and source measured, given, assumed or inferred.",
            [({"what": i.what, "value": i.value or "", "source": i.source or "", "note": i.note}, 1.0)
             for i in snap.sourced])
    out.add("jroof_samples_total", "counter", "Samples taken since serve started.", [({}, snap.samples)])
    if s is not None:
        out.add("jroof_sample_timestamp_seconds", "gauge", "Unix time of the latest sample.",
                [({}, s.t_wall)])
        cores = [(str(n), c) for n, c in enumerate(s.cpus or []) if c is not None]
        out.add("jroof_cpu_load_ratio", "gauge", "CPU core load, 0 to 1.",
                [({"core": n}, _ratio(c.load_pct)) for n, c in cores])
        out.add("jroof_cpu_clock_hertz", "gauge", "CPU core clock.",
                [({"core": n}, _hertz(c.mhz)) for n, c in cores])
        if s.gpu is not None:
            out.add("jroof_gpu_load_ratio", "gauge", "GPU load, 0 to 1.", [({}, _ratio(s.gpu.load_pct))])
            out.add("jroof_gpu_clock_hertz", "gauge", "GPU clock (the highest GPC's).",
                    [({}, _hertz(s.gpu.mhz))])
        if s.emc is not None:
            out.add("jroof_emc_load_ratio", "gauge", "Memory controller load, 0 to 1.",
                    [({}, _ratio(s.emc.load_pct))])
            out.add("jroof_emc_clock_hertz", "gauge", "Memory controller clock.", [({}, _hertz(s.emc.mhz))])
        engines = [(name, e) for name, e in s.engines.items() if not e.off]
        out.add("jroof_engine_load_ratio", "gauge", "Hardware engine load, 0 to 1.",
                [({"engine": name}, _ratio(e.load_pct)) for name, e in engines])
        out.add("jroof_engine_clock_hertz", "gauge", "Hardware engine clock.",
                [({"engine": name}, _hertz(e.mhz)) for name, e in engines])
        memory = [(kind, m) for kind, m in (("ram", s.ram), ("swap", s.swap)) if m is not None]
        out.add("jroof_memory_used_bytes", "gauge", "Memory in use.",
                [({"kind": kind}, m.used_mb * MIB) for kind, m in memory])
        out.add("jroof_memory_total_bytes", "gauge", "Memory size.",
                [({"kind": kind}, m.total_mb * MIB) for kind, m in memory])
        total = s.power_total
        out.add("jroof_rail_power_watts", "gauge", "Instantaneous power per rail (not the input's).",
                [({"rail": name}, rail.now_mw / 1000.0) for name, rail in s.rails.items()
                 if name != _input_rail(s)])
        out.add("jroof_input_power_watts", "gauge", "Instantaneous total input power.",
                [({}, None if total is None else total.mw / 1000.0)])
        out.add("jroof_temperature_celsius", "gauge", "Temperature per thermal zone.",
                [({"zone": zone}, value) for zone, value in s.temps_c.items()])
        fans = (s.fans or {}).items()
        out.add("jroof_fan_speed_ratio", "gauge", "Fan PWM duty, 0 to 1 (hwmon pwm1 / 255).",
                [({"fan": name}, _ratio(fan.speed_pct)) for name, fan in fans])
        out.add("jroof_fan_speed_rpm", "gauge", "Fan speed from its tachometer.",
                [({"fan": name}, fan.rpm) for name, fan in fans])
    out.add("jroof_energy_joules_total", "counter",
            "Energy per rail (not the input's) since serve started (trapezoid).",
            [({"rail": name}, joules) for name, joules in sorted(snap.rails_j.items())
             if s is None or name != _input_rail(s)])
    out.add("jroof_input_energy_joules_total", "counter", "Total input energy since serve started.",
            [({}, snap.energy_j)])
    units: list[str] = []
    if s is not None:
        units = [u for u, present in (("gpu", s.gpu is not None), ("emc", s.emc is not None),
                                      ("cpu", bool(s.cpus))) if present]
    units += sorted({u for u, _ in snap.throttle_s} - set(units))
    out.add("jroof_throttle_active", "gauge", "1 while a clock is held below its cap while busy, per reason.",
            [({"unit": u, "reason": r}, 1.0 if (u, r) in snap.active else 0.0)
             for u in units for r in REASON_CODES if r != MODE_UNKNOWN])
    out.add("jroof_mode_cap_active", "gauge",
            "1 while a clock is below the device's maximum while busy with the power mode unknown.",
            [({"unit": u}, 1.0 if (u, MODE_UNKNOWN) in snap.active else 0.0) for u in units])
    for kind in (k for k in EVENT_KINDS if k.metric):  # each kind's own series (``model.event_kinds``)
        if kind.active_help is not None:
            out.add(f"jroof_{kind.metric}_active", "gauge", kind.active_help,
                    [({"unit": u}, 1.0 if (u, kind.name) in snap.active_kinds else 0.0) for u in units])
        if kind.held:
            out.add(f"jroof_{kind.metric}_seconds_total", "counter", kind.seconds_help,
                    [({"unit": u}, snap.throttle_s.get((u, kind.name), 0.0)) for u in units])
    out.add("jroof_throttled_seconds_total", "counter",
            "Seconds inside a throttle of any unit (the union over units, as the report says it).",
            [({}, snap.throttled_s)])
    if snap.phase is not None:
        out.add("jroof_phase_info", "gauge", "The open phase (1).", [({"name": snap.phase}, 1.0)])
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_SnapshotCollector(out.families))
    return registry


def _input_rail(sample: Sample) -> str | None:
    """The rail that measures the whole input (it is the input power, not one of its parts)."""
    total = sample.power_total
    return None if total is None or total.source not in sample.rails else total.source


# ------------------------------------------------------------------------------------ HTTP


class MetricsServer(ThreadingHTTPServer):
    """``GET /metrics`` only, in a thread of its own. Each connection has ``REQUEST_DEADLINE_S``
    for everything; connections and renders are bounded apart, so idle clients cannot hold the
    answers back, and a full server cuts the connection idle longest for a new one (``slots``),
    so clients that trickle and reconnect cannot hold every connection either."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = BACKLOG

    def __init__(self, metrics: Metrics, host: str, port: int) -> None:
        self.metrics = metrics
        self.render_slots = threading.BoundedSemaphore(MAX_CONCURRENT)
        self.slots: ConnectionSlots[socket.socket] = ConnectionSlots(MAX_CONNECTIONS, _cut)
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._thread: threading.Thread | None = None
        super().__init__((host, port), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind asks DNS for the host's full name: not needed, and slow offline.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server_address[:2]
        return str(host), int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.admit(request):
            self.shutdown_request(request)  # every slot is being answered: the scraper retries
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.leave(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        deadline = threading.Timer(REQUEST_DEADLINE_S, _cut, (request,))
        deadline.daemon = True
        deadline.start()
        try:
            super().process_request_thread(request, client_address)
        finally:
            deadline.cancel()
            self.slots.leave(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left or was cut off mid-request is not news (no traceback on stderr)."""

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="jroof-serve-http", daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join(5.0)
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: MetricsServer
    server_version = "jroof-tui"
    sys_version = ""
    timeout = REQUEST_DEADLINE_S

    raw_requestline: bytes

    def setup(self) -> None:
        super().setup()
        self.rfile = _Head(self.rfile, MAX_HEAD_BYTES)

    def parse_request(self) -> bool:
        if len(self.raw_requestline) > MAX_REQUEST_LINE:
            self.requestline, self.request_version, self.command = "", "HTTP/1.0", ""
            self.send_error(414)
            return False
        if not super().parse_request():
            return False
        self.server.slots.asked(self.request)
        return True

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if urlsplit(self.path).path != "/metrics":
            self._reply(404, b"not found: jroof-tui serves /metrics only\n")
            return
        if self.headers.get("Content-Length", "0").strip() not in ("", "0"):
            self._reply(413, b"a GET has no body\n")
            return
        if not self.server.render_slots.acquire(blocking=False):
            self._reply(503, b"busy: try again on the next scrape\n")
            return
        try:
            metrics = self.server.metrics
            body, content_type = exposition(metrics.snapshot, metrics.board, self.headers.get("Accept", ""))
        finally:
            self.server.render_slots.release()
        encoding = None
        if "gzip" in self.headers.get("Accept-Encoding", ""):
            body, encoding = gzip.compress(body), "gzip"
        self._reply(200, body, content_type, encoding=encoding)

    do_HEAD = do_GET  # noqa: N815 (http.server's name): the headers alone (see _reply)

    def _refuse(self) -> None:
        self._reply(405, b"method not allowed: GET or HEAD /metrics only\n", allow="GET, HEAD")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _refuse  # noqa: N815

    def _reply(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
               allow: str | None = None, encoding: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if encoding is not None:
            self.send_header("Content-Encoding", encoding)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        if allow is not None:
            self.send_header("Allow", allow)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
        pass  # a scrape every 15 s is not news


class _Head(io.BufferedIOBase):
    """A request's input that yields at most ``budget`` bytes: past them the head is too large
    (``LineTooLong``, which http.server answers 431 while reading headers; on the request line
    the connection is closed). Nothing is read ahead beyond what is asked."""

    def __init__(self, raw: io.BufferedIOBase, budget: int) -> None:
        super().__init__()
        self._raw, self._left = raw, budget

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> bytes:
        return self._take(self._raw.readline, size, line=True)

    def read(self, size: int | None = -1) -> bytes:
        return self._take(self._raw.read, size, line=False)

    def _take(self, read: Callable[[int], bytes], size: int | None, *, line: bool) -> bytes:
        if self._left <= 0:
            raise http.client.LineTooLong(f"request head over {MAX_HEAD_BYTES} bytes")
        cap = self._left if size is None or size < 0 else min(size, self._left)
        data = read(cap)
        self._left -= len(data)
        if self._left <= 0 and line and not data.endswith(b"\n"):
            raise http.client.LineTooLong(f"request head over {MAX_HEAD_BYTES} bytes")
        return data

    def close(self) -> None:
        self._raw.close()
        super().close()


# ------------------------------------------------------------------------------------ running


def start_exporter(pipeline: Pipeline, source_kind: str, listen: str, *, board: str | None = None,
                   say: Callable[[str], None] | None = None) -> MetricsServer:
    """``--prometheus=ADDR`` for the monitor and ``record``: serve ``pipeline``'s state (the
    metrics subscribe to it) while its owner feeds it. Raises ServeError or OSError (one line each)."""
    host, port = parse_listen(listen)
    if not is_loopback(host):
        (say or _say)(f"jroof-tui: serving metrics on {_show(host, port)}, beyond this machine: anyone who "
                      "can reach it can read them (no authentication, no TLS)")
    metrics = Metrics(pipeline, source_kind=source_kind, board=board)
    server = MetricsServer(metrics, host, port)
    server.start()
    return server


def run_serve(
    source: Source, config: Config, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
    board: str | None = None, install_signal_handlers: bool = True,
    stop: threading.Event | None = None, on_ready: Callable[[MetricsServer], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> int:
    """Serve until SIGINT/SIGTERM (or ``stop``). Returns 0, 1 when the source fails (a live source
    that cannot run: the metrics would only go stale), 2 when the address cannot be bound."""
    say = say or _say
    stop = stop if stop is not None else threading.Event()
    if not is_loopback(host):
        say(f"jroof-tui: serving metrics on {_show(host, port)}, beyond this machine: anyone who can reach "
            "it can read them (no authentication, no TLS)")
    # Forward only: energy from now, never a replayed file's whole.
    runtime, described = start_runtime(source, config, whole_file=False)
    for note in described.notes:  # an input beside the stream used in part, or not
        say(f"jroof-tui: {note}")
    metrics = Metrics(runtime.pipeline, source_kind=source.kind, board=board)
    try:
        server = MetricsServer(metrics, host, port)
    except OSError as exc:
        source.stop()
        say(f"jroof-tui: error: cannot listen on {_show(host, port)}: {exc.strerror or exc}")
        return 2
    serving = _Serving(runtime.pipeline, server, say, on_ready)
    return runtime.run(serving, stop=stop, signals=STOP_SIGNALS if install_signal_handlers else (),
                       second_interrupt_forces=False, linger=True)


class _Serving(Consumer):
    """``serve``: the metrics listen to the pipeline; the server answers until the stop, after a
    replay's end too (the last values stay); a source that fails ends serving with one line."""

    def __init__(self, pipeline: Pipeline, server: MetricsServer, say: Callable[[str], None],
                 on_ready: Callable[[MetricsServer], None] | None) -> None:
        super().__init__(pipeline)
        self.server, self.say, self.on_ready = server, say, on_ready

    def started(self) -> None:
        self.server.start()
        self.say(f"jroof-tui: metrics on http://{_show(*self.server.address)}/metrics")
        if self.on_ready is not None:
            self.on_ready(self.server)

    def ended(self, outcome: Outcome) -> int:
        if outcome.failed is not None:
            self.say(f"jroof-tui: {outcome.failed}")
            return 1
        return 0

    def close(self) -> bool:
        self.server.close()
        return True


def _cut(request: socket.socket) -> None:
    """The request's time is up: its reads and writes end at once (its thread then finishes)."""
    try:
        request.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed


def _show(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _say(message: str) -> None:
    """One line on stderr, made safe for the terminal (a detail may come from a recording)."""
    try:
        print(for_terminal(message), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
