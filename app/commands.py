"""Command palette entries (ctrl+p): spawn, shut down, kill, views, board, feed filter, theme."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from app.screens.deck import DeckScreen

if TYPE_CHECKING:
    from app.app import TeamDeckApp

Command = tuple[str, str, Callable[[], object]]


class DeckCommands(Provider):
    """Commands of the dashboard; per-teammate ones are listed for every current teammate."""

    @property
    def deck_app(self) -> TeamDeckApp:
        return cast("TeamDeckApp", self.app)

    def _commands(self) -> Iterator[Command]:
        app = self.deck_app
        screen = self.screen if isinstance(self.screen, DeckScreen) else None
        if screen is None:
            return
        deck = app.deck
        yield "Spawn teammate…", "Start a new in-process teammate", screen.spawn_teammate
        yield "Leader view", "Back to the leader view", app.show_leader
        yield (
            "Toggle task board",
            "Show or hide the task board (ctrl+t)",
            screen.action_toggle_board,
        )
        yield "Feed: show all messages", "Clear the feed filter", partial(app.set_feed_filter, None)
        yield "Change theme", "Pick a colour theme", app.action_change_theme
        for agent in deck.agents:
            name = agent.name
            yield f"Open view: {name}", f"{name}'s transcript", partial(app.open_agent, name)
            yield (
                f"Feed: only {name}",
                f"Messages {name} sent or received",
                partial(app.set_feed_filter, name),
            )
            yield (
                f"Interrupt: {name}",
                f"Stop {name}'s current turn",
                partial(screen.interrupt, name),
            )
            if not agent.is_lead:
                yield (
                    f"Request shutdown: {name}",
                    f"Ask {name} to shut down",
                    partial(screen.request_shutdown, name),
                )
                yield (
                    f"Kill: {name}",
                    f"Stop {name} now (asks first)",
                    partial(screen.confirm_kill, name),
                )
        for team in deck.teams:
            if team != deck.team:
                yield f"Switch team: {team}", f"Show team {team}", partial(app.switch_team, team)

    async def discover(self) -> Hits:
        for title, help_text, command in self._commands():
            yield DiscoveryHit(title, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, command in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, text=title, help=help_text)
