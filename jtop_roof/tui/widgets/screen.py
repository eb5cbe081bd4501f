"""MonitorScreen: the monitor's main screen, whose updates paint only the screen lines that changed.

Textual's partial update renders every widget under the box around all the changed regions, each
over its whole height, and then keeps only the changed lines. The monitor changes a few lines in
every pane and the header each second, so that box is the whole screen, and each frame rendered
all of it (half the monitor's cost). ``LineCompositor`` renders the same update from the changed
spans only: front to back, each widget only for the changed lines where it is the front one
(what Textual's cut chops keep), so a readout line that changed costs that line of that widget.
The terminal receives the same bytes (tests/test_app.py compares the two).

It builds on the compositor's internals (``cuts``, ``visible_widgets``, ``_regions_to_spans``,
``ChopsUpdate``) as in the Textual versions tests/constraints.txt pins.
"""

from __future__ import annotations

from bisect import bisect_left

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip


class LineCompositor(Compositor):
    """A compositor whose partial update renders only the changed lines (see the module doc)."""

    def render_partial_update(self) -> ChopsUpdate | None:
        regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not regions:
            return None
        spans = list(self._regions_to_spans(regions))
        cuts = self.cuts
        #: Per changed line, the cuts (starts of a widget's piece of it) inside a changed span
        #: that no widget in front has filled yet.
        todo: dict[int, set[int]] = {}
        for y, x1, x2 in spans:
            line_cuts = cuts[y]
            todo.setdefault(y, set()).update(
                cut for cut, end in zip(line_cuts, line_cuts[1:], strict=False) if cut < x2 and end > x1)
        chops: list[dict[int, Strip | None]] = [
            dict.fromkeys(cut_set[:-1]) if y in todo else {} for y, cut_set in enumerate(cuts)]
        changed_rows = sorted(todo)  # a few of the screen's rows: look at those, not at each widget's
        for widget, (region, clip) in self.visible_widgets.items():  # front to back
            x, top, width, height = region.intersection(clip)
            if not width:
                continue
            right = x + width
            under = changed_rows[bisect_left(changed_rows, top):bisect_left(changed_rows, top + height)]
            lines = [y for y in under if y in todo and any(x <= cut < right for cut in todo[y])]
            for first, count in _runs(lines):
                strips = widget.render_lines(Region(x - region.x, first - region.y, width, count))
                for y, strip in zip(range(first, first + count), strips, strict=False):
                    open_cuts, line = todo[y], chops[y]
                    widget_cuts = [cut for cut in cuts[y] if x <= cut <= right]
                    pieces = strip.divide([cut - x for cut in widget_cuts[1:]])
                    for cut, piece in zip(widget_cuts, pieces, strict=False):
                        if cut in open_cuts:
                            line[cut] = piece
                            open_cuts.discard(cut)
                    if not open_cuts:
                        del todo[y]
            if not todo:
                break
        return ChopsUpdate(chops, spans, [cut_set[1:] for cut_set in cuts])


def _runs(lines: list[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as (first, count) runs of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for y in lines:
        if runs and runs[-1][0] + runs[-1][1] == y:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((y, 1))
    return runs


class MonitorScreen(Screen[None]):
    """The app's default screen, drawn through ``LineCompositor``."""

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._compositor = LineCompositor()
