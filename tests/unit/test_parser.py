"""Golden tests: the values a person reads off real tegrastats lines (tests/data/tegrastats_lines.txt),
one or more lines per format family, plus a sweep over the whole shared corpus when it is present."""

from __future__ import annotations

import re

import pytest
from paths import OUTSIDE, TESTS

from jtop_roof.formats.parser import _parse, parse_line, stamp_of
from jtop_roof.model.codec import sample_to_json
from jtop_roof.model.records import CpuCore, Engine, Rail

DATA = TESTS / "data" / "tegrastats_lines.txt"
SHARED = OUTSIDE / "shared" / "tegrastats"


def _load_cases() -> dict[str, str]:
    cases: dict[str, str] = {}
    name = None
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            name = line[3:].split("|", 1)[0].strip()
        elif line and not line.startswith("#") and name is not None:
            cases[name] = line
            name = None
    return cases


CASES = _load_cases()


def case(name: str):
    sample = parse_line(CASES[name])
    assert sample.is_sample, name
    assert sample.unknown == [], (name, sample.unknown)
    return sample


def test_every_case_in_the_data_file_is_read():
    assert len(CASES) == 28
    assert all(CASES.values())


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_and_token_walk_agree(name):
    assert _parse(CASES[name]) == _parse(CASES[name], walk=True)


# --- TK1 ------------------------------------------------------------------------------------------


def test_fallback_after_a_parser_bug_strips_the_line_end_like_the_normal_path(monkeypatch):
    def broken(line, **_):
        raise IndexError("parser bug")

    monkeypatch.setattr("jtop_roof.formats.parser._parse", broken)
    sample = parse_line("RAM 1/2MB garbled\r\n")
    assert not sample.is_sample
    assert sample.raw == "RAM 1/2MB garbled" and sample.unknown == ["RAM 1/2MB garbled"]
    assert parse_line("odd line\n").raw == _parse("odd line\n").raw == "odd line"


def test_tk1_grammar():
    s = case("tk1")
    assert (s.ram.used_mb, s.ram.total_mb, s.ram.lfb_count, s.ram.lfb_size_kb) == (714, 1876, 139, 4096)
    assert (s.swap.used_mb, s.swap.total_mb, s.swap.cached_mb) == (0, 2048, 0)
    # cpu [25%,7%,1%,1%]@2218: the clock after the bracket is shared by every core
    assert s.cpus == [CpuCore(25, 2218), CpuCore(7, 2218), CpuCore(1, 2218), CpuCore(1, 2218)]
    assert (s.emc.load_pct, s.emc.mhz) == (3, 924)
    assert (s.gpu.load_pct, s.gpu.mhz, s.gpu.gpc_mhz) == (0, 252, (252,))
    assert s.engines == {
        "AVP": Engine(0, 81),
        "VDE": Engine(None, 120),
        "EDP_LIMIT": Engine(None, 0),
    }
    assert s.temps_c == {} and s.rails == {} and s.power_total is None
    assert s.stamp is None and s.iram is None


# --- TX1 / TX2 ----------------------------------------------------------------------------------------


def test_tx1_iram_and_rails_without_units():
    s = case("tx1")
    assert (s.iram.used_kb, s.iram.total_kb, s.iram.lfb_kb) == (0, 252, 252)
    assert sample_to_json(s)["iram_kb"] == {"used": 0, "total": 252, "lfb": 252}
    assert s.swap is None
    assert [c.mhz for c in s.cpus] == [102] * 4
    assert [c.load_pct for c in s.cpus] == [1, 4, 0, 0]
    assert (s.emc.load_pct, s.emc.mhz) == (7, 408)
    assert s.engines == {"APE": Engine(None, 25)}
    assert s.temps_c["pmic"] == 100 and s.temps_c["tdiode"] == 42.75 and s.temps_c["thermal"] == 38.5
    assert s.rails == {"VDD_IN": Rail(2532, 2698), "VDD_CPU": Rail(76, 178), "VDD_GPU": Rail(19, 19)}
    assert (s.power_total.mw, s.power_total.source) == (2532, "VDD_IN")


