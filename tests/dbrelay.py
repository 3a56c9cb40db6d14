"""A TCP relay between a server process under test and the test database, switched off and on:
what a restarting or unreachable database looks like from the server's side."""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import quote

from django.db import connection

from tests.live_server import free_port


class Relay:
    """127.0.0.1:<port> relayed to the test database's server; ``down()`` drops every connection
    and refuses new ones, ``up()`` accepts again on the same port."""

    def __init__(self) -> None:
        db = connection.settings_dict
        host, port = str(db["HOST"]), int(db["PORT"] or 5432)
        self.target: tuple[int, str | tuple[str, int]] = (
            (socket.AF_UNIX, f"{host}/.s.PGSQL.{port}") if host.startswith("/") else (socket.AF_INET, (host, port))
        )
        self.port = free_port()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        if self._listener is not None:
            # shutdown() first: close() alone leaves a thread blocked in accept() still accepting.
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            family, address = self.target
            server = socket.socket(family, socket.SOCK_STREAM)
            server.connect(address)
            self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with the database reached through this relay, failing fast when it is down."""
        db = connection.settings_dict
        credentials = quote(db["USER"], safe="") + (":" + quote(db["PASSWORD"], safe="") if db["PASSWORD"] else "")
        return {
            **base,
            "DATABASE_URL": f"postgresql://{credentials}@127.0.0.1:{self.port}/{quote(db['NAME'], safe='')}",
            "DATABASE_CONNECT_TIMEOUT": "1",
            "DATABASE_POOL_MAX": "2",
        }
