"""Board files under a fake root: clock fill-in for non-root tegrastats lines, and board identity."""

from __future__ import annotations

from pathlib import Path

from paths import TESTS

from jtop_roof.formats.parser import parse_line
from jtop_roof.model.records import Clocked, CpuCore, Gpu, Sample
from jtop_roof.sources.sysfs import BoardFiles, parse_nvpmodel_conf, parse_nvpmodel_query

SYSFS = TESTS / "data" / "sysfs"


def data_lines(name: str) -> list[str]:
    text = (TESTS / "data" / name).read_text()
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def no_nvpmodel(_command):
    return None


def test_nonroot_line_gets_gpu_clock_and_keeps_its_own_values():
    sample = parse_line(data_lines("fake_tegrastats_orinnano_nonroot.txt")[0])
    assert sample.gpu is not None and sample.gpu.gpc_mhz == ()  # what non-root tegrastats gives
    BoardFiles(SYSFS).fill(sample)
    assert sample.gpu.gpc_mhz == (612,)
    assert sample.gpu.load_pct == 0
    assert sample.emc is None


def test_root_line_is_never_overwritten():
    line = data_lines("fake_tegrastats_orinnano_super.txt")[0]
    sample = parse_line(line)
    BoardFiles(SYSFS).fill(sample)
    assert sample.gpu.gpc_mhz == (1018,)
    assert sample.emc.mhz == 3199
    assert {core.mhz for core in sample.cpus} == {1728}


def test_cores_without_mhz_get_scaling_cur_freq_offline_stay_none():
    cores = [CpuCore(10.0, None), None, CpuCore(5.0, 1000), CpuCore(1.0, None), CpuCore(2.0, None)]
    sample = Sample(cpus=cores)
    BoardFiles(SYSFS).fill(sample)
    assert sample.cpus[0] == CpuCore(10.0, 1344)
    assert sample.cpus[1] is None
    assert sample.cpus[2] == CpuCore(5.0, 1000)
    assert sample.cpus[3] == CpuCore(1.0, 1344)
    assert sample.cpus[4] == CpuCore(2.0, 730)  # 729600 kHz


def test_non_sample_lines_are_left_alone():
    sample = Sample(is_sample=False, raw="Thu Dec 17 18:16:50 UTC 2020")
    BoardFiles(SYSFS).fill(sample)
    assert sample.gpu is None and sample.emc is None


def test_thor_like_tree_fills_gpu_and_emc_from_devfreq(tmp_path):
    root = tree(
        tmp_path,
        {
            "sys/class/devfreq/gpu-gpc-0/cur_freq": "1575000000\n",
            "sys/class/devfreq/gpu-gpc-0/max_freq": "1575000000\n",
            "sys/class/devfreq/bwmgr/cur_freq": "4266000000\n",
            "sys/class/devfreq/bwmgr/max_freq": "4266000000\n",
        },
    )
    board = BoardFiles(root, run=no_nvpmodel)
    assert board.gpu_devfreq.name == "gpu-gpc-0"  # bwmgr is not taken for the GPU
    sample = Sample(gpu=None, emc=None)
    board.fill(sample)
    assert sample.gpu == Gpu(None, (1575,))  # no load invented
    assert sample.emc == Clocked(None, 4266)
    assert board.max_clocks() == {"gpu_mhz": 1575, "emc_mhz": 4266}


def test_emc_load_from_the_line_is_kept_when_only_the_clock_is_missing(tmp_path):
    root = tree(tmp_path, {"sys/class/devfreq/bwmgr/cur_freq": "3199000000"})
    sample = Sample(emc=Clocked(12.0, None))
    BoardFiles(root, run=no_nvpmodel).fill(sample)
    assert sample.emc == Clocked(12.0, 3199)


