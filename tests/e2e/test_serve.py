"""``serve``: Prometheus exposition of the live pipeline, on loopback unless told otherwise."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import timezone

import pytest
from factories import HELD, STEP, synthetic_sample
from paths import REPO
from tui_support import ScriptedSource

from jtop_roof.model.records import Marker, Sample
from jtop_roof.outputs import serve as sv
from jtop_roof.runtime.config import Config

ROOT = REPO
COUNT = 30
PHASE = 'bench "x"\n\\y'
ORIN_7W = {"device": "orin-nano-8gb-super", "power_mode": "7W", "model": "Jetson Orin Nano 8GB Super"}


def records() -> list:
    out: list = []
    for i in range(COUNT):
        sample = synthetic_sample(i)
        if i == 10:
            out.append(Marker("phase_start", PHASE, sample.t_wall, sample.t_mono - 0.1, "script"))
        out.append(sample)
    return out


class Served:
    """``run_serve`` in a thread on a free loopback port; ``stop()`` ends it."""

    def __init__(self, source, host: str = "127.0.0.1", board: str | None = None) -> None:
        self.stop_event = threading.Event()
        self.ready = threading.Event()
        self.said: list[str] = []
        self.server = None
        self.status = None

        def ready(server) -> None:
            self.server = server
            self.ready.set()

        def run() -> None:
            self.status = sv.run_serve(source, Config(), host=host, port=0, board=board,
                                       install_signal_handlers=False, stop=self.stop_event,
                                       on_ready=ready, say=self.said.append)
            self.ready.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    @property
    def url(self) -> str:
        host, port = self.server.address
        return f"http://127.0.0.1:{port}/metrics"

    def stop(self) -> int:
        self.stop_event.set()
        self.thread.join(10)
        return self.status


def fetch(url: str, method: str = "GET") -> tuple[int, str, dict]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, reply.read().decode(), dict(reply.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


def parse(text: str) -> dict[str, dict[frozenset, float]]:
    """Our own small reader of the text format (labels unescaped), for exact checks."""
    out: dict[str, dict[frozenset, float]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, labels, i = line, {}, line.find("{")
        if i >= 0:
            name = line[:i]
            j = i + 1
            while line[j] != "}":
                eq = line.index("=", j)
                key = line[j:eq]
                k, value = eq + 2, []
                while line[k] != '"':
                    if line[k] == "\\":
                        value.append({"n": "\n", "\\": "\\", '"': '"'}[line[k + 1]])
                        k += 2
                    else:
                        value.append(line[k])
                        k += 1
                labels[key] = "".join(value)
                j = k + 1
                if line[j] == ",":
                    j += 1
            rest = line[j + 1:].strip()
        else:
            name, rest = line.split(" ", 1)
        out.setdefault(name, {})[frozenset(labels.items())] = float(rest)
    return out


def wait_for_samples(url: str, count: int) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status, text, _ = fetch(url)
        assert status == 200
        if count in parse(text).get("jroof_samples_total", {}).values():
            return text
        time.sleep(0.05)
    raise AssertionError(f"never saw {count} samples")


def trapezoid_j(samples: list[Sample], rail: str) -> float:
    return sum((a.rails[rail].now_mw + b.rails[rail].now_mw) / 2 * (b.t_mono - a.t_mono)
               for a, b in zip(samples, samples[1:], strict=False)) / 1000


def one(metrics: dict, metric: str, **labels) -> float:
    return metrics[metric][frozenset(labels.items())]


def test_metrics_values_escaping_and_throttle():
    served = Served(ScriptedSource(records(), info=ORIN_7W), board='rack "1"')
    try:
        text = wait_for_samples(served.url, COUNT)
        status, _, headers = fetch(served.url)
        assert status == 200 and headers["Content-Type"] == sv.CONTENT_TYPE
    finally:
        assert served.stop() == 0
    m = parse(text)
    board = {"board": 'rack "1"'}
    last = synthetic_sample(COUNT - 1)
    samples = [synthetic_sample(i) for i in range(COUNT)]
    assert one(m, "jroof_info", **board, device="orin-nano-8gb-super", model="Jetson Orin Nano 8GB Super",
               power_mode="7W", source="tegrastats", version=sv.__version__) == 1
    assert one(m, "jroof_gpu_clock_hertz") == last.gpu.mhz * 1e6
    assert one(m, "jroof_gpu_load_ratio") == pytest.approx(0.99)
    assert one(m, "jroof_cpu_clock_hertz", core="0") == 960e6
    assert frozenset({"core": "1"}.items()) not in m["jroof_cpu_load_ratio"]  # offline: absent
    # The input rail is the input power, not one of its parts: a sum over rails means something.
    assert set(m["jroof_rail_power_watts"]) == {frozenset({"rail": "VDD_CPU_GPU_CV"}.items())}
    assert one(m, "jroof_input_power_watts") == last.rails["VDD_IN"].now_mw / 1000
    assert one(m, "jroof_temperature_celsius", zone="tj") == last.temps_c["tj"]
    assert frozenset({"zone": "cv0"}.items()) not in m["jroof_temperature_celsius"]
    assert one(m, "jroof_memory_used_bytes", kind="ram") == last.ram.used_mb * 1024 * 1024
    assert "jroof_memory_used_bytes" in m and frozenset({"kind": "swap"}.items()) \
        not in m["jroof_memory_used_bytes"]
    assert one(m, "jroof_engine_clock_hertz", engine="APE") == 200e6
    # Energy: the trapezoid over every sample, written here.
    assert one(m, "jroof_energy_joules_total", rail="VDD_CPU_GPU_CV") == pytest.approx(
        trapezoid_j(samples, "VDD_CPU_GPU_CV"))
    assert set(m["jroof_energy_joules_total"]) == {frozenset({"rail": "VDD_CPU_GPU_CV"}.items())}
    assert one(m, "jroof_input_energy_joules_total") == pytest.approx(trapezoid_j(samples, "VDD_IN"))
    # The 7W cap is 408 MHz: held at 300 from sample 14 to 21, a closed throttle episode of 3.5 s.
    held = (HELD.stop - 1 - HELD.start) * STEP
    assert one(m, "jroof_throttle_seconds_total", unit="gpu") == pytest.approx(held)
    assert one(m, "jroof_mode_cap_seconds_total", unit="gpu") == 0
    # A closed event: every (unit, reason) is 0, and every reason is there for every unit reported.
    assert set(m["jroof_throttle_active"].values()) == {0}
    assert {(dict(k)["unit"], dict(k)["reason"]) for k in m["jroof_throttle_active"]} \
        == {(u, r) for u in ("gpu", "emc", "cpu") for r in sv.REASON_CODES if r != "mode_unknown"}
    assert set(m["jroof_mode_cap_active"].values()) == {0}
    assert one(m, "jroof_throttle_seconds_total", unit="emc") == 0
    assert one(m, "jroof_phase_info", name=PHASE) == 1
    # The board names the exporter on jroof_info alone (the target label does the rest).
    assert sum("rack" in line for line in text.splitlines() if not line.startswith("#")) == 1
    # Escaping per the exposition format: backslash, quote and line feed.
    assert 'jroof_phase_info{name="bench \\"x\\"\\n\\\\y"} 1.0\n' in text


def test_the_client_librarys_parser_reads_it():
    from prometheus_client import parser
    served = Served(ScriptedSource(records(), info=ORIN_7W))
    try:
        text = wait_for_samples(served.url, COUNT)
    finally:
        served.stop()
    families = {f.name: f for f in parser.text_string_to_metric_families(text)}
    assert families["jroof_energy_joules"].type == "counter"
    assert families["jroof_gpu_clock_hertz"].type == "gauge"
    (phase,) = families["jroof_phase_info"].samples
    assert phase.labels == {"name": PHASE}
    rails = {s.labels["rail"]: s.value for s in families["jroof_rail_power_watts"].samples}
    assert rails == {"VDD_CPU_GPU_CV": 1.029}  # VDD_IN is jroof_input_power_watts


def test_active_throttle_while_held_and_a_live_energy_that_grows():
    held = [synthetic_sample(i) for i in range(10, 20)]  # busy, held from 14 on, not closed yet
    served = Served(ScriptedSource(held, info=ORIN_7W))
    try:
        m = parse(wait_for_samples(served.url, len(held)))
    finally:
        served.stop()
    # The 7W mode is known and nothing else says why: the reason is the mode's cap.
    assert one(m, "jroof_throttle_active", unit="gpu", reason="below_cap") == 1
    assert one(m, "jroof_mode_cap_active", unit="gpu") == 0
    assert frozenset({"unit": "gpu", "reason": "mode_unknown"}.items()) not in m["jroof_throttle_active"]
    assert one(m, "jroof_throttle_active", unit="emc", reason="below_cap") == 0
    assert one(m, "jroof_throttle_seconds_total", unit="gpu") == pytest.approx(5 * STEP)
    assert one(m, "jroof_input_energy_joules_total") == pytest.approx(trapezoid_j(held, "VDD_IN"))
    assert "jroof_phase_info" not in m


def test_only_get_metrics():
    served = Served(ScriptedSource([synthetic_sample(0)], info=ORIN_7W))
    try:
        base = served.url.rsplit("/", 1)[0]
        assert fetch(base + "/")[0] == 404
        assert fetch(base + "/metrics/x")[0] == 404
        assert fetch(base + "/metrics?x=1")[0] == 200
        for method in ("POST", "PUT", "DELETE", "OPTIONS"):
            status, _, headers = fetch(served.url, method)
            assert status == 405 and headers["Allow"] == "GET, HEAD", method
        status, body, headers = fetch(served.url, "HEAD")
        assert status == 200 and body == "" and int(headers["Content-Length"]) > 0
        assert fetch(base + "/" + "a" * (sv.MAX_REQUEST_LINE + 10))[0] == 414
    finally:
        served.stop()


def test_default_is_loopback_and_addresses():
    assert sv.parse_listen(None) == ("127.0.0.1", sv.DEFAULT_PORT)
    assert sv.parse_listen("9200") == ("127.0.0.1", 9200)
    assert sv.parse_listen("[::1]:9200") == ("::1", 9200)
    assert sv.parse_listen("0.0.0.0:9101") == ("0.0.0.0", 9101)
    assert sv.parse_listen("localhost:9101") == ("localhost", 9101)
    for bad in ("::1:9101", ":9101", "host:99999", "host", "[::1]9101", "h:p"):
        with pytest.raises(sv.ServeError) as info:
            sv.parse_listen(bad)
        assert "\n" not in str(info.value)
    assert sv.is_loopback("127.0.0.1") and sv.is_loopback("::1") and sv.is_loopback("127.0.0.2")
    assert sv.is_loopback("localhost")
    assert not sv.is_loopback("0.0.0.0") and not sv.is_loopback("192.0.2.1") and not sv.is_loopback("::")


def test_a_loopback_address_says_nothing_and_a_wider_one_warns():
    quiet = Served(ScriptedSource([synthetic_sample(0)], info=ORIN_7W))
    quiet.stop()
    assert [line for line in quiet.said if "beyond this machine" in line] == []
    assert quiet.server.address[0] == "127.0.0.1"
    wide = Served(ScriptedSource([synthetic_sample(0)], info=ORIN_7W), host="0.0.0.0")
    try:
        assert fetch(wide.url)[0] == 200
    finally:
        wide.stop()
    (warning,) = [line for line in wide.said if "beyond this machine" in line]
    assert warning.startswith("jroof-tui: serving metrics on 0.0.0.0:0, beyond this machine")


def test_an_address_in_use_is_exit_2_in_one_line():
    served = Served(ScriptedSource([synthetic_sample(0)], info=ORIN_7W))
    try:
        said: list[str] = []
        source = ScriptedSource([], info=ORIN_7W)
        status = sv.run_serve(source, Config(), host="127.0.0.1", port=served.server.address[1],
                              install_signal_handlers=False, say=said.append)
        assert status == 2 and said[-1].startswith("jroof-tui: error: cannot listen on 127.0.0.1:")
        assert source.stop_calls >= 1
    finally:
        served.stop()


def test_a_failing_source_ends_serving_with_status_1():
    served = Served(ScriptedSource([synthetic_sample(0)], info=ORIN_7W, fail="tegrastats vanished"))
    served.thread.join(10)
    assert served.status == 1
    assert served.said[-1] == "jroof-tui: source failed: RuntimeError: tegrastats vanished"


SCRIPT = """
import sys
from jtop_roof.runtime.config import Config
from jtop_roof.outputs.serve import run_serve
from jtop_roof.sources.replay import ReplaySource
src = ReplaySource(sys.argv[1], speed=64.0, interval_ms=None, tz="UTC")
sys.exit(run_serve(src, Config(), port=0, on_ready=lambda s: print(s.address[1], flush=True)))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_replay_keeps_serving_after_its_end_until_a_signal(tmp_path, signum):
    from factories import write_synthetic

    from jtop_roof.outputs.compare import file_report

    path = tmp_path / "run.jsonl"
    samples = write_synthetic(path)
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        port = int(proc.stdout.readline())
        url = f"http://127.0.0.1:{port}/metrics"
        m = parse(wait_for_samples(url, len(samples)))
        time.sleep(0.3)
        assert proc.poll() is None  # the replay ended; still serving
        report = file_report(str(path), tz=timezone.utc, interval_s=None)
        whole = report["whole"]["energy_j"]["total"]
        assert one(m, "jroof_input_energy_joules_total") == pytest.approx(whole)
        proc.send_signal(signum)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "metrics on http://127.0.0.1:" in proc.stderr.read()


def test_serve_takes_prometheus_with_or_without_an_address():
    from jtop_roof.commands.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["serve", "--prometheus"]).listen is None  # loopback, the default port
    assert parser.parse_args(["serve", "--prometheus", "[::1]:9200"]).listen == "[::1]:9200"
    assert parser.parse_args(["serve", "--listen", "9200"]).listen == "9200"
    assert parser.parse_args(["--prometheus=9300", "record", "r.jsonl"]).prometheus == "9300"


def test_openmetrics_when_asked_and_gzip_when_accepted():
    import gzip

    served = Served(ScriptedSource([synthetic_sample(i) for i in range(3)], info=ORIN_7W))
    try:
        wait_for_samples(served.url, 3)
        asked = urllib.request.Request(served.url, headers={
            "Accept": "application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
            "Accept-Encoding": "gzip"})
        with urllib.request.urlopen(asked, timeout=5) as reply:
            kind, encoding = reply.headers["Content-Type"], reply.headers["Content-Encoding"]
            raw = reply.read()
    finally:
        served.stop()
    text = gzip.decompress(raw).decode()
    assert kind.startswith("application/openmetrics-text") and encoding == "gzip"
    assert text.endswith("# EOF\n") and "jroof_samples_total 3.0" in text
