"""``process`` teammates forked from one pre-imported server (Linux): each child is the process
``subprocess`` would have started (its own session, folder, stderr file and command line, the
server's parent-free environment), the server reaps children as they end and outlives the
runtime only as long as they run; a kill before the fork, a missing folder, a server that is
gone or turned off each end in a process exec'd the old way or a one-line failure. The server
takes requests only from its runtime, and the runtime only answers to its own requests."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core import Home
from app.runtime.runners.forkserver import ENABLED_ENV, ForkServer, supported
from app.runtime.runners.launch import AgentLaunch
from app.runtime.runners.process import ProcessRunner
from app.runtime.runners.process_record import pid_exists, read_record
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Observer, until

pytestmark = pytest.mark.skipif(not supported(), reason="the fork server runs on Linux only")

#: Starting Python processes on a loaded 2-core machine takes a while.
GUARD = 120.0
TEAM = "crew"


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def folder_of(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/cwd")


def mapped_files(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


def start_environment(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes()


@pytest.fixture
def forks() -> Iterator[ForkServer]:
    """A server of the test's own; it and its children are gone afterwards."""
    server = ForkServer(AgentLaunch.base_environment())
    yield server
    server.stop()
    if server.pid is not None:
        os.kill(server.pid, signal.SIGKILL)


async def started_team(
    home: Home, project: Path, runtimes: list[TeamRuntime], *names: str
) -> tuple[TeamRuntime, Observer]:
    """A runtime with ``process`` teammates ``names`` in team ``TEAM``, and what it emits."""
    runtime = TeamRuntime(home, cwd=project, decider="lead", teammate_backend="process")
    runtimes.append(runtime)
    seen = Observer(runtime)
    await runtime.start()
    home.teams.create(TEAM, lead_session_id="s")
    runtime.team_created(TEAM)
    for name in names:
        await runtime.spawn_teammate(name, "Look around.")
    return runtime, seen


def forked_pid(runtime: TeamRuntime, name: str) -> int | None:
    runner = runtime.runners.get(name)
    assert isinstance(runner, ProcessRunner)
    return runner.forked.pid if runner.forked is not None else None