def test_tx2_jp3_lfb_in_kb_mts_and_old_rail_names():
    s = case("tx2_jp3")
    assert (s.ram.lfb_count, s.ram.lfb_size_kb) == (1, 512)
    assert s.swap is None
    assert [c.mhz for c in s.cpus] == [2035, 2034, 2034, 2035, 2035, 2035]
    assert (s.gpu.load_pct, s.gpu.gpc_mhz) == (71, (1300,))
    assert s.engines == {"APE": Engine(None, 150), "MTS_FG": Engine(0), "MTS_BG": Engine(0)}
    assert list(s.temps_c) == ["bcpu", "mcpu", "gpu", "pll", "ao", "tboard", "tdiode", "pmic", "thermal"]
    assert list(s.rails) == ["VDD_IN", "VDD_CPU", "VDD_GPU", "VDD_SOC", "VDD_WIFI", "VDD_DDR"]
    assert s.rails["VDD_GPU"] == Rail(6854, 6903)
    assert s.power_total.source == "VDD_IN" and s.power_total.mw == 14025


def test_tx2_offline_denver_cores_keep_their_place():
    s = case("tx2_jp3_off")
    assert s.cpus == [CpuCore(0, 345), None, None, CpuCore(0, 345), CpuCore(0, 345), CpuCore(0, 345)]
    assert sample_to_json(s)["cpu"][1] is None


def test_tx2_jp4_not_root_has_no_clocks():
    s = case("tx2_jp4_nonroot")
    assert (s.emc.load_pct, s.emc.mhz) == (0, None)
    assert (s.gpu.load_pct, s.gpu.mhz, s.gpu.gpc_mhz) == (0, None, ())
    assert s.engines == {}
    assert list(s.rails) == [
        "VDD_SYS_GPU", "VDD_SYS_SOC", "VDD_4V0_WIFI", "VDD_IN", "VDD_SYS_CPU", "VDD_SYS_DDR",
    ]
    assert s.rails["VDD_4V0_WIFI"] == Rail(633, 527)
    assert (s.power_total.mw, s.power_total.source) == (3140, "VDD_IN")


def test_tx2_nx_without_rails_has_no_total_power():
    s = case("tx2_nx_no_rails")
    assert s.rails == {} and s.power_total is None
    assert s.cpus[1] is None and s.cpus[2] is None and s.cpus[0] == CpuCore(3, 345)
    assert s.temps_c == {"pll": 50.5, "mcpu": 50.5, "pmic": 50, "gpu": 50, "bcpu": 50.5, "thermal": 50.3}


# --- Nano ---------------------------------------------------------------------------------------------


def test_nano_engines_between_gpu_and_ape_and_pom_rails():
    s = case("nano_engines")
    assert (s.ram.used_mb, s.ram.total_mb, s.ram.lfb_count, s.ram.lfb_size_kb) == (1180, 3965, 1, 2048)
    assert (s.swap.used_mb, s.swap.cached_mb) == (149, 7)
    assert s.iram.total_kb == 252
    assert (s.emc.load_pct, s.emc.mhz) == (10, 1600)
    assert s.gpu.gpc_mhz == (76,)
    assert s.engines == {"NVENC": Engine(None, 716), "NVDEC": Engine(None, 716), "APE": Engine(None, 25)}
    assert s.rails["POM_5V_IN"] == Rail(4520, 4680)
    # POM_5V_IN already includes the CPU and GPU rails: it is the total, not a sum
    assert (s.power_total.mw, s.power_total.source) == (4520, "POM_5V_IN")


def test_nano_log_line_under_load():
    s = case("nano_log")
    assert [c.load_pct for c in s.cpus] == [72, 12, 8, 26]
    assert (s.gpu.load_pct, s.gpu.mhz) == (42, 76)
    assert s.rails == {
        "POM_5V_IN": Rail(2793, 1750),
        "POM_5V_GPU": Rail(76, 25),
        "POM_5V_CPU": Rail(1222, 604),
    }


# --- Xavier -------------------------------------------------------------------------------------------


