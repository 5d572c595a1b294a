"""TeamRuntime: the lead and its in-process teammates, and the API the dashboard calls.

It owns the sessions, the approvals queue and the event stream, implements the services the
team tools need (spawn, send, answer plans / permissions / shutdowns), and turns file changes
(from this process or, through the core watcher, from others) into wake-ups for the agents.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import anthropic

from app.core import Home, InboxMessage, TeamMember
from app.core.errors import NotFoundError, TeamdeckError
from app.core.events import ChangeEvent, InboxChanged, TaskChanged, TeamRemoved
from app.core.models import now_ms
from app.core.paths import LEAD_NAME, USER_NAME
from app.core.protocol import (
    ShutdownRequest,
    idle_notification,
    make_request_id,
    parse_frame,
    permission_request,
    permission_response,
    plan_approval_request,
    plan_approval_response,
    shutdown_approved,
    shutdown_rejected,
    shutdown_request,
)
from app.core.teams import COLORS
from app.core.watch import Watcher
from app.runtime.api import AgentSnapshot, Approval, Decider, Spawner
from app.runtime.approvals import Approvals, approval_from_frame, permission_body
from app.runtime.events import (
    MessageSent,
    RuntimeEvent,
    TeamLifecycle,
    TranscriptEntry,
)
from app.runtime.lead import Lead
from app.runtime.loop import TurnOutcome
from app.runtime.model import describe_model, make_client, resolve_model
from app.runtime.permissions import PermissionRules, Rule, suggest_rule, tools_for_mode
from app.runtime.prompts import lead_prompt, teammate_prompt
from app.runtime.session import AgentSession
from app.runtime.teammate import Teammate
from app.runtime.tools import lead_tools, teammate_tools
from app.runtime.tools.base import AgentIdentity, Tool

Listener = Callable[[RuntimeEvent], None]


def asyncio_spawner(name: str, factory: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
    """Headless spawner: one asyncio task per agent."""
    return asyncio.ensure_future(factory())  # type: ignore[arg-type]


class TeamRuntime:
    def __init__(
        self,
        home: Home,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        model: str | None = None,
        cwd: Path | None = None,
        spawner: Spawner | None = None,
        decider: Decider = "person",
        shutdown_decider: Literal["teammate", "person"] = "teammate",
        permission_timeout: float = 300.0,
        lead_mode: str = "default",
        teammate_mode: str = "default",
        rules: PermissionRules | None = None,
        headless: bool = False,
        watcher: Watcher | None = None,
    ) -> None:
        self.home = home
        #: Cross-process changes (another terminal, a Claude Code teammate) arrive through the
        #: core watcher; in-process writes wake agents directly through ``home.subscribe``.
        self.watcher = watcher
        self._owns_watcher = watcher is None
        self.client = client or make_client()
        self.model = resolve_model(model)
        self.model_description = describe_model(self.client, self.model)
        self.cwd = (cwd or Path.cwd()).absolute()
        self.spawner: Spawner = spawner or asyncio_spawner
        self.decider: Decider = decider
        self.shutdown_decider = shutdown_decider
        self.permission_timeout = permission_timeout
        self.teammate_mode = teammate_mode
        self.rules = rules or PermissionRules()
        self.headless = headless
        self.team: str | None = None
        self._listeners: list[Listener] = []
        self.queue = Approvals(self._emit)
        self.departed_transcripts: dict[str, list[TranscriptEntry]] = {}
        self.teammates: dict[str, Teammate] = {}
        self.departed: dict[str, AgentSnapshot] = {}
        self._lead_permission: dict[str, asyncio.Future[tuple[bool, str]]] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self._unwatch: Callable[[], None] | None = None
        self._scheduled: set[str] = set()
        self._lead_task: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        identity = AgentIdentity(
            name=LEAD_NAME, team=None, color="blue", model=self.model, cwd=self.cwd, is_lead=True
        )
        self.lead_session = AgentSession(
            identity,
            home=home,
            client=self.client,
            model=self.model,
            system_prompt=lead_prompt(
                self.cwd,
                decider=decider,
                headless=headless,
                delegate_team="your team" if lead_mode == "delegate" else None,
                tasks_path=home.layout.tasks_dir,
            ),
            tools=tools_for_mode(lead_tools(), lead_mode),  # type: ignore[arg-type]
            emit=self._emit,
            mode=lead_mode,
            rules=self.rules,
            services=self,
            ask_permission=self._ask_for_lead,
        )
        self.lead = Lead(self, self.lead_session)
        self.lead_turn_listeners: list[Callable[[TurnOutcome], None]] = []

    # ================================================================== lifecycle

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._unsubscribe = self.home.subscribe(self.on_file_change)
        if self.watcher is None:
            self.watcher = Watcher(self.home)
        if not self.watcher.running:
            await self.watcher.start()
        self._unwatch = self.watcher.subscribe(self._on_watch_batch)
        self._lead_task = self.spawner(LEAD_NAME, self.lead.run)

    def _on_watch_batch(self, batch: list[ChangeEvent]) -> None:
        for event in batch:
            self.on_file_change(event)

    async def stop(self) -> None:
        """Stop every agent (quitting the app): teammates are cancelled, files stay as they are."""
        for teammate in list(self.teammates.values()):
            teammate.finished = True
            _cancel(teammate.handle)
        _cancel(self._lead_task)
        if self._unsubscribe:
            self._unsubscribe()
            self._unsubscribe = None
        if self._unwatch:
            self._unwatch()
            self._unwatch = None
        if self._owns_watcher and self.watcher is not None:
            await self.watcher.stop()
        await asyncio.sleep(0)

    # ================================================================== events

    def subscribe(self, callback: Listener) -> Callable[[], None]:
        self._listeners.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(callback)

        return unsubscribe

    async def events(self) -> AsyncIterator[RuntimeEvent]:
        queue: asyncio.Queue[RuntimeEvent] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        try:
            while True:
                yield await queue.get()
        finally:
            unsubscribe()

    def _emit(self, event: RuntimeEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    def on_file_change(self, event: ChangeEvent) -> None:
        """Route a file change (this process or another) to the agents it concerns.

        The same write may arrive twice (directly from this process, then from the watcher):
        waking an agent twice is harmless, and the two reactions that read files (scanning the
        lead's inbox for requests, refreshing teammates' current tasks) are coalesced into one
        run per burst."""
        if isinstance(event, InboxChanged):
            if event.team != self.team:
                return
            if event.agent == LEAD_NAME:
                self._soon("scan_lead", self._scan_lead_inbox)
                self.lead.wake.set()
            elif (teammate := self.teammates.get(event.agent)) is not None:
                teammate.wake.set()
        elif isinstance(event, TaskChanged):
            if event.team != self.team:
                return
            for teammate in self.teammates.values():
                teammate.wake.set()
            self._soon("refresh_tasks", self.refresh_current_tasks, delay=0.02)
        elif isinstance(event, TeamRemoved) and event.team == self.team:
            self.lead.wake.set()

    def _soon(self, key: str, job: Callable[[], None], delay: float = 0.0) -> None:
        """Run ``job`` once on the loop after ``delay``, however often it is asked for before."""
        if key in self._scheduled:
            return
        loop = self._loop
        if loop is None or loop.is_closed():
            job()
            return
        self._scheduled.add(key)

        def run() -> None:
            self._scheduled.discard(key)
            job()

        def schedule() -> None:
            loop.call_later(delay, run) if delay else loop.call_soon(run)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            schedule()
        else:
            loop.call_soon_threadsafe(schedule)

    # ================================================================== the person's API

    def submit(self, text: str) -> None:
        self.lead.submit(text)

    def inject_message(self, agent: str, text: str) -> None:
        if agent == LEAD_NAME:
            self.submit(text)
            return
        teammate = self._teammate(agent)
        teammate.session.record("user", text, source="person")
        teammate.inject(text)

    def interrupt(self, agent: str) -> None:
        session = self.lead_session if agent == LEAD_NAME else self._teammate(agent).session
        session.interrupt()

    def request_shutdown(self, agent: str, reason: str | None = None) -> str:
        return self._send_shutdown_request(agent, reason or "The person asked you to shut down.")

    def kill(self, agent: str) -> None:
        teammate = self._teammate(agent)
        if teammate.finished:
            return
        teammate.finished = True
        _cancel(teammate.handle)
        self.teammate_killed(teammate)

    def approve_plan(self, request_id: str) -> str:
        return self._answer_plan(request_id, True, None)

    def reject_plan(self, request_id: str, feedback: str) -> str:
        return self._answer_plan(request_id, False, feedback)

    def answer_permission(self, request_id: str, allow: bool, always: bool = False) -> str:  # type: ignore[override]
        return self._answer_permission(request_id, allow, None, always=always)

    def approve_shutdown(self, request_id: str) -> str:
        return self._answer_shutdown(request_id, True, None)

    def reject_shutdown(self, request_id: str, reason: str) -> str:
        return self._answer_shutdown(request_id, False, reason)

    def snapshot(self) -> list[AgentSnapshot]:
        teammates = [t.session.snapshot for t in self.teammates.values()]
        teammates += self.departed.values()
        teammates.sort(key=lambda snap: snap.started_at)  # spawn order, gone or not
        return [self.lead_session.snapshot, *teammates]

    def approvals(self) -> list[Approval]:
        return self.queue.pending()

    def transcript(self, agent: str) -> list[TranscriptEntry]:
        if agent == LEAD_NAME:
            return list(self.lead_session.transcript)
        teammate = self.teammates.get(agent)
        if teammate is not None:
            return list(teammate.session.transcript)
        return list(self.departed_transcripts.get(agent, []))

    # ================================================================== team services (tools)

    def current_team(self) -> str | None:
        return self.team

    def team_created(self, team: str) -> None:
        self.team = team
        self.lead_session.identity.team = team
        self._emit(TeamLifecycle(team, "created"))

    def team_deleted(self, team: str) -> None:
        self.team = None
        self.lead_session.identity.team = None
        self._emit(TeamLifecycle(team, "deleted"))

    async def spawn_teammate(  # type: ignore[override]
        self,
        caller: AgentIdentity | str,
        spec: dict[str, Any] | str,
        *,
        plan_mode: bool = False,
        agent_type: str | None = None,
    ) -> Any:
        """From the Task tool: ``spawn_teammate(caller, spec)`` -> the seeds' result data.
        From the dashboard: ``spawn_teammate(name, prompt, plan_mode=...)`` -> the name."""
        if isinstance(caller, str):
            data = await self._spawn(
                {
                    "name": caller,
                    "prompt": spec,
                    "mode": "plan" if plan_mode else None,
                    "subagent_type": agent_type,
                    "team_name": self.team,
                }
            )
            return data["name"]
        return await self._spawn(spec)  # type: ignore[arg-type]

    async def _spawn(self, spec: dict[str, Any]) -> dict[str, Any]:
        team = spec.get("team_name") or self.team
        if not team:
            raise NotFoundError("no team yet: the lead must create one first")
        if team != self.team:
            raise NotFoundError(f"can only spawn into the team this lead leads ({self.team})")
        name = self.home.teams.unique_member_name(team, str(spec["name"]))
        plan = spec.get("mode") == "plan"
        mode = "plan" if plan else (spec.get("mode") or self.teammate_mode)
        model = resolve_model(spec["model"]) if spec.get("model") else self.model
        color = COLORS[(len(self.teammates) + len(self.departed)) % len(COLORS)]
        agent_type = spec.get("subagent_type") or "general-purpose"
        prompt = str(spec["prompt"])
        member = TeamMember(
            agent_id=f"{name}@{team}",
            name=name,
            agent_type=agent_type,
            model=model,
            prompt=prompt,
            color=color,
            plan_mode_required=plan,
            joined_at=now_ms(),
            tmux_pane_id="in-process",
            cwd=str(self.cwd),
            subscriptions=[],
            backend_type="in-process",
            mode=mode,
        )
        self.home.teams.add_member(team, member)
        identity = AgentIdentity(
            name=name, team=team, color=color, model=model, cwd=self.cwd, is_lead=False
        )
        session = AgentSession(
            identity,
            home=self.home,
            client=self.client,
            model=model,
            system_prompt=teammate_prompt(
                name=name,
                team=team,
                cwd=self.cwd,
                config_path=self.home.layout.config_path(team),
                tasks_path=self.home.layout.task_dir(team),
                plan_mode=plan,
            ),
            tools=teammate_tools(),
            emit=self._emit,
            mode=mode,
            rules=PermissionRules(
                allow=list(self.rules.allow), ask=list(self.rules.ask), deny=list(self.rules.deny)
            ),
            services=self,
            ask_permission=self._ask_for_teammate,
        )
        session.set_status("running")
        teammate = Teammate(self, session, prompt)
        self.teammates[name] = teammate
        teammate.handle = self.spawner(name, teammate.run)
        return {
            "teammate_id": member.agent_id,
            "agent_id": member.agent_id,
            "agent_type": agent_type,
            "model": model,
            "name": name,
            "color": color,
            "team_name": team,
            "plan_mode_required": plan,
        }

    def send(
        self, caller: AgentIdentity, recipient: str, text: str, summary: str | None = None
    ) -> str:
        team = caller.team or self.team
        if not team:
            raise NotFoundError("not in a team")
        box = self.home.mailbox(team)
        name = box.resolve_recipient(recipient)
        if name == caller.name:
            raise TeamdeckError("you cannot send a message to yourself")
        self._deliver(team, caller.name, name, text, summary, caller.color)
        return name

    def broadcast(self, caller: AgentIdentity, team: str, message: Any) -> list[str]:
        config = self.home.teams.require(team)
        recipients = [m.name for m in config.members if m.name.lower() != caller.name.lower()]
        for name in recipients:
            self._deliver(team, caller.name, name, message.text, message.summary, caller.color)
        return recipients

    def note_peer_dm(self, caller: AgentIdentity, recipient: str, summary: str) -> None:
        teammate = self.teammates.get(caller.name)
        if teammate is not None:
            teammate.session.last_peer_dm = f"[to {recipient}] {summary}"
            teammate.session.set_activity(teammate.session.last_peer_dm)

    def request_shutdown_from(
        self, caller: AgentIdentity, recipient: str, reason: str | None
    ) -> str:
        return self._send_shutdown_request(recipient, reason)

    def answer_plan(  # type: ignore[override]
        self, caller: AgentIdentity, request_id: str, approve: bool, feedback: str | None
    ) -> str:
        if self.decider != "lead":
            return "The person decides plan approvals in this session; leave it to them."
        return self._answer_plan(request_id, approve, feedback)

    def answer_shutdown(  # type: ignore[override]
        self, caller: AgentIdentity, request_id: str, approve: bool, reason: str | None
    ) -> str:
        approval = self.queue.get(request_id)
        if approval is not None and approval.agent != caller.name:
            return f"{request_id} is not addressed to you"
        if approval is None:
            self.queue.add(
                Approval(request_id, "shutdown", caller.name, f"{caller.name}: shutdown requested")
            )
        return self._answer_shutdown(request_id, approve, reason, by_self=True)

    async def request_plan_approval(self, caller: AgentIdentity, plan: str) -> str:
        teammate = self._teammate(caller.name)
        request_id = make_request_id("plan_approval", caller.name)
        plan_dir = self.home.layout.team_dir(self.team or "") / "plans"
        plan_path = plan_dir / f"{caller.name}.md"
        with contextlib.suppress(OSError):
            plan_dir.mkdir(mode=0o700, exist_ok=True)
            plan_path.write_text(plan, "utf-8")
        frame = plan_approval_request(request_id, caller.name, plan, str(plan_path))
        previous = teammate.session.pending_plan_request
        teammate.session.pending_plan_request = request_id
        if previous is not None:
            # The teammate only acts on the answer to its latest plan: an older request left
            # pending would look answerable but be ignored. Resolve it.
            self.queue.claim(previous, "superseded", "plan")
        self.queue.add(
            Approval(
                request_id,
                "plan",
                caller.name,
                f"{caller.name} -> team-lead: plan approval requested",
                body=plan,
            )
        )
        self._deliver(self._team(), caller.name, LEAD_NAME, frame.to_text(), None, caller.color)
        return request_id

    # ================================================================== requests and answers

    def _send_shutdown_request(self, agent: str, reason: str | None) -> str:
        team = self._team()
        name = self.home.mailbox(team).resolve_recipient(agent)
        if name in (LEAD_NAME, USER_NAME):
            raise TeamdeckError(f"{name} cannot be asked to shut down")
        request_id = make_request_id("shutdown", name)
        frame = shutdown_request(request_id, LEAD_NAME, reason)
        self.register_shutdown(name, frame)
        self._deliver(team, LEAD_NAME, name, frame.to_text(), None, "blue")
        return request_id

    def register_shutdown(self, agent: str, frame: ShutdownRequest) -> None:
        self.queue.add(
            Approval(
                frame.request_id,
                "shutdown",
                agent,
                f"{frame.sender} -> {agent}: shutdown requested",
                body=frame.reason or "",
            )
        )
        teammate = self.teammates.get(agent)
        if teammate is not None and teammate.session.status in ("idle", "running"):
            teammate.session.set_status("stopping", frame.reason or "")

    def _answer_plan(self, request_id: str, approve: bool, feedback: str | None) -> str:
        claimed = self.queue.claim(request_id, "approved" if approve else "rejected", "plan")
        if isinstance(claimed, str):
            return claimed
        frame = plan_approval_response(
            request_id, approve, feedback=feedback or None, permission_mode="default"
        )
        self._deliver(self._team(), LEAD_NAME, claimed.agent, frame.to_text(), None, "blue")
        return f"Plan {'approved' if approve else 'rejected'} for {claimed.agent}"

    def _answer_permission(
        self, request_id: str, allow: bool, reason: str | None, *, always: bool = False
    ) -> str:
        claimed = self.queue.claim(
            request_id,
            ("always allowed" if always else "allowed") if allow else "denied",
            "permission",
        )
        if isinstance(claimed, str):
            return claimed
        if always and allow and claimed.suggestion:
            self._add_allow_rule(claimed.agent, claimed.suggestion)
        future = self._lead_permission.pop(request_id, None)
        if future is not None:
            if not future.done():
                future.set_result((allow, reason or "denied by the person"))
        else:
            frame = permission_response(request_id, allow, error=reason or "Denied by team-lead")
            self._deliver(self._team(), LEAD_NAME, claimed.agent, frame.to_text(), None, "blue")
        return f"Permission {'granted' if allow else 'denied'} to {claimed.agent}"

    def answer_permission_from_lead(
        self, caller: AgentIdentity, request_id: str, allow: bool, reason: str | None
    ) -> str:
        if self.decider != "lead":
            return "The person decides permission requests in this session; leave it to them."
        return self._answer_permission(request_id, allow, reason)

    def _answer_shutdown(
        self, request_id: str, approve: bool, reason: str | None, *, by_self: bool = False
    ) -> str:
        """Answer a shutdown request (the teammate itself, or the person on its behalf)."""
        claimed = self.queue.claim(request_id, "approved" if approve else "rejected", "shutdown")
        if isinstance(claimed, str):
            return claimed
        teammate = self.teammates.get(claimed.agent)
        team = self._team()
        if approve:
            if teammate is not None and not teammate.finished:
                teammate.shutdown_request_id = request_id
                teammate.session.shutdown_approved = True
                if not by_self:  # the person decided: stop whatever the teammate is doing
                    teammate.session.interrupt()
                teammate.wake.set()
            else:  # nothing runs in this process for it: answer directly
                approved = shutdown_approved(request_id, claimed.agent, "in-process", "in-process")
                self._deliver(team, claimed.agent, LEAD_NAME, approved.to_text(), None, None)
            return f"Shutdown approved. Agent {claimed.agent} is now exiting."
        frame = shutdown_rejected(request_id, claimed.agent, reason or "no reason given")
        color = teammate.session.identity.color if teammate else None
        self._deliver(team, claimed.agent, LEAD_NAME, frame.to_text(), None, color)
        if teammate is not None and teammate.session.status == "stopping":
            teammate.session.set_status("idle")
        return f"Shutdown rejected by {claimed.agent}: {reason}"

    def observe_lead_frame(self, message: InboxMessage, frame: Any) -> None:
        """Register plan/permission requests found in the lead's inbox (idempotent)."""
        approval = approval_from_frame(frame, sender=message.sender, timestamp=message.timestamp)
        if approval is not None:
            self.queue.add(approval)

    def _scan_lead_inbox(self) -> None:
        if not self.team:
            return
        try:
            unread = self.home.mailbox(self.team).unread(LEAD_NAME)
        except TeamdeckError:
            return
        for _, message in unread:
            self.observe_lead_frame(message, parse_frame(message.text))

    # ================================================================== permissions

    async def _ask_for_teammate(
        self, session: AgentSession, tool: Tool, tool_input: dict[str, Any], tool_use_id: str
    ) -> tuple[bool, str]:
        teammate = self._teammate(session.name)
        request_id = make_request_id("permission", session.name)
        suggestion = suggest_rule(tool, tool_input)
        frame = permission_request(
            request_id,
            session.identity.agent_id,
            tool.name,
            tool_use_id,
            tool.describe(tool_input),
            tool_input,
            [suggestion],
        )
        self.observe_lead_frame(InboxMessage(sender=session.name, text=frame.to_text()), frame)
        previous = session.status
        session.set_status("awaiting approval", tool.describe(tool_input))
        self._deliver(
            self._team(), session.name, LEAD_NAME, frame.to_text(), None, session.identity.color
        )
        try:
            response = await teammate.wait_for_permission(request_id, self.permission_timeout)
        except asyncio.CancelledError:  # given up (interrupted or killed): nothing to answer
            self.queue.claim(request_id, "cancelled")
            raise
        finally:
            if session.status == "awaiting approval":
                session.set_status(previous if previous != "awaiting approval" else "running")
        if response is None:
            self.queue.claim(request_id, "timed out")
            return False, f"no answer from the lead within {self.permission_timeout:g}s"
        if response.allowed:
            if response.permission_updates:
                with contextlib.suppress(ValueError, TypeError):
                    for rule in response.permission_updates:
                        session.rules.add_allow(str(rule))
            return True, ""
        return False, response.reason or "denied by the lead"

    async def _ask_for_lead(
        self, session: AgentSession, tool: Tool, tool_input: dict[str, Any], tool_use_id: str
    ) -> tuple[bool, str]:
        if self.decider == "lead" or self.headless:
            return False, "no one can approve the lead's own tool calls here; add an allow rule"
        request_id = make_request_id("permission", LEAD_NAME)
        future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        self._lead_permission[request_id] = future
        self.queue.add(
            Approval(
                request_id,
                "permission",
                LEAD_NAME,
                f"team-lead: permission for {tool.name}",
                body=permission_body(tool_input),
                tool_name=tool.name,
                tool_input=tool_input,
                suggestion=suggest_rule(tool, tool_input),
            )
        )
        session.set_status("awaiting approval", tool.describe(tool_input))
        try:
            return await asyncio.wait_for(future, self.permission_timeout)
        except TimeoutError:
            self.queue.claim(request_id, "timed out")
            return False, "no answer within the permission timeout"
        finally:
            self._lead_permission.pop(request_id, None)
            self.queue.claim(request_id, "cancelled")  # no-op when answered or timed out
            session.set_status("running")

    def _add_allow_rule(self, agent: str, rule: str) -> None:
        with contextlib.suppress(ValueError):
            Rule.parse(rule)
            if agent == LEAD_NAME:
                self.lead_session.rules.add_allow(rule)
            elif (teammate := self.teammates.get(agent)) is not None:
                teammate.session.rules.add_allow(rule)

    # ================================================================== teammate lifecycle

    def set_teammate_mode(self, teammate: Teammate, mode: str) -> None:
        teammate.session.set_mode(mode)
        with contextlib.suppress(TeamdeckError):
            self.home.teams.update_member(self._team(), teammate.name, mode=mode)

    def send_idle_notification(self, teammate: Teammate, **details: Any) -> None:
        if teammate.session.last_peer_dm:
            details["summary"] = (
                details.get("summary") or ""
            ) + f" {teammate.session.last_peer_dm}"
        frame = idle_notification(teammate.name, **details)
        with contextlib.suppress(TeamdeckError):
            self._deliver(
                self._team(),
                teammate.name,
                LEAD_NAME,
                frame.to_text(),
                None,
                teammate.session.identity.color,
            )

    def teammate_finished(self, teammate: Teammate) -> None:
        """The teammate approved its shutdown: unassign, leave the config, then tell the lead."""
        if teammate.finished and teammate.name not in self.teammates:
            return
        teammate.finished = True
        self._leave(teammate, "completed", reason="shutdown")
        request_id = teammate.shutdown_request_id or make_request_id("shutdown", teammate.name)
        frame = shutdown_approved(request_id, teammate.name, "in-process", "in-process")
        with contextlib.suppress(TeamdeckError):
            self._deliver(
                self._team(),
                teammate.name,
                LEAD_NAME,
                frame.to_text(),
                None,
                teammate.session.identity.color,
            )

    def teammate_failed(self, teammate: Teammate, error: str) -> None:
        teammate.finished = True
        teammate.session.snapshot.error = error
        teammate.session.record("error", error)
        message = self._leave(teammate, "failed", reason="terminated", detail=error)
        self._tell_lead(teammate, f'Teammate "{teammate.name}" failed: {error}. {message}')

    def teammate_killed(self, teammate: Teammate) -> None:
        teammate.finished = True
        message = self._leave(teammate, "killed", reason="terminated")
        self._tell_lead(teammate, message)

    def _leave(self, teammate: Teammate, status: Any, *, reason: str, detail: str = "") -> str:
        name = teammate.name
        team = teammate.team
        message = f"{name} has shut down."
        with contextlib.suppress(TeamdeckError, OSError):
            message = (
                self.home.tasks(team).unassign(name, f"{name}@{team}", reason).notification_message
            )
        with contextlib.suppress(TeamdeckError, OSError):
            self.home.teams.remove_member(team, name=name)
        self.queue.drop_agent(name, "cancelled: agent left")
        teammate.session.snapshot.current_task = None
        teammate.session.set_status(status, detail)
        self.teammates.pop(name, None)
        self.departed[name] = teammate.session.snapshot
        self.departed_transcripts[name] = teammate.session.transcript
        return message

    def _tell_lead(self, teammate: Teammate, text: str) -> None:
        with contextlib.suppress(TeamdeckError):
            self._deliver(
                teammate.team,
                teammate.name,
                LEAD_NAME,
                text,
                f"{teammate.name} left the team",
                teammate.session.identity.color,
            )

    def refresh_current_tasks(self) -> None:
        if not self.team or not self.teammates:
            return
        try:
            tasks = self.home.tasks(self.team).list()
        except TeamdeckError:
            return
        owned: dict[str, str] = {}
        for task in tasks:
            if task.owner and task.status == "in_progress":
                owned.setdefault(task.owner, f"#{task.id} {task.subject}")
            elif task.owner and task.status == "pending":
                owned.setdefault(task.owner, f"#{task.id} {task.subject} (pending)")
        for name, teammate in self.teammates.items():
            teammate.session.snapshot.current_task = owned.get(name)

    # ================================================================== lead hooks

    def lead_turn_ended(self, outcome: TurnOutcome) -> None:
        for listener in list(self.lead_turn_listeners):
            listener(outcome)

    # ================================================================== helpers

    def _team(self) -> str:
        if not self.team:
            raise NotFoundError("no team: the lead has not created one")
        return self.team

    def _teammate(self, name: str) -> Teammate:
        teammate = self.teammates.get(name)
        if teammate is None:
            raise NotFoundError(f"no running teammate named {name!r}")
        return teammate

    def _deliver(
        self,
        team: str,
        sender: str,
        recipient: str,
        text: str,
        summary: str | None,
        color: str | None,
    ) -> None:
        message = InboxMessage(sender=sender, text=text, summary=summary, color=color)
        self.home.mailbox(team).append(recipient, message)
        frame = parse_frame(text)
        self._emit(
            MessageSent(
                team,
                sender,
                recipient,
                text,
                summary,
                frame.type if frame else None,
                message.timestamp,
            )
        )

    def status_of(self, agent: str) -> str:
        if agent == LEAD_NAME:
            return self.lead_session.status
        if agent in self.teammates:
            return self.teammates[agent].session.status
        if agent in self.departed:
            return self.departed[agent].status
        raise NotFoundError(f"unknown agent {agent!r}")


def _cancel(handle: Any) -> None:
    if handle is None:
        return
    cancel = getattr(handle, "cancel", None)
    if cancel is not None:
        with contextlib.suppress(Exception):
            cancel()
