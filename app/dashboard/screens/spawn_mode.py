"""Choose a new teammate's permission mode (``ModalScreen[str | None]``), the last step of
"Spawn teammate…" in the palette.

The modes a teammate can have (seed 001 §7; ``delegate`` is the lead's only), one line each
saying what it lets the teammate do; the team's mode is highlighted, so enter keeps it.
bypassPermissions is listed only when it may be offered (``screens.modes.bypass_offered``); the
caller asks for the confirmation before it is used (``spawn_mode_for``).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from app.dashboard.screens.modes import BYPASS, BypassConfirmScreen, allow_bypass, bypass_offered
from widgets.footer import KeyFooter

#: (mode, what it lets the teammate do), in the order shown.
TEAMMATE_MODES: tuple[tuple[str, str], ...] = (
    ("default", "asks before it edits files or runs commands"),
    ("acceptEdits", "edits files in the project without asking; asks for the rest"),
    ("plan", "reads only, then submits a plan for approval before changing anything"),
    ("dontAsk", "runs only what the allow rules permit; denies everything else"),
    (BYPASS, "runs every tool without asking (you confirm it first)"),
)


class SpawnModeScreen(ModalScreen[str | None]):
    """Dismissed with the chosen mode, or None (esc: no teammate is spawned)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="spawn-mode-cancel")]

    def __init__(self, name: str, current: str = "default", *, bypass: bool = False) -> None:
        super().__init__(classes="dialog-screen")
        self.teammate = name
        self.modes = [(m, d) for m, d in TEAMMATE_MODES if bypass or m != BYPASS]
        names = [m for m, _ in self.modes]
        self.current = current if current in names else "default"

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            question = f"{self.teammate}'s permission mode (enter picks, esc cancels)"
            yield Static(Text(question, style="bold"), classes="dialog-question")
            yield OptionList(*(self._option(m, d) for m, d in self.modes), id="spawn-modes")
        yield KeyFooter()  # the dialog's keys, over the view's

    def _option(self, mode: str, description: str) -> Option:
        line = Text(mode, style="bold")
        if mode == self.current:
            line.append(" (the team's)", style="dim")
        line.append(f"  {description}")
        return Option(line, id=mode)

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = [m for m, _ in self.modes].index(self.current)
        options.focus()

    @on(OptionList.OptionSelected, "#spawn-modes")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


async def spawn_mode_for(app: Any, name: str) -> str | None:
    """Ask for ``name``'s mode (in a worker); bypassPermissions only after the person confirms
    it, once per run (the confirmation also lets shift+tab offer it). None: cancelled."""
    options = getattr(app, "mode_options", None)
    current = getattr(app.runtime, "teammate_mode", None) or "default"
    bypass = bypass_offered(app)
    mode: str | None = await app.push_screen_wait(SpawnModeScreen(name, current, bypass=bypass))
    if mode != BYPASS or (options is not None and options.bypass_allowed):
        return mode
    if not await app.push_screen_wait(BypassConfirmScreen()):
        app.notify("bypassPermissions declined: no teammate spawned.", timeout=4)
        return None
    allow_bypass(app)
    return mode
