"""The fast paint: every use of Textual's private API in jroof, and the switch to Textual's stock paint.

The monitor repaints a few lines of every pane each second. Through Textual's public API that costs
0.70 % of a core live at 120x40 and 200x60, against 0.47–0.53 % here (docs/performance.md,
benchmarks/paint.py); the fast paint goes past that API in three places:

* ``QuietDriver``: Textual's Linux driver, whose input thread blocks until a key comes instead of
  waking ten times a second (it reads the XTerm parser's pending-escape deadline).
* ``LineCompositor``: a screen's partial update rendered from the changed lines only, not from every
  widget under the box around them (it subclasses Textual's compositor).
* ``repaint_now`` and friends: a widget's changed rows handed to its screen at once, a style key
  read without a DOM walk, a wide-character line as Textual renders it (``DirectRows``, ``Readout``).

Nothing else in the package reaches past Textual's public API (tests/unit/test_layering.py checks it).
With ``JROOF_PAINT=stock``, or where the installed Textual is outside the versions the equivalence
tests ran on (``TESTED_TEXTUAL``), the app paints through Textual's public API only: its own driver
and screen, each widget's ``refresh`` and ``render_line``; the screens are the same
(tests/tui/test_tui_paint_routes.py).
"""

from __future__ import annotations

import os
import selectors
import threading
from bisect import bisect_left
from codecs import getincrementaldecoder
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from textual._compositor import ChopsUpdate, Compositor
from textual._loop import loop_last
from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

from jtop_roof.model.errors import UserError

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver

#: The Textual versions (inclusive) the equivalence tests ran on, fast against stock paint (CI runs
#: the TUI tests on both ends). Outside them the app paints the stock way and says so once.
TESTED_TEXTUAL = ((7, 5, 0), (8, 2, 8))
#: The environment variable that picks the paint: ``fast`` (the default) or ``stock``.
PAINT_ENV = "JROOF_PAINT"
PAINTS = ("fast", "stock")


@dataclass(frozen=True)
class PaintRoute:
    """How the app paints: ``fast`` (this module) or not (Textual's public API only); ``note``: why
    it paints the stock way though the fast one was not turned off (None: it was asked for, or fast)."""

    fast: bool
    note: str | None = None


def textual_version() -> tuple[int, ...] | None:
    """The installed Textual's version as numbers (None: not readable, e.g. a dev build)."""
    try:
        text = version("textual")
    except PackageNotFoundError:
        return None
    parts = []
    for part in text.split(".")[:3]:
        if not part.isdigit():
            return None
        parts.append(int(part))
    return tuple(parts)


def choose_route(env: Mapping[str, str] = os.environ,
                 installed: tuple[int, ...] | None | str = "installed") -> PaintRoute:
    """The paint ``env`` asks for, stock where the Textual ``installed`` is outside
    ``TESTED_TEXTUAL``; a value of ``JROOF_PAINT`` other than fast or stock is a ``UserError``."""
    asked = env.get(PAINT_ENV, "").strip().lower() or "fast"
    if asked not in PAINTS:
        raise UserError(f"{PAINT_ENV}={env.get(PAINT_ENV)!r}: it takes fast or stock")
    if asked == "stock":
        return PaintRoute(fast=False)
    found = textual_version() if installed == "installed" else installed
    low, high = TESTED_TEXTUAL
    if isinstance(found, tuple) and low <= found <= high:
        return PaintRoute(fast=True)
    shown = "an unknown version" if not isinstance(found, tuple) else ".".join(map(str, found))
    return PaintRoute(fast=False, note=(
        f"Textual {shown} is outside the versions jroof's fast paint was tested on "
        f"({'.'.join(map(str, low))} to {'.'.join(map(str, high))}): Textual's stock paint, "
        "which costs more CPU"))


_route = PaintRoute(fast=True)


def use(route: PaintRoute) -> None:
    """Paint this way from now on (the app calls it once, as it starts)."""
    global _route
    _route = route


def fast() -> bool:
    """Whether the fast paint is on (see ``use``)."""
    return _route.fast


# ------------------------------------------------------------------------------ the app's driver


def driver_class(stock: type[Driver]) -> type[Driver]:
    """``QuietDriver`` where ``stock`` (Textual's choice for this terminal) is its Linux driver and
    the fast paint is on; else ``stock``."""
    if not _route.fast:
        return stock
    try:
        quiet = _quiet_driver()
    except ImportError:  # no termios (Windows): Textual's own driver
        return stock
    return quiet if quiet.__base__ is stock else stock


_QUIET: list[type[Driver]] = []


def _quiet_driver() -> type[Driver]:
    """``QuietDriver``, made on first use: Textual's Linux driver needs termios."""
    if not _QUIET:
        _QUIET.append(_make_quiet_driver())
    return _QUIET[0]


class _WakingEvent(threading.Event):
    """An event whose ``set`` also writes a byte to a pipe, to wake a thread blocked in select."""

    def __init__(self, wake_fd: int) -> None:
        super().__init__()
        self.wake_fd: int | None = wake_fd

    def set(self) -> None:
        super().set()
        if self.wake_fd is not None:
            try:
                os.write(self.wake_fd, b"\0")
            except BlockingIOError:  # the pipe is full: the thread has plenty to wake on
                pass


