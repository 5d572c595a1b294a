"""Building the dashboard: the runtime it drives, the demo scenario, the read-only viewer.

Kept out of ``app.py`` (the App stays thin) and out of the CLI (which only parses arguments).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core import Home
from app.dashboard.first_frame import clear_start
from app.dashboard.recording import (
    finish_dashboard_recording,
    start_attach_recording,
    start_dashboard_recording,
)

if TYPE_CHECKING:
    from app.core.watch import Watcher
    from app.dashboard.app import TeamDeckApp
    from app.dashboard.team_source import RuntimeFactory
    from app.runtime.api import Decider, RuntimeAPI, Spawner

DEMO_PREFIX = "teamdeck-demo-"
DEMO_GOAL = "Summarize what the Python files in this folder do and count their lines"
#: What the header says in place of the model when teamdeck steers a Claude Code team.
STEERING_CLAUDE = "steering a Claude Code team — answers go through its hooks or inboxes"
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
    demo_root: Path | None = None,
    sandbox: Any = None,
    across: Any = None,
) -> TeamDeckApp:
    """The TeamDeckApp, with a TeamRuntime unless ``viewer`` (watch files only, e.g. a Claude
    Code home). In the demo, a temporary home (``demo_root``, else a new one the caller
    removes), a visible pace, and the person approves the plan.

    The runtime is built by the app (``runtime_factory``), so that the app's watcher and its
    spawner (a Textual worker per agent) are the runtime's from the start."""
    from app.dashboard.app import TeamDeckApp
    from app.dashboard.team_source import RuntimeSource

    if viewer:
        viewing = _viewer(home, team)
        start_attach_recording(viewing, home, history=history)
        if budget is not None and home.is_claude:
            from app.dashboard.claude_budget import ClaudeBudget

            viewing.budget = ClaudeBudget(budget)  # type: ignore[attr-defined]  # warns, offers
        return viewing
    history_home = home.root
    if demo:
        os.environ.setdefault("TEAMDECK_OFFLINE_PACE", DEMO_PACE)
        os.environ.setdefault("TEAMDECK_HOOKS", "0")  # no settings file shapes the demo
        home = Home(demo_root or tempfile.mkdtemp(prefix=DEMO_PREFIX))
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
    if across is not None:  # a team across machines (``--engine``): teammates in processes
        runtime_options["across"] = across
        if runtime_options.get("teammate_backend", "in-process") == "in-process":
            runtime_options["teammate_backend"] = "process"
    if sandbox is not None:  # teamdeck attach (tui/demo/run bring it in ``modes``)
        runtime_options["sandbox"] = sandbox
    factory = runtime_factory(
        home,
        cwd=cwd,
        decider="lead" if lead_approves else "person",
        options=runtime_options,
    )
    source = RuntimeSource(factory, team=team, goal=goal, modes=modes)
    app = TeamDeckApp(home, source, demo=demo)
    kind = "demo" if demo else "attach" if attach else "dashboard"
    options: dict[str, Any] = {"history": history, "budget": budget, "claude": claude}
    options["attach"] = attach
    start_dashboard_recording(
        app, home, source.runtime, source=kind, goal=goal, history_home=history_home, **options
    )
    return app


def _viewer(home: Home, team: str | None) -> TeamDeckApp:
    """The read-only viewer of ``home``'s files; of a live Claude Code team, one that answers
    it through its inboxes and reads its transcripts from its session files."""
    from app.dashboard.app import TeamDeckApp
    from app.dashboard.team_source import FilesSource

    pick = team is None and len(home.teams.names()) > 1
    if not home.is_claude:
        return TeamDeckApp(home, FilesSource(team=team, pick=pick))
    from app.dashboard.claude_bridge import BridgeLink
    from app.runtime.by_files.claude_transcripts import ClaudeTranscripts
    from app.runtime.by_files.steering import FileSteering

    source = FilesSource(
        team=team,
        pick=pick,
        steering=lambda shown: FileSteering(home, shown),
        transcripts=lambda shown: ClaudeTranscripts(home, shown),
        model=STEERING_CLAUDE,
    )
    # the requests Claude Code's hooks hold (``teamdeck claude setup``) join the queue
    return TeamDeckApp(home, source, bridge=BridgeLink())


