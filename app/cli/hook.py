"""``teamdeck hook EVENT``: the command Claude Code runs for each hook event (see
``teamdeck claude setup``).

It hands the event (its stdin) to a running teamdeck over the bridge's socket
(``app.runtime.bridge.wire``) and, for a request (``PermissionRequest``, ``PreToolUse``), waits
for the person's answer and prints it: the exact JSON Claude Code accepts on a hook's stdout.
When no teamdeck listens, when the answer does not come in time, or on any error, it prints
nothing and exits 0: no decision, so Claude Code asks the person itself, at once.

Claude Code runs it for every tool call, so it must start fast: it imports the standard library
and ``wire`` only (``bench/hook.py`` measures it), and ``app.cli.entry`` dispatches to it before
the ``teamdeck`` parser (and everything that parser pulls in) is loaded.
"""

from __future__ import annotations

import json
import os
import sys

from app.runtime.bridge import wire

#: What the server needs of the hook's environment (who runs it; the rest is on stdin).
ENV_KEYS = ("CLAUDE_PID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR")


def run(event: str, stdin: bytes) -> str:
    """The text to print for ``event`` whose hook stdin was ``stdin`` ("" for no decision)."""
    try:
        data = json.loads(stdin) if stdin.strip() else {}
    except ValueError:
        data = {"raw": stdin.decode(errors="replace")}
    env = {key: os.environ[key] for key in ENV_KEYS if key in os.environ}
    message = {"op": "hook", "event": event, "input": data, "env": env}
    try:
        sock = wire.connect(timeout=0.5)
    except OSError:
        return ""  # nobody listens: Claude Code decides by itself
    with sock:
        sock.sendall(wire.encode(message))
        if event not in wire.REQUEST_EVENTS:
            return ""
        sock.settimeout(wire.REQUEST_WAIT)
        line = wire.read_line(sock)
    reply = json.loads(line) if line.strip() else None
    output = reply.get("output") if isinstance(reply, dict) else None
    return output if isinstance(output, str) else ""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(
            "usage: teamdeck hook EVENT  (run by Claude Code, the event on stdin)", file=sys.stderr
        )
        return 2
    try:
        output = run(args[0], sys.stdin.buffer.read())
    except Exception:  # noqa: BLE001 - never in Claude Code's way: no decision
        return 0
    if output:
        sys.stdout.write(output)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
