"""Hypothesis examples: fixed under CI (``HYPOTHESIS_PROFILE=ci``, set by ``.ci/run``), so that a red
CI is a finding that reproduces, not the luck of a seed; random elsewhere, where new cases are wanted.

Every test runs in a house of its own: HOME and the XDG folders point into a fresh folder, and no
``JROOF_*`` variable is set, so that a user's ``~/.config/jroof/config.yaml`` (or a ``JROOF_`` in the
shell) changes no test. A test's own fixture or ``monkeypatch`` still sets what it needs: this one
runs first. The command line runs through ``cli_support`` (``jroof_main`` in this process).

``SLOW`` marks the tests that take seconds each (``pytest -m "not slow"`` leaves them out), in one
place so that moving files does not lose it: a file's name marks all its tests, ``file::test`` one
test with all its parameters."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_support import Ran, run_main
from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "default")

#: The XDG base folders (config, runtime sockets, cache, data, state), each its own under the home.
XDG_FOLDERS = {"XDG_CONFIG_HOME": ".config", "XDG_RUNTIME_DIR": "run", "XDG_CACHE_HOME": ".cache",
               "XDG_DATA_HOME": ".local/share", "XDG_STATE_HOME": ".local/state"}


def isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """HOME and the XDG folders (0700, as a runtime folder must be) under ``home``; no ``JROOF_*``."""
    monkeypatch.setenv("HOME", str(home))
    for name, folder in XDG_FOLDERS.items():
        path = home / folder
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        monkeypatch.setenv(name, str(path))
    for name in [name for name in os.environ if name.startswith("JROOF_")]:
        monkeypatch.delenv(name)
    return home


@pytest.fixture(scope="session", autouse=True)
def hermetic_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The same for module- and session-scoped fixtures, which are set up before any test's own."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture(autouse=True)
def hermetic_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty house for each test."""
    return isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture
def runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``XDG_RUNTIME_DIR`` (0700) of the test's own: the monitors' marker sockets."""
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


@pytest.fixture
def jroof_main(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``jroof_main("report", path, ...)``: the exit status, stdout and stderr of ``main`` here."""
    return functools.partial(run_main, capsys)


