"""The hook bridge's state: the requests held for a person's answer and the recent events.

:class:`Bridge` keeps what the hooks reported while teamdeck runs (no socket, no threads of its
own): the pending requests (each an :class:`~app.runtime.api.Approval`, so the dashboard's queue
and keys take them as they are), answered from any thread, and the recent events. It is
teamdeck's own state: Claude Code deleting the inbox messages it consumed changes nothing here.
A request leaves it answered by the person (:meth:`Bridge.answer`), or without an answer when
Claude Code went on by itself (:meth:`Bridge.let_go`: answered in its own prompt, the call ran,
the turn or the session ended) or the hook gave up (:meth:`Bridge.withdraw`); answering it then
is refused in one line that says which.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.frame_text import one_line
from app.runtime.api import Approval
from app.runtime.bridge import answers, kept_rules
from app.runtime.bridge.choices import rule_choices
from app.runtime.bridge.hold import Sender, hold, kept_rule_for, sender
from app.runtime.bridge.sessions import origin
from app.runtime.permissions import Rule

TITLE_LIMIT = 80
#: The longest edited input the answer's line repeats (what runs is the person's own text).
EDITED_LIMIT = 400
#: teamdeck's own event, told to ``on_event`` when a person answered a held request
#: (``data``: ``decision``, ``line``, ``feedback``, ``kind``).
ANSWERED = "Answered"
#: teamdeck's own event, told when Claude Code went on without teamdeck's answer (answered in
#: its own prompt, the call ran or failed, the turn or the session ended, the hook gave up)
#: (``data``: ``line``, ``kind``).
LET_GO = "AnsweredElsewhere"
#: Where "always allow" puts its rule, as the permission dialog says it.
CLAUDE_RULES = "in Claude Code's user settings"
TEAMDECK_RULES = (
    "kept by teamdeck, which answers the calls it covers (Claude Code takes no rule from a pane "
    "teammate's hook; teamdeck claude rules lists them)"
)
#: What approving a teammate's plan does (2.1.332: see ``answers.pre_tool_use``), said by the
#: plan dialog's ``a`` and the feed line of the answer.
NO_PLAN_DOOR = "the lead approves {agent}'s plan by itself: Claude Code 2.1.332 gives no other door"
#: Recent events kept for a late reader (the dashboard's feed, ``teamdeck claude listen``).
RECENT_EVENTS = 500
#: Events after which a held request of the same call (or agent, or session) is moot.
_CALL_DONE = frozenset({"PostToolUse", "PostToolUseFailure"})
_AGENT_DONE = frozenset({"Stop", "SubagentStop", "TeammateIdle"})


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
        "session": event.sender.session_id,
        "folder": str(event.data.get("cwd") or ""),
        "origin": approval.origin,
    }
    if approval.kind == "plan":
        data["planContent"] = approval.body
    else:
        data["toolName"] = approval.tool_name
        data["input"] = approval.tool_input
        data["suggestion"] = approval.suggestion
        data["ruleChoices"] = [{"rule": r, "words": w} for r, w in approval.rule_choices]
        data["ruleHome"] = approval.rule_home
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
        #: whether the person's side is alive (the dashboard's loop ticks): held requests are
        #: acknowledged only while it is (``BridgeServer``)
        self.alive: Callable[[], bool] = lambda: True
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        #: requests that left without the person's answer: id -> why (refused answers say it)
        self._settled: dict[str, str] = {}
        #: where "always allow" keeps a pane teammate's rule (``kept_rules``; the server sets it)
        self.kept_rules: Path | None = None
        #: the team the dashboard steers (``None``: no team shown, every request is its own);
        #: a request of another session's team is shown apart and not answered there
        self.steered: str | None = None
        self._counter = itertools.count(1)
        self._prefix = secrets.token_hex(2)
        self.events: deque[HookEvent] = deque(maxlen=RECENT_EVENTS)

    # ------------------------------------------------------------------ what the hooks report

    def report(self, name: str, data: dict[str, Any], env: dict[str, str]) -> _Pending | None:
        """Record one event; a request to hold comes back as the entry to wait on (none while
        the dashboard is not alive: Claude Code asks in its own prompt)."""
        who = sender(data, env)
        kind = hold(name, data, who, env) if self.is_alive() else None
        request_id = f"cc-{self._prefix}-{next(self._counter)}" if kind else None
        event = HookEvent(name, data, who, request_id=request_id)
        self.events.append(event)
        if kind is None:
            self.let_go(event)
        pending = None
        if kind is not None and request_id is not None:
            pending = _Pending(self._approval(request_id, kind, event), event)
            rule = self._kept_rule(kind, event, env)
            if rule is not None:  # the person's "always" for a pane teammate: answered here
                pending.output = answers.pre_tool_use(allow=True, rule=rule)
                pending.done.set()
                line = f"allowed {who.agent}'s {pending.approval.tool_name} request {request_id}"
                said = {"decision": "allowed", "line": f"{line} (teamdeck's rule {rule})"}
                self._tell(event, changed=False)
                self._tell(HookEvent(ANSWERED, said, who, request_id=request_id), changed=False)
                return pending
            with self._lock:
                self._pending[request_id] = pending
        self._tell(event, changed=pending is not None)
        return pending

    def _kept_rule(self, kind: str, event: HookEvent, env: dict[str, str]) -> str | None:
        """The rule teamdeck keeps (``kept_rules``) that allows this pane teammate's call."""
        if kind != "permission" or event.event != "PreToolUse" or self.kept_rules is None:
            return None
        try:
            kept = kept_rules.rules(self.kept_rules)
        except kept_rules.KeptRulesError:
            return None  # unreadable: the person is asked, as without the rule
        if not kept:
            return None
        data = event.data
        tool_input = data.get("tool_input")
        return kept_rule_for(
            str(data.get("tool_name") or ""),
            tool_input if isinstance(tool_input, dict) else {},
            str(data.get("permission_mode") or "default"),
            Path(str(data.get("cwd") or env.get("CLAUDE_PROJECT_DIR") or ".")),
            env.get("CLAUDE_CONFIG_DIR"),
            kept,
        )

    def _approval(self, request_id: str, kind: str, event: HookEvent) -> Approval:
        data, who = event.data, event.sender.agent
        where = origin(event.sender.session_id, event.sender.team, str(data.get("cwd") or ""))
        tool_input = data.get("tool_input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        if kind == "plan":
            plan = str(tool_input.get("plan") or "")
            title = f"{who}: plan approval"
            words = NO_PLAN_DOOR.format(agent=who)
            return Approval(
                request_id, "plan", who, title, body=plan, origin=where, approve_words=words
            )
        tool = str(data.get("tool_name") or "")
        what = str(tool_input.get("description") or tool_input.get("command") or tool)
        choices = tuple(rule_choices(data, tool, tool_input))
        return Approval(
            request_id,
            "permission",
            who,
            one_line(f"{who}: {what}", TITLE_LIMIT),
            body=json.dumps(tool_input, indent=2, ensure_ascii=False, default=str),
            tool_name=tool,
            tool_input=tool_input,
            suggestion=choices[0][0] if choices else None,
            origin=where,
            rule_home=CLAUDE_RULES if event.event == "PermissionRequest" else TEAMDECK_RULES,
            rule_choices=choices,
        )

    def is_alive(self) -> bool:
        try:
            return bool(self.alive())
        except Exception:  # noqa: BLE001 - a broken probe: not alive, so never hold
            return False

    def withdraw(self, pending: _Pending) -> None:
        """The hook gave up (Claude Code's timeout, or it was stopped): drop the request."""
        self._settle([pending], "Claude Code stopped waiting (it asks in its own prompt)")

    def let_go(self, event: HookEvent) -> None:
        """Claude Code went on without teamdeck: drop the requests ``event`` makes moot (the
        call it reports ran or failed; the agent's turn or the session ended)."""
        name, data = event.event, event.data
        if name not in _CALL_DONE and name not in _AGENT_DONE and name != "SessionEnd":
            return
        session = event.sender.session_id
        with self._lock:
            moot = [
                p
                for p in self._pending.values()
                if p.event.sender.session_id == session
                and (
                    name == "SessionEnd"
                    or (name in _AGENT_DONE and p.event.sender.agent == event.sender.agent)
                    or (name in _CALL_DONE and _same_call(p.event.data, data))
                )
            ]
        why = "the session ended" if name == "SessionEnd" else "answered in Claude Code"
        self._settle(moot, why)

    def _settle(self, entries: list[_Pending], why: str) -> None:
        """Take ``entries`` out with no decision; a feed line says why."""
        for entry in entries:
            request_id = entry.approval.request_id
            with self._lock:
                if self._pending.pop(request_id, None) is None:
                    continue
                self._settled[request_id] = why
                while len(self._settled) > RECENT_EVENTS:
                    del self._settled[next(iter(self._settled))]
            entry.output = ""
            entry.done.set()
            what = (
                "plan" if entry.approval.kind == "plan" else f"{entry.approval.tool_name} request"
            )
            line = f"{entry.approval.agent}'s {what} {request_id}: {why}"
            said = {"line": line, "kind": entry.approval.kind, "why": why}
            self._tell(
                HookEvent(LET_GO, said, entry.event.sender, request_id=request_id), changed=True
            )

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

    def team_of(self, request_id: str) -> str | None:
        """The team of a pending request (its session's)."""
        with self._lock:
            entry = self._pending.get(request_id)
        return entry.event.sender.team if entry is not None else None

    def foreign(self, request_id: str) -> str | None:
        """Why the dashboard must not answer this request (another session's team), else
        ``None``."""
        with self._lock:
            entry = self._pending.get(request_id)
            steered = self.steered
        if entry is None or steered is None or entry.event.sender.team == steered:
            return None
        return (
            f"{request_id} is another Claude Code session's request ({entry.approval.origin}), "
            f"not team {steered}'s: switch to its team, or run teamdeck approve {request_id}"
        )

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
        rule: str | None = None,
        tool_input: dict[str, Any] | None = None,
    ) -> tuple[bool, str]:
        """Answer a pending request: ``(True, "allowed worker's Bash request")``, or
        ``(False, why not)``. The first answer wins. ``rule``: the rule "always" adds (one of
        the request's choices, or any the person typed; default its suggestion);
        ``tool_input``: the input as the person edited it, which is what runs."""
        if rule is not None:
            try:
                Rule.parse(rule)
            except ValueError as exc:
                return False, f"rule {rule!r} is not a permission rule ({exc}): nothing sent"
        with self._lock:
            pending = self._pending.pop(request_id, None)
        if pending is None:
            why = self._settled.get(request_id)
            if why is not None:
                return False, f"request {request_id} is no longer waiting ({why}): nothing sent"
            return False, f"request {request_id} is not pending (answered, or withdrawn)"
        approval, event = pending.approval, pending.event
        plan = approval.kind == "plan"
        note = ""
        edited = (
            tool_input
            if allow and not plan and tool_input is not None and tool_input != approval.tool_input
            else None
        )
        chosen = rule or approval.suggestion
        if event.event == "PermissionRequest":
            rule = chosen if always and allow else None
            pending.output = answers.permission_request(
                allow=allow, tool_input=edited or approval.tool_input, rule=rule, message=feedback
            )
            note = f" (rule {rule} added {CLAUDE_RULES})" if rule else ""
        else:
            pending.output = answers.pre_tool_use(
                allow=allow, plan=plan, message=feedback, updated_input=edited
            )
            rule = chosen if always and allow and not plan else None
            if rule and self.kept_rules is not None:
                try:
                    kept_rules.add(self.kept_rules, rule, approval.origin or "")
                    note = f" (rule {rule} kept by teamdeck: teamdeck claude rules)"
                except (OSError, kept_rules.KeptRulesError) as exc:
                    note = f" (once: the rule could not be kept: {exc})"
            elif always and allow:
                note = " (once: a plan takes no rule)"
        pending.done.set()
        verb = ("approved" if allow else "rejected") if plan else ("allowed" if allow else "denied")
        if always and allow and note.startswith(" (rule"):
            verb = "always allowed"
        what = "plan" if plan else f"{approval.tool_name} request"
        line = f"{verb} {approval.agent}'s {what} {request_id}{note}"
        if edited is not None:
            line += f", as the person edited it: {one_line(_subject(edited), EDITED_LIMIT)}"
        if plan and allow and approval.approve_words:
            line += f": {approval.approve_words}"
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


def _subject(tool_input: dict[str, Any]) -> str:
    command = tool_input.get("command")
    if isinstance(command, str):
        return f"$ {command}"
    return json.dumps(tool_input, ensure_ascii=False, default=str)


def _same_call(held: dict[str, Any], done: dict[str, Any]) -> bool:
    """Whether ``done`` (a PostToolUse's stdin) reports the call ``held`` asked about."""
    if held.get("tool_use_id") and done.get("tool_use_id"):
        return bool(held["tool_use_id"] == done["tool_use_id"])
    return (
        held.get("agent_id") == done.get("agent_id")
        and held.get("tool_name") == done.get("tool_name")
        and held.get("tool_input") == done.get("tool_input")
    )
