"""Command palette entries (ctrl+p): spawn, views, board, feed filter, switch team, shut down,
kill (the theme is the system commands' own entry).

Every entry posts a message from ``app.dashboard.messages``: to the screen the palette was opened
on for those that may ask the person something (spawn, shut down, kill, interrupt), else to
the app. The palette itself changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.message import Message

from app.dashboard.messages import (
    AskInterrupt,
    AskKill,
    AskShutdown,
    AskSpawn,
    FilterFeed,
    OpenAgent,
    ShowLeader,
    SwitchTeam,
    ToggleBoard,
)
from app.dashboard.screens.deck import DeckScreen
from app.dashboard.screens.host import DeckHost

Command = tuple[str, str, Callable[[], object]]


class DeckCommands(Provider):
    """Commands of the dashboard; per-teammate ones are listed for every current teammate."""

    def _commands(self) -> Iterator[Command]:
        screen = self.screen
        if not isinstance(screen, DeckScreen):
            return
        host = cast(DeckHost, self.app)

        def to_app(message: Message) -> Callable[[], object]:
            return partial(self.app.post_message, message)

        def to_screen(message: Message) -> Callable[[], object]:
            return partial(screen.post_message, message)

        steering = host.steering
        yield (
            "Spawn teammate…",
            steering.unavailable("spawn") or "A new teammate: its name, prompt and permission mode",
            to_screen(AskSpawn()),
        )
        yield "Leader view", "Back to the leader view", to_app(ShowLeader())
        yield (
            "Toggle task board",
            "Show or hide the task board (ctrl+t)",
            to_app(ToggleBoard()),
        )
        yield "Feed: show all messages", "Clear the feed filter", to_app(FilterFeed(None))
        # Other teams right after the fixed entries, so they show without scrolling. (The
        # theme is the system commands' "Theme": listed once.)
        from app.dashboard.screens.team_picker import open_team_picker

        yield (
            "Pick a team…",
            "Every team: teammates, requests waiting for you, last activity",
            partial(open_team_picker, self.app),
        )
        files = host.files
        for team in files.teams:
            if team != files.team:
                yield f"Switch team: {team}", f"Show team {team}", to_app(SwitchTeam(team))
        for agent in host.agents:
            name = agent.name
            yield f"Open view: {name}", f"{name}'s transcript", to_app(OpenAgent(name))
            yield (
                f"Feed: only {name}",
                f"Messages {name} sent or received",
                to_app(FilterFeed(name)),
            )
            if steering.unavailable("interrupt") is None:
                yield (
                    f"Interrupt: {name}",
                    f"Stop {name}'s current turn",
                    to_screen(AskInterrupt(name)),
                )
            if not agent.is_lead:
                yield (
                    f"Request shutdown: {name}",
                    f"Ask {name} to shut down",
                    to_screen(AskShutdown(name)),
                )
                if steering.unavailable("kill") is None:  # K still says why not
                    yield (
                        f"Kill: {name}",
                        f"Stop {name} now (asks first)",
                        to_screen(AskKill(name)),
                    )

    async def discover(self) -> Hits:
        for title, help_text, command in self._commands():
            yield DiscoveryHit(title, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, command in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, text=title, help=help_text)