def test_agx_xavier_not_root_with_off_cores():
    s = case("agx_xavier_nonroot_off")
    assert s.cpus[:4] == [CpuCore(1, 1190), CpuCore(0, 1190), CpuCore(0, 1190), CpuCore(0, 1190)]
    assert s.cpus[4:] == [None, None, None, None]
    assert (s.gpu.load_pct, s.gpu.mhz) == (4, None)
    assert s.temps_c["iwlwifi"] == 32
    # plain rail names, no board input rail: the total is the labelled sum
    assert list(s.rails) == ["GPU", "CPU", "SOC", "CV", "VDDRQ", "SYS5V"]
    assert s.power_total.mw == 621 + 465 + 1397 + 0 + 0 + 2053
    assert s.power_total.source == "sum(GPU+CPU+SOC+CV+VDDRQ+SYS5V)"


def test_agx_xavier_sudo_engines_and_mts():
    s = case("agx_xavier_sudo")
    assert (s.emc.mhz, s.gpu.mhz) == (665, 114)
    assert s.engines == {"APE": Engine(None, 150), "MTS_FG": Engine(0), "MTS_BG": Engine(0)}


def test_agx_xavier_jp5_units_and_bracketed_clock():
    s = case("agx_xavier_jp5")
    assert s.stamp == "05-06-2024 20:29:45"
    assert (s.gpu.load_pct, s.gpu.gpc_mhz) == (36, (1377,))
    assert s.engines == {"VIC": Engine(None, 1036), "APE": Engine(None, 150)}
    assert s.rails["GPU"] == Rail(5039, 5039) and s.rails["SYS5V"] == Rail(3605, 3605)
    assert s.power_total.source.startswith("sum(")
    assert s.power_total.mw == 5039 + 5342 + 3204 + 0 + 1068 + 3605


def test_xavier_nx_jp4_and_jp5():
    s4 = case("xavier_nx_jp4")
    assert s4.cpus[5] == CpuCore(8, 1267)
    assert (s4.gpu.load_pct, s4.gpu.mhz) == (62, 306)
    assert s4.power_total.source == "VDD_IN" and s4.power_total.mw == 4067
    s5 = case("xavier_nx_jp5")
    assert s5.stamp == "07-09-2024 13:31:31"
    assert s5.gpu.gpc_mhz == (114,)
    assert s5.engines == {"VIC": Engine(None, 115), "APE": Engine(None, 150)}
    assert s5.rails["VDD_IN"] == Rail(2763, 2846)


# --- Orin ---------------------------------------------------------------------------------------------


def test_orin_nx_jp5_scalar_gpu_clock_and_upper_case_sensors():
    s = case("orin_nx_jp5")
    assert s.cpus[4:] == [None] * 4
    assert (s.gpu.load_pct, s.gpu.gpc_mhz, s.gpu.mhz) == (0, (611,), 611)
    assert s.temps_c["cv0"] == 45.812 and s.temps_c["tj"] == 48.875
    assert (s.power_total.mw, s.power_total.source) == (5299, "VDD_IN")


def test_orin_nx_jp6_active_engines():
    s = case("orin_nx_jp6_engines")
    assert s.cpus[5] == CpuCore(93, 247)
    assert (s.emc.load_pct, s.emc.mhz) == (18, 3199)
    assert (s.gpu.load_pct, s.gpu.gpc_mhz) == (84, (713,))
    assert s.engines["NVENC"] == Engine(1, 115)
    assert s.engines["NVDEC"] == Engine(40, 115)
    assert s.engines["VIC"] == Engine(31, 115)
    assert s.engines["NVDLA0"] == Engine(off=True)
    assert s.engines["PVA0"] == Engine(off=True)
    assert list(s.engines) == ["NVENC", "NVDEC", "NVJPG", "NVJPG1", "VIC", "OFA", "NVDLA0", "PVA0", "APE"]


def test_agx_orin_jp5_gated_gpu_sensor_off_and_duplicate_nc_rails():
    s = case("agx_orin_jp5")
    assert (s.gpu.load_pct, s.gpu.gpc_mhz, s.gpu.mhz) == (0, (0, 0), 0)
    assert s.temps_c["cv0"] is None and s.temps_c["gpu"] is None and s.temps_c["cpu"] == 44.562
    assert list(s.rails) == ["VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0", "NC", "VDDQ_VDD2_1V8AO", "NC_2"]
    # VIN_SYS_5V0 feeds only the 5 V system rail: the total is the sum, never VIN_SYS_5V0 alone
    assert s.power_total.source == "sum(VDD_GPU_SOC+VDD_CPU_CV+VIN_SYS_5V0+VDDQ_VDD2_1V8AO)"
    assert s.power_total.mw == 2340 + 390 + 4025 + 301


