"""The lead's permission mode in the dashboard: shift+tab cycles it (as in Claude Code), the
header shows it (``HeaderInfo.mode``), and bypassPermissions is only entered after the person
confirms it.

Kept apart from the views: ``DeckScreen`` binds shift+tab to ``cycle_lead_mode``; the app calls
``confirm_bypass_at_start`` once mounted. The options of the run (``cli_modes.ModeOptions``)
are the app's ``mode_options`` attribute (``None``: no bypassPermissions in the cycle).
Every change goes through the app's ``steering``, so the runtime emits an event for it.
"""

from __future__ import annotations

from typing import Any, cast

from textual.app import App
from textual.screen import Screen

from app.dashboard import keys
from app.dashboard.screens.confirm import ConfirmScreen
from app.dashboard.screens.host import DeckHost
from app.runtime.steering import Outcome
from widgets.agent_text import agent_markup

BYPASS = "bypassPermissions"
#: What shift+tab steps through (bypassPermissions joins when it is allowed).
CYCLE: tuple[str, ...] = ("default", "acceptEdits", "plan")
BINDING = keys.MODE.binding()
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


def _bypass_allowed(host: DeckHost) -> bool:
    options = host.mode_options
    return bool(options is not None and options.bypass_allowed)


def bypass_offered(app: App[Any]) -> bool:
    """bypassPermissions may be offered at all (it is never when a settings file disabled
    it, nor in a run without mode options, e.g. the viewer)."""
    options = cast(DeckHost, app).mode_options
    return options is not None and not options.bypass_disabled


def allow_bypass(app: App[Any]) -> None:
    """The person confirmed bypassPermissions: shift+tab offers it and the runtime accepts it
    (for the lead and for teammates spawned in it)."""
    host = cast(DeckHost, app)
    if host.mode_options is not None:
        host.mode_options.bypass_allowed = True
    if host.runtime is not None:
        host.runtime.allow_bypass = True


def _tell(app: App[Any], outcome: Outcome, title: str) -> None:
    cast(DeckHost, app).flush_runtime()  # the person's change shows now, not on the next beat
    app.notify(
        agent_markup(outcome.message),
        title=title,
        severity="information" if outcome.ok else "warning",
        timeout=2 if outcome.ok else 5,
    )


def cycle_lead_mode(screen: Screen[Any]) -> None:
    """shift+tab: the lead's next mode; bypassPermissions only once allowed or confirmed."""
    host = cast(DeckHost, screen.app)
    lead = next((a for a in host.agents if a.is_lead), None)
    current = lead.mode if lead is not None else "default"
    mode = next_mode(current, bypass_allowed=_bypass_allowed(host))
    _tell(screen.app, host.steering.set_lead_mode(mode), "Lead mode")


def confirm_bypass_at_start(app: App[Any]) -> None:
    """If bypassPermissions was asked for without ``--dangerously-skip-permissions``, ask the
    person; yes switches to the requested modes, no keeps the safe ones the run started with."""
    host = cast(DeckHost, app)
    options = host.mode_options
    if options is None or not options.confirm_bypass or host.runtime is None:
        return

    def answered(yes: bool | None) -> None:
        if options is None or not yes:
            app.notify("bypassPermissions declined: the team keeps asking.", timeout=4)
            return
        allow_bypass(app)
        steering = host.steering
        teammates = steering.set_teammate_permission_mode(options.requested_teammate_mode)
        if not teammates.ok:
            _tell(app, teammates, "Teammate mode")
        if options.requested_lead_mode != options.lead_mode:
            _tell(app, steering.set_lead_mode(options.requested_lead_mode), "Lead mode")

    app.push_screen(BypassConfirmScreen(), answered)
