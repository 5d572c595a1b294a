"""What Claude Code's hook events say about each agent: its status, and a feed line.

Claude Code consumes its inboxes at once (2.1.332: the lead reads ``team-lead.json`` about once
a second and removes what it read), so the idle notifications and requests the files would
show are gone before a viewer sees them. The hooks tell each change as it happens instead
(observed in 2.1.332, see ``docs/claude-code-2.1.332.md``):

- ``SessionStart`` (the lead; a pane teammate, its own), ``UserPromptSubmit``, ``PreToolUse``,
  ``PostToolUse``, ``PostToolUseFailure``, ``SubagentStart`` (an in-process teammate, in the
  lead): **running**;
- ``TeammateIdle`` (in-process: in the lead; pane: in the teammate), ``SubagentStop``, the
  lead's ``Stop``: **idle**;
- ``Notification`` ``worker_permission_prompt`` ("worker needs permission for Bash": Claude
  Code asks in the lead's terminal): that teammate **awaiting approval**; a request the bridge
  holds says so too (the dashboard adds those);
- ``SessionEnd``: **completed** (the session ended: ``/exit``, the end of ``-p``);
- a ``PermissionRequest``: **awaiting approval** until it is answered (teamdeck's own
  ``Answered``: **running** again; answered in Claude Code: the call's own events follow) or
  let go to Claude Code's own prompt (the hook gave up, or the dashboard that held it ended:
  still **awaiting approval**, there). A restarted dashboard reads these back from the run archive,
  so a teammate still waiting at Claude Code's prompt is not shown running.

**Gone** is not an event: the process is (``app.runtime.by_files.liveness``): the lead's
``leadProcess`` of the team config, a pane teammate's own ``claude`` process (``CLAUDE_PID``
of its hooks, kept here as ``pid``).

Thread-safe (the bridge's server threads note, the dashboard reads).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.frame_text import one_line

if TYPE_CHECKING:
    from app.runtime.bridge.server import HookEvent

RUNNING_EVENTS = frozenset(
    {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "SubagentStart",
    }
)
IDLE_EVENTS = frozenset({"TeammateIdle", "SubagentStop"})
#: Events of a request and its end (see the module docstring).
REQUEST_EVENTS = frozenset({"PermissionRequest", "Answered", "AnsweredElsewhere"})
#: ``AnsweredElsewhere``'s ``why`` when the request went back to Claude Code's own prompt.
TO_CLAUDE_PROMPT = "it asks in its own prompt"
ASKING = "worker_permission_prompt"
#: ``SessionEnd`` reasons of a session the person ended (a killed process says "other").
DELIBERATE_ENDS = frozenset({"prompt_input_exit", "clear", "logout"})


@dataclass(frozen=True)
class Fact:
    """An agent's status from its hooks, since when (epoch seconds), and the process that
    runs its hooks when it is a pane teammate (its own ``claude``)."""

    status: str
    since: float
    pid: int | None = None
    #: the session ended by the person's word (``/exit``, ``/clear``, logout): "completed"
    #: stands once its process is gone (a killed one's SessionEnd says "other": gone)
    ended: bool = False


def status_of(event: HookEvent) -> tuple[str, str] | None:
    """``(agent, status)`` the event implies, or ``None`` (see the module docstring)."""
    name, who = event.event, event.sender
    if name in RUNNING_EVENTS:
        return who.agent, "running"
    if name in IDLE_EVENTS or (name == "Stop" and not who.pane):
        return who.agent, "idle"
    if name == "SessionEnd":
        return who.agent, "completed"
    if name == "PermissionRequest":
        return who.agent, "awaiting approval"
    if name == "Answered":
        return who.agent, "running"
    if name == "AnsweredElsewhere":
        # answered in Claude Code: the call's own events say what follows (PostToolUse, Stop)
        why = str(event.data.get("why") or "")
        return (who.agent, "awaiting approval") if TO_CLAUDE_PROMPT in why else None
    if name == "Notification" and event.data.get("notification_type") == ASKING:
        asker = str(event.data.get("message") or "").split(" needs permission", 1)[0].strip()
        return (asker, "awaiting approval") if asker else None
    return None


def feed_text(event: HookEvent) -> str | None:
    """The feed's words for an event worth a line (``None``: status only)."""
    data: dict[str, Any] = event.data
    name = event.event
    tool = str(data.get("tool_name") or "")
    if name in ("Answered", "AnsweredElsewhere"):
        return str(data.get("line") or "answered")
    if event.request_id:
        tool_input = data.get("tool_input")
        what = ""
        if isinstance(tool_input, dict):
            what = str(tool_input.get("command") or tool_input.get("file_path") or "")
        kind = "plan" if tool == "ExitPlanMode" else tool
        return one_line(f"asks: {kind} {what}".rstrip(), 200)
    if name == "SessionStart":
        return f"session started ({data.get('source') or 'startup'})"
    if name == "SessionEnd":
        return f"session ended ({data.get('reason') or 'other'})"
    if name == "SubagentStart":
        return "started (in the lead's process)"
    if name == "TeammateIdle":
        return "is idle"
    if name == "SubagentStop":
        last = one_line(str(data.get("last_assistant_message") or ""), 120)
        return f"finished its turn: {last}" if last else "finished its turn"
    if name == "PostToolUse" and tool == "Agent":
        response = data.get("tool_response")
        if isinstance(response, dict) and response.get("status") == "teammate_spawned":
            where = (
                "in a tmux pane"
                if response.get("tmux_pane_id") not in (None, "in-process")
                else "in-process"
            )
            return f"spawned {response.get('name') or '?'} ({where})"
    if name == "PostToolUseFailure":
        return one_line(f"{tool} failed: {data.get('error') or ''}", 200)
    if name == "Notification":
        return one_line(f"Claude Code: {data.get('message') or ''}", 200)
    if name in ("TaskCreated", "TaskCompleted"):
        subject = data.get("task_subject") or data.get("task_id") or ""
        return one_line(f"{name}: {subject}", 200)
    return None


class HookFacts:
    """Each ``(team, agent)``'s latest :class:`Fact` (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._facts: dict[tuple[str, str], Fact] = {}

    def note(self, event: HookEvent) -> bool:
        """Take ``event`` in; True when a status changed."""
        found = status_of(event)
        if found is None:
            return False
        agent, status = found
        team = event.sender.team or ""
        pid = event.sender.pid if event.sender.pane and agent == event.sender.agent else None
        ended = event.event == "SessionEnd" and event.data.get("reason") in DELIBERATE_ENDS
        with self._lock:
            old = self._facts.get((team, agent))
            if old is not None and event.at < old.since:
                return False  # an older word (read back from the archive) than what is known
            if (
                old is not None
                and (old.status, old.ended) == (status, ended)
                and (pid is None or old.pid == pid)
            ):
                return False
            keep = pid if pid is not None else (old.pid if old is not None else None)
            self._facts[(team, agent)] = Fact(status, event.at, keep, ended)
        return True

    def of(self, team: str | None) -> dict[str, Fact]:
        """The facts about ``team``'s agents."""
        with self._lock:
            return {agent: fact for (t, agent), fact in self._facts.items() if t == (team or "")}
