"""Choose the team to show (``ModalScreen[str | None]``): per-session Claude Code teams pile up.

Each team is one line: its name, member count, pending requests and last activity (stale teams
say since when), newest first (``app.runtime.by_files.status.team_summaries``). Enter picks, esc
keeps the team shown. The summaries are read by the caller, not by this screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from app.dashboard.screens.host import DeckHost
from app.display.agent_text import shown
from app.runtime.by_files.status import TeamSummary, team_summaries
from widgets.footer import KeyFooter


def summary_line(summary: TeamSummary) -> Text:
    line = Text(shown(summary.name), style="bold")
    members = f"{summary.members} teammate" + ("" if summary.members == 1 else "s")
    line.append(f"  {members}")
    if summary.pending:
        line.append(f"  {summary.pending} waiting for you", style="bold yellow")
    line.append(f"  {summary.activity_text()}", style="dim" if summary.stale else "")
    if summary.error:
        line.append("  (unreadable file)", style="red")
    return line


class TeamPickerScreen(ModalScreen[str | None]):
    """Pick one of ``summaries``; dismissed with the team's name, or None."""

    BINDINGS = [Binding("escape", "cancel", "Keep", id="picker-cancel")]

    def __init__(self, summaries: Sequence[TeamSummary], current: str | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.summaries = list(summaries)
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text("Which team? (enter picks, esc keeps)"), classes="dialog-question")
            yield OptionList(
                *(Option(summary_line(s), id=s.name) for s in self.summaries), id="teams"
            )
        yield KeyFooter()  # the dialog's keys, over the view's

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        names = [s.name for s in self.summaries]
        options.highlighted = names.index(self.current) if self.current in names else 0
        options.focus()

    @on(OptionList.OptionSelected, "#teams")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


def open_team_picker(app: App[Any]) -> None:
    """Show the picker over ``app`` (a ``TeamDeckApp``); the choice switches the team shown."""
    from app.dashboard.messages import SwitchTeam

    host = cast(DeckHost, app)
    summaries = team_summaries(host.home)
    if not summaries:
        app.notify("No team in this home yet.", severity="warning")
        return
    current = host.files.team

    def chosen(team: str | None) -> None:
        if team and team != current:
            app.post_message(SwitchTeam(team))

    app.push_screen(TeamPickerScreen(summaries, current), chosen)
