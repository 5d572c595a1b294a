"""What the person does to the team's agents and reads of them (``RuntimeAPI``'s share).

A mixin of :class:`~app.runtime.team.runtime.TeamRuntime`: steering an agent (a message, an
interrupt, a kill), answering the queue's plans and permissions as the person, and the
agents' snapshots, transcripts and statuses. Modes and shutdown requests stay with the
runtime (they reach its lead session and channel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.paths import LEAD_NAME, USER_NAME
from app.runtime.api import AgentSnapshot, Answer, AnswerStatus, Approval
from app.runtime.runners.inprocess import InProcessRunner

if TYPE_CHECKING:
    from app.runtime.agent.lead import Lead
    from app.runtime.agent.session import AgentSession
    from app.runtime.agent.teammate import Teammate
    from app.runtime.approvals import Approvals
    from app.runtime.events import TranscriptEntry
    from app.runtime.runners.base import Runner
    from app.runtime.team.across import Across
    from app.runtime.team.answers import RequestDesk
    from app.runtime.team.crew import Crew


class PersonControls:
    """The person's controls over the agents (``TeamRuntime`` sets the parts)."""

    lead: Lead
    lead_session: AgentSession
    crew: Crew
    desk: RequestDesk
    queue: Approvals
    across: Across | None

    def submit(self, text: str) -> None:
        self.lead.submit(text)

    def inject_message(self, agent: str, text: str) -> None:
        if agent == LEAD_NAME:
            self.submit(text)
            return
        self.crew.require(agent).inject(text)

    def interrupt(self, agent: str) -> None:
        if agent == LEAD_NAME:
            self.lead_session.interrupt()
        else:
            self.crew.require(agent).interrupt()

    def kill(self, agent: str) -> Answer:
        self.crew.require(agent).kill()
        return Answer(AnswerStatus.DONE, f"killed {agent}", agent)

    def approve_plan(self, request_id: str) -> Answer:
        return self.desk.answer_plan(request_id, True, None, by=USER_NAME)

    def reject_plan(self, request_id: str, feedback: str) -> Answer:
        return self.desk.answer_plan(request_id, False, feedback, by=USER_NAME)

    def answer_permission(
        self, request_id: str, allow: bool, always: bool = False, feedback: str | None = None
    ) -> Answer:
        return self.desk.answer_permission(request_id, allow, feedback, always=always, by=USER_NAME)

    def snapshot(self) -> list[AgentSnapshot]:
        """The lead, then the current team's teammates in spawn order (gone or not); in a
        team across machines, each with its machine."""
        agents = [self.lead_session.snapshot, *self.crew.snapshots()]
        return self.across.name_machines(agents) if self.across is not None else agents

    def approvals(self) -> list[Approval]:
        return self.queue.pending()

    def transcript(self, agent: str) -> list[TranscriptEntry]:
        if agent == LEAD_NAME:
            return list(self.lead_session.transcript)
        return self.crew.transcript(agent)

    def status_of(self, agent: str) -> str:
        return self.lead_session.status if agent == LEAD_NAME else self.crew.status_of(agent)

    @property
    def teammates(self) -> dict[str, Teammate]:
        """The in-process teammates still in the team, by name."""
        return {
            name: runner.teammate
            for name, runner in self.crew.runners.items()
            if isinstance(runner, InProcessRunner)
        }

    @property
    def runners(self) -> dict[str, Runner]:
        """Every teammate still in the team (any mode), by name."""
        return self.crew.runners

    @property
    def departed(self) -> dict[str, AgentSnapshot]:
        """Teammates of the current team that left (shut down, failed, killed), by name."""
        return self.crew.departed