def test_describe_the_fake_orin_nano_super():
    info = BoardFiles(SYSFS, run=no_nvpmodel).describe()
    assert info["model"] == "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"  # NUL gone
    assert info["power_mode"] == "MAXN_SUPER" and info["power_mode_id"] == 2
    assert info["max_clocks"] == {"gpu_mhz": 1020, "cpu_mhz": 1728}
    assert info["gpu_tpcs"] == {"tpc_pg_mask": 240, "gated_tpcs": 4, "from": "/etc/nvpmodel.conf"}
    assert info["thermal_trips"] == {
        "cpu": [{"type": "passive", "temp_c": 99}, {"type": "critical", "temp_c": 104.5}],
        "gpu": [{"type": "passive", "temp_c": 99}, {"type": "critical", "temp_c": 104.5}],
    }  # sorted by temperature; tj has no trip points and is left out


def test_nvpmodel_query_wins_over_the_status_file():
    def run(command):
        return "NV Power Mode: 15W\n0\n" if command == ["nvpmodel", "-q"] else None

    board = BoardFiles(SYSFS, run=run)
    assert board.power_mode() == (0, "15W")


def test_nvpmodel_query_output_with_warnings_or_errors():
    assert parse_nvpmodel_query("NVPM WARN: fan mode is not set!\nNV Power Mode: MAXN\n0\n") == (0, "MAXN")
    assert parse_nvpmodel_query("NVPM ERROR: failed\n") == (None, None)


def test_tpc_mask_from_sysfs_wins_over_the_conf(tmp_path):
    root = tree(
        tmp_path,
        {
            "sys/devices/platform/gpu.0/tpc_pg_mask": "128\n",
            "etc/nvpmodel.conf": "< POWER_MODEL ID=0 NAME=MAXN >\nTPC_POWER_GATING TPC_PG_MASK 0\n",
        },
    )
    tpcs = BoardFiles(root, run=no_nvpmodel).gpu_tpcs(0)
    assert tpcs == {"tpc_pg_mask": 128, "gated_tpcs": 1, "from": "/sys/devices/platform/gpu.0/tpc_pg_mask"}


def test_conf_parsing_reads_names_and_tpc_masks():
    modes = parse_nvpmodel_conf((SYSFS / "etc/nvpmodel.conf").read_text())
    assert modes == {
        0: {"name": "15W", "tpc_pg_mask": 240},
        1: {"name": "25W", "tpc_pg_mask": 240},
        2: {"name": "MAXN_SUPER", "tpc_pg_mask": 240},
    }


def test_emc_cap_ignores_no_cap_values(tmp_path):
    root = tree(tmp_path, {"sys/kernel/nvpmodel_clk_cap/emc": "2133000000\n"})
    assert BoardFiles(root, run=no_nvpmodel).max_clocks() == {"emc_cap_mhz": 2133}
    root2 = tree(tmp_path / "b", {"sys/kernel/nvpmodel_clk_cap/emc": "9223372036854775807\n"})
    assert BoardFiles(root2, run=no_nvpmodel).max_clocks() == {}


def test_garbage_and_duplicates_do_not_break_anything(tmp_path):
    root = tree(
        tmp_path,
        {
            "sys/class/thermal/thermal_zone0/type": "cpu-thermal\n",
            "sys/class/thermal/thermal_zone0/trip_point_0_temp": "not a number\n",
            "sys/class/thermal/thermal_zone1/type": "CPU-thermal\n",
            "sys/class/thermal/thermal_zone1/trip_point_0_temp": "95000\n",
            "sys/class/devfreq/17000000.gpu/cur_freq": "\n",
            "var/lib/nvpmodel/status": "garbage\n",
            "proc/device-tree/model": "",
        },
    )
    board = BoardFiles(root, run=no_nvpmodel)
    assert [zone.name for zone in board.zones] == ["cpu", "cpu_2"]
    assert board.thermal_trips() == {"cpu_2": [{"type": "unknown", "temp_c": 95}]}
    assert board.gpu_mhz() is None
    assert board.power_mode() == (None, None)
    assert board.model() is None


def test_empty_root_describes_nothing_and_fills_nothing(tmp_path):
    board = BoardFiles(tmp_path, run=no_nvpmodel)
    assert board.describe() == {}
    sample = Sample(gpu=Gpu(50.0, ()), cpus=[CpuCore(1.0, None)])
    board.fill(sample)
    assert sample.gpu == Gpu(50.0, ()) and sample.cpus == [CpuCore(1.0, None)]
