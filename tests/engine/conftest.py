"""A throwaway PostgreSQL for the engine's tests: one per test session (per xdist worker),
in a temporary folder, on a free port, with its own Unix socket folder; stopped by PID.

Without PostgreSQL's programs the engine's tests are skipped, with one line saying how to
install them (CI installs them: ``.ci/run``). Run as root (as CI is), the server runs as the
``postgres`` user (``app.engine.server``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.engine.server import INSTALL_HINT, LocalServer, find_bin
from tests.engine.pg import Engine


@pytest.fixture(scope="session")
def engine() -> Iterator[Engine]:
    if find_bin() is None:
        pytest.skip(f"engine tests need PostgreSQL's programs: {INSTALL_HINT}")
    folder = Path(tempfile.mkdtemp(prefix="teamdeck-pg-"))
    folder.chmod(0o711)  # run as root, the server runs as postgres: it must pass through
    server = LocalServer(folder / "server", child=True)
    try:
        url = server.init(nosync=False)
        yield Engine(server, url)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
