"""Quitting while a team is working: shut it down (default), leave it, or stay.

A team whose teammates run in processes of their own (``--teammate-mode process|tmux``) is
left *running*: its teammates go on working and ``teamdeck attach`` opens it again. An
in-process team is left on disk (its teammates stop with the dashboard).

``ModalScreen[str | None]``, dismissed with ``"shutdown"``, ``"leave"`` or ``None`` (cancel).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from app.dashboard import keys
from app.display.program import program_name
from widgets.agent_text import agent_text
from widgets.footer import KeyFooter


class QuitScreen(ModalScreen[str | None]):
    """Ask what becomes of ``team`` (its live teammates' ``statuses``)."""

    AUTO_FOCUS = "#shutdown"
    BINDINGS = [
        keys.QUIT_SHUTDOWN.binding(),
        keys.QUIT_LEAVE.binding(),
        keys.QUIT_CANCEL.binding(),
    ]

    def __init__(
        self,
        team: str,
        statuses: Sequence[str],
        *,
        running: bool = False,
        demo_home: str | None = None,
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.team = team
        self.statuses = list(statuses)
        #: The teammates run in processes of their own: leaving keeps them working.
        self.running = running
        #: A demo's temporary home: leaving the team keeps it (else it is deleted on the way
        #: out), so the dialog says where the team is left.
        self.demo_home = demo_home

    def compose(self) -> ComposeResult:
        home = f"--home {self.demo_home} " if self.demo_home else ""
        program = program_name()  # as the exit line will say it
        left: tuple[str | tuple[str, str], ...]
        if self.running:
            left = (
                "Left running, its teammates keep working; ",
                (f"{program} {home}attach {self.team}", "bold"),
                " opens it again.",
            )
        elif self.demo_home:
            left = (
                "Left on disk, the demo's home is kept (not deleted as the demo ends); ",
                (f"{program} {home}".rstrip(), "bold"),
                " lists it.",
            )
        else:
            left = ("Left on disk, it is listed the next time teamdeck starts.",)
        question = Text.assemble(
            "Quit while team ", (self.team, "bold"), f" is live ({who(self.statuses)})?\n\n",
            "Shutting it down asks every teammate to stop and deletes the team and its tasks. ",
            *left,
        )  # fmt: skip
        with Vertical(classes="dialog", id="quit"):
            yield Static(question, classes="dialog-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Shut down (y)", variant="error", id="shutdown")
                yield Button("Leave running (l)" if self.running else "Leave on disk (l)",
                             id="leave")  # fmt: skip
                yield Button("Cancel (n)", id="cancel")
        yield KeyFooter()  # the dialog's keys, over the view's

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice or None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        choice = event.button.id or ""
        self.dismiss(None if choice == "cancel" else choice)


class ShuttingDownScreen(ModalScreen[None]):
    """What "Shut down" is doing, from the moment it is chosen until teamdeck quits: how many
    teammates have stopped, who is still awaited, and one line per teammate force-stopped.
    It answers no key (quitting is under way); :func:`app.dashboard.leaving.shut_team_down`
    updates it."""

    def __init__(self, team: str, names: Sequence[str]) -> None:
        super().__init__(classes="dialog-screen")
        self.team = team
        self.names = list(names)
        self.stopped: set[str] = set()
        self.notes: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="shutting-down"):
            yield Static(self.text(), classes="dialog-question", id="shutting-down-text")

    def text(self) -> Text:
        total = len(self.names)
        head = f"Shutting down {self.team}: {total} teammate{'s' if total != 1 else ''}…"
        lines = [head]
        if total:
            waiting = [n for n in self.names if n not in self.stopped]
            line = f"{len(self.stopped)} of {total} stopped"
            lines.append(line + (f"; waiting for {', '.join(waiting)}" if waiting else ""))
        lines += self.notes
        return agent_text("\n".join(lines))  # notes may quote a teammate

    def show(self, stopped: set[str], note: str | None = None) -> None:
        self.stopped = set(stopped) & set(self.names)
        if note:
            self.notes.append(note)
        if self.is_mounted:
            self.query_one("#shutting-down-text", Static).update(self.text())


#: How the quit question words a live teammate's status.
_WORDS = {"running": "working", "awaiting approval": "waiting for you", "stopping": "stopping"}


def who(statuses: Sequence[str]) -> str:
    """The live teammates by state: "3 teammates idle", "2 teammates: 1 working, 1 idle"."""
    if not statuses:
        return "no teammates left"
    counts: dict[str, int] = {}
    for status in statuses:
        word = _WORDS.get(status, status)
        counts[word] = counts.get(word, 0) + 1
    total = len(statuses)
    noun = f"{total} teammate{'s' if total != 1 else ''}"
    if len(counts) == 1:
        return f"{noun} {next(iter(counts))}"
    return f"{noun}: " + ", ".join(f"{n} {word}" for word, n in counts.items())
