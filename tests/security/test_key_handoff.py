"""The API key reaches a teammate process only over a channel no other process can open.

A whole headless run on the real client path (the offline model served on loopback behind a
fake key, :mod:`tests.security.offline_api`), in each teammate mode: its teammates really get
the key (their requests carry it and are answered), while a same-user spy process
(:mod:`tests.security.spy`) loops over every ``/tmp/teamdeck-key-*`` entry and every open
descriptor, ``environ`` and ``cmdline`` of the runtime's descendants, and never reads it.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli.headless import run_team
from app.core import Home
from app.runtime.runners.handoff import (
    HandoffError,
    SocketOffer,
    receive_fd,
    receive_socket,
    socket_holding,
)
from tests.security.offline_api import OfflineAPI

KEY = "sk-ant-handoff-" + uuid.uuid4().hex
GOAL = "Describe the python files in this project"
TEAMMATES = {"researcher", "analyst", "writer"}
#: Starting Python processes on a loaded 2-core machine takes a while.
GUARD = 180.0
SPY = Path(__file__).with_name("spy.py")


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[OfflineAPI]:
    """The keyed loopback API, with teamdeck's environment pointing at it."""
    with OfflineAPI(KEY) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        monkeypatch.delenv("TEAMDECK_MODEL", raising=False)
        monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
        yield server


@pytest.fixture
def tmux_socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A tmux server of the test's own (``TEAMDECK_TMUX_SOCKET``), killed afterwards."""
    name = f"teamdeck-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("TEAMDECK_TMUX_SOCKET", name)
    monkeypatch.delenv("TMUX", raising=False)
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)


class Spy:
    """The spy process, watching this process's descendants."""

    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
        self.proc = subprocess.Popen(
            [sys.executable, str(SPY), str(os.getpid()), KEY],
            stdout=subprocess.PIPE, env=env,
        )  # fmt: skip

    def report(self) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        return dict(json.loads(out))


async def spied_run(home: Home, project: Path, backend: str) -> tuple[tuple[int, str], dict]:
    spy = Spy()
    try:
        result = await asyncio.wait_for(
            run_team(
                home, GOAL, cwd=project, out=io.StringIO(), json_output=True,
                time_limit=GUARD, teammate_backend=backend,
            ),
            GUARD + 10,
        )  # fmt: skip
    finally:
        seen = spy.report()
    return result, seen


MODES = [
    pytest.param("process", "1", id="forked"),
    pytest.param("process", "0", id="execd"),
    pytest.param(
        "tmux", "1", id="tmux",
        marks=pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("backend", "forkserver"), MODES)
async def test_teammates_get_the_key_and_a_spy_never_reads_it(
    backend: str,
    forkserver: str,
    api: OfflineAPI,
    home: Home,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.setenv("TEAMDECK_FORKSERVER", forkserver)
    if backend == "tmux":
        request.getfixturevalue("tmux_socket")
    (code, reason), seen = await spied_run(home, project, backend)
    print(f"spy ({backend}, forkserver={forkserver}): {seen}")  # the before/after record
    assert seen["hits"] == []
    assert seen["rounds"] > 1 and seen["opened"] > 0  # it was there, reading
    assert (code, reason) == (0, "team finished")
    assert TEAMMATES | {"team-lead"} <= api.agents(), (api.answered, api.refused)
    assert not api.refused


def test_the_tmux_offer_serves_only_the_teammates_process() -> None:
    """``tmux`` mode: the socket is served once, only to the process whose pid the runtime
    expects; whoever else connects first gets nothing, and after the teammate nobody can."""
    offer = SocketOffer({"ANTHROPIC_API_KEY": KEY}, timeout=GUARD)
    assert oct(offer.folder.stat().st_mode & 0o777) == "0o700"
    reader = (
        "import sys; from pathlib import Path; from app.runtime.runners.handoff import "
        "receive_socket; input(); print(receive_socket(Path(sys.argv[1]))['ANTHROPIC_API_KEY'])"
    )
    teammate = subprocess.Popen(
        [sys.executable, "-c", reader, str(offer.path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    offer.expect(teammate.pid)
    with pytest.raises(HandoffError):  # this process is not the teammate
        receive_socket(offer.path, timeout=GUARD)
    out, _ = teammate.communicate("\n", timeout=GUARD)
    assert out.strip() == KEY and teammate.returncode == 0
    # This process at least (a spy of a test running beside this one may try too).
    assert offer.served.is_set() and offer.refused >= 1
    assert not offer.folder.exists()  # served once: nothing left to connect to


def test_an_inherited_descriptor_must_be_a_socket() -> None:
    """A pipe can be reopened through ``/proc/<pid>/fd`` by anyone: it is refused."""
    read, write = os.pipe()
    os.write(write, json.dumps({"ANTHROPIC_API_KEY": KEY}).encode())
    os.close(write)
    with pytest.raises(HandoffError, match="not a socket"):
        receive_fd(read)
    held = socket_holding({"ANTHROPIC_API_KEY": KEY})
    assert receive_fd(held.detach()) == {"ANTHROPIC_API_KEY": KEY}


def _memory(pid: int) -> bytes:
    """Every readable, writable mapping of process ``pid`` (its heap, its stacks)."""
    chunks: list[bytes] = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("rw"):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                chunks.append(mem.read(end - start))
            except OSError:  # e.g. [vvar]
                continue
    return b"".join(chunks)


async def test_the_fork_server_never_holds_the_key(home: Home, tmp_path: Path) -> None:
    """The runtime hands the fork server a descriptor holding a child's key, never the key:
    nothing in the server's memory has it, before or after the fork."""
    from app.runtime.runners.forkserver import ForkServer, supported
    from app.runtime.runners.launch import AgentLaunch
    from app.runtime.runners.process_record import pid_exists
    from tests.runtime.conftest import until

    if not supported():
        pytest.skip("no fork server here")
    key = "sk-ant-forks-" + uuid.uuid4().hex
    env = AgentLaunch.base_environment()
    server = ForkServer(env)
    try:
        args = ["--home", str(home.root), "--help"]  # the entry point's help: it ends at once
        children = [
            server.spawn(args, cwd=tmp_path, env=env, stderr=tmp_path / f"{n}.stderr",
                         credentials={"ANTHROPIC_API_KEY": key})
            for n in range(3)
        ]  # fmt: skip
        pids = [await until(lambda c=c: c.pid, "the child forked", within=60) for c in children]
        await until(lambda: not any(map(pid_exists, pids)), "the children to end", within=60)
        assert server.pid is not None
        assert key.encode() not in _memory(server.pid)
    finally:
        server.stop()
        if server.pid is not None:
            os.kill(server.pid, signal.SIGKILL)
