"""The hook client: the program Claude Code runs for every hook event (``teamdeck claude setup``
installs ``<python> -I -S <this file> EVENT``).

It runs as a script, with the standard library only and no ``site`` (``-S``): Claude Code waits
for it on every tool call of every agent, so it must cost little more than the interpreter
itself (``bench/hook.py``). It imports nothing of teamdeck's; ``wire`` and the server import
their shared constants from here.

What it does with the event on its stdin:

- a payload that is empty, not a JSON object, oversized, or of an unknown event: no decision at
  once, and one line in ``<teamdeck home>/bridge/hook.log``;
- an event teamdeck never holds (lifecycle events; a ``PreToolUse`` of a tool that never asks,
  e.g. ``Read``): handed over without waiting for any answer;
- one that may be held (``PermissionRequest``; a ``PreToolUse`` of a tool that can ask): it
  waits while the listening teamdeck acknowledges it (``{"wait": true}`` within
  ``ACK_WAIT`` seconds, again and again) and prints the answer. A teamdeck that does not
  acknowledge in time (stopped, hung, or not holding it) gets no say: no decision, so Claude
  Code asks in its own prompt within ``2 * ACK_WAIT`` seconds at most.

Every message presents the per-run secret the listening teamdeck wrote to ``<teamdeck
home>/bridge/secret`` (0600, in a folder the sandbox hides): a peer that cannot read it is
refused.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

TYPE_CHECKING = False  # not ``typing``'s: the client imports as little as it can
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

SOCKET_NAME = "claude.sock"
SECRET_NAME = "secret"
LOG_NAME = "hook.log"
#: Longest path ``AF_UNIX`` takes on Linux (108 bytes with the terminating NUL).
MAX_SUN_PATH = 107


def _seconds(name: str, default: float) -> float:
    """A positive number of seconds from ``$name``, else ``default`` (a bad value too: the
    hook never fails on its settings)."""
    try:
        value = float(os.environ.get(name) or default)
    except ValueError:
        return default
    return value if 0 < value < 3600 else default


#: Seconds to wait for the listening teamdeck's acknowledgement (the first, and each next one).
#: ``$TEAMDECK_HOOK_ACK_WAIT`` sets it: the UI tests give a dashboard on a loaded machine longer.
ACK_WAIT = _seconds("TEAMDECK_HOOK_ACK_WAIT", 1.0)
#: Seconds between the listening teamdeck's acknowledgements of a held request.
HEARTBEAT = 0.3
#: Seconds a held request waits at most (below the hook's own timeout in Claude Code's settings).
REQUEST_WAIT = 280.0
#: Largest hook payload taken (a bigger one: no decision).
MAX_PAYLOAD = 4 << 20
#: The events teamdeck's hook is installed for (``install.EVENTS`` gives each its timeout).
EVENTS = (
    "PermissionRequest",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "SessionEnd",
    "SubagentStart",
    "SubagentStop",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
)
#: Tools whose ``PreToolUse`` teamdeck may hold (``hold.HELD_TOOLS`` and plans).
MAY_HOLD_TOOLS = frozenset(
    {"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "ExitPlanMode"}
)
#: What the server needs of the hook's environment (who runs it; the rest is on stdin).
ENV_KEYS = ("CLAUDE_PID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR")


def teamdeck_home() -> str:
    """``$TEAMDECK_HOME``, else ``~/.teamdeck``."""
    env = os.environ.get("TEAMDECK_HOME")
    return os.path.expanduser(env) if env else os.path.join(os.path.expanduser("~"), ".teamdeck")


def bridge_folder(home: str | None = None) -> str:
    return os.path.join(home or teamdeck_home(), "bridge")


def read_secret(folder: str) -> str:
    """The listening teamdeck's secret ("" when there is none, or it cannot be read)."""
    try:
        with open(os.path.join(folder, SECRET_NAME), encoding="ascii") as file:
            return file.read(200).strip()
    except (OSError, ValueError):
        return ""


