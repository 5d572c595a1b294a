"""A teammate in a process of its own, once :mod:`app.runtime.agent_main` has parsed its options.

The teammate is a member the lead already added to the team config (its prompt, model, mode,
colour, type and working folder come from its entry there). It runs the same loop as an
in-process teammate and speaks to its team only through the files, exactly as a Claude Code
teammate in another terminal would: plan approvals, permission requests and shutdowns go
through protocol frames, so the dashboard, ``teamdeck approve`` or the lead answer them alike.

What it does goes to its event log and its liveness to its record (both in
``teams/{team}/agents/``, see :mod:`app.runtime.runners.event_log`); with ``print_to`` (the
tmux window) its transcript is printed as it happens. Signals: SIGINT ends its current turn,
SIGTERM/SIGHUP stop it at once (it leaves the team: tasks back to the board, the lead told).
If its team is deleted it simply ends; if its lead is gone (killed, crashed) and no dashboard
attaches within ``$TEAMDECK_ORPHAN_TIMEOUT`` seconds it shuts down
(:mod:`app.runtime.runners.orphan`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from app.core import Home, authority
from app.core.errors import NotFoundError, TeamdeckError
from app.core.events import ChangeEvent, InboxChanged, TaskChanged, TeamRemoved
from app.core.models import TeamMember
from app.core.paths import LEAD_NAME, project_of
from app.core.watch import Watcher
from app.runtime.agent.channel import sent_event
from app.runtime.events import ApprovalChanged, RuntimeEvent
from app.runtime.model.client import default_offline_handler, make_client
from app.runtime.model.credentials import refuse_same_user_readers
from app.runtime.permissions import PermissionRules, RulesFeed, snapshot
from app.runtime.permissions.settings import load_settings
from app.runtime.runners.base import spec_from_member
from app.runtime.runners.build import build_teammate
from app.runtime.runners.event_log import LOG_VERSION, LogWriter, exit_line
from app.runtime.runners.hold import FileHold, hold_path
from app.runtime.runners.orphan import LeadWatch, orphan_timeout
from app.runtime.runners.pane import PanePrinter
from app.runtime.runners.process_record import AgentRecord, Heartbeat, write_record
from app.runtime.runners.task_news import TaskNews
from app.runtime.sandbox import SandboxConfig
from app.runtime.scheduling import offload


def run_settings(
    home: Home, team: str, cwd: Path, key: authority.TeamKey | None = None
) -> tuple[PermissionRules, RulesFeed | None]:
    """Its rules, and what keeps them the run's; its hooks are then the run's too
    (``permissions.snapshot``). With the lead's snapshot (kept by the lead's runtime) it
    follows that file: a change the person accepts, or an "always allow" rule, reaches it at
    its next tool call. Without one, the settings files of its folder as they are now, at its
    start, and nothing changes them afterwards. With the team's ``key``, only a snapshot signed
    with it is followed."""
    kept = home.layout.agents_dir(team) / "settings.json"
    project = project_of(cwd)
    try:
        snapshot.follow(project, kept, key)
    except (OSError, ValueError):
        snapshot.take(project)
        return load_settings(cwd).rules, None
    feed = RulesFeed(lambda: snapshot.current(project).rules)
    return feed.seen.copy(), feed


def find_member(home: Home, team: str, name: str) -> TeamMember:
    config = home.teams.require(team)
    if name == LEAD_NAME:
        raise TeamdeckError("team-lead is the lead, not a teammate: it runs in the dashboard")
    for member in config.members:
        if member.name == name:
            return member
    raise NotFoundError(f"{name!r} is not a member of team {team!r}")


async def run_agent(
    home: Home,
    team: str,
    name: str,
    *,
    backend: str = "process",
    offline: bool = False,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    permission_timeout: float = 300.0,
    print_to: IO[str] | None = None,
    sandbox: SandboxConfig | None = None,
    team_key: str | None = None,
) -> int:
    """Run teammate ``name`` of ``team`` until it leaves; 0 after a shutdown, 1 otherwise.

    ``team_key``: the team's key (hex) as the runtime handed it over; without one (a teammate a
    person started by hand) the team's key file, if the team has one (``app.core.authority``)."""
    if offload.ENABLED_ENV not in os.environ:
        # Offloading keeps a dashboard's loop free for the screen; this process has none, and
        # the thread hand-offs only cost CPU that the team's other processes need (measured in
        # bench/live.py's process rows). $TEAMDECK_OFFLOAD=1 turns it back on.
        offload.set_enabled(False)
    member = find_member(home, team, name)
    spec = spec_from_member(team, member, Path.cwd())
    loop = asyncio.get_running_loop()
    layout = home.layout
    record_path = layout.agent_record_path(team, name)
    write_record(
        record_path,
        AgentRecord(name, team, os.getpid(), backend, tmux_target=os.environ.get("TMUX_PANE")),
    )
    writer = LogWriter(layout.agent_log_path(team, name), schedule=loop.call_later)
    writer.write(
        {
            "event": "start",
            "logVersion": LOG_VERSION,
            "pid": os.getpid(),
            "backend": backend,
            "model": spec.model,
            "mode": spec.mode,
            "color": spec.color,
            "agentType": spec.agent_type,
            "cwd": str(spec.cwd),
        }
    )
    printer = PanePrinter(name, print_to) if print_to is not None else None

    def emit(event: RuntimeEvent) -> None:
        writer(event)
        if printer is not None:
            printer(event)

    key = (
        authority.TeamKey.from_hex(team, team_key)
        if team_key
        else authority.load_key(home.root, team)
    )
    if key is not None:  # as private as an API key (see ``model.credentials``)
        refuse_same_user_readers()
    rules, feed = run_settings(home, team, spec.cwd, key)
    for rule in allow:
        rules.add_allow(rule)
    for rule in deny:
        rules.add_deny(rule)
    # The SDK is imported at the first model call (a second of CPU), not at the start: a
    # teammate stopped or held before it calls the model never loads it. The same client.
    client = make_client(handler=default_offline_handler() if offline else None, deferred=True)
    teammate = build_teammate(
        spec,
        home=home,
        client=client,
        emit=emit,
        rules=rules,
        backend=backend,
        permission_timeout=permission_timeout,
        on_sent=lambda sent: emit(sent_event(sent)),
        # the lead's runtime closes the request it queued (see ``event_log``: "dropped")
        on_request_dropped=lambda request_id, outcome: emit(
            ApprovalChanged(request_id, "permission", name, True, outcome)
        ),
        gate=FileHold(hold_path(home, team)),
        sandbox=sandbox,  # the run's budget, held by the lead's runtime
        rules_feed=feed,
        key=key,
    )
    heartbeat = Heartbeat(record_path)
    heartbeat.start()
    watcher = Watcher(home, agent_logs=False)  # the other agents' logs are not its business
    main = asyncio.ensure_future(teammate.run())

    news = TaskNews(home, name)

    def on_changes(batch: list[ChangeEvent]) -> None:
        tasks: list[TaskChanged] = []
        for event in batch:
            if event.team != team:
                continue
            mine = isinstance(event, InboxChanged) and event.agent == name
            if mine:
                teammate.wake.set()
            elif isinstance(event, TaskChanged):
                tasks.append(event)
            elif isinstance(event, TeamRemoved):  # the team is gone: nothing left to do
                main.cancel()
        # Only an idle teammate, and only for a change that may give it work (``task_news``):
        # a working one looks at the board when its turn ends.
        if tasks and news.wakes(tasks, teammate.idle):
            teammate.wake.set()

    def stop_now() -> None:
        if not teammate.finished:
            teammate.exit("killed", reason="terminated")
        main.cancel()

    async def watch_lead(watch: LeadWatch) -> None:
        """Shut down once the lead has been gone for the grace period (see ``orphan``)."""
        while not main.done():
            await asyncio.sleep(watch.interval)
            why = await asyncio.to_thread(watch.check)
            if why is None or teammate.finished:
                continue
            teammate.session.record("notice", f"Shutting down: {why}.")
            teammate.exit("completed", reason="shutdown", note=f'Teammate "{name}": {why}.')
            main.cancel()
            return

    await watcher.start()
    unsubscribe = watcher.subscribe(on_changes)
    timeout = orphan_timeout()
    lead_path = layout.agent_record_path(team, LEAD_NAME)
    orphaned = asyncio.ensure_future(watch_lead(LeadWatch(lead_path, timeout))) if timeout else None
    for sig, handler in (
        (signal.SIGINT, teammate.session.interrupt),
        (signal.SIGTERM, stop_now),
        (signal.SIGHUP, stop_now),
    ):
        loop.add_signal_handler(sig, handler)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await main
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(sig)
        heartbeat.stop()
        if orphaned is not None:
            orphaned.cancel()
        unsubscribe()
        await watcher.stop()
        snap = teammate.session.snapshot
        status = snap.status if snap.status in ("completed", "failed", "killed") else "killed"
        writer.write(exit_line(status, "shutdown" if status == "completed" else status, snap.error))
        writer.flush()
        with contextlib.suppress(OSError):  # the record says no process runs it any more
            record_path.unlink()
    return 0 if status == "completed" else 1