def _make_quiet_driver() -> type[Driver]:
    from textual.drivers.linux_driver import LinuxDriver

    class QuietDriver(LinuxDriver):
        """``LinuxDriver`` whose input thread blocks until input, the end of an escape delay, or
        exit. Textual's waits with a 0.1 s timeout (to see its exit flag, and to report a lone
        Escape once the escape delay has run out): idle, ten wake-ups a second, 0.15 % of a core
        here. This one waits without a timeout, except while the parser waits for the rest of an
        escape sequence; setting the exit flag also writes to a pipe the thread waits on.
        ``run_input_thread`` is Textual's (the same in the ``TESTED_TEXTUAL`` versions) but for the
        timeout and the pipe; it reads the parser's ``_timeout_time``, a private field."""

        def __init__(self, app: App[Any], *, debug: bool = False, mouse: bool = True,
                     size: tuple[int, int] | None = None) -> None:
            super().__init__(app, debug=debug, mouse=mouse, size=size)
            self._wake_read, wake_write = os.pipe()
            os.set_blocking(self._wake_read, False)
            os.set_blocking(wake_write, False)
            self._waking = _WakingEvent(wake_write)
            self.exit_event = self._waking

        def close(self) -> None:
            super().close()
            wake_write, self._waking.wake_fd = self._waking.wake_fd, None
            if wake_write is not None:
                os.close(wake_write)
                os.close(self._wake_read)

        def run_input_thread(self) -> None:
            """Wait for input and dispatch events (Textual's loop; see the class docstring)."""
            selector = selectors.SelectSelector()
            selector.register(self.fileno, selectors.EVENT_READ)
            selector.register(self._wake_read, selectors.EVENT_READ)
            fileno, wake = self.fileno, self._wake_read
            parser = XTermParser(self._debug)
            feed, tick = parser.feed, parser.tick
            decode = getincrementaldecoder("utf-8")().decode

            def process_selector_events(selector_events: list[tuple[selectors.SelectorKey, int]],
                                        final: bool = False) -> None:
                for last, (selector_key, mask) in loop_last(selector_events):
                    if selector_key.fd == wake:
                        _drain(wake)
                    elif mask & selectors.EVENT_READ:
                        unicode_data = decode(os.read(fileno, 1024 * 4), final=final and last)
                        if not unicode_data:
                            break  # stdin is a pipe that was closed
                        for event in feed(unicode_data):
                            self.process_message(event)
                for event in tick():
                    self.process_message(event)

            def timeout() -> float | None:
                """None (block) unless the parser waits for the rest of an escape sequence."""
                pending: float | None = parser._timeout_time
                return None if pending is None else max(0.0, pending - get_time())

            try:
                while not self.exit_event.is_set():
                    process_selector_events(selector.select(timeout()))
                selector.unregister(self.fileno)
                selector.unregister(wake)
                process_selector_events(selector.select(0.1), final=True)
            finally:
                selector.close()
                try:
                    for _event in feed(""):
                        pass
                except (EOFError, ParseError):
                    pass

    return QuietDriver


def quiet_driver() -> type[Driver]:
    """``QuietDriver`` itself (for tests that record what it writes); ImportError without termios."""
    return _quiet_driver()


def _drain(fd: int) -> None:
    """Read what the pipe holds (it is non-blocking)."""
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


# ------------------------------------------------------------------------------ the screen


class LineCompositor(Compositor):
    """A compositor whose partial update renders only the changed lines: front to back, each widget
    only for the changed lines where it is the front one (what Textual's cut chops keep), so a
    readout line that changed costs that line of that widget. Textual's own renders every widget
    under the box around all the changed regions, each over its whole height (the whole screen,
    each frame, in the monitor). The terminal receives the same bytes (tests/tui/test_app.py)."""

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
    """A screen drawn through ``LineCompositor``."""

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._compositor = LineCompositor()


def default_screen() -> Screen[Any]:
    """The app's default screen: ``MonitorScreen`` on the fast paint, else Textual's own."""
    return MonitorScreen(id="_default") if _route.fast else Screen(id="_default")


def compositor_of(screen: Screen[Any]) -> Compositor:
    """The screen's compositor (for the equivalence tests)."""
    return screen._compositor


# ------------------------------------------------------------------------------ widgets' rows


def repaint_now(widget: Widget, regions: Iterable[Region]) -> bool:
    """Mark ``regions`` (content coordinates) of ``widget`` dirty and hand the widget to its
    screen now, not on the widget's next idle: Textual's ``refresh`` posts to the widget's queue,
    whose idle handler posts to the screen's, two dispatches per widget per frame. False (nothing
    done: call ``refresh``) on the stock paint or where the widget is not on the screen shown."""
    if not _route.fast:
        return False
    screen = widget.app.screen if widget.is_mounted and widget.display else None
    if screen is None or widget.screen is not screen:
        return False
    widget._layout_cache.clear()  # as ``refresh``: Textual's route (a wide character) caches its text there
    widget._set_dirty(*regions)
    screen._dirty_widgets.add(widget)
    screen.check_idle()
    return True


def styles_key(widget: Widget) -> tuple[object, ...]:
    """A key that changes when the styles of ``widget`` or an ancestor change (no DOM lookups)."""
    return tuple(node.styles._cache_key for node in widget.ancestors_with_self)


def textual_line(widget: Widget, y: int) -> Strip:
    """Row ``y`` of ``widget`` as Textual renders it (``render``, then its content's strips)."""
    widget._render_content()
    lines = widget._render_cache.lines
    return lines[y] if y < len(lines) else Strip([])

