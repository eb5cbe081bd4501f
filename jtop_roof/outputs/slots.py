"""Connection slots of a small server (``serve``'s ``/metrics``): at most ``capacity`` connections
open at once. A new one that finds them all taken takes the slot of the connection that has waited
longest without sending a whole request (a client trickling its header, or sending nothing), which
is cut; one that is being answered is never cut, and when every slot is answering the new one is
refused. So clients that trickle and reconnect as soon as they are cut cannot hold every slot:
each new connection, a scrape too, is the last in line to be cut, and a scrape asks at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

C = TypeVar("C", bound=Hashable)


class ConnectionSlots(Generic[C]):
    """The open connections in the order they came, each marked once it sent a whole request;
    safe to call from the accepting thread and the connections' own."""

    def __init__(self, capacity: int, cut: Callable[[C], None]) -> None:
        self.capacity = capacity
        self._cut = cut
        self._lock = threading.Lock()
        self._open: dict[C, bool] = {}  # insertion order: the order they came

    def admit(self, connection: C) -> bool:
        """A slot for ``connection``, cutting the one idle longest when all are taken; False when
        every slot is answering a request (the caller closes ``connection``)."""
        with self._lock:
            if len(self._open) >= self.capacity:
                idle = next((held for held, asked in self._open.items() if not asked), None)
                if idle is None:
                    return False
                del self._open[idle]
                self._cut(idle)  # its thread ends at once; its leave() then finds nothing
            self._open[connection] = False
            return True

    def asked(self, connection: C) -> None:
        """``connection`` sent a whole request: from now on it is never cut for a new one."""
        with self._lock:
            if connection in self._open:
                self._open[connection] = True

    def leave(self, connection: C) -> None:
        """``connection`` is done (answered, cut or failed): its slot is free."""
        with self._lock:
            self._open.pop(connection, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._open)