async def test_teammates_are_forked_from_one_server_as_subprocess_would_start_them(
    home: Home, project: Path, runtimes: list[TeamRuntime], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-children")
    monkeypatch.setenv("TEAMDECK_OFFLINE_TTFT", "0.3")  # they stay at work for a while
    runtime, seen = await started_team(home, project, runtimes, "ann", "bob")
    pids = {name: await until(lambda n=name: forked_pid(runtime, n), f"{name} forked", within=GUARD)
            for name in ("ann", "bob")}  # fmt: skip
    runner = runtime.runners["ann"]
    assert isinstance(runner, ProcessRunner) and runner.popen is None
    server = runner.forks
    assert server is not None and server.pid is not None

    for name, pid in pids.items():
        record = home.layout.agent_record_path(TEAM, name)
        await until(lambda r=record: read_record(r), f"{name} started", within=GUARD)
        assert parent_of(pid) == server.pid
        # the server's session, which has no terminal: no terminal signal reaches it; and a
        # process group of its own (what a kill of its group reaches)
        assert os.getsid(pid) == os.getsid(server.pid) == server.pid != os.getsid(0)
        assert os.getpgid(pid) == pid
        assert folder_of(pid) == str(project)
        command = f"-m app.runtime.agent_main --home {home.root} --team {TEAM} --name {name}"
        assert command in cmdline(pid)
        assert os.readlink(f"/proc/{pid}/fd/2") == str(
            home.layout.agents_dir(TEAM) / f"{name}.stderr"
        )
        assert os.readlink(f"/proc/{pid}/fd/0") == os.devnull
    assert b"sk-ant-" not in start_environment(server.pid)
    # The model SDK (a second of imports) is loaded once, in the server: its native JSON
    # parser is mapped there, so no forked child imports it again.
    assert "/jiter" in mapped_files(server.pid)
    await until(lambda: "idle" in seen.statuses("bob"), "bob's first turn", within=GUARD)

    os.kill(pids["ann"], signal.SIGKILL)  # reaped by the server at once: no zombie
    await until(lambda: not pid_exists(pids["ann"]), "ann's pid gone", within=GUARD)
    await until(lambda: "failed" in seen.statuses("ann"), "ann shown failed", within=GUARD)

    await runtime.stop()  # the team is left running: bob goes on, the server waits for him
    assert pid_exists(pids["bob"]) and pid_exists(server.pid)
    os.kill(pids["bob"], signal.SIGKILL)
    await until(lambda: not pid_exists(server.pid or 0), "the server to end", within=GUARD)


async def test_with_the_fork_server_off_each_teammate_is_execd(
    home: Home, project: Path, runtimes: list[TeamRuntime], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENABLED_ENV, "0")
    runtime, seen = await started_team(home, project, runtimes, "ann")
    runner = runtime.runners["ann"]
    assert isinstance(runner, ProcessRunner)
    assert runner.forks is None and runner.popen is not None
    assert parent_of(runner.popen.pid) == os.getpid()
    await until(lambda: "idle" in seen.statuses("ann"), "ann's first turn", within=GUARD)


async def test_when_the_server_dies_unanswered_and_after_teammates_are_execd(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    runtime, seen = await started_team(home, project, runtimes, "ann")
    ann = runtime.runners["ann"]
    assert isinstance(ann, ProcessRunner) and ann.forks is not None and ann.forks.pid
    os.kill(ann.forks.pid, signal.SIGKILL)  # still importing: ann's request is never answered

    await until(lambda: ann.popen is not None, "ann exec'd instead", within=GUARD)
    await until(lambda: "idle" in seen.statuses("ann"), "ann's first turn", within=GUARD)
    await runtime.spawn_teammate("bob", "Look around.")
    bob = runtime.runners["bob"]
    assert isinstance(bob, ProcessRunner) and bob.popen is not None and bob.forked is None
    await until(lambda: "idle" in seen.statuses("bob"), "bob's first turn", within=GUARD)
    assert "failed" not in seen.statuses("ann") + seen.statuses("bob")


async def test_a_child_killed_before_the_server_started_it_never_runs(
    forks: ForkServer, home: Home, project: Path
) -> None:
    args = ["--home", str(home.root), "--team", TEAM, "--name", "ann"]
    stderr = project / "ann.stderr"
    forked = forks.spawn(args, cwd=project, env=AgentLaunch.base_environment(), stderr=stderr)
    forks.cancel(forked)  # the server is still importing
    pid = await until(lambda: forked.pid, "the server's answer", within=GUARD)
    await until(lambda: not pid_exists(pid), "the child killed", within=GUARD)


async def test_a_missing_folder_is_refused_in_one_line_and_nothing_is_forked(
    forks: ForkServer, home: Home, tmp_path: Path
) -> None:
    args = ["--home", str(home.root), "--help"]  # the entry point's help: it ends at once
    env = AgentLaunch.base_environment()
    missing = tmp_path / "gone"
    refused = forks.spawn(args, cwd=missing, env=env, stderr=tmp_path / "a.stderr")
    error = await until(lambda: refused.error, "the refusal", within=GUARD)
    assert error == f"no such folder: {missing}" and refused.pid is None

    ran = forks.spawn(args, cwd=tmp_path, env=env, stderr=tmp_path / "b.stderr")
    pid = await until(lambda: ran.pid, "the next child", within=GUARD)
    await until(lambda: not pid_exists(pid), "the child to end", within=GUARD)
    assert (tmp_path / "b.stderr").read_text() == ""  # it ran the command, without an error


async def test_a_request_with_other_interpreter_settings_is_not_forked(
    forks: ForkServer, tmp_path: Path
) -> None:
    env = {**AgentLaunch.base_environment(), "PYTHONHASHSEED": "7"}
    assert not forks.usable_for(env)
    with pytest.raises(OSError, match="cannot start this process"):
        forks.spawn(["ps"], cwd=tmp_path, env=env, stderr=tmp_path / "x.stderr")


async def test_a_request_injected_through_the_servers_descriptors_does_nothing(
    forks: ForkServer, home: Home, tmp_path: Path
) -> None:
    """The server listens only on its socketpair with the runtime: its stdin and stdout are
    ``/dev/null`` and ``/proc/<pid>/fd`` does not reopen a socket, so another process of the
    same user has no way to hand it a request."""
    args = ["--home", str(home.root), "--help"]
    env = AgentLaunch.base_environment()
    first = forks.spawn(args, cwd=tmp_path, env=env, stderr=tmp_path / "a.stderr")
    await until(lambda: first.pid, "the server ready", within=GUARD)
    assert forks.pid is not None
    injected = tmp_path / "injected"
    request = {
        "id": 2, "nonce": "0" * 32, "cwd": str(tmp_path), "env": env,
        "args": ["--home", str(injected / "home"), "--team", "t", "--name", "n"],
        "stderr": str(injected / "n.stderr"),
    }  # fmt: skip
    line = json.dumps(request).encode() + b"\n"
    refused = 0
    for fd in os.listdir(f"/proc/{forks.pid}/fd"):
        try:
            opened = os.open(f"/proc/{forks.pid}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # the socket (ENXIO)
            refused += 1
            continue
        with contextlib.suppress(OSError):
            os.write(opened, line)
        os.close(opened)
    assert refused >= 1
    assert os.readlink(f"/proc/{forks.pid}/fd/0") == os.devnull
    second = forks.spawn(args, cwd=tmp_path, env=env, stderr=tmp_path / "b.stderr")
    await until(lambda: second.pid, "the next answer", within=GUARD)
    assert (first.id, second.id) == (1, 2)  # the injected id 2 was not taken for the runtime's
    assert not injected.exists() and forks.refused == 0


async def test_an_answer_the_runtime_did_not_ask_for_is_refused(
    forks: ForkServer, home: Home, tmp_path: Path
) -> None:
    args = ["--home", str(home.root), "--help"]
    env = AgentLaunch.base_environment()
    forked = forks.spawn(args, cwd=tmp_path, env=env, stderr=tmp_path / "a.stderr")
    assert not forks.answered({"id": forked.id + 1, "nonce": forked.nonce, "pid": os.getpid()})
    assert not forks.answered({"id": forked.id, "nonce": "0" * 32, "pid": os.getpid()})
    assert not forks.answered({"id": forked.id, "pid": os.getpid()})
    assert forks.refused == 3
    pid = await until(lambda: forked.pid, "the server's own answer", within=GUARD)
    assert pid != os.getpid() and forked.error is None
    # Once answered, the same id is not waited for any more: a replay is refused too.
    assert not forks.answered({"id": forked.id, "nonce": forked.nonce, "pid": os.getpid()})
    assert forked.pid == pid and forks.refused == 4
