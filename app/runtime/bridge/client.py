"""The CLI's side of the bridge: list and answer the requests a running teamdeck holds
(``teamdeck approvals`` / ``approve`` / ``reject`` from another terminal)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.runtime.bridge import wire


class NoBridgeError(OSError):
    """No teamdeck listens on the bridge's socket."""


def _ask(message: dict[str, Any], path: Path | None) -> dict[str, Any]:
    try:
        reply = wire.ask(message, path=path, wait=10.0)
    except (FileNotFoundError, ConnectionRefusedError) as exc:
        raise NoBridgeError("no teamdeck is listening for Claude Code's hooks") from exc
    if not isinstance(reply, dict):
        raise OSError("the listening teamdeck gave no answer")
    return reply


def pending_requests(path: Path | None = None) -> list[dict[str, Any]] | None:
    """The held requests (as ``approvals --json`` prints them); ``None`` if nobody listens."""
    try:
        reply = _ask({"op": "list"}, path)
    except NoBridgeError:
        return None
    requests = reply.get("requests")
    return [r for r in requests if isinstance(r, dict)] if isinstance(requests, list) else []


def answer(
    request_id: str,
    *,
    allow: bool,
    always: bool = False,
    feedback: str | None = None,
    rule: str | None = None,
    tool_input: dict[str, Any] | None = None,
    path: Path | None = None,
) -> tuple[bool, str]:
    """Answer a held request: ``(ok, one line)``; NoBridgeError if nobody listens. ``rule``:
    the rule "always" adds; ``tool_input``: the input as the person edited it."""
    message: dict[str, Any] = {
        "op": "answer",
        "id": request_id,
        "allow": allow,
        "always": always,
        "feedback": feedback,
    }
    if rule is not None:
        message["rule"] = rule
    if tool_input is not None:
        message["input"] = tool_input
    reply = _ask(message, path)
    return bool(reply.get("ok")), str(reply.get("message") or "")
