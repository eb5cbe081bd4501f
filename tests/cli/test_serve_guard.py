"""``serve`` against what a user or a client can throw at it: a ``--board`` that is no label value
(bytes that are not UTF-8, control characters) and clients that hold connections without asking."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import urllib.request

import pytest
from paths import REPO
from source_support import WAIT_S, finishes, reply_of
from tui_support import ScriptedSource

from jtop_roof.commands.options import FlagError
from jtop_roof.commands.serve import check_board
from jtop_roof.outputs import serve as sv
from jtop_roof.outputs.slots import ConnectionSlots
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.runtime import Runtime

ROOT = REPO
REQUEST = b"GET /metrics HTTP/1.0\r\n\r\n"


# -- --board --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("board", "said"), [
    (b"nano\xff1", "--board 'nano\\xff1' is not UTF-8 text"),
    (b"nano\n1", "--board 'nano\\n1' holds control"),
    (b"nano\x1b[2J1", "--board 'nano\\x1b[2J1' holds control"),
    ("nano\u202e1".encode(), "--board 'nano\\u202e1' holds control"),
    (b"nano\xc2\x9b1", "--board 'nano\\x9b1' holds control"),
])
def test_a_board_that_is_no_label_value_is_refused_before_listening(board, said):
    """Every scrape of such a board failed with nothing said; now one line and exit 2, at once
    (a port is named that nothing else holds: the refusal comes before it is bound)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([os.fsencode(sys.executable), b"-m", b"jtop_roof", b"serve", b"--source", b"demo",
                           b"--listen", b"127.0.0.1:0", b"--board", board],
                          capture_output=True, timeout=WAIT_S, env=env)
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr and said in stderr, stderr
    assert "\x1b" not in stderr and "\u202e" not in stderr and "\x9b" not in stderr
    assert done.stdout == b""


@pytest.mark.parametrize("board", ["nano1", "Jetson Orin #2 (lab)", "café-ß"])
def test_printable_boards_are_taken_and_labelled(board):
    check_board(board)
    text = sv.render(sv.Snapshot(info={"device": ""}), board)
    assert f'jroof_info{{board="{board}",device=""}} 1.0' in text


def test_a_lone_surrogate_from_the_api_is_refused_too():
    with pytest.raises(FlagError, match=r"'x\\ud800' is not UTF-8"):
        check_board("x\ud800")


# -- connection slots -------------------------------------------------------------------------------

def test_a_full_set_of_slots_cuts_the_connection_idle_longest_and_never_one_that_asked():
    cut: list[str] = []
    slots: ConnectionSlots[str] = ConnectionSlots(3, cut.append)
    assert all(slots.admit(name) for name in ("a", "b", "c"))
    slots.asked("a")  # being answered: never cut
    assert slots.admit("d") and cut == ["b"]  # b came before c and never asked
    assert slots.admit("e") and cut == ["b", "c"]
    slots.asked("d")
    slots.asked("e")
    assert not slots.admit("f") and cut == ["b", "c"] and len(slots) == 3  # all answering: f refused
    slots.leave("a")
    slots.leave("b")  # already cut: nothing more
    assert len(slots) == 2 and slots.admit("f") and cut == ["b", "c"]
    slots.asked("gone")  # a connection cut or done meanwhile: ignored
    assert len(slots) == 3


class Server:
    """A MetricsServer on a free loopback port, over an empty pipeline."""

    def __init__(self) -> None:
        runtime = Runtime(ScriptedSource([]), Config())
        self.server = sv.MetricsServer(sv.Metrics(runtime.pipeline, source_kind="host"), "127.0.0.1", 0)
        self.server.start()
        self.address = self.server.address
        self.clients: list[socket.socket] = []

    def connect(self, first_bytes: bytes) -> socket.socket:
        client = socket.create_connection(self.address, timeout=WAIT_S)
        client.sendall(first_bytes)
        self.clients.append(client)
        return client

    def scrape(self) -> bytes:
        host, port = self.address
        url = f"http://{host}:{port}/metrics"
        return finishes(lambda: urllib.request.urlopen(url, timeout=WAIT_S).read())

    def close(self) -> None:
        for client in self.clients:
            client.close()
        self.server.close()


def test_trickling_clients_on_every_slot_give_way_to_a_scrape(monkeypatch):
    """The slots all held by clients that never finish their request: a scrape still gets its
    answer, the client idle longest is cut for it, and the others keep their slots."""
    monkeypatch.setattr(sv, "MAX_CONNECTIONS", 4)
    served = Server()
    try:
        tricklers = [served.connect(b"G") for _ in range(4)]
        assert b"jroof_info" in served.scrape()
        assert reply_of(tricklers[0]) == b""  # the oldest: cut, with no answer
        tricklers[1].sendall(REQUEST[1:])  # a later one still holds its slot and is answered
        assert reply_of(tricklers[1]).startswith(b"HTTP/1.0 200")
    finally:
        served.close()


def test_a_connection_being_answered_is_never_cut_for_a_new_one(monkeypatch):
    """Every slot answering a request (their render held open here): a new connection is the one
    closed, and the answers all complete."""
    monkeypatch.setattr(sv, "MAX_CONNECTIONS", 2)
    rendering = threading.Semaphore(0)
    go_on = threading.Event()
    plain_exposition = sv.exposition

    def held_exposition(*args: object) -> tuple[bytes, str]:
        rendering.release()
        go_on.wait(WAIT_S)
        return plain_exposition(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(sv, "exposition", held_exposition)
    served = Server()
    try:
        answered = [served.connect(REQUEST) for _ in range(2)]
        for _ in answered:
            assert rendering.acquire(timeout=WAIT_S), "a request never reached its render"
        late = served.connect(REQUEST)
        assert reply_of(late) == b""
        go_on.set()
        for client in answered:
            reply = reply_of(client)
            assert reply.startswith(b"HTTP/1.0 200") and b"jroof_info" in reply
    finally:
        go_on.set()
        served.close()
