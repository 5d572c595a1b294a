"""The lead's permission mode in the dashboard: shift+tab cycles it (as in Claude Code), the
header shows it (``HeaderInfo.mode``), and bypassPermissions is only entered after the person
confirms it.

Kept apart from the views: ``DeckScreen`` binds shift+tab to ``cycle_lead_mode``; the app calls
``confirm_bypass_at_start`` once mounted. The options of the run (``cli_modes.ModeOptions``)
are the app's ``mode_options`` attribute (``None``: no bypassPermissions in the cycle).
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.markup import escape
from textual.screen import Screen

from app.screens.confirm import ConfirmScreen

BYPASS = "bypassPermissions"
#: What shift+tab steps through (bypassPermissions joins when it is allowed).
CYCLE: tuple[str, ...] = ("default", "acceptEdits", "plan")
BINDING = Binding("shift+tab", "cycle_mode", "Mode", show=False, id="cycle-mode")
BYPASS_WARNING = (
    "bypassPermissions: the lead (and teammates in this mode) will run every tool (shell "
    "commands, file edits, anything) without asking you. Only use it in a sandbox you can "
    "throw away. Enter bypassPermissions mode?"
)


class BypassConfirmScreen(ConfirmScreen):
    """Asks before bypassPermissions is entered (dismissed with True to enter it)."""

    def __init__(self) -> None:
        super().__init__(BYPASS_WARNING, confirm_label="Yes, bypass permissions")


def next_mode(current: str, *, bypass_allowed: bool) -> str:
    """The mode after ``current`` in the cycle (a mode outside it goes back to the start)."""
    cycle = [*CYCLE, BYPASS] if bypass_allowed else list(CYCLE)
    if current not in cycle:
        return cycle[0]
    return cycle[(cycle.index(current) + 1) % len(cycle)]


def _bypass_allowed(app: Any) -> bool:
    options = getattr(app, "mode_options", None)
    return bool(options is not None and options.bypass_allowed)


def bypass_offered(app: Any) -> bool:
    """bypassPermissions may be offered at all (it is never when a settings file disabled
    it, nor in a run without mode options, e.g. the viewer)."""
    options = getattr(app, "mode_options", None)
    return options is not None and not getattr(options, "bypass_disabled", False)


def allow_bypass(app: Any) -> None:
    """The person confirmed bypassPermissions: shift+tab offers it and the runtime accepts it
    (for the lead and for teammates spawned in it)."""
    options = getattr(app, "mode_options", None)
    if options is not None:
        options.bypass_allowed = True
    if app.runtime is not None and hasattr(app.runtime, "allow_bypass"):
        app.runtime.allow_bypass = True


def _switch(app: Any, mode: str) -> None:
    outcome = app.steering.set_lead_mode(mode)
    app.notify(
        escape(outcome.message),
        title="Lead mode",
        severity="information" if outcome.ok else "warning",
        timeout=2 if outcome.ok else 5,
    )


def cycle_lead_mode(screen: Screen[Any]) -> None:
    """shift+tab: the lead's next mode; bypassPermissions only once allowed or confirmed."""
    app: Any = screen.app
    lead = next((a for a in app.agents if a.is_lead), None)
    current = lead.mode if lead is not None else "default"
    _switch(app, next_mode(current, bypass_allowed=_bypass_allowed(app)))


def confirm_bypass_at_start(app: Any) -> None:
    """If bypassPermissions was asked for without ``--dangerously-skip-permissions``, ask the
    person; yes switches to the requested modes, no keeps the safe ones the run started with."""
    options = getattr(app, "mode_options", None)
    runtime = app.runtime
    if options is None or not options.confirm_bypass or runtime is None:
        return

    def answered(yes: bool | None) -> None:
        if not yes:
            app.notify("bypassPermissions declined: the team keeps asking.", timeout=4)
            return
        allow_bypass(app)
        if hasattr(runtime, "teammate_mode"):
            runtime.teammate_mode = options.requested_teammate_mode
        if options.requested_lead_mode != options.lead_mode:
            _switch(app, options.requested_lead_mode)

    app.push_screen(BypassConfirmScreen(), answered)
