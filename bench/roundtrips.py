"""Round trips between clients and PostgreSQL, counted on the wire (``bench/engine.py``).

A loopback TCP relay in front of the server: a client's URL pointed at it goes through it. A
round trip is counted each time a client sends after the server last spoke on that connection
(what a client waits for before it can go on); bytes are passed on unchanged. Used for counting
passes only: it adds a hop, so latencies are measured without it.
"""

from __future__ import annotations

import contextlib
import socket
import threading

import psycopg


class RoundTrips:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.count = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, url: str) -> str:
        """``url`` through this relay."""
        info = psycopg.conninfo.conninfo_to_dict(url)
        info.update(host="127.0.0.1", port=str(self.port))
        return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items()})

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            state = {"server_spoke": True}
            threading.Thread(
                target=self._pump, args=(client, server, state, True), daemon=True
            ).start()
            threading.Thread(
                target=self._pump, args=(server, client, state, False), daemon=True
            ).start()

    def _pump(
        self, src: socket.socket, dst: socket.socket, state: dict[str, bool], up: bool
    ) -> None:
        try:
            while data := src.recv(65536):
                with self._lock:
                    if up and state["server_spoke"]:
                        self.count += 1
                    state["server_spoke"] = not up
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()
