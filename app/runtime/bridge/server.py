"""The listening side of the hook bridge: requests wait here for a person's answer.

:class:`Bridge` keeps what the hooks reported while teamdeck runs (no socket, no threads of its
own): the pending requests (each an :class:`~app.runtime.api.Approval`, so the dashboard's queue
and keys take them as they are), answered from any thread, and the recent events. It is
teamdeck's own state: Claude Code deleting the inbox messages it consumed changes nothing here.

:class:`BridgeServer` serves it on the socket of ``wire`` (one thread per connection):

- ``{"op": "hook", "event", "input", "env"}`` from ``teamdeck hook``: the event is recorded;
  for a held request (``hold``) the connection stays open until a person answers (the reply is
  ``{"output": <what the hook prints>}``), the server stops, or the hook gives up (it closed
  the connection: the request is withdrawn);
- ``{"op": "list"}``: ``{"requests": [...]}``, the pending requests as ``teamdeck approvals
  --json`` prints them;
- ``{"op": "answer", "id", "allow", "always", "feedback"}``: ``{"ok", "message"}``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import secrets
import select
import socket
import stat
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.frame_text import one_line
from app.runtime.api import Approval
from app.runtime.bridge import answers, wire
from app.runtime.bridge.hold import Sender, ToolSubject, hold, sender
from app.runtime.permissions import suggest_rule

TITLE_LIMIT = 80
#: teamdeck's own event, told to ``on_event`` when a person answered a held request
#: (``data``: ``decision``, ``line``, ``feedback``, ``kind``).
ANSWERED = "Answered"
#: Recent events kept for a late reader (the dashboard's feed, ``teamdeck claude listen``).
RECENT_EVENTS = 500


class BridgeBusyError(OSError):
    """Another teamdeck already listens on the socket."""


@dataclass(frozen=True)
class HookEvent:
    """One hook event as Claude Code reported it (``data``: the hook's stdin)."""

    event: str
    data: dict[str, Any]
    sender: Sender
    at: float = field(default_factory=time.time)
    request_id: str | None = None  # a held request's id


@dataclass
class _Pending:
    approval: Approval
    event: HookEvent
    done: threading.Event = field(default_factory=threading.Event)
    output: str = ""


def _rule_for(data: dict[str, Any], tool: str, tool_input: dict[str, Any]) -> str | None:
    """The rule "always allow" adds: Claude Code's own ``addRules`` suggestion, else teamdeck's
    (``Bash(touch:*)``, ``Edit(src/**)``, the tool's name)."""
    for suggestion in data.get("permission_suggestions") or []:
        if isinstance(suggestion, dict) and suggestion.get("type") == "addRules":
            for rule in suggestion.get("rules") or []:
                if isinstance(rule, dict) and isinstance(rule.get("toolName"), str):
                    content = rule.get("ruleContent")
                    return f"{rule['toolName']}({content})" if content else rule["toolName"]
    cwd = Path(str(data.get("cwd") or "."))
    try:
        return suggest_rule(ToolSubject(tool), tool_input, cwd)
    except (OSError, ValueError):
        return tool or None


def request_json(approval: Approval, event: HookEvent) -> dict[str, Any]:
    """A pending request as ``teamdeck approvals --json`` prints it."""
    data: dict[str, Any] = {
        "team": event.sender.team,
        "requestId": approval.request_id,
        "kind": approval.kind,
        "agent": approval.agent,
        "title": approval.title,
        "timestamp": approval.created_at,
        "source": f"hook {event.event}",
    }
    if approval.kind == "plan":
        data["planContent"] = approval.body
    else:
        data["toolName"] = approval.tool_name
        data["input"] = approval.tool_input
    return data


class Bridge:
    """The requests and events the hooks reported (see the module docstring).

    ``on_change`` is called (from the server's threads) whenever the pending requests change;
    ``on_event`` with every event as it arrives."""

    def __init__(
        self,
        on_change: Callable[[], None] | None = None,
        on_event: Callable[[HookEvent], None] | None = None,
    ) -> None:
        self.on_change = on_change
        self.on_event = on_event
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self._counter = itertools.count(1)
        self._prefix = secrets.token_hex(2)
        self.events: deque[HookEvent] = deque(maxlen=RECENT_EVENTS)

    # ------------------------------------------------------------------ what the hooks report

    def report(self, name: str, data: dict[str, Any], env: dict[str, str]) -> _Pending | None:
        """Record one event; a request to hold comes back as the entry to wait on."""
        who = sender(data, env)
        kind = hold(name, data, who, env)
        request_id = f"cc-{self._prefix}-{next(self._counter)}" if kind else None
        event = HookEvent(name, data, who, request_id=request_id)
        self.events.append(event)
        pending = None
        if kind is not None and request_id is not None:
            pending = _Pending(self._approval(request_id, kind, event), event)
            with self._lock:
                self._pending[request_id] = pending
        self._tell(event, changed=pending is not None)
        return pending

    def _approval(self, request_id: str, kind: str, event: HookEvent) -> Approval:
        data, who = event.data, event.sender.agent
        tool_input = data.get("tool_input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        if kind == "plan":
            plan = str(tool_input.get("plan") or "")
            return Approval(request_id, "plan", who, f"{who}: plan approval", body=plan)
        tool = str(data.get("tool_name") or "")
        what = str(tool_input.get("description") or tool_input.get("command") or tool)
        return Approval(
            request_id,
            "permission",
            who,
            one_line(f"{who}: {what}", TITLE_LIMIT),
            body=json.dumps(tool_input, indent=2, ensure_ascii=False, default=str),
            tool_name=tool,
            tool_input=tool_input,
            suggestion=_rule_for(data, tool, tool_input),
        )

    def withdraw(self, pending: _Pending) -> None:
        """The hook gave up (Claude Code's timeout, or it was stopped): drop the request."""
        with self._lock:
            gone = self._pending.pop(pending.approval.request_id, None)
        if gone is not None:
            self._tell(None, changed=True)

    def _tell(self, event: HookEvent | None, *, changed: bool) -> None:
        if event is not None and self.on_event is not None:
            with contextlib.suppress(Exception):
                self.on_event(event)
        if changed and self.on_change is not None:
            with contextlib.suppress(Exception):
                self.on_change()

    # ------------------------------------------------------------------ what the person does

    def pending(self) -> list[Approval]:
        with self._lock:
            return [p.approval for p in self._pending.values()]

    def asking(self, team: str | None) -> set[str]:
        """The agents of ``team`` with a request held here."""
        with self._lock:
            return {p.approval.agent for p in self._pending.values() if p.event.sender.team == team}

    def listing(self) -> list[dict[str, Any]]:
        with self._lock:
            return [request_json(p.approval, p.event) for p in self._pending.values()]

    def knows(self, request_id: str) -> bool:
        with self._lock:
            return request_id in self._pending

    def answer(
        self,
        request_id: str,
        *,
        allow: bool,
        always: bool = False,
        feedback: str | None = None,
    ) -> tuple[bool, str]:
        """Answer a pending request: ``(True, "allowed worker's Bash request")``, or
        ``(False, why not)``. The first answer wins."""
        with self._lock:
            pending = self._pending.pop(request_id, None)
        if pending is None:
            return False, f"request {request_id} is not pending (answered, or withdrawn)"
        approval, event = pending.approval, pending.event
        plan = approval.kind == "plan"
        note = ""
        if event.event == "PermissionRequest":
            rule = approval.suggestion if always and allow else None
            pending.output = answers.permission_request(
                allow=allow, tool_input=approval.tool_input, rule=rule, message=feedback
            )
            note = f" (rule {rule} added)" if rule else ""
        else:
            pending.output = answers.pre_tool_use(allow=allow, plan=plan, message=feedback)
            if always and allow:
                note = " (once: a pane teammate's hook cannot add a rule)"
        pending.done.set()
        verb = ("approved" if allow else "rejected") if plan else ("allowed" if allow else "denied")
        if always and allow and note.startswith(" (rule"):
            verb = "always allowed"
        what = "plan" if plan else f"{approval.tool_name} request"
        line = f"{verb} {approval.agent}'s {what} {request_id}{note}"
        said = {"decision": verb, "line": line, "feedback": feedback, "kind": approval.kind}
        self._tell(HookEvent(ANSWERED, said, event.sender, request_id=request_id), changed=True)
        return True, line

    def release_all(self) -> None:
        """No decision for every pending request (teamdeck is leaving): Claude Code asks."""
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        for entry in pending:
            entry.done.set()
        if pending:
            self._tell(None, changed=True)


def prepare_folder(folder: Path) -> None:
    """The socket's folder: created 0700, and refused unless this user owns it alone."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(f"{folder} is not a folder of this user's")
    if stat.S_IMODE(info.st_mode) != 0o700:
        folder.chmod(0o700)


def peer_uid(conn: socket.socket) -> int | None:
    """The connected process's uid (Linux ``SO_PEERCRED``); ``None`` where unavailable."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", raw)[1])


class BridgeServer:
    """Serves a :class:`Bridge` on the socket (see the module docstring)."""

    POLL_SECONDS = 0.2  # how often a waiting connection checks that its hook is still there

    def __init__(self, bridge: Bridge, path: Path | None = None) -> None:
        self.bridge = bridge
        self.path = path or wire.socket_path()
        self._sock: socket.socket | None = None
        self._stopped = threading.Event()

    def start(self) -> None:
        """Listen; BridgeBusyError when another teamdeck does."""
        prepare_folder(self.path.parent)
        if self.path.exists() or self.path.is_symlink():
            try:
                wire.connect(self.path, timeout=0.5).close()
            except OSError:
                self.path.unlink()  # left by a teamdeck that is gone
            else:
                raise BridgeBusyError(f"another teamdeck listens on {self.path}")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        wire.bind(sock, self.path)
        self.path.chmod(0o600)
        sock.listen(16)
        self._sock = sock
        threading.Thread(target=self._accept, name="bridge-accept", daemon=True).start()

    def stop(self) -> None:
        """Stop listening; every waiting hook gets no decision (Claude Code asks by itself)."""
        self._stopped.set()
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            with contextlib.suppress(OSError):
                self.path.unlink()
        self.bridge.release_all()

    def __enter__(self) -> BridgeServer:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopped.is_set() and self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                uid = peer_uid(conn)
                if uid is not None and uid != os.getuid():
                    return  # another user's process: not a word
                conn.settimeout(5.0)
                message = json.loads(wire.read_line(conn) or b"null")
                reply = self._handle(conn, message) if isinstance(message, dict) else None
                if reply is not None:
                    conn.sendall(wire.encode(reply))
            except (OSError, ValueError):
                return

    def _handle(self, conn: socket.socket, message: dict[str, Any]) -> dict[str, Any] | None:
        op = message.get("op")
        if op == "hook":
            data = message.get("input")
            env = message.get("env")
            pending = self.bridge.report(
                str(message.get("event") or ""),
                data if isinstance(data, dict) else {},
                {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
            )
            if pending is None:
                return {}
            if not self._wait(conn, pending):
                self.bridge.withdraw(pending)
                return None
            return {"output": pending.output} if pending.output else {}
        if op == "list":
            return {"requests": self.bridge.listing()}
        if op == "answer":
            ok, text = self.bridge.answer(
                str(message.get("id") or ""),
                allow=bool(message.get("allow")),
                always=bool(message.get("always")),
                feedback=message.get("feedback")
                if isinstance(message.get("feedback"), str)
                else None,
            )
            return {"ok": ok, "message": text}
        return {"error": f"unknown op {op!r}"}

    def _wait(self, conn: socket.socket, pending: _Pending) -> bool:
        """Wait for the answer; False when the hook closed its end first (it gave up)."""
        while not pending.done.wait(self.POLL_SECONDS):
            readable, _, _ = select.select([conn], [], [], 0)
            if readable:
                try:
                    if not conn.recv(1, socket.MSG_PEEK):
                        return False
                except OSError:
                    return False
        return True
