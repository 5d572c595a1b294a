"""What the screens, the palette and the app's helpers (``app.dashboard.leaving``) need from the
app that
hosts them, as Protocols, so they do not import the app (the app imports them).

The state attributes are the app's reactives: read them, or ``self.watch(app, name, ...)``
them; change them only by posting a message from ``app.dashboard.messages``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from textual.screen import Screen
from textual.signal import Signal

from app.core.home import Home
from app.dashboard.streams import Streamed
from app.display.values import HeaderInfo, TeamFiles
from app.runtime.api import AgentSnapshot, Approval, RuntimeAPI
from app.runtime.events import TranscriptEntry
from app.runtime.steering import Steering

ScreenResult = TypeVar("ScreenResult")


class ModeChoices(Protocol):
    """The run's permission-mode options (``app.cli.modes.ModeOptions``), as the dashboard
    uses them: shift+tab and the bypassPermissions confirmation
    (``app.dashboard.screens.modes``)."""

    lead_mode: str
    confirm_bypass: bool
    bypass_disabled: bool
    requested_lead_mode: str
    requested_teammate_mode: str
    bypass_allowed: bool


class DeckHost(Protocol):
    agents: tuple[AgentSnapshot, ...]
    approvals: tuple[Approval, ...]
    selected: str | None
    feed_filter: str | None
    board_visible: bool
    files: TeamFiles
    header: HeaderInfo

    home: Home

    @property
    def runtime(self) -> RuntimeAPI | None:
        """The running team (``None``: only the files are read; ``app.dashboard.team_source``)."""
        ...

    #: The model in words, whole (the header shows a short form).
    model_description: str
    #: The run's mode options (``None``: no bypassPermissions in shift+tab's cycle).
    mode_options: ModeChoices | None
    clock: Callable[[], float]
    partial: dict[str, str]  # text streamed since each agent's last transcript entry
    #: Streamed text, entries, hook lines, the run's end (``app.dashboard.streams``).
    streamed: Signal[Streamed]
    steering: Steering

    @property
    def awaits_goal(self) -> bool:
        """The lead waits for a first goal: the leader view starts in its input."""
        ...

    @property
    def transcripts_from_files(self) -> bool:
        """The agents' transcripts are read from their own session files (a viewer that
        steers a Claude Code team); views follow them through ``transcript_grew``."""
        ...

    def agent(self, name: str | None) -> AgentSnapshot | None: ...

    def transcript(self, agent: str) -> list[TranscriptEntry]: ...

    def flush_runtime(self) -> None:
        """Apply the runtime events received so far (``agents`` is current afterwards)."""

    def release_toasts(self) -> None:
        """A view is shown again: the toasts held while a dialog was open
        (``app.dashboard.toast_hold``)."""


class DeckApp(DeckHost, Protocol):
    """A ``DeckHost`` and the App calls a flow outside any screen needs
    (``app.dashboard.leaving``)."""

    #: Seconds teammates get to answer a shutdown request when the person quits.
    SHUTDOWN_WAIT: float
    #: A demo run (its home is temporary), and whether the person chose to keep that home.
    demo: bool
    keep_home: bool
    #: The team the person left on quitting (on disk, or running), for the exit line that
    #: says how to resume it.
    left_team: tuple[str, bool] | None

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def exit(self, result: None = None, return_code: int = 0, message: Any = None) -> None: ...

    async def push_screen_wait(self, screen: Screen[ScreenResult]) -> ScreenResult: ...

    def push_screen(self, screen: Any) -> Any:
        """Show ``screen`` without waiting for its result (awaitable: until it is mounted)."""
