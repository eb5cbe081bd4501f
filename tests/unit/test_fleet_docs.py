"""docs/fleet: the Grafana dashboard asks only for what ``serve`` emits; the scrape config and the
systemd user unit are well formed."""

from __future__ import annotations

import configparser
import dataclasses
import json
import re

import pytest
import yaml
from factories import synthetic_sample
from paths import REPO

from jtop_roof.analysis.assumptions import Sourced
from jtop_roof.model.records import Engine, Fan, Memory
from jtop_roof.outputs import serve as sv

FLEET = REPO / "docs" / "fleet"
SELECTOR = re.compile(r"\b(jroof_[A-Za-z0-9_]+)\s*(\{[^}]*\})?")
MATCHER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
LEGEND = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# The unit a panel must show, from what its query measures.
UNIT_BY_SUFFIX = {"_ratio": "percentunit", "_hertz": "hertz", "_watts": "watt", "_celsius": "celsius",
                  "_bytes": "bytes", "_seconds_total": "s",
                  "_timestamp_seconds": "s"}  # as an age: time() - the timestamp


def full_snapshot() -> sv.Snapshot:
    """A snapshot with every family present (as tests/e2e/test_serve.py's samples, plus what they lack)."""
    sample = synthetic_sample(15)
    sample = dataclasses.replace(sample, swap=Memory(10.0, 3810.0),
                                 engines={**sample.engines, "NVENC0": Engine(40.0, 115)},
                                 fans={"pwmfan": Fan(37.6, 2850.0)})
    info = {"device": "orin-nano-8gb-super", "model": "Jetson Orin Nano 8GB Super", "power_mode": "7W",
            "source": "tegrastats", "version": sv.__version__}
    return sv.Snapshot(sample=sample, samples=16, info=info, energy_j=12.0,
                       rails_j={"VDD_IN": 12.0, "VDD_CPU_GPU_CV": 2.0},
                       active=frozenset({("gpu", "thermal")}), throttle_s={("gpu", "throttle"): 3.0},
                       phase="bench", throttled_s=3.0,
                       sourced=(Sourced("power_mode", "7W", "inferred", "from the CPU caps"),))


def target_labels() -> set[str]:
    """The labels Prometheus puts on every series it scrapes from jroof: its own (job, instance)
    and those the scrape config gives each board's target, which must name the board."""
    config = yaml.safe_load((FLEET / "prometheus.yml").read_text(encoding="utf-8"))
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "jroof"]
    given = [set(entry.get("labels", {})) for entry in job["static_configs"]]
    assert given and all("board" in labels for labels in given)
    return {"job", "instance"}.union(*given)


@pytest.fixture(scope="module")
def emitted() -> dict[str, set[str]]:
    """Metric name -> the label names its series carry in Prometheus: ``render``'s with a board,
    and the target labels of the scrape config."""
    text = sv.render(full_snapshot(), board="nano1")
    labels: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, rest = line.partition("{")
            name = name.split()[0]
            found = set(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="', rest.rpartition("}")[0]))
            labels[name] = labels.get(name, set()) | found | target_labels()
    return labels


@pytest.fixture(scope="module")
def dashboard() -> dict:
    return json.loads((FLEET / "grafana-dashboard.json").read_text(encoding="utf-8"))


def panels(dash: dict) -> list[dict]:
    out = []
    for panel in dash["panels"]:
        out.append(panel)
        out += panel.get("panels", [])  # a collapsed row keeps its panels inside
    return out


def queries(dash: dict) -> list[tuple[str, str, str]]:
    """(panel title, expr, legend) of every target."""
    return [(p.get("title", ""), t["expr"], t.get("legendFormat", ""))
            for p in panels(dash) for t in p.get("targets", [])]


def test_the_snapshot_has_every_family_the_docstring_names(emitted):
    documented = set(re.findall(r"``(jroof_[a-z_]+)", sv.__doc__ or ""))
    assert documented and documented <= set(emitted), documented - set(emitted)


