"""Where the dashboard's team comes from: a team this process runs (:class:`RuntimeSource`) or
only the files of one (:class:`FilesSource`: a read-only viewer, or a Claude Code team that
``--claude`` steers through its inboxes).

``app.dashboard.launch`` builds one and hands it to ``TeamDeckApp``; what differs between the
two is asked of the source (its steering, agents, requests, transcripts, what the header says),
so the app has one path for both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from app.core.watch import Watcher
from app.dashboard.screens.host import ModeChoices
from app.dashboard.session_transcripts import TranscriptSource
from app.dashboard.store_delta import StoreDelta
from app.display.values import TeamFiles
from app.runtime.api import AgentSnapshot, Approval, RuntimeAPI, Spawner
from app.runtime.events import RuntimeEvent, TranscriptEntry
from app.runtime.steering import ReadOnlySteering, RuntimeSteering, Steering

#: Builds the runtime the app drives, given the process's watcher and the app's spawner (each
#: agent runs as a Textual worker of its own group).
RuntimeFactory = Callable[[Watcher, Spawner], RuntimeAPI]
#: Builds a viewer's part given how to learn the team shown now (it can switch): the levers on
#: a team the app does not run (``Steering``), or where its transcripts come from.
ViewerPart = Callable[[Callable[[], str | None]], Any]
#: The team shown now (``TeamDeckApp.shown_team``).
Shown = Callable[[], str | None]


class TeamSource(Protocol):
    """What ``TeamDeckApp`` asks of where its team comes from."""

    #: The team shown first (``None``: the runtime's once it has one, else the newest).
    team: str | None
    #: The run's permission-mode options (``None``: no bypassPermissions in shift+tab's cycle).
    modes: ModeChoices | None
    #: A viewer of a home with several teams asks which one first.
    pick: bool

    @property
    def runtime(self) -> RuntimeAPI | None:
        """The running team (``None``: only files are read)."""
        ...

    @property
    def model_description(self) -> str:
        """What the header (and, whole, the help screen) says of the model."""
        ...

    @property
    def shows_newest(self) -> bool:
        """With no team named, the store shows the newest (else it waits for the runtime's)."""
        ...

    @property
    def priced(self) -> bool:
        """The header shows what the run cost (only a runtime knows)."""
        ...

    def connect(self, watcher: Watcher, spawner: Spawner, shown: Shown) -> Steering:
        """Called once by the app: build what the source needs; the levers on the team."""
        ...

    def transcripts(self, shown: Shown) -> TranscriptSource | None:
        """Where a viewer reads the agents' transcripts from their session files, if it does."""
        ...

    def transcript(self, agent: str) -> list[TranscriptEntry]:
        """``agent``'s transcript as the runtime keeps it (none without one)."""
        ...

    def subscribe(self, listener: Callable[[RuntimeEvent], None]) -> Callable[[], None] | None:
        """Follow the runtime's events; returns how to stop (``None``: no events)."""
        ...

    async def start(self) -> None:
        """Start the team (in a worker, once the app is mounted)."""
        ...

    async def stop(self) -> None:
        """Stop the team (the app is closing)."""
        ...

    def snapshot(self) -> Sequence[AgentSnapshot] | None:
        """The runtime's view of the agents (``None``: only the files know them)."""
        ...

    def approvals(self) -> tuple[Approval, ...] | None:
        """The runtime's pending requests (``None``: they come with the files)."""
        ...

    def file_approvals(self, delta: StoreDelta) -> tuple[Approval, ...] | None:
        """The pending requests the files hold now (``None``: the runtime's count)."""
        ...

    def dated(self, files: TeamFiles, clock: Callable[[], float]) -> TeamFiles:
        """``files`` with ``stale`` as of now (a viewer: only it knows the last activity)."""
        ...

    def leftover_teams(self, files: TeamFiles) -> list[str]:
        """Teams an earlier run left on disk, to offer for deletion at start."""
        ...


class RuntimeSource:
    """A team this process runs: a runtime built by ``factory`` with the app's watcher and
    spawner; ``goal`` is the lead's first prompt, sent once the runtime has started."""

    pick = False

    def __init__(
        self,
        factory: RuntimeFactory,
        *,
        team: str | None = None,
        goal: str | None = None,
        modes: ModeChoices | None = None,
    ) -> None:
        self.factory = factory
        self.team = team
        self.goal = goal
        self.modes = modes
        self._runtime: RuntimeAPI | None = None

    @property
    def runtime(self) -> RuntimeAPI:
        assert self._runtime is not None, "connect() first"
        return self._runtime

    @property
    def model_description(self) -> str:
        return self.runtime.model_description

    shows_newest = False
    priced = True

    def connect(self, watcher: Watcher, spawner: Spawner, shown: Shown) -> Steering:
        self._runtime = self.factory(watcher, spawner)
        self.team = self.team or self._runtime.team
        return RuntimeSteering(self._runtime)

    def transcripts(self, shown: Shown) -> TranscriptSource | None:
        return None

    def transcript(self, agent: str) -> list[TranscriptEntry]:
        return self.runtime.transcript(agent)

    def subscribe(self, listener: Callable[[RuntimeEvent], None]) -> Callable[[], None] | None:
        return self.runtime.subscribe(listener)

    async def start(self) -> None:
        await self.runtime.start()
        if self.goal:
            self.runtime.submit(self.goal)

    async def stop(self) -> None:
        await self.runtime.stop()

    def snapshot(self) -> Sequence[AgentSnapshot] | None:
        return self.runtime.snapshot()

    def approvals(self) -> tuple[Approval, ...] | None:
        return tuple(self.runtime.approvals())

    def file_approvals(self, delta: StoreDelta) -> tuple[Approval, ...] | None:
        return None

    def dated(self, files: TeamFiles, clock: Callable[[], float]) -> TeamFiles:
        return files

    def leftover_teams(self, files: TeamFiles) -> list[str]:
        """Never the team ``--team``/``attach`` named: it is being resumed (its lead may be
        spawning while the dialog is up)."""
        if self.runtime.team is not None:
            return []
        return [team for team in files.teams if team != self.team]


class FilesSource:
    """Only the files of a team: read-only, unless ``steering`` builds levers on it (e.g. a
    Claude Code team's inboxes); ``transcripts`` reads the agents' session files; ``model`` is
    what the header says in place of a model."""

    runtime: RuntimeAPI | None = None
    modes: ModeChoices | None = None
    shows_newest = True
    priced = False

    def __init__(
        self,
        *,
        team: str | None = None,
        pick: bool = False,
        steering: ViewerPart | None = None,
        transcripts: ViewerPart | None = None,
        model: str = "",
    ) -> None:
        self.team = team
        self.pick = pick
        self._steering = steering
        self._transcripts = transcripts
        self.model_description = model
        #: the agents' session files give each model call's usage: the header shows the cost
        self.priced = transcripts is not None

    def connect(self, watcher: Watcher, spawner: Spawner, shown: Shown) -> Steering:
        steering: Steering = (
            self._steering(shown) if self._steering is not None else ReadOnlySteering()
        )
        return steering

    def transcripts(self, shown: Shown) -> TranscriptSource | None:
        source: TranscriptSource | None = (
            self._transcripts(shown) if self._transcripts is not None else None
        )
        return source

    def transcript(self, agent: str) -> list[TranscriptEntry]:
        return []

    def subscribe(self, listener: Callable[[RuntimeEvent], None]) -> Callable[[], None] | None:
        return None

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def snapshot(self) -> Sequence[AgentSnapshot] | None:
        return None

    def approvals(self) -> tuple[Approval, ...] | None:
        return None

    def file_approvals(self, delta: StoreDelta) -> tuple[Approval, ...] | None:
        return tuple(delta.pending)

    def dated(self, files: TeamFiles, clock: Callable[[], float]) -> TeamFiles:
        return files.as_of(clock())

    def leftover_teams(self, files: TeamFiles) -> list[str]:
        return []
