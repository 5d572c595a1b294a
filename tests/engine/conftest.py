"""A throwaway PostgreSQL for the engine's tests: one per test session (per xdist worker),
in a temporary folder, on a free port, with its own Unix socket folder; stopped by PID.

Without PostgreSQL's programs the engine's tests are skipped, with one line saying how to
install them (CI installs them: ``.ci/run``). Run as root (as CI is), the server runs as the
``postgres`` user (``app.engine.server``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
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


def ip(*argv: str) -> None:
    subprocess.run(["ip", *argv], check=True, capture_output=True)


@pytest.fixture
def netns() -> Iterator[tuple[str, str]]:
    """``(namespace, host address)``: a namespace joined to this one by a veth pair."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("a network namespace needs root and iproute2's ip")
    if find_bin() is None:
        pytest.skip(f"engine tests need PostgreSQL's programs: {INSTALL_HINT}")
    tag = os.getpid() % 100_000
    ns, host_if, ns_if = f"td-{tag}", f"tdh{tag}", f"tdn{tag}"
    net = f"10.{200 + tag % 50}.{tag % 250}"
    try:
        ip("netns", "add", ns)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot make a network namespace: {exc.stderr.decode().strip()}")
    try:
        ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        ip("link", "set", ns_if, "netns", ns)
        ip("addr", "add", f"{net}.1/30", "dev", host_if)
        ip("link", "set", host_if, "up")
        ip("netns", "exec", ns, "ip", "addr", "add", f"{net}.2/30", "dev", ns_if)
        ip("netns", "exec", ns, "ip", "link", "set", ns_if, "up")
        ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")
        yield ns, f"{net}.1"
    finally:
        subprocess.run(["ip", "link", "del", host_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
