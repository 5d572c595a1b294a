"""The team services a teammate's tools use (SendMessage, ExitPlanMode, Task*), over its channel.

Only what a teammate may do: message members, broadcast, ask a member to shut down (the seeds
let any member send a ``shutdown_request``), answer its own shutdown requests and submit its plan.
The lead-only services (spawning, team create/delete, answering plans and permissions) say so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from app.core.errors import TeamdeckError
from app.core.paths import LEAD_NAME
from app.core.protocol import TaskCompleted, parse_frame
from app.runtime.tools.base import AgentIdentity, ToolError

if TYPE_CHECKING:
    from app.core import Home
    from app.runtime.agent.channel import TeamChannel
    from app.runtime.agent.session import AgentSession


class ServedTeammate(Protocol):
    """What the services use of their teammate (``agent.teammate.Teammate``)."""

    @property
    def session(self) -> AgentSession: ...

    @property
    def channel(self) -> TeamChannel: ...

    @property
    def team(self) -> str: ...

    def answer_shutdown(self, request_id: str, approve: bool, reason: str | None) -> str: ...

    def show(self, detail: str = "") -> None: ...

    @property
    def lead_notes(self) -> list[str]: ...


class TeammateServices:
    """Implements ``TeamServices`` for one teammate (see ``app.runtime.tools.base``)."""

    def __init__(self, teammate: ServedTeammate) -> None:
        self.teammate = teammate
        self.home: Home = teammate.channel.home

    def current_team(self) -> str | None:
        return self.teammate.team

    def team_name_for(self, requested: str) -> str:
        return requested

    def send(
        self, caller: AgentIdentity, recipient: str, text: str, summary: str | None = None
    ) -> str:
        if (
            recipient == LEAD_NAME
            and summary is None
            and isinstance(parse_frame(text), TaskCompleted)
        ):
            # Told with the turn's idle notification, in one write of the lead's inbox.
            self.teammate.lead_notes.append(text)
            return LEAD_NAME
        return self.teammate.channel.deliver(recipient, text, summary)

    def broadcast(self, caller: AgentIdentity, team: str, message: Any) -> list[str]:
        return self.teammate.channel.broadcast(message.text, message.summary)

    def note_peer_dm(self, caller: AgentIdentity, recipient: str, summary: str) -> None:
        self.teammate.session.note_peer_dm(recipient, summary)

    def request_shutdown_from(
        self, caller: AgentIdentity, recipient: str, reason: str | None
    ) -> str:
        _, request_id = self.teammate.channel.request_shutdown(recipient, reason)
        return request_id

    def answer_shutdown(
        self, caller: AgentIdentity, request_id: str, approve: bool, reason: str | None
    ) -> str:
        return self.teammate.answer_shutdown(request_id, approve, reason)

    async def request_plan_approval(self, caller: AgentIdentity, plan: str) -> str:
        teammate = self.teammate
        request_id = teammate.channel.request_plan_approval(plan)
        # Only the answer to the latest plan counts; an older request is superseded.
        teammate.session.pending_plan_request = request_id
        teammate.show()
        return request_id

    # ------------------------------------------------------------------ the lead's only

    def team_created(self, team: str) -> None:
        raise ToolError("Only the team lead can create a team.")

    def team_deleted(self, team: str) -> None:
        raise ToolError("Only the team lead can delete the team.")

    async def spawn_teammate(self, caller: AgentIdentity, spec: dict[str, Any]) -> dict[str, Any]:
        raise ToolError("Teammates cannot spawn teammates.")

    def answer_plan(
        self, caller: AgentIdentity, request_id: str, approve: bool, feedback: str | None
    ) -> str:
        raise TeamdeckError("Only the team lead can approve or reject plans.")

    def answer_permission_from_lead(
        self, caller: AgentIdentity, request_id: str, allow: bool, reason: str | None
    ) -> str:
        raise TeamdeckError("Only the team lead can answer permission requests.")
