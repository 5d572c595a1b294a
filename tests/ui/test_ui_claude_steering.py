"""``teamdeck --claude`` steers a live Claude Code team with keys. Each request can be answered
once in an app: the checks that answer none, and one answer of each request, run as named
steps of one app (``Steps``); the other answers each have an app of their own.

The home is the Node-built Claude Code home of ``tests/claude_home.py`` (a per-session team
with newer-era inboxes); the dashboard is built as the CLI builds it (``build_dashboard(...,
viewer=True)`` on a ``mkdir``-locked home), so the answers go through ``FileSteering``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from pytest_subtests import SubTests
from textual.pilot import Pilot
from textual.screen import ModalScreen
from textual.widgets import OptionList

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import build_dashboard
from app.dashboard.messages import AskSpawn
from app.dashboard.palette.commands import DeckCommands
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.screens.feedback import FeedbackScreen
from app.dashboard.screens.help import HelpScreen, keys_rows
from app.dashboard.screens.permission import PermissionScreen
from app.dashboard.screens.team_picker import TeamPickerScreen, summary_line
from app.runtime.bridge.steering import BridgeSteering
from app.runtime.by_files.steering import FileSteering
from tests import claude_home as ch
from tests.ui.helpers import Steps, screen_text, wait_for


@pytest.fixture
def deck(tmp_path: Path) -> TeamDeckApp:
    root = ch.build(tmp_path / "claude")
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    # the hook bridge's requests go through it, everything else through the files
    assert isinstance(app.steering, BridgeSteering)
    assert isinstance(app.steering.inner, FileSteering)
    return app


def last(app: TeamDeckApp, agent: str) -> dict[str, Any]:
    entries: list[dict[str, Any]] = json.loads(app.home.mailbox(ch.TEAM).path(agent).read_text())
    return entries[-1]


def last_frame(app: TeamDeckApp, agent: str) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(last(app, agent)["text"])
    return frame


async def ready(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded and len(app.approvals) == 2)
    assert app.files.team == ch.TEAM
    await pilot.press("escape")  # out of the lead's input (focused at start): keys act
    return app


async def select(pilot: Pilot[None], app: TeamDeckApp, name: str) -> None:
    number = [a.name for a in app.agents if not a.is_lead].index(name) + 1
    await pilot.press(str(number))
    await wait_for(pilot, lambda: app.selected == name)


def footer_keys(app: TeamDeckApp) -> set[str]:
    return {k for k, active in app.screen.active_bindings.items() if active.binding.show}


async def steps(pilot: Pilot[None], subtests: SubTests) -> tuple[TeamDeckApp, Steps]:
    """The app ready, and its steps: each starts with no notification shown."""
    app = await ready(pilot)
    return app, Steps(pilot, subtests, app.clear_notifications)


async def test_reading_the_team_and_what_is_not_offered(
    deck: TeamDeckApp, subtests: SubTests
) -> None:
    """Everything but answering a request, then the plan approved and the permission allowed
    once with a: one app (each request can be answered once)."""
    async with deck.run_test(size=(120, 40)) as pilot:
        app, step = await steps(pilot, subtests)

        async with step("the lead pane shows the lead session"):
            await wait_for(pilot, lambda: ch.LEAD_PROMPT in screen_text(app))
            text = screen_text(app)
            assert "I'll spawn a researcher and a writer." in text
            assert "Type a goal for the lead" not in text  # the first-run text of a team it runs
            assert "steering a Claude Code team" in text and "read-only viewer" not in text
            append_record(
                transcript_path(app, ch.LEAD_SESSION),
                "Both teammates are at work.",
                {"output_tokens": 9},
            )
            await wait_for(pilot, lambda: "Both teammates are at work." in screen_text(app))
            assert tokens(app, "team-lead") == (5000, 209, 1)

        async with step("the teammate view shows its Claude Code transcript"):
            entries = app.transcript("researcher")
            assert entries[0].text.endswith(f"{ch.RESEARCHER_SESSION}.jsonl")
            assert [(e.kind, e.text) for e in entries[1:]] == [
                ("user", "Survey the codebase, plan first."),
                ("assistant", "I'll look at the package first."),
                ("tool_call", f'Read(file_path="{ch.PROJECT}/app/__init__.py")'),
                ("tool_result", '"""The package.""" (+1 lines)'),
            ]
            # Its token usage and tool calls come from the same records, onto its panel.
            await wait_for(pilot, lambda: tokens(app, "researcher") == (1200, 80, 1))
            writer = app.transcript("writer")
            assert len(writer) == 1 and writer[0].text.startswith("no transcript found for writer")
            assert tokens(app, "writer") == (0, 0, 0)
            await select(pilot, app, "writer")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, AgentScreen))
            await wait_for(pilot, lambda: "no transcript found" in screen_text(app))

        async with step("the teammate view follows its transcript as it grows"):
            await select(pilot, app, "researcher")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, AgentScreen))
            # the cost at list prices from the transcript's usage (claude-sonnet-4-6)
            await wait_for(pilot, lambda: "1.3k tok · $0.0049 · 1 tools" in screen_text(app))
            path = transcript_path(app, ch.RESEARCHER_SESSION)
            usage = {"input_tokens": 800, "output_tokens": 20}
            append_record(path, "Plan sent for approval.", usage)
            await wait_for(pilot, lambda: "Plan sent for approval." in screen_text(app))
            usage = {"input_tokens": 10, "output_tokens": 5}
            append_record(path, "Running the tests now.", usage, "Bash")
            await wait_for(pilot, lambda: "Running the tests now." in screen_text(app))
            text = screen_text(app)
            assert text.count("Plan sent for approval.") == 1  # read once, shown once
            assert "2.1k tok · $" in text and " · 2 tools" in text  # the view's border
            assert tokens(app, "researcher") == (2010, 105, 2)  # and the panel's numbers

        # Claude Code runs its teammates: K asks nothing, says why in one line, and neither
        # the footer, the palette nor the help offers a kill.
        async with step("K says at once why it cannot kill a Claude Code teammate"):
            await select(pilot, app, "writer")
            assert "K" not in footer_keys(app) and "s" in footer_keys(app)
            assert "Kill" not in screen_text(app).splitlines()[-1]
            before = app.screen
            await pilot.press("K")
            await wait_for(pilot, lambda: len(app._notifications) > 0)
            assert app.screen is before  # no "Kill writer?" question
            (said,) = [str(n.message) for n in app._notifications]
            assert said.startswith("K: not possible from here") and "\n" not in said
            assert "shutdown_request" not in last(app, "writer")["text"]
            palette = [title for title, _, _ in DeckCommands(app.screen)._commands()]
            assert "Request shutdown: writer" in palette
            assert not [t for t in palette if t.startswith(("Kill:", "Interrupt:"))]
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            # The help's rows (the typing section above them puts K below a 40-row screen's
            # fold).
            assert isinstance(app.screen, HelpScreen)
            rows = dict(keys_rows(app.screen._unavailable))
            assert "kill the selected teammate" not in " ".join(rows.values())
            assert rows["K"].startswith("K: not possible from here")

        async with step("the spawn command says at once that Claude Code spawns"):
            before = app.screen
            app.screen.post_message(AskSpawn())
            await wait_for(pilot, lambda: len(app._notifications) > 0)
            assert app.screen is before  # not "Spawn a teammate: its name"
            (said,) = [str(n.message) for n in app._notifications]
            assert "the Claude Code lead spawns teammates" in said

        async with step("a denial cancelled with esc writes nothing"):
            before_bytes = app.home.mailbox(ch.TEAM).path("writer").read_bytes()
            await select(pilot, app, "writer")
            await pilot.press("r")
            await wait_for(pilot, lambda: isinstance(app.screen, FeedbackScreen))
            await pilot.press(*"never mind", "escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, FeedbackScreen))
            await pilot.pause(0.2)
            assert app.home.mailbox(ch.TEAM).path("writer").read_bytes() == before_bytes
            assert len(app.approvals) == 2

        async with step("the teammate view sends a message"):
            await select(pilot, app, "writer")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, AgentScreen))
            await pilot.press("enter")  # the agent view's enter opens the compose box
            await pilot.press(*"use short sentences", "enter")
            await wait_for(pilot, lambda: last(app, "writer")["text"] == "use short sentences")
            assert last(app, "writer")["from"] == "user"

        async with step("a approves the plan"):
            await select(pilot, app, "researcher")
            await pilot.press("a")
            frame = last_frame(app, "researcher")
            assert frame["type"] == "plan_approval_response" and frame["approved"] is True
            assert frame["requestId"] == ch.PLAN_ID and frame["permissionMode"] == "default"
            await wait_for(pilot, lambda: [a.kind for a in app.approvals] == ["permission"])

        async with step("a allows the permission once"):
            await allow_once(pilot, app, "a")

        async with step("s requests a shutdown"):
            await select(pilot, app, "writer")
            await pilot.press("s")  # asks first: y sends the request
            await wait_for(pilot, lambda: isinstance(app.screen, ModalScreen))
            await pilot.press("y")
            await wait_for(pilot, lambda: "shutdown_request" in last(app, "writer")["text"])
            frame = last_frame(app, "writer")
            assert frame["from"] == "team-lead" and frame["requestId"].endswith("@writer")


async def allow_once(pilot: Pilot[None], app: TeamDeckApp, key: str) -> None:
    await select(pilot, app, "writer")
    if key == "y":  # from the permission dialog
        permission = [a for a in app.approvals if a.kind == "permission"][0]
        app.screen.open_approval(permission)  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
    await pilot.press(key)
    await wait_for(pilot, lambda: "permission_response" in last(app, "writer")["text"])
    frame = last_frame(app, "writer")
    assert frame["subtype"] == "success"
    assert frame["response"] == {
        "updated_input": ch.PERMISSION_INPUT,
        "permission_updates": [],
    }


async def test_r_rejects_the_plan_and_y_allows_once(deck: TeamDeckApp, subtests: SubTests) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        app, step = await steps(pilot, subtests)

        async with step("r rejects the plan with feedback"):
            await select(pilot, app, "researcher")
            await pilot.press("r")
            await wait_for(pilot, lambda: isinstance(app.screen, FeedbackScreen))
            await pilot.press(*"cover the CLI too", "enter")
            await wait_for(
                pilot, lambda: "plan_approval_response" in last(app, "researcher")["text"]
            )
            frame = last_frame(app, "researcher")
            assert frame["approved"] is False and frame["feedback"] == "cover the CLI too"

        async with step("y in the permission dialog allows once"):
            await allow_once(pilot, app, "y")


async def test_shift_a_always_allows(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        app = await ready(pilot)
        app.screen.open_approval(app.approvals[1])  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("A")
        await wait_for(pilot, lambda: "permission_response" in last(app, "writer")["text"])
        assert last_frame(app, "writer")["response"]["permission_updates"] == ch.SUGGESTIONS


@pytest.mark.parametrize(
    ("key", "typed", "error"),
    [
        ("n", "", "Permission denied by the user"),  # enter alone: no reason given
        ("r", "use npm test without --watch", "use npm test without --watch"),
    ],
)
async def test_deny_with_optional_feedback(
    deck: TeamDeckApp, key: str, typed: str, error: str
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        app = await ready(pilot)
        await select(pilot, app, "writer")
        if key == "n":
            app.screen.open_approval(app.approvals[1])  # type: ignore[attr-defined]
            await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(app.screen, FeedbackScreen))
        assert "tell writer why (optional)" in screen_text(app)
        await pilot.press(*typed, "enter")
        await wait_for(pilot, lambda: "permission_response" in last(app, "writer")["text"])
        assert last_frame(app, "writer") == {
            "type": "permission_response",
            "request_id": ch.PERMISSION_ID,
            "subtype": "error",
            "error": error,
        }
        await wait_for(pilot, lambda: [a.kind for a in app.approvals] == ["plan"])


def tokens(app: TeamDeckApp, name: str) -> tuple[int, int, int]:
    snap = app.agent(name)
    assert snap is not None
    return (snap.input_tokens, snap.output_tokens, snap.tool_calls)


def transcript_path(app: TeamDeckApp, session: str) -> Path:
    return app.home.root / "projects" / "-work-demo-project" / f"{session}.jsonl"


def append_record(path: Path, text: str, usage: dict[str, int], tool: str | None = None) -> None:
    """What Claude Code appends when its model answers: one JSON line."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool:
        content.append({"type": "tool_use", "id": "toolu_9", "name": tool, "input": {"x": 1}})
    record = {
        "type": "assistant",
        "sessionId": path.stem,
        "teamName": ch.TEAM,
        "message": {
            "id": f"msg_{text[:8]}",
            "role": "assistant",
            "content": content,
            "usage": usage,
        },
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


async def test_several_teams_ask_which_one_first(tmp_path: Path) -> None:
    root = ch.build(tmp_path / "claude")
    home = Home(root, lock_style="mkdir")
    home.teams.create("old-review")
    hour_ago = time.time() - 3600
    for path in [*(root / "teams" / "old-review").rglob("*"), *(root / "tasks").rglob("*")]:
        os.utime(path, (hour_ago, hour_ago))
    app = build_dashboard(home, viewer=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TeamPickerScreen), within=20)
        picker = app.screen
        assert isinstance(picker, TeamPickerScreen)
        assert [s.name for s in picker.summaries] == [ch.TEAM, "old-review"]  # newest first
        lines = [str(summary_line(s)) for s in picker.summaries]
        assert "2 teammates" in lines[0] and "2 waiting for you" in lines[0]
        assert "0 teammates" in lines[1] and "stale since" in lines[1]
        # Shown by default: the newest activity, the picker's first line (highlighted).
        assert picker.current == ch.TEAM == app.files.team
        assert picker.query_one(OptionList).highlighted == 0
        await pilot.press("down", "enter")  # the other one
        await wait_for(pilot, lambda: app.files.team == "old-review", within=20)
        assert not isinstance(app.screen, TeamPickerScreen)
