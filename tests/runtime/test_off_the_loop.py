"""An in-process teammate's inbox work happens off the dashboard's event loop: reading its
unread messages and marking them read (each mark an inbox rewrite under its lock) run in its
lane, so a hundred teammates looking at their mail do not hold the person's keys."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from app.core.mailbox import Mailbox
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Router, Script, until

TEAM = "mail"


async def test_a_teammate_reads_and_marks_its_inbox_off_the_loop(
    make_runtime: Any, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.get_ident()
    on_loop: list[str] = []
    calls: list[str] = []
    unread, mark_read = Mailbox.unread, Mailbox.mark_read

    def seen(what: str, agent: str) -> None:
        if agent == "w1":
            calls.append(what)
            if threading.get_ident() == loop_thread:
                on_loop.append(what)

    def counted_unread(self: Mailbox, agent: str, *args: Any, **kw: Any) -> Any:
        seen("unread", agent)
        return unread(self, agent, *args, **kw)

    def counted_mark(self: Mailbox, agent: str, *args: Any, **kw: Any) -> Any:
        seen("mark_read", agent)
        return mark_read(self, agent, *args, **kw)

    monkeypatch.setattr(Mailbox, "unread", counted_unread)
    monkeypatch.setattr(Mailbox, "mark_read", counted_mark)
    worker = Script(["Hello.", "Got it."])
    runtime: TeamRuntime = make_runtime(Router(default=Script(then="Noted."), w1=worker))
    await runtime.start()
    home.teams.create(TEAM, description="mail", cwd=str(project))
    runtime.team_created(TEAM)
    await runtime.spawn_teammate("w1", "Say hello.")
    await until(lambda: runtime.status_of("w1") == "idle", "the first turn ended")
    runtime.require_channel().deliver("w1", "One more thing.", "more")
    await until(lambda: len(worker.requests) == 2, "the turn the message started")
    await until(lambda: runtime.status_of("w1") == "idle", "the second turn ended")
    assert "mark_read" in calls and "unread" in calls
    assert on_loop == []
    box = home.mailbox(TEAM)
    assert box.unread("w1") == []  # marked before the turn it started
