"""Building the dashboard: the runtime it drives, the demo scenario, the read-only viewer.

Kept out of ``app.py`` (the App stays thin) and out of the CLI (which only parses arguments).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core import Home
from app.recording import (
    finish_dashboard_recording,
    start_attach_recording,
    start_dashboard_recording,
)

if TYPE_CHECKING:
    from app.app import RuntimeFactory, TeamDeckApp
    from app.core.watch import Watcher
    from app.runtime.api import Decider, RuntimeAPI, Spawner

DEMO_GOAL = "Summarize what the Python files in this folder do"
#: What the header says in place of the model when teamdeck steers a Claude Code team.
STEERING_CLAUDE = "steering a Claude Code team — answers go to its inboxes"
#: Seconds between streamed chunks in the demo, so a person can watch the agents work.
DEMO_PACE = "0.02"


def demo_workspace() -> Path:
    """The folder the demo team studies: teamdeck's own ``app`` package (real Python files)."""
    return Path(__file__).resolve().parent


def build_dashboard(
    home: Home,
    *,
    demo: bool = False,
    goal: str | None = None,
    lead_approves: bool = False,
    viewer: bool = False,
    cwd: Path | None = None,
    modes: Any = None,
    history: bool = True,
    budget: float | None = None,
    claude: bool = False,
    team: str | None = None,
    attach: str | None = None,
    teammate_backend: str | None = None,
    worktrees: bool = False,
) -> TeamDeckApp:
    """The TeamDeckApp, with a TeamRuntime unless ``viewer`` (watch files only, e.g. a Claude
    Code home). In the demo, a temporary home, a visible pace, and the person approves the plan.

    The runtime is built by the app (``runtime_factory``), so that the app's watcher and its
    spawner (a Textual worker per agent) are the runtime's from the start."""
    from app.app import TeamDeckApp

    if viewer:
        viewing = TeamDeckApp(home, None, team=team)
        viewing.pick_on_start = team is None and len(home.teams.names()) > 1
        if home.is_claude:  # a live Claude Code team: answer it through its inboxes
            from app.runtime.claude_transcripts import ClaudeTranscripts
            from app.runtime.file_steering import FileSteering

            viewing.steering = FileSteering(home, lambda: viewing.store.team)
            viewing.transcript_source = ClaudeTranscripts(home, lambda: viewing.store.team)
            viewing.model_description = STEERING_CLAUDE
        start_attach_recording(viewing, home, history=history)
        return viewing
    history_home = home.root
    if demo:
        os.environ.setdefault("TEAMDECK_OFFLINE_PACE", DEMO_PACE)
        os.environ.setdefault("TEAMDECK_HOOKS", "0")  # no settings file shapes the demo
        home = Home(tempfile.mkdtemp(prefix="teamdeck-demo-"))
        goal = goal or DEMO_GOAL
        cwd = cwd or demo_workspace()
    runtime_options = dict(modes.runtime_kwargs()) if modes is not None else {}
    if teammate_backend is not None:
        runtime_options["teammate_backend"] = teammate_backend
    if attach is not None:  # teamdeck attach: lead a team left running again
        runtime_options["attach"] = attach
    if demo:  # "always allow" in the demo stays in its temporary home, not in teamdeck's source
        runtime_options.setdefault("rules_file", home.root / "settings.local.json")
    if worktrees:
        runtime_options["worktrees"] = True
    factory = runtime_factory(
        home,
        cwd=cwd,
        decider="lead" if lead_approves else "person",
        options=runtime_options,
    )
    app = TeamDeckApp(home, factory, demo=demo, goal=goal, team=team)
    app.mode_options = modes  # read by app.screens.modes (shift+tab, bypass confirmation)
    source = "demo" if demo else "attach" if attach else "dashboard"
    options: dict[str, Any] = {"history": history, "budget": budget, "claude": claude}
    start_dashboard_recording(
        app, home, app.runtime, source=source, goal=goal, history_home=history_home, **options
    )
    return app


def runtime_factory(
    home: Home,
    *,
    cwd: Path | None,
    decider: Decider,
    options: dict[str, Any] | None = None,
) -> RuntimeFactory:
    """A ``RuntimeFactory`` for ``TeamDeckApp``: a ``TeamRuntime`` on ``home``."""
    from app.runtime.team import TeamRuntime

    def build(watcher: Watcher, spawner: Spawner) -> RuntimeAPI:
        return TeamRuntime(
            home,
            cwd=cwd,
            decider=decider,
            watcher=watcher,
            spawner=spawner,
            **(options or {}),
        )

    return build


def run_dashboard(
    home: Home,
    *,
    demo: bool = False,
    goal: str | None = None,
    lead_approves: bool = False,
    viewer: bool = False,
    modes: Any = None,
    **options: Any,
) -> int:
    app = build_dashboard(
        home,
        demo=demo,
        goal=goal,
        lead_approves=lead_approves,
        viewer=viewer,
        modes=modes,
        **options,
    )
    try:
        app.run()
    finally:
        finish_dashboard_recording(app)
    return app.return_code or 0