def test_dashboard_shape(dashboard):
    assert dashboard["schemaVersion"] >= 36
    assert dashboard["title"] and dashboard["uid"]
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    board = variables["board"]
    query = board["query"]["query"] if isinstance(board["query"], dict) else board["query"]
    assert re.fullmatch(r"label_values\(\s*jroof_info\s*,\s*board\s*\)", query)
    assert board.get("definition", query) == query
    assert board["multi"] and board["includeAll"]
    ids = [p["id"] for p in panels(dashboard)]
    assert len(ids) == len(set(ids))
    for p in panels(dashboard):
        grid = p["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24 and grid["h"] > 0, p["title"]
        if p["type"] != "row":
            assert p.get("targets"), p["title"]


def test_every_query_uses_only_emitted_metrics_and_labels(dashboard, emitted):
    assert queries(dashboard)
    for title, expr, legend in queries(dashboard):
        found = SELECTOR.findall(expr)
        assert found, f"{title}: {expr} names no jroof metric"
        names = {name for name, _ in found}
        assert names <= set(emitted), f"{title}: {names - set(emitted)} is not emitted by serve"
        available = set().union(*(emitted[name] for name in names))
        for name, braces in found:
            used = set(MATCHER.findall(braces))
            assert used <= emitted[name], f"{title}: {name} has no label {used - emitted[name]}"
        grouped = [{g.strip() for g in group.split(",") if g.strip()} for group in GROUPING.findall(expr)]
        for group in grouped:
            assert group <= available, f"{title}: grouping by {group - available}"
        legend_labels = set(LEGEND.findall(legend))
        assert legend_labels <= (grouped[0] if grouped and "by" in expr else available), \
            f"{title}: legend {legend!r} names a label the result lacks"
        assert "$board" in expr, f"{title}: {expr} ignores the board variable"


def expected_unit(expr: str) -> str | None:
    if re.search(r"\brate\(\s*jroof_\w*_joules_total", expr):
        return "watt"
    if re.search(r"\bincrease\(\s*jroof_\w*_joules_total", expr):
        return "joule"
    name = SELECTOR.findall(expr)[0][0]
    return next((unit for suffix, unit in UNIT_BY_SUFFIX.items() if name.endswith(suffix)), None)


def test_units_per_panel(dashboard):
    seen = set()
    for p in panels(dashboard):
        if p["type"] in ("row", "table", "state-timeline"):
            continue
        unit = p["fieldConfig"]["defaults"].get("unit")
        wanted = {expected_unit(t["expr"]) for t in p["targets"]}
        assert wanted == {unit}, f"{p['title']}: unit {unit!r}, queries measure {wanted}"
        seen.add(unit)
    assert {"percentunit", "hertz", "watt", "celsius", "joule"} <= seen


def test_the_panels_the_fleet_needs(dashboard):
    exprs = " ".join(expr for _, expr, _ in queries(dashboard))
    for name in ("jroof_gpu_load_ratio", "jroof_gpu_clock_hertz", "jroof_emc_load_ratio",
                 "jroof_emc_clock_hertz", "jroof_cpu_load_ratio", "jroof_rail_power_watts",
                 "jroof_input_power_watts", "jroof_input_energy_joules_total", "jroof_temperature_celsius",
                 "jroof_throttle_active", "jroof_phase_info", "jroof_info"):
        assert re.search(rf"\b{name}\b", exprs), name
    assert re.search(r"\brate\(\s*jroof_\w*energy_joules_total", exprs)  # the energy rate
    throttle = [legend for _, expr, legend in queries(dashboard) if "jroof_throttle_active" in expr]
    assert throttle and all("{{reason}}" in legend and "{{unit}}" in legend for legend in throttle)
    by_legend = {(expr.split("{")[0], legend) for _, expr, legend in queries(dashboard)}
    assert ("jroof_cpu_load_ratio", "core {{core}}") in by_legend
    assert any(name == "jroof_rail_power_watts" and "{{rail}}" in legend for name, legend in by_legend)
    assert any(name == "jroof_temperature_celsius" and "{{zone}}" in legend for name, legend in by_legend)


def test_prometheus_config():
    config = yaml.safe_load((FLEET / "prometheus.yml").read_text(encoding="utf-8"))
    jobs = config["scrape_configs"]
    targets = [t for job in jobs for static in job.get("static_configs", []) for t in static["targets"]]
    assert len(targets) >= 2
    assert all(str(t).rsplit(":", 1)[1] == str(sv.DEFAULT_PORT) == "9101" for t in targets), targets
    assert all(job.get("metrics_path", "/metrics") == "/metrics" for job in jobs)
    text = (FLEET / "prometheus.yml").read_text(encoding="utf-8")
    assert "--listen 0.0.0.0:9101 --board" in text and "SSH tunnel" in text and "anyone" in text


def test_systemd_user_unit():
    text = (FLEET / "jroof-serve.service").read_text(encoding="utf-8")
    unit = configparser.ConfigParser(strict=False, interpolation=None, comment_prefixes=("#", ";"))
    unit.optionxform = str  # keys are case sensitive
    unit.read_string(text)
    service = unit["Service"]
    exec_start = service["ExecStart"].split()
    assert exec_start[:2] == ["%h/.local/bin/jroof-tui", "serve"] and "--board" in exec_start
    assert "--listen" not in exec_start  # loopback unless the user asks
    assert service["Restart"] == "on-failure"
    assert "User" not in service and not re.search(r"^\s*User\s*=\s*root", text, re.M)
    assert unit["Install"]["WantedBy"] == "default.target"  # a user unit: no multi-user.target
    assert "systemctl --user" in text
