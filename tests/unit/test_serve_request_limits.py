"""``serve`` bounds what a client costs it: the whole request head, however it is split into
lines, and a burst of connections waits in the kernel's backlog instead of being dropped."""

from __future__ import annotations

import errno
import selectors
import socket
import time

import pytest
from source_support import WAIT_S, reply_of
from tui_support import ScriptedSource

from jtop_roof.outputs import serve as sv
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.runtime import Runtime


def metrics_server(start: bool = True) -> sv.MetricsServer:
    runtime = Runtime(ScriptedSource([]), Config())
    server = sv.MetricsServer(sv.Metrics(runtime.pipeline, source_kind="host"), "127.0.0.1", 0)
    if start:
        server.start()
    return server


def answer_to(server: sv.MetricsServer, request: bytes) -> bytes:
    """What the server sends back before it closes (b"" when it closes without a word)."""
    with socket.create_connection(server.address, timeout=WAIT_S) as client:
        try:
            client.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the whole head went out: its answer is still there to read
        return reply_of(client)


def head(lines: int, value_bytes: int) -> bytes:
    fields = b"".join(b"X-Pad-%d: %s\r\n" % (n, b"a" * value_bytes) for n in range(lines))
    return b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n" + fields + b"\r\n"


@pytest.mark.parametrize(("lines", "value_bytes"), [
    (98, 64 * 1024 - 64),  # 99 header lines of 64 KiB, each under http.server's own limits
    (98, 1024),             # many modest ones
    (90, 200),              # many small ones: only their sum is too much
])
def test_a_request_head_over_the_cap_is_refused_whatever_its_shape(lines, value_bytes):
    server = metrics_server()
    try:
        answer = answer_to(server, head(lines, value_bytes))
        assert answer == b"" or answer.startswith(b"HTTP/1.0 431")
        assert b"jroof_info" not in answer
        assert b"jroof_info" in answer_to(server, head(8, 100))  # an ordinary scrape still works
    finally:
        server.close()


def test_a_head_just_under_the_cap_is_answered():
    server = metrics_server()
    try:
        request = head(1, 0)
        request = head(1, sv.MAX_HEAD_BYTES - len(request) - 16)
        assert len(request) < sv.MAX_HEAD_BYTES
        assert answer_to(server, request).startswith(b"HTTP/1.0 200")
    finally:
        server.close()


def test_a_burst_of_connections_waits_in_the_backlog():
    """64 connections come while the server is not accepting (busy): each completes its
    handshake in the kernel's backlog, so none of them times out waiting."""
    server = metrics_server(start=False)  # listening, but nothing accepts yet
    clients = []
    try:
        with selectors.DefaultSelector() as selector:
            for _ in range(64):
                client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                client.setblocking(False)
                code = client.connect_ex(server.address)
                assert code in (0, errno.EINPROGRESS)
                clients.append(client)
                selector.register(client, selectors.EVENT_WRITE)
            connected = 0
            deadline = time.monotonic() + WAIT_S
            while selector.get_map() and (left := deadline - time.monotonic()) > 0:
                for key, _ in selector.select(left):
                    selector.unregister(key.fileobj)
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    connected += sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
        assert connected == 64
    finally:
        for client in clients:
            client.close()
        server.server_close()
