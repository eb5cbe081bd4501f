"""The processes pane: who else ran in the current phase (else the whole run), busiest first, with
the largest RSS and GPU memory seen; the benchmark's own tree marked. The figures are the ledger's
(``analysis.processes``: what ``report`` lists), never summed here."""

from __future__ import annotations

from jtop_roof.analysis.processes import ProcessStats
from jtop_roof.model.metrics import FOREIGN_PROCESS_PCT, printable
from jtop_roof.tui.panes.base import LABEL_WIDTH, NAME_CHARS, Pane, wrap
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line

#: The mark of a process in the benchmark's tree.
BENCHMARK_MARK = "●"


def _mb(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


class ProcessesPane(Pane):
    SHORT = "Processes"
    HAS_PLOT = False

    def _processes(self, view: View) -> tuple[str, tuple[ProcessStats, ...]]:
        span = view.phase if view.phase is not None and view.phase.processes else view.whole
        where = "run" if span is None or span is view.whole else span.name
        return where, (() if span is None else span.processes)

    def lines(self, view: View, width: int) -> list[Line]:
        where, processes = self._processes(view)
        if not processes:
            return [[("no process readings (a live source reads them every few seconds)", "muted")]]
        gpu = any(process.gpu_mem_mb_max is not None for process in processes)
        # The columns that fit: the name gives way first (down to 6 characters), GPU memory only
        # where some process holds it.
        name_chars = max(6, min(NAME_CHARS, width - 2 - 23 - (8 if gpu else 0)))
        head = f"{'':2}{'name':<{name_chars}} {'pid':>7} {'CPU %':>6} {'RSS MB':>7}{' GPU MB' if gpu else ''}"
        out: list[Line] = [[(head, "label")]]
        for process in processes:
            cpu = process.cpu_percent_mean
            state = "crit" if process.foreign_and_busy else ("label" if process.benchmark else None)
            memory = f" {_mb(process.rss_mb_max):>7}" + (f" {_mb(process.gpu_mem_mb_max):>6}" if gpu else "")
            out.append([(BENCHMARK_MARK + " " if process.benchmark else "  ", "ok"),
                        (f"{printable(process.name, name_chars):<{name_chars}} {process.pid:>7} ", None),
                        ("     —" if cpu is None else f"{cpu:6.1f}", state),
                        (memory, None)])
        legend = (f"{BENCHMARK_MARK} the benchmark's tree · mean CPU over the {where} · "
                  f"highlighted: another process above {FOREIGN_PROCESS_PCT:g}% of a core")
        out += wrap([(legend, "muted")], width)
        return out

    def compact_lines(self, view: View, width: int) -> list[Line]:
        _, processes = self._processes(view)
        if not processes:
            return []  # a small terminal's rows go to the trends plot (a replay of a log has none)
        head: Line = [("PROC".ljust(LABEL_WIDTH), "title")]
        busiest = processes[0]
        cpu = busiest.cpu_percent_mean
        state = "crit" if busiest.foreign_and_busy else None
        return [head + [(printable(busiest.name, NAME_CHARS), "label"),
                        (" —" if cpu is None else f" {cpu:.0f}%", state)]]

    def subtitle(self, view: View) -> str | None:
        return "top by CPU · RSS: the largest seen"