def test_agx_orin_jp5_second_gpc_as_its_own_field():
    s = case("agx_orin_jp5_gr3d2")
    assert (s.gpu.load_pct, s.gpu.gpc_mhz) == (0, (114, 114))
    assert s.engines == {"NVJPG1": Engine(None, 729), "VIC": Engine(None, 729), "APE": Engine(None, 233)}
    assert list(s.rails)[-1] == "NC_2"


def test_orin_nx_jp5_second_gpc_clock_when_the_first_has_none():
    s = case("orin_nx_jp5_gr3d2_nonroot")
    assert (s.gpu.load_pct, s.gpu.gpc_mhz) == (0, (0,))
    assert (s.emc.load_pct, s.emc.mhz) == (0, None)
    assert s.rails == {}


def test_agx_orin_jp6_per_gpc_clocks_and_engine_list():
    s = case("agx_orin_jp6")
    assert s.stamp == "10-26-2025 05:31:30"
    assert (s.ram.used_mb, s.ram.total_mb, s.ram.lfb_count, s.ram.lfb_size_kb) == (7002, 62841, 5, 4096)
    assert len(s.cpus) == 12 and s.cpus[0] == CpuCore(26, 729) and s.cpus[1] == CpuCore(8, 806)
    assert (s.emc.load_pct, s.emc.mhz) == (1, 2133)
    assert (s.gpu.load_pct, s.gpu.gpc_mhz, s.gpu.mhz) == (86, (305, 305), 305)
    gated = ("NVENC", "NVDEC", "NVJPG", "NVJPG1", "VIC", "OFA", "NVDLA0", "PVA0")
    assert all(s.engines[name].off for name in gated)
    assert s.engines["APE"] == Engine(None, 174)
    assert s.temps_c["tboard"] == 37.5 and s.temps_c["tdiode"] == 38.5
    assert s.rails["VDD_GPU_SOC"] == Rail(3601, 2792)
    assert s.power_total.mw == 3601 + 1200 + 4722 + 802


def test_agx_orin_jp6_not_root():
    s = case("agx_orin_jp6_nonroot")
    assert s.emc is None
    assert (s.gpu.load_pct, s.gpu.mhz, s.gpu.gpc_mhz) == (0, None, ())
    assert s.engines == {}
    assert s.power_total.source == "sum(VDD_GPU_SOC+VDD_CPU_CV+VIN_SYS_5V0)"


def test_agx_orin_jp7_two_value_temperatures_and_three_value_rails():
    s = case("agx_orin_jp7")
    assert s.swap is None
    assert (s.ram.lfb_count, s.ram.lfb_size_kb) == (1, 2048)
    assert (s.gpu.load_pct, s.gpu.gpc_mhz) == (12, (1300, 1300))
    assert s.engines["NVENC0"].off and s.engines["NVDEC0"].off and s.engines["NVJPG0"].off
    assert s.temps_c == {"cpu": 52.968, "soc2": 48.406, "soc0": 49.531, "gpu": 47.625}
    assert s.temps_max_c == {"cpu": 52.968, "soc2": 48.406, "soc0": 49.531, "gpu": 47.625}
    assert s.rails["VIN_SYS_5V0"] == Rail(5500, 5500, 5500)
    assert s.power_total.source == "sum(VDD_GPU_SOC+VDD_CPU_CV+VIN_SYS_5V0)"


def test_orin_nano_jp6_total_is_vdd_in():
    s = case("orin_nano_jp6")
    assert (s.gpu.load_pct, s.gpu.gpc_mhz) == (63, (621,))
    assert (s.emc.load_pct, s.emc.mhz) == (43, 2133)
    assert "NVENC" not in s.engines and s.engines["APE"] == Engine(None, 200)
    assert (s.power_total.mw, s.power_total.source) == (12479, "VDD_IN")