def log(folder: str, line: str) -> None:
    """One line in the hook's log (best effort: the hook never fails for it)."""
    try:
        path = os.path.join(folder, LOG_NAME)
        if os.path.getsize(path) > 1 << 20:
            os.replace(path, path + ".1")
    except OSError:
        pass
    try:
        fd = os.open(os.path.join(folder, LOG_NAME), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        os.write(fd, f"{stamp} pid {os.getpid()}: {line}\n".encode(errors="replace"))
        os.close(fd)
    except OSError:
        pass


def connect(path: str, timeout: float) -> socket.socket:
    """A socket connected to ``path`` (a too-long path through ``/proc/self/fd``)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    folder: int | None = None
    try:
        address = path
        if len(os.fsencode(path)) > MAX_SUN_PATH and hasattr(os, "O_PATH"):
            folder = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)
            address = f"/proc/self/fd/{folder}/{os.path.basename(path)}"
        sock.connect(address)
    except BaseException:
        sock.close()
        raise
    finally:
        if folder is not None:
            os.close(folder)
    return sock


def _pane_teammate(pid: str | None) -> bool:
    """Whether the Claude Code process ``pid`` (``CLAUDE_PID``) is a teammate in a tmux pane
    (``--agent-name`` on its command line); True when that cannot be read (the server decides)."""
    if not pid or not pid.isdigit():
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return b"\0--agent-name" in b"\0" + file.read()
    except OSError:
        return True


def may_hold(event: str, data: dict[str, Any]) -> bool:
    """Whether teamdeck might hold this event (the server decides; the others never wait):
    every ``PermissionRequest``; a plan's ``PreToolUse``; a pane teammate's ``PreToolUse`` of a
    tool that can ask (``hold`` says why: its PermissionRequest hook never fires)."""
    if event == "PermissionRequest":
        return True
    tool = data.get("tool_name")
    if event != "PreToolUse" or not isinstance(tool, str) or tool not in MAY_HOLD_TOOLS:
        return False
    if tool == "ExitPlanMode":
        return True
    if data.get("agent_id"):
        return False  # an in-process teammate: it asks through the lead's PermissionRequest
    return _pane_teammate(os.environ.get("CLAUDE_PID"))


def check(event: str, raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """``(data, None)`` for a payload to hand over, else ``(None, why not)``."""
    if event not in EVENTS:
        return None, f"unknown event {event[:60]!r}: no decision"
    if len(raw) > MAX_PAYLOAD:
        return None, f"{event}: payload of {len(raw)} bytes is over {MAX_PAYLOAD}: no decision"
    if not raw.strip():
        return None, f"{event}: empty payload: no decision"
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return None, f"{event}: payload is not JSON ({exc}): no decision"
    if not isinstance(data, dict):
        return None, f"{event}: payload is a JSON {type(data).__name__}, not an object: no decision"
    return data, ""


def _lines(sock: socket.socket, limit: int = 16 << 20) -> Iterator[Any]:
    """The JSON lines the server sends, one at a time (ends at the end of the stream)."""
    buffer = b""
    while True:
        newline = buffer.find(b"\n")
        if newline >= 0:
            line, buffer = buffer[:newline], buffer[newline + 1 :]
            yield json.loads(line) if line.strip() else None
            continue
        chunk = sock.recv(65536)
        if not chunk:
            return
        buffer += chunk
        if len(buffer) > limit:
            raise ValueError("reply too long")


def run(event: str, raw: bytes, home: str | None = None) -> str:
    """The text to print for ``event`` whose hook stdin was ``raw`` ("" for no decision)."""
    folder = bridge_folder(home)
    data, problem = check(event, raw)
    if data is None:
        log(folder, problem)
        return ""
    secret = read_secret(folder)
    if not secret:
        return ""  # no teamdeck listens: Claude Code decides by itself
    env = {key: os.environ[key] for key in ENV_KEYS if key in os.environ}
    message = {"op": "hook", "event": event, "input": data, "env": env, "secret": secret}
    line = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    try:
        sock = connect(os.path.join(folder, SOCKET_NAME), 0.5)
    except OSError:
        return ""  # nobody listens (or it is stopped with a full backlog): no decision
    with sock:
        sock.sendall(line)
        if not may_hold(event, data):
            return ""  # handed over: nothing to wait for
        end = time.monotonic() + REQUEST_WAIT
        sock.settimeout(ACK_WAIT)
        try:
            for reply in _lines(sock):
                if not isinstance(reply, dict):
                    return ""
                if reply.get("wait"):
                    sock.settimeout(max(0.01, min(ACK_WAIT, end - time.monotonic())))
                    continue
                if reply.get("error"):
                    log(folder, f"{event}: the listening teamdeck refused: {reply['error']}")
                output = reply.get("output")
                return output if isinstance(output, str) else ""
        except TimeoutError:
            if time.monotonic() < end:
                log(
                    folder,
                    f"{event}: teamdeck did not acknowledge within {ACK_WAIT:g} s: "
                    "no decision (Claude Code asks)",
                )
            return ""
    return ""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        sys.stderr.write("usage: teamdeck hook EVENT  (run by Claude Code, the event on stdin)\n")
        return 2
    try:
        output = run(args[0], sys.stdin.buffer.read(MAX_PAYLOAD + 1))
    except Exception:  # noqa: BLE001 - never in Claude Code's way: no decision
        return 0
    if output:
        sys.stdout.write(output)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