#: Measured with ``--durations=0`` over the whole suite on the project's 2-core machine: what takes
#: the fast subset past about 3 minutes there. A file name marks its every test.
SLOW: frozenset[str] = frozenset({
    # Whole files: the monitor run by Textual's pilot, in tmux, or recording beside a fake board.
    "test_app.py", "test_power_e2e.py", "test_snapshots.py", "test_tmux_e2e.py", "test_tui_frames.py",
    "test_tui_rows.py", "test_energy_roof_pane.py",
    # One test each (all its parameters): subprocesses, a recording of seconds, figures.
    "test_cli.py::test_commands_that_draw_no_roof_refuse_its_inputs",
    "test_cli.py::test_user_errors_are_one_line_and_exit_2",
    "test_consumers_agree.py::test_report_the_monitor_and_metrics_agree_on_a_plain_log",
    "test_history_bulk.py::test_readings_written_at_the_next_read_are_those_written_one_sample_at_a_time",
    "test_hook.py::test_replaying_a_log_with_its_trtexec_puts_the_timed_phase_on_the_roof",
    "test_hook.py::test_run_gives_a_command_that_marks_nothing_one_phase_named_after_it",
    "test_hook.py::test_run_headless_records_a_workload_that_marks_and_reports_itself",
    "test_hook.py::test_run_keeps_trtexecs_output_for_report",
    "test_hook.py::test_run_on_a_stream_without_a_clock_of_its_own_keeps_the_commands_phase",
    "test_hook.py::test_work_reported_to_a_headless_record_lands_in_the_recording_and_the_report",
    "test_hostile.py::test_record_of_a_hostile_replay_ends_and_writes_only_json",
    "test_hostile.py::test_recording_into_the_file_being_replayed_is_refused",
    "test_hostile_numbers_in.py::test_a_typed_number_no_int_holds_is_one_line_and_exit_2",
    "test_hostile_text_out.py::test_plot_of_a_name_that_is_no_utf8_is_drawn",
    "test_hostile_text_out.py::test_plot_says_glyphs_its_font_lacks_in_one_safe_line",
    "test_inputs_used.py::test_a_phase_that_starts_before_the_replayed_log_survives_its_recording",
    "test_inputs_used.py::test_record_replay_writes_trtexecs_phases_and_work_into_the_recording",
    "test_inputs_used.py::test_trtexec_that_cannot_be_placed_is_refused_before_anything_starts",
    "test_jsonout.py::test_generated_samples_print_the_same_text",
    "test_jsonout.py::test_real_lines_with_other_numbers_print_the_same_text_by_either_route",
    "test_layering.py::test_no_import_reaches_a_higher_layer",
    "test_ledger_sample_short_way.py::test_the_short_way_leaves_the_ledger_as_the_long_way_does",
    "test_marker_delivery_counts.py::test_a_burst_of_processes_reporting_work_is_counted_exactly",
    "test_no_samples.py::test_compare_and_plot_refuse_it_too",
    "test_no_samples.py::test_each_reader_refuses_a_file_without_samples_in_one_line",
    "test_out_stdout.py::test_a_figure_to_stdout",
    "test_out_stdout.py::test_out_dash_writes_what_stdout_would",
    "test_out_stdout.py::test_parquet_to_stdout_is_the_file_export_writes",
    "test_output_over_input.py::test_out_over_standard_input_is_refused",
    "test_output_over_input.py::test_standard_output_appended_to_the_input_is_refused",
    "test_pipeline.py::test_a_newer_schema_or_another_programs_header_is_refused_by_every_command",
    "test_pipeline.py::test_tui_headless_and_report_give_the_same_phase_energies",
    "test_planted_outputs.py::test_a_planted_output_is_refused_in_one_line_and_left_alone",
    "test_plot.py::test_png_svg_and_pdf",
    "test_power_cli.py::test_a_source_that_reads_no_local_monitor_refuses_their_flags",
    "test_power_cli.py::test_record_writes_the_board_trees_power_at_its_rate",
    "test_power_cli.py::test_refusals_are_one_line_and_exit_2",
    "test_power_cli.py::test_the_config_files_power_rate_stays_quiet_for_a_replay",
    "test_probe.py::test_no_samples_leaves_clocks_null",
    "test_processes.py::test_record_of_the_host_lists_a_busy_yes_in_the_whole_run",
    "test_hostile_numbers_extreme.py::test_report_and_plot_of_extreme_work",
    "test_hostile_text_in.py::test_a_theme_the_stylesheet_refuses_falls_back_at_start_and_on_the_theme_key",
    "test_hostile_text_in.py::test_csv_text_cells_never_start_a_formula",
    "test_hostile_text_in.py::test_lone_surrogates_in_names_are_replaced_on_input",
    "test_hostile_text_in.py::test_mathtext_in_a_phase_file_name_or_title_is_drawn_as_typed",
    "test_replay_seek_first.py::test_the_ledgers_read_waits_a_while_after_the_backfill_while_it_is_taken_in",
    "test_report_fast.py::test_fast_route_reports_what_the_sample_route_reports",
    "test_report_route.py::test_the_short_ways_report_what_the_long_way_reports",
    "test_serve.py::test_a_replay_keeps_serving_after_its_end_until_a_signal",
    "test_source_ssh.py::test_record_over_ssh_from_the_command_line",
    "test_source_ssh.py::test_two_boards_one_header_line_each_a_key_to_switch_and_a_recording_each",
    "test_source_tegrastats.py::test_records_keep_mono_order_across_restarts",
    "test_stdin_spool_bound.py::test_standard_input_past_the_cap_is_refused_and_the_spool_removed",
    "test_stdio.py::test_record_to_stdout_streams_lines_while_it_runs_and_makes_no_file",
    "test_stdio.py::test_the_monitor_refuses_to_record_into_its_screen_or_replay_stdin_without_a_terminal",
    "test_temps_fan.py::test_the_latest_samples_fans_show_in_the_temperatures_pane",
    "test_tui_paint_routes.py::test_the_fast_and_the_stock_paint_show_the_same_screens",
    "test_tui_paint_routes.py::test_an_untested_textual_paints_the_stock_way_and_says_so_once",
})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    for item in items:
        file = item.path.name
        name = getattr(item, "originalname", None) or item.name
        if file in SLOW or f"{file}::{name}" in SLOW:
            item.add_marker(slow)