def test_orin_nano_not_root_and_super():
    s = case("orin_nano_jp6_nonroot")
    assert (s.swap.used_mb, s.swap.total_mb, s.swap.cached_mb) == (1518, 16384, 174)
    assert s.emc is None and s.gpu.gpc_mhz == ()
    s = case("orin_nano_super")
    assert s.swap is None
    assert (s.emc.mhz, s.gpu.mhz) == (3199, 1018)
    assert (s.power_total.mw, s.power_total.source) == (5971, "VDD_IN")


# --- Thor ---------------------------------------------------------------------------------------------


def test_thor_gpc_clocks_without_load_and_freq_engines():
    s = case("thor")
    assert len(s.cpus) == 14 and s.cpus[8] == CpuCore(0, 2601) and s.cpus[9] == CpuCore(17, 2601)
    assert (s.gpu.load_pct, s.gpu.gpc_mhz) == (None, (0, 0, 0))
    assert s.engines["NVENC0"] == Engine(None, 0) and s.engines["NVDEC1"] == Engine(None, 0)
    assert s.engines["OFA"] == Engine(None, 0) and s.engines["VIC"].off and s.engines["PVA0"].off
    assert s.engines["APE"] == Engine(None, 300)
    assert not any(name.endswith(("_FREQ", "_LOAD")) for name in s.engines)
    assert s.temps_c == {"cpu": 35.25, "tj": 36.031, "soc012": 36.062, "soc345": 34.5}
    assert s.power_total.source == "sum(VDD_GPU+VDD_CPU_SOC_MSS+VIN_SYS_5V0)"


def test_thor_vin_rail_is_the_total():
    s = case("thor_vin")
    assert s.cpus == [CpuCore(12, 972), CpuCore(10, 972), None, CpuCore(33, 1890)]
    assert s.gpu is None and s.emc is None and s.swap is None
    assert (s.power_total.mw, s.power_total.source) == (26686, "VIN")


# --- lines that are not samples, odd input ----------------------------------------------------------


@pytest.mark.parametrize("name", ["date_header_en", "date_header_pl"])
def test_date_headers_are_not_samples(name):
    s = parse_line(CASES[name])
    assert not s.is_sample
    assert s.raw == CASES[name]
    assert s.ram is None and s.cpus is None and s.rails == {}


@pytest.mark.parametrize("line", ["", "\n", "   ", "\r\n"])
def test_empty_lines_give_an_empty_non_sample(line):
    s = parse_line(line)
    assert not s.is_sample
    assert s.ram is None and s.cpus is None and s.unknown == [] and s.stamp is None


def test_injected_garbage_token_is_kept_and_everything_else_still_read():
    line = CASES["agx_orin_jp6"].replace(" APE 174 ", " APE 174 w#rd%! ")
    line = line.replace(" VDD_CPU_CV", " ?? VDD_CPU_CV")
    s = parse_line(line)
    assert s.unknown == ["w#rd%!", "??"]
    clean = case("agx_orin_jp6")
    s.unknown = []
    s.raw = clean.raw
    assert s == clean


def test_unknown_cpu_entry_keeps_the_core_count():
    s = parse_line("RAM 1/2MB (lfb 1x4MB) CPU [5%@729,x%@y,off,] EMC_FREQ 0%@204")
    assert s.cpus == [CpuCore(5, 729), CpuCore(None, None), None, CpuCore(None, None)]
    assert s.unknown == ["x%@y"]
    assert (s.emc.load_pct, s.emc.mhz) == (0, 204)


def test_cpu_entries_without_clock_have_no_mhz():
    s = parse_line("RAM 1/2MB CPU [5%,off,7%@729]")
    assert s.cpus == [CpuCore(5, None), None, CpuCore(7, 729)] and s.unknown == []


def test_hostile_repetition_is_kept_apart_in_linear_time():
    s = parse_line("RAM 1/2MB CPU [1%@2] " + "NC 1/2 " * 3000 + "a@1C # " * 3000)
    assert len(s.rails) == 3000 and "NC_3000" in s.rails
    assert len(s.temps_c) == 3000 and "a_3000" in s.temps_c
    assert s.unknown == ["#"] * 3000


