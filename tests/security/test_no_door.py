"""Issue 28, items 3, 4 and 6: no door from the sandbox to the desk, no protected name created
where there was none, and no command at all where the sandbox cannot run.

The attacks come from a scripted hostile lead (the conformance server) driving a headless
``teamdeck run`` as a person starts it (its entry function with the person's arguments and
environment, in the test's process: ``run_here``), or from the Bash tool an agent calls."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from app.core import Home
from app.runtime.sandbox import SandboxConfig, bwrap_problem
from app.runtime.sandbox.seccomp import ARCHES, RET_ALLOW, build_filter, errno_ret, run_filter
from app.runtime.tools.base import AgentIdentity, ToolContext
from app.runtime.tools.workspace import Bash
from tests.conformance import conftest as conformance
from tests.conformance.conftest import FAKE_KEY, blocks
from tests.conformance.server import MessagesServer, call, say
from tests.conformance.test_conformance_headless import child_env, run_here

api = conformance.api  # the scripted hostile model's server (a fixture)
needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"{bwrap_problem()}")
ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------ the filter's program


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_the_socket_filter_decides_by_family(arch: str) -> None:
    a = ARCHES[arch]
    closed = build_filter(allow_unix=False, arch=a)
    opened = build_filter(allow_unix=True, arch=a)
    refuse, nosys = errno_ret(errno.EPERM), errno_ret(errno.ENOSYS)

    def socket_(program: list[tuple[int, int, int, int]], *args: int) -> int:
        return run_filter(program, a.socket, a.audit, args)

    assert socket_(closed, 1, 1, 0) == refuse  # AF_UNIX: path and abstract sockets
    assert socket_(opened, 1, 1, 0) == RET_ALLOW
    assert socket_(closed, 2, 1, 0) == RET_ALLOW and socket_(closed, 10, 2, 0) == RET_ALLOW
    assert socket_(closed, 16, 3, 0) == RET_ALLOW  # NETLINK_ROUTE
    assert socket_(closed, 16, 3, 9) == refuse  # NETLINK_AUDIT
    for family in (17, 40, 38, 31):  # packet, vsock, alg, bluetooth
        assert socket_(closed, family, 1, 0) == refuse
    pair = a.socketpair
    assert run_filter(closed, pair, a.audit, (1, 1 | 0o2000000)) == RET_ALLOW  # stream
    assert run_filter(closed, pair, a.audit, (1, 5)) == RET_ALLOW  # seqpacket
    assert run_filter(closed, pair, a.audit, (1, 2)) == refuse  # datagram: re-connectable
    assert run_filter(closed, pair, a.audit, (2, 1)) == refuse
    for nr in a.io_uring:
        assert run_filter(closed, nr, a.audit) == nosys
    assert run_filter(closed, 0, a.audit) == RET_ALLOW  # read
    assert run_filter(closed, 102, 0x40000003) == nosys  # another ABI (i386 socketcall)
    if a.x32:
        assert run_filter(closed, 0x40000000 | 41, a.audit, (1,)) == nosys


# --------------------------------------------------------------------- Unix sockets


def _listen(path_or_name: str) -> socket.socket:
    server = socket.socket(socket.AF_UNIX)
    server.bind(path_or_name)
    server.listen()
    return server


PROBE = (
    "python3 -c 'import socket, sys\n"
    "for a in sys.argv[1:]:\n"
    "    try:\n"
    "        s = socket.socket(socket.AF_UNIX)\n"
    '        s.connect(a.replace("@", "\\0", 1)); print("CONNECTED", a)\n'
    '    except OSError as e: print("REFUSED", a, e.errno)\' '
)


def _context(tmp_path: Path, project: Path, sandbox: SandboxConfig) -> ToolContext:
    agent = AgentIdentity(name="w", team="t", cwd=project)
    return ToolContext(home=Home(tmp_path / "home"), agent=agent, sandbox=sandbox)


@needs_bwrap
async def test_a_command_reaches_no_unix_socket_outside_the_allowlist(tmp_path: Path) -> None:
    """A path socket the sandbox can see (in the project) and an abstract one (network on:
    the host's network namespace) refuse a sandboxed command; the listed path answers."""
    project = tmp_path / "project"
    project.mkdir()
    path = str(project / "desk.sock")
    name = f"teamdeck-test-{os.getpid()}-{id(tmp_path)}"
    with _listen(path), _listen("\0" + name):
        probe = PROBE + f"{path} @{name}"
        net = SandboxConfig(allowed_hosts=("example.org",))
        closed = await Bash().call({"command": probe}, _context(tmp_path, project, net))
        assert f"REFUSED {path} {errno.EPERM}" in closed.content, closed.content
        assert f"REFUSED @{name} {errno.EPERM}" in closed.content, closed.content
        listed = SandboxConfig(unix_sockets=(path,))
        opened = await Bash().call({"command": probe}, _context(tmp_path, project, listed))
        assert f"CONNECTED {path}" in opened.content, opened.content
        # Without the network the abstract socket is in another namespace all the same.
        assert f"REFUSED @{name}" in opened.content, opened.content


@needs_bwrap
async def test_an_allowlist_opens_only_the_listed_socket(tmp_path: Path) -> None:
    """Listing one socket lets a command make Unix sockets (the filter cannot tell paths
    apart): another socket it can see still does not answer it, nor one of the person's
    outside the project."""
    project = tmp_path / "project"
    project.mkdir()
    listed_path, other = str(project / "listed.sock"), str(project / "other.sock")
    outside = Path.home() / f".teamdeck-test-{os.getpid()}.sock"
    with _listen(listed_path), _listen(other), _listen(str(outside)):
        try:
            probe = PROBE + f"{listed_path} {other} {outside}"
            listed = SandboxConfig(unix_sockets=(listed_path,))
            result = await Bash().call({"command": probe}, _context(tmp_path, project, listed))
        finally:
            outside.unlink()
    assert f"CONNECTED {listed_path}" in result.content, result.content
    assert f"REFUSED {other}" in result.content, result.content
    assert f"REFUSED {outside}" in result.content, result.content


def _headless(
    api: MessagesServer,
    tmp_path: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *flags: str,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``teamdeck run "Do it." --headless --json FLAGS`` with ``env`` added to the person's
    environment. Whether bwrap can run is looked up again for it and after it (``PATH`` may
    name no bwrap here, and the answer is kept per process)."""
    bwrap_problem.cache_clear()
    try:
        return run_here(
            monkeypatch,
            capsys,
            tmp_path / "home",
            project,
            child_env(api, **env),
            "Do it.",
            "--json",
            *flags,
        )
    finally:
        bwrap_problem.cache_clear()


def _results(api: MessagesServer) -> list[str]:
    """The tool results the lead received, in order."""
    seen: list[str] = []
    for recorded in api.requests_of("team-lead"):
        for block in blocks(recorded.body, "tool_result"):
            content = block.get("content")
            text = (
                content
                if isinstance(content, str)
                else "".join(c.get("text", "") for c in content or [])
            )
            if text not in seen:
                seen.append(text)
    return seen


@needs_bwrap
def test_the_hostile_lead_cannot_reach_the_bridge_nor_the_keys(
    api: MessagesServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The lead model, in bypassPermissions (the person's flag), tries the bridge's socket and
    a team's signing key in teamdeck's home, here inside the project (where the sandbox would
    otherwise show it): the socket refuses, the keys folder is empty inside. The project is
    in a short folder: a socket's path holds at most 107 bytes, and pytest's grows with its
    run count (``pytest-1023/popen-gw0/test_the_hostile_lead_cannot_r0/…`` was 108)."""
    short = Path(tempfile.mkdtemp(prefix="nd-"))
    try:
        _hostile_lead_and_the_bridge(api, tmp_path, short / "project", monkeypatch, capsys)
    finally:
        shutil.rmtree(short, ignore_errors=True)


def _hostile_lead_and_the_bridge(
    api: MessagesServer,
    tmp_path: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = project / "td-home"
    (home / "bridge").mkdir(parents=True)
    (home / "keys").mkdir()
    (home / "keys" / "t.key").write_text("SECRET-KEY")
    bridge = home / "bridge" / "claude.sock"
    api.script(
        "team-lead",
        [
            call("Bash", {"command": PROBE + str(bridge)}),
            call("Bash", {"command": f"cat {home}/keys/t.key; ls -A {home}/bridge; echo END"}),
            say("Done."),
        ],
    )
    with _listen(str(bridge)):
        done = _headless(
            api,
            tmp_path,
            project,
            monkeypatch,
            capsys,
            "--dangerously-skip-permissions",
            TEAMDECK_HOME=str(home),
        )
    assert done.returncode == 0, done.stderr
    first, second = _results(api)[:2]
    assert f"REFUSED {bridge} " in first, first
    assert "SECRET-KEY" not in second and "claude.sock" not in second and "END" in second


# ------------------------------------------------------------- absent protected names


@needs_bwrap
def test_absent_protected_names_cannot_be_created(
    api: MessagesServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A project that is no repository: ``git init && git config core.fsmonitor ./x`` (then
    the person's ``git status`` would run ``x``), a new ``.mcp.json`` and ``.gitmodules``
    all fail, and nothing of the sandbox's stand-ins stays behind."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("hi\n")
    api.script(
        "team-lead",
        [
            call(
                "Bash",
                {"command": "git init -q . && git config core.fsmonitor ./x; echo GIT=$?"},
            ),
            call("Bash", {"command": "echo '{\"mcpServers\": {}}' > .mcp.json; echo MCP=$?"}),
            call("Bash", {"command": "echo '[submodule]' > .gitmodules; echo SUB=$?"}),
            call("Bash", {"command": "mkdir -p .claude && echo '{}' > .claude/settings.json"}),
            say("Done."),
        ],
    )
    done = _headless(api, tmp_path, project, monkeypatch, capsys, "--dangerously-skip-permissions")
    assert done.returncode == 0, done.stderr
    results = _results(api)
    assert "GIT=0" not in results[0] and "MCP=0" not in results[1] and "SUB=0" not in results[2]
    assert sorted(os.listdir(project)) == ["notes.md"]


# ---------------------------------------------------------------------- fail closed


def _path_without_bwrap(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh", "bash", "touch", "ls", "cat", "env"):
        found = subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip()
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


@pytest.mark.parametrize("off", [False, True])
def test_without_bwrap_bash_refuses_in_one_line(
    api: MessagesServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    off: bool,
) -> None:
    """No bwrap on PATH: the hostile lead's command does not run; the tool's answer is one
    line naming the fix, and so is the warning at start. ``--no-sandbox`` (the person's
    choice) runs it."""
    project = tmp_path / "project"
    project.mkdir()
    api.script("team-lead", [call("Bash", {"command": "touch pwned"}), say("Done.")])
    flags = ["--dangerously-skip-permissions", *(["--no-sandbox"] if off else [])]
    path = _path_without_bwrap(tmp_path)
    done = _headless(api, tmp_path, project, monkeypatch, capsys, *flags, PATH=path)
    assert done.returncode == 0, done.stderr
    [result] = _results(api)
    if off:
        assert (project / "pwned").exists() and "bwrap" not in done.stderr
        return
    assert not (project / "pwned").exists()
    assert result.count("\n") == 0 and "apt-get install bubblewrap" in result, result
    assert "--no-sandbox" in result
    warnings = [line for line in done.stderr.splitlines() if "bwrap" in line]
    assert len(warnings) == 1 and "apt-get install bubblewrap" in warnings[0], done.stderr


def test_without_bwrap_hooks_do_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.runtime.agent.hook_commands import run_hook
    from app.runtime.sandbox import bwrap

    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    bwrap.bwrap_problem.cache_clear()
    try:
        import asyncio

        result = asyncio.run(run_hook("touch hooked", {}, cwd=tmp_path, sandbox=SandboxConfig()))
    finally:
        monkeypatch.undo()
        bwrap.bwrap_problem.cache_clear()
    assert not (tmp_path / "hooked").exists()
    assert result.outcome == "warning" and "apt-get install bubblewrap" in result.message


def test_cli_names_the_allowlist_option() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli.main", "tui", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "ANTHROPIC_API_KEY": FAKE_KEY, "COLUMNS": "200"},
        check=False,
    )
    assert "--allow-unix-socket PATH" in done.stdout
