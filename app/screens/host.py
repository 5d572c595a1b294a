"""What the screens and the palette need from the app that hosts them, as a Protocol, so they
do not import the app (the app imports them).

The state attributes are the app's reactives: read them, or ``self.watch(app, name, ...)``
them; change them only by posting a message from ``app.messages``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from app.runtime.api import AgentSnapshot, Approval
from app.runtime.events import TranscriptEntry
from app.runtime.steering import Steering
from app.view_state import HeaderInfo, TeamFiles


class DeckHost(Protocol):
    agents: tuple[AgentSnapshot, ...]
    approvals: tuple[Approval, ...]
    selected: str | None
    feed_filter: str | None
    board_visible: bool
    files: TeamFiles
    header: HeaderInfo

    clock: Callable[[], float]
    partial: dict[str, str]  # text streamed since each agent's last transcript entry
    steering: Steering

    @property
    def transcripts_from_files(self) -> bool:
        """The agents' transcripts are read from their own session files (a viewer that
        steers a Claude Code team); views follow them through ``transcript_grew``."""
        ...

    def agent(self, name: str | None) -> AgentSnapshot | None: ...

    def transcript(self, agent: str) -> list[TranscriptEntry]: ...