def test_stamps_spaces_carriage_returns_and_ansi_codes():
    base = CASES["orin_nano_jp6"]
    clean = case("orin_nano_jp6")
    stamp, rest = base[:19], base[19:]
    spaced = "  " + stamp + rest.replace(" ", "   ").replace("NVDEC   off", "NVDEC      off") + "  \r\n"
    coloured = "\x1b[31m" + base + "\x1b[0m"
    for variant in (spaced, coloured):
        s = parse_line(variant)
        assert s.unknown == [], variant
        s.raw = clean.raw
        assert s == clean
    assert parse_line(coloured).raw == coloured
    assert stamp_of(base) == "11-15-2024 08:38:09"
    assert stamp_of(CASES["tx1"]) is None


def test_tx2_field_order_variants_are_token_based():
    # SWAP after CPU and NVENC between rails (jetson_stats' TX2 template shape) read the same values
    line = CASES["tx2_jp3"].replace(" VDD_SOC ", " NVENC 716 NVDEC 716 VDD_SOC ")
    line = line.replace(" EMC_FREQ", " SWAP 149/1024MB (cached 7MB) EMC_FREQ")
    s = parse_line(line)
    assert s.unknown == []
    assert (s.swap.used_mb, s.swap.total_mb, s.swap.cached_mb) == (149, 1024, 7)
    assert s.engines["NVENC"] == Engine(None, 716)
    assert list(s.rails) == ["VDD_IN", "VDD_CPU", "VDD_GPU", "VDD_SOC", "VDD_WIFI", "VDD_DDR"]


def test_parse_json_keys():
    obj = sample_to_json(case("agx_orin_jp5"))
    assert set(obj) == {
        "t", "ram_mb", "swap_mb", "cpu", "gpu", "emc", "engines", "temps_c", "rails_mw",
        "power_total_mw", "unknown",
    }
    assert obj["gpu"] == {"load_pct": 0, "mhz": 0, "gpc_mhz": [0, 0]}
    assert obj["rails_mw"]["NC_2"] == {"now": 0, "avg": 0}
    assert obj["power_total_mw"] == {
        "value": 2340 + 390 + 4025 + 301,
        "source": "sum(VDD_GPU_SOC+VDD_CPU_CV+VIN_SYS_5V0+VDDQ_VDD2_1V8AO)",
    }
    assert obj["engines"]["VIC"] == {"load_pct": None, "mhz": 729}
    assert obj["temps_c"]["cv0"] is None
    jp7 = sample_to_json(case("agx_orin_jp7"))
    assert jp7["rails_mw"]["VDD_CPU_CV"] == {"now": 3268, "avg": 3268, "peak": 3268}
    assert jp7["temps_max_c"]["cpu"] == 52.968
    assert jp7["engines"]["NVENC0"] == "off"
    assert sample_to_json(case("thor"))["gpu"] == {"load_pct": None, "mhz": 0, "gpc_mhz": [0, 0, 0]}


def test_parse_line_never_raises_even_when_the_parser_fails(monkeypatch):
    import jtop_roof.formats.parser as parser

    def broken(line):
        raise RuntimeError("bug")

    monkeypatch.setattr(parser, "_parse", broken)
    s = parser.parse_line("RAM 1/2MB")
    assert not s.is_sample and s.unknown == ["RAM 1/2MB"]


# --- the whole shared corpus ----------------------------------------------------------------------


def _corpus_lines():
    if not SHARED.is_dir():
        return []
    files = sorted((SHARED / "lines").glob("*.txt")) + sorted((SHARED / "logs").glob("*.log"))
    out = []
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if line.strip() and not line.startswith("#"):
                out.append((f"{path.name}:{n}", line))
    return out


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/tegrastats is not beside the repo")
def test_every_real_line_parses_with_nothing_unknown():
    lines = _corpus_lines()
    assert len(lines) > 12000
    bracket = re.compile(r"[cC][pP][uU] \[([^\]]*)\]")
    samples = 0
    for where, line in lines:
        s = _parse(line)  # the inner function: a parser bug must fail here, not be caught
        assert s == _parse(line, walk=True), where
        if "RAM " in line:
            samples += 1
            assert s.is_sample and s.ram is not None, where
            assert s.unknown == [], (where, s.unknown)
            assert len(s.cpus) == len(bracket.search(line).group(1).split(",")), where
            assert s.ram.used_mb <= s.ram.total_mb, where
        else:
            assert not s.is_sample, where
    assert samples == len(lines) - 2  # the two `date` headers