def runtime_factory(
    home: Home,
    *,
    cwd: Path | None,
    decider: Decider,
    options: dict[str, Any] | None = None,
) -> RuntimeFactory:
    """A ``RuntimeFactory`` for ``TeamDeckApp``: a ``TeamRuntime`` on ``home``."""
    from app.runtime.team.runtime import TeamRuntime

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
    keep: bool = False,
    goal: str | None = None,
    lead_approves: bool = False,
    viewer: bool = False,
    modes: Any = None,
    **options: Any,
) -> int:
    """Run the dashboard until the person quits. The demo's temporary home is removed when it
    ends, however it ends, unless ``keep`` (then its path is printed)."""
    notify = tuple(options.pop("notify", None) or ())
    with demo_home(keep) if demo else _no_demo_home() as kept:
        app = build_dashboard(
            home,
            demo=demo,
            goal=goal,
            lead_approves=lead_approves,
            viewer=viewer,
            modes=modes,
            demo_root=kept.root if kept is not None else None,
            **options,
        )
        from app.dashboard.notify_watch import attach_notifications

        attach_notifications(app, Path.cwd(), notify)  # settings' notify.urls and --notify
        clear_start()  # "starting teamdeck…": the dashboard takes the screen now
        try:
            with _exit_on_hangup(app.exit):
                app.run()
        finally:
            finish_dashboard_recording(app)
            if kept is not None and app.keep_home:  # "Leave on disk": the team is there
                kept.keep = True
            if app.left_team is not None:
                from app.dashboard.leaving import resume_line

                print(resume_line(app.home.root, *app.left_team))
        return app.return_code or 0


@dataclass
class DemoHome:
    """The demo's temporary home, and whether it outlives the demo."""

    root: Path
    keep: bool


@contextmanager
def demo_home(keep: bool) -> Iterator[DemoHome]:
    """A temporary home for the demo: removed on the way out (a normal quit, ctrl+q mid-run,
    an exception), or kept and named when ``keep`` (``--keep``, or the person left the team on
    disk as the demo ended)."""
    kept = DemoHome(Path(tempfile.mkdtemp(prefix=DEMO_PREFIX)), keep)
    root = kept.root
    try:
        yield kept
    finally:
        if kept.keep:
            from app.display.program import program_name

            print(f"teamdeck: the demo's files are kept in {root} ({program_name()} --home {root})")
        else:
            try:
                _remove(root)
            except OSError as exc:
                print(
                    f"teamdeck: error: could not remove the demo's files in {root}: {exc}",
                    file=sys.stderr,
                )


def _remove(root: Path, tries: int = 5) -> None:
    """``rmtree``, tried again a few times 0.1 s apart: a teammate's thread that was stopping
    as the dashboard quit may still land its last write in the team's folder while the tree
    is being removed ("Directory not empty"). The last failure is raised."""
    for attempt in range(tries):
        try:
            shutil.rmtree(root)
            return
        except OSError:
            if not root.exists():
                return
            if attempt == tries - 1:
                raise
            time.sleep(0.1)


@contextmanager
def _no_demo_home() -> Iterator[None]:
    yield None


@contextmanager
def _exit_on_hangup(exit_app: Callable[[], object]) -> Iterator[None]:
    """The terminal closing (SIGHUP) or a plain ``kill`` (SIGTERM) quits the app the normal
    way, so what a normal quit cleans up (the demo's home, the run's record) is cleaned up."""
    import threading

    if sys.platform == "win32" or threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can be set from the main thread only
        return

    def stop(signum: int, _frame: object) -> None:
        import asyncio

        if signum == signal.SIGHUP:
            # The terminal is gone. The kernel follows SIGHUP with SIGCONT, on which Textual
            # would go back into application mode on the dead terminal and could be stopped
            # there (SIGTTOU) for good: nothing is left to resume or draw on.
            signal.signal(signal.SIGCONT, signal.SIG_DFL)
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            signal.signal(signal.SIGTTIN, signal.SIG_IGN)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the app is not running yet (or any more): plain exit
            raise SystemExit(128 + signum) from None
        loop.call_soon_threadsafe(exit_app)

    wanted = (signal.SIGHUP, signal.SIGTERM)
    previous = {s: signal.signal(s, stop) for s in wanted}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
