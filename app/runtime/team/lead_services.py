"""The team services the lead's tools use (TeamCreate, Task, SendMessage, Task*).

Team lifecycle and spawning are the runtime's own (the dashboard uses them too); messages go
through the lead's channel; plan and permission answers go to the request desk when the lead
model decides them (``--lead-approves``, headless), and are refused when the person does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from app.runtime.tools.base import AgentIdentity, ToolError

if TYPE_CHECKING:
    from app.core import Home
    from app.runtime.agent.channel import TeamChannel
    from app.runtime.agent.permission_flow import LeadPermissions
    from app.runtime.agent.session import AgentSession
    from app.runtime.api import Decider
    from app.runtime.team.across import Across
    from app.runtime.team.answers import RequestDesk


class LeadsTeam(Protocol):
    """What the lead's services use of the runtime that runs the lead (``team.runtime``)."""

    @property
    def home(self) -> Home: ...

    @property
    def team(self) -> str | None: ...

    @property
    def decider(self) -> Decider: ...

    @property
    def desk(self) -> RequestDesk: ...

    @property
    def lead_permissions(self) -> LeadPermissions: ...

    @property
    def lead_session(self) -> AgentSession: ...

    @property
    def across(self) -> Across | None: ...

    def team_created(self, team: str) -> None: ...

    def team_deleted(self, team: str) -> None: ...

    async def spawn_teammate(self, caller: AgentIdentity, spec: dict[str, Any]) -> Any: ...

    def require_channel(self) -> TeamChannel: ...


class LeadServices:
    """Implements ``TeamServices`` (``app.runtime.tools.base``) for the lead."""

    def __init__(self, runtime: LeadsTeam) -> None:
        self.runtime = runtime
        self.home: Home = runtime.home

    def current_team(self) -> str | None:
        return self.runtime.team

    def team_created(self, team: str) -> None:
        self.runtime.team_created(team)

    def team_name_for(self, requested: str) -> str:
        across = self.runtime.across
        return across.team_name(requested) if across is not None else requested

    def team_deleted(self, team: str) -> None:
        self.runtime.team_deleted(team)

    async def spawn_teammate(self, caller: AgentIdentity, spec: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.runtime.spawn_teammate(caller, spec)
        return result

    def send(
        self, caller: AgentIdentity, recipient: str, text: str, summary: str | None = None
    ) -> str:
        return self.runtime.require_channel().deliver(recipient, text, summary)

    def broadcast(self, caller: AgentIdentity, team: str, message: Any) -> list[str]:
        return self.runtime.require_channel().broadcast(message.text, message.summary)

    def note_peer_dm(self, caller: AgentIdentity, recipient: str, summary: str) -> None:
        self.runtime.lead_session.note_peer_dm(recipient, summary)

    def request_shutdown_from(
        self, caller: AgentIdentity, recipient: str, reason: str | None
    ) -> str:
        _, request_id = self.runtime.require_channel().request_shutdown(recipient, reason)
        return request_id

    def answer_plan(
        self, caller: AgentIdentity, request_id: str, approve: bool, feedback: str | None
    ) -> str:
        if self.runtime.decider != "lead":
            return "The person decides plan approvals in this session; leave it to them."
        return self.runtime.desk.answer_plan(request_id, approve, feedback).text

    def answer_permission_from_lead(
        self, caller: AgentIdentity, request_id: str, allow: bool, reason: str | None
    ) -> str:
        if self.runtime.decider != "lead" or self.runtime.lead_permissions.owns(request_id):
            return "The person decides permission requests in this session; leave it to them."
        return self.runtime.desk.answer_permission(request_id, allow, reason).text

    def answer_shutdown(
        self, caller: AgentIdentity, request_id: str, approve: bool, reason: str | None
    ) -> str:
        raise ToolError("Nobody asks the team lead to shut down; end your turn instead.")

    async def request_plan_approval(self, caller: AgentIdentity, plan: str) -> str:
        raise ToolError("ExitPlanMode is for teammates in plan mode.")
