"""The memory pane: EMC load and clock, RAM, swap and IRAM use."""

from __future__ import annotations

from jtop_roof.model.metrics import fmt_memory
from jtop_roof.model.records import IoRates, Sample
from jtop_roof.model.registry import metric
from jtop_roof.tui.panes.base import LABEL_WIDTH, Pane, clock_chunks, legend, pct_chunk
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line
from jtop_roof.tui.widgets.timeplot import Axis, Series


class MemoryPane(Pane):
    UNIT = "emc"
    SHORT = "Memory"

    def lines(self, view: View, width: int) -> list[Line]:
        sample = view.sample
        if sample is None:
            return [[("no data", "muted")]]
        out: list[Line] = []
        emc = sample.emc
        if emc is None:
            out.append([("EMC ", "label"), ("not reported", "muted")])
        else:
            pct, level = pct_chunk(emc.load_pct, view)
            clock = clock_chunks((" @ ", "muted"), emc.mhz, emc.load_pct)
            out.append([("EMC ", "label"), (pct, level), *clock])
        out.append(self._memory_line(sample))
        if sample.iram is not None:
            out.append([("IRAM ", "label"), (f"{sample.iram.used_kb:g}/{sample.iram.total_kb:g}", None),
                        (" kB", "muted")])
        if sample.io is not None:
            out.append(self._io_line(sample.io))
        if emc is not None:
            out.append(legend(metric("emc_load").legend(),
                               None if emc.mhz is None else metric("emc_mhz").legend() + " (right)"))
        return out

    @staticmethod
    def _io_line(io: IoRates) -> Line:
        """Disk read/write and network rx/tx since the previous sample (``—``: not readable)."""
        def pair(a: float | None, b: float | None) -> str:
            return "/".join("—" if v is None else f"{v:.1f}" for v in (a, b))

        return [("disk r/w ", "label"), (pair(io.disk_read_mb_s, io.disk_write_mb_s), None),
                (" MB/s", "muted"), ("   ", None), ("net rx/tx ", "label"),
                (pair(io.net_rx_mb_s, io.net_tx_mb_s), None), (" MB/s", "muted")]

    @staticmethod
    def _memory_line(sample: Sample) -> Line:
        line: Line = [("RAM ", "label")]
        if sample.ram is None:
            line.append(("—", "muted"))
        else:
            line.append((fmt_memory(sample.ram.used_mb, sample.ram.total_mb), None))
        # Separating spaces go in runs of their own, never at the start of a styled word: the
        # SVG snapshot (and what reads it) drops them there, and "GB" ran into "SWAP".
        line += [("   ", None), ("SWAP ", "label")]
        if sample.swap is None:
            line.append(("—", "muted"))
        else:
            line.append((fmt_memory(sample.swap.used_mb, sample.swap.total_mb), None))
        return line

    def compact_lines(self, view: View, width: int) -> list[Line]:
        sample = view.sample
        head: Line = [("MEM".ljust(LABEL_WIDTH), "title")]
        if sample is None:
            return [head + [("no data", "muted")]]
        line = list(head)
        emc = sample.emc
        if emc is not None:
            pct, level = pct_chunk(emc.load_pct, view)
            line += [("EMC ", "label"), (pct, level), *clock_chunks((" @", "muted"), emc.mhz, emc.load_pct),
                     ("  ", None)]
        return [line + self._memory_line(sample)]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        return ([Series("emc_load", "plot-1"), Series("emc_mhz", "plot-2", right=True)],
                Axis(0, 100), Axis(0, None, min_high=100))
