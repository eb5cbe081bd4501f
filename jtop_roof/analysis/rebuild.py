"""A replayed file's ledger built again, with this session's markers, off the pipeline's thread.

A marker made in a replay places a phase edge among the whole file's records, so the ledger is
read again from the file (about 30 s for a million lines on a Jetson). ``LedgerRebuild`` does that
in a thread of its own while the pipeline keeps showing the ledger it has: only the newest request
is built (one asked for while another is being built waits for it, and a newer one replaces it),
and the pipeline takes each finished ledger that is newer than the one it shows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.model.records import Marker, Work

#: Builds a whole file's ledger with the given session markers among its records.
LedgerBuilder = Callable[[Sequence[Marker | Work]], EnergyLedger]


class LedgerRebuild:
    """Builds ``build(markers)`` for the newest ``request`` in a daemon thread (see the module doc)."""

    def __init__(self, build: LedgerBuilder) -> None:
        self._build = build
        self._changed = threading.Condition()
        self._requested = 0  # requests made; each one's number is its place in this count
        self._wanted: tuple[int, tuple[Marker | Work, ...]] | None = None  # the newest, not started
        self._done = 0  # the newest request built (or failed)
        self._built: tuple[int, int, EnergyLedger] | None = None  # (request, markers held, ledger)
        self._taken = 0
        self._running = False

    def request(self, markers: Sequence[Marker | Work]) -> None:
        """Build the ledger with ``markers`` (a copy is kept), superseding any request not started."""
        with self._changed:
            self._requested += 1
            self._wanted = (self._requested, tuple(markers))
            if not self._running:
                self._running = True
                threading.Thread(target=self._work, name="jroof-ledger-rebuild", daemon=True).start()

    @property
    def pending(self) -> bool:
        """True while the newest request is not built yet."""
        with self._changed:
            return self._done < self._requested

    def take(self) -> tuple[int, EnergyLedger] | None:
        """The newest ledger built and not yet taken, with how many markers it holds; None when
        there is none (a build that failed leaves nothing to take)."""
        with self._changed:
            built = self._built
            if built is None or built[0] <= self._taken:
                return None
            self._taken = built[0]
            return built[1], built[2]

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the newest request is built; False when ``timeout`` passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: self._done >= self._requested, timeout)

    def _work(self) -> None:
        while True:
            with self._changed:
                if self._wanted is None:
                    self._running = False
                    return
                number, markers = self._wanted
                self._wanted = None
            try:
                ledger: EnergyLedger | None = self._build(markers)
            except Exception:  # noqa: BLE001 - e.g. the file vanished: the old ledger stays
                ledger = None
            with self._changed:
                if ledger is not None:
                    self._built = (number, len(markers), ledger)
                self._done = number
                self._changed.notify_all()
