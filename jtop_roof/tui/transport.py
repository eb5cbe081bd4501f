"""The replay's transport: pause, step, speed, seek and follow on the shown board's controls.

A replay answers each seek with a ``seek`` event, on which the pipeline clears the display history
(never the ledger) and the replay refills it from the file.

A mixin of the app, because Textual finds a key's action on the app by name; a live board has no
controls, so each action is then nothing (and ``check_action`` hides the keys).
"""

from __future__ import annotations

from typing import Protocol

from jtop_roof.sources.base import ReplayControls
from jtop_roof.tui.keys import next_speed


class Transported(Protocol):
    """What the transport needs of the app: the shown board's controls and its header."""

    @property
    def controls(self) -> ReplayControls | None: ...

    def _update_header(self) -> None: ...


class ReplayTransport:
    """The transport keys' actions, and the seeks tests and scripts ask for."""

    def action_toggle_pause(self: Transported) -> None:
        if self.controls is not None:
            self.controls.toggle_pause()
            self._update_header()

    def action_step(self: Transported) -> None:
        if self.controls is not None:
            self.controls.step()

    def action_speed_up(self: Transported) -> None:
        _change_speed(self, +1)

    def action_speed_down(self: Transported) -> None:
        _change_speed(self, -1)

    def request_seek(self: Transported, seconds: float, *, relative: bool = True) -> None:
        """Seek the replay; its seek event, when it comes, clears history (see the module doc).
        The header's time is the target's at once (the next frame), not at the next redraw."""
        if self.controls is not None:
            self.controls.seek(float(seconds), relative=relative)
            self._update_header()

    def request_seek_to(self: Transported, where: str) -> None:
        if self.controls is not None:
            self.controls.seek_to(where)
            self._update_header()

    def action_seek(self: Transported, seconds: float) -> None:
        ReplayTransport.request_seek(self, seconds)

    def action_seek_to(self: Transported, where: str) -> None:
        ReplayTransport.request_seek_to(self, where)

    def action_follow(self: Transported) -> None:
        """Follow mode on: tail the file, jump to its end and play new lines as they come
        (FOLLOW in the header once caught up). Pressed again: stop following, stay where it is."""
        controls = self.controls
        if controls is None:
            return
        if controls.follow_enabled:
            controls.set_follow(False)
        else:
            controls.set_follow(True)
            controls.seek_to("end")
            controls.resume()
        self._update_header()


def _change_speed(app: Transported, direction: int) -> None:
    if app.controls is None:
        return
    app.controls.set_speed(next_speed(app.controls.speed, direction))
    app._update_header()
