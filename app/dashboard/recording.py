"""The dashboard's recording and budget: started with the app, closed when it exits.

Kept out of ``app.py`` and ``launch.py`` (a few calls there): the recorder is fed from the
runtime's events and the app's watcher (the same streams the views consume); the budget's
warnings become notifications.

A viewer (``teamdeck --claude``) records too: a run with source ``attach`` per team shown,
fed by the viewer's watcher alone (messages, task changes, members), written to teamdeck's
own home's ``history.db`` -- never into the home watched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.archive import AnyRecorder, NullRecorder, history_path, start_run
from app.core import Home
from app.runtime.model.budget import Budget, attach_budget


def start_dashboard_recording(
    app: Any,
    home: Home,
    runtime: Any,
    *,
    source: str,
    goal: str | None = None,
    history: bool = True,
    claude: bool = False,
    budget: float | Budget | None = None,
    history_home: Path | None = None,
    attach: str | None = None,
) -> AnyRecorder:
    """Record the dashboard's run (``runtime`` ``None``: a viewer, nothing is recorded) and
    install ``budget``. Problems are shown as notifications once the app is up. ``attach``:
    the team left running that this dashboard leads again; the run that left it goes on."""

    def warn(line: str) -> None:
        _notify(app, line, severity="warning", title="History")

    gate = attach_budget(budget, runtime) if runtime is not None else None
    if gate is not None:
        from app.dashboard.palette.budget import BudgetCommands

        gate.listeners.append(lambda b, what: _budget_notice(app, b, what))
        app.COMMANDS = app.COMMANDS | {BudgetCommands}  # "Raise budget…" in the palette
    app.budget = gate
    path = history_path(history_home or home.root, claude=claude)
    list_runs_in_palette(app, path)
    if runtime is None:
        recorder: AnyRecorder = NullRecorder()
    else:
        recorder = start_run(
            home,
            runtime,
            source=source,
            goal=goal,
            enabled=history,
            path=path,
            warn=warn,
            budget=gate.limit if gate else None,
            continue_team=attach,
        )
        watcher = getattr(app, "watcher", None)
        if watcher is not None:
            recorder.watch(watcher)
    app.recorder = recorder
    return recorder


def start_attach_recording(app: Any, home: Home, *, history: bool = True) -> None:
    """Record what a viewer sees: a run per team shown (a switch of team ends one run and
    starts the next), from the moment it is shown; what was already there (the inboxes'
    messages, the tasks, the members) is recorded when it starts."""
    app.recorder = NullRecorder()
    app.budget = None
    path = history_path(home.root, claude=home.is_claude)
    list_runs_in_palette(app, path)
    if not history:
        return

    def warn(line: str) -> None:
        _notify(app, line, severity="warning", title="History")

    def follow(files: Any) -> None:
        team = getattr(files, "team", None)
        current: AnyRecorder = app.recorder
        if not team or team == current.team:
            return
        if current.team is not None:
            current.close("stopped", f"the viewer switched to team {team}")
        recorder = start_run(home, None, source="attach", path=path, warn=warn)
        recorder.set_team(team)
        recorder.sweep_existing(team)
        recorder.watch(app.watcher)
        app.recorder = recorder

    app.call_later(lambda: app.watch(app, "files", follow))


def list_runs_in_palette(app: Any, path: Path) -> None:
    """The archive's runs in the palette ("Replay run 12: ..."): picking one replays it over
    the dashboard (``app.dashboard.screens.replay``)."""
    from app.dashboard.screens.replay import RunCommands

    app.history_path = path
    app.COMMANDS = app.COMMANDS | {RunCommands}


def finish_dashboard_recording(app: Any) -> None:
    recorder: AnyRecorder | None = getattr(app, "recorder", None)
    if recorder is None:
        return
    gate: Budget | None = getattr(app, "budget", None)
    if recorder.team_deleted:
        outcome, reason = "finished", "team finished"
    elif getattr(app, "runtime", True) is None:
        outcome, reason = "stopped", "the viewer was closed"
    elif gate is not None and gate.stopped:
        outcome, reason = "budget", f"stopped at the budget ({gate.describe()})"
    else:
        outcome, reason = "stopped", "the dashboard was closed"
    recorder.close(outcome, reason)


def _notify(app: Any, message: str, **options: Any) -> None:
    """From any thread (``call_later`` posts a message: thread-safe), before or after the app
    is running; never waits for the app (the writer thread must not block on the UI)."""
    from widgets.agent_text import agent_markup

    app.call_later(app.notify, agent_markup(message), **options)


def _budget_notice(app: Any, budget: Budget, what: str) -> None:
    if what == "warning":
        _notify(
            app,
            f"{budget.describe()} spent: 80% of the budget.",
            title="Budget",
            severity="warning",
            timeout=10,
        )
    elif what == "stopped":
        _notify(
            app,
            f"Budget reached ({budget.describe()}): no new model call starts; agents are"
            " paused. Raise the budget from the palette (ctrl+p) or shut the team down.",
            title="Budget",
            severity="error",
            timeout=30,
        )
    elif what == "resumed":
        _notify(app, f"Budget raised to {budget.describe()}: agents go on.", title="Budget")
    # The header turns to a warning colour (``StatusBar``'s CSS keys on these classes).
    app.set_class(budget.state == "warning", "-budget-warning")
    app.set_class(budget.state == "stopped", "-budget-stopped")
