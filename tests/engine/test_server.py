"""The local server picks another port when the free one it chose was taken before the server
could bind it (two test workers, or any program, racing for it)."""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path

import psycopg
import pytest

from app.engine import server as server_module
from app.engine.server import INSTALL_HINT, LocalServer, find_bin


def test_a_port_taken_meanwhile_means_another(monkeypatch: pytest.MonkeyPatch) -> None:
    if find_bin() is None:
        pytest.skip(f"engine tests need PostgreSQL's programs: {INSTALL_HINT}")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ports = iter([taken.getsockname()[1]])
    real = server_module.free_port
    monkeypatch.setattr(server_module, "free_port", lambda: next(ports, None) or real())
    folder = Path(tempfile.mkdtemp(prefix="teamdeck-pg-"))
    folder.chmod(0o711)
    server = LocalServer(folder / "server", child=True)
    try:
        url = server.init(nosync=True)
        assert server.port != taken.getsockname()[1]
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        taken.close()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
