"""Source selection and construction shared by the TUI and `record`."""

import threading

import pytest

from jtop_roof.model.records import Event
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.session import HOST_HINT, SessionError, make_source, resolve_source_kind

LINE = (
    "RAM 534/3964MB (lfb 98x4MB) SWAP 5/1982MB (cached 1MB) CPU [16%@204,9%@204,0%@204,0%@204] "
    "EMC_FREQ 0%@204 GR3D_FREQ 0%@76 APE 25 PLL@34C CPU@36.5C PMIC@100C GPU@36C AO@39.5C "
    "thermal@36.25C POM_5V_IN 1022/1022 POM_5V_GPU 0/0 POM_5V_CPU 204/204\n"
)  # Jetson Nano, JetPack 4 (DataDog datadog-agent jetson_test.go nanoSample)


def fake_tegrastats_dir(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "tegrastats"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    return bin_dir


def test_auto_picks_tegrastats_when_on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_tegrastats_dir(tmp_path)))
    assert resolve_source_kind(Config(), None) == ("tegrastats", None)


def test_auto_behind_sudo_needs_tegrastats_itself(tmp_path, monkeypatch):
    bin_dir = fake_tegrastats_dir(tmp_path)
    (bin_dir / "tegrastats").unlink()
    sudo = bin_dir / "sudo"
    sudo.write_text("#!/bin/sh\nexit 0\n")
    sudo.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    config = Config(tegrastats_command=("sudo", "-n", "tegrastats"))
    assert resolve_source_kind(config, None) == ("host", HOST_HINT)


def test_auto_falls_back_to_host_with_a_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    kind, hint = resolve_source_kind(Config(), None)
    assert kind == "host" and "--source demo" in hint


def test_explicit_source_and_replay_win(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_tegrastats_dir(tmp_path)))
    assert resolve_source_kind(Config(source="demo"), None) == ("demo", None)
    assert resolve_source_kind(Config(), "x.log") == ("replay", None)


@pytest.mark.parametrize("name", ["missing.log", "."])
def test_replay_of_something_unreadable_is_a_session_error(tmp_path, name):
    with pytest.raises(SessionError, match="cannot replay"):
        make_source(Config(), "replay", str(tmp_path / name))


def test_bad_zone_is_a_session_error(tmp_path):
    with pytest.raises(SessionError):
        make_source(Config(tz="Nowhere/Bad"), "demo", None)


def test_interactive_replay_waits_at_its_end_for_a_seek(tmp_path):
    log = tmp_path / "nano.log"
    log.write_text(LINE * 3)
    source = make_source(Config(speed=64, interval_ms=10), "replay", str(log), interactive=True)
    got = []
    ended = threading.Event()

    def consume():
        for record in source.records():
            got.append(record)
            if isinstance(record, Event) and record.detail == "end of replay":
                source.seek_to("start")
        ended.set()

    worker = threading.Thread(target=consume)
    worker.start()
    try:
        # it does not end by itself: a seek back at the end plays the samples again
        deadline = 200
        while sum(1 for r in got if getattr(r, "kind", None) == "seek") < 1 and deadline:
            ended.wait(0.05)
            deadline -= 1
        assert not ended.is_set()
        assert any(getattr(r, "kind", None) == "seek" for r in got)
    finally:
        source.stop()
        worker.join(timeout=10)
    assert ended.is_set()


def test_headless_replay_ends_at_its_end(tmp_path):
    log = tmp_path / "nano.log"
    log.write_text(LINE * 3)
    source = make_source(Config(speed=64, interval_ms=10), "replay", str(log))
    assert sum(1 for r in source.records() if getattr(r, "ram", None)) == 3


def test_explicit_tegrastats_that_is_missing_is_a_session_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SessionError, match="not found on PATH"):
        make_source(Config(source="tegrastats"), "tegrastats", None)


def test_anonymize_leaves_who_and_where_out_of_the_header(tmp_path):
    from jtop_roof.runtime.config import Config, load_config
    from jtop_roof.runtime.session import build_header
    from jtop_roof.sources.demo import DemoSource

    source = DemoSource()
    try:
        plain = build_header(source, Config())
        private = build_header(source, Config(anonymize=True))
    finally:
        source.stop()
    assert {"host", "command"} <= set(plain)
    assert not {"host", "command", "tegrastats_command", "ssh_host"} & set(private)
    assert not any(isinstance(v, str) and v.startswith("/") for v in private.values())
    assert private["model"] == plain["model"] and private["interval_ms"] == plain["interval_ms"]
    config_file = tmp_path / "config.yaml"
    config_file.write_text("anonymize: true\n")
    assert load_config(config_file).anonymize is True
