"""Every key and flow of the dashboard, against a FakeRuntime that records the calls. The
checks that share a scenario run as named steps of one app (``Steps``)."""

from __future__ import annotations

from pathlib import Path

from pytest_subtests import SubTests
from textual.binding import Binding
from textual.command import CommandList
from textual.pilot import Pilot

from app.dashboard.app import TeamDeckApp
from app.dashboard.keys import SECTIONS, key_table_markdown
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.screens.confirm import ConfirmScreen
from app.dashboard.screens.deck import DeckScreen
from app.dashboard.screens.feedback import FeedbackScreen
from app.dashboard.screens.help import KEYS, HelpScreen
from app.dashboard.screens.leader import LeaderScreen
from app.dashboard.screens.left_teams import LeftTeamsScreen
from app.dashboard.screens.message import MessageScreen
from app.dashboard.screens.permission import PermissionScreen
from app.dashboard.screens.plan_review import PlanReviewScreen
from app.dashboard.screens.quit import QuitScreen
from app.dashboard.screens.spawn_mode import SpawnModeScreen
from app.runtime.api import Approval
from app.runtime.events import TextDelta, TranscriptEntry
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import Steps, ready, screen_text, wait_for
from widgets.approvals import ApprovalsQueue
from widgets.compose_box import ComposeBox
from widgets.message_feed import MessageFeed
from widgets.task_board import TaskBoard
from widgets.transcript_tail import TranscriptTail

PLAN_ID = "plan_approval-1767225630000@engineer"
PERM_ID = "perm-1767225650000@researcher"
STOP_ID = "shutdown-1767225660000@tester"


def notes(app: TeamDeckApp) -> list[str]:
    return [str(n.message) for n in [*app._notifications, *app.waiting_toasts]]


async def palette_offers(pilot: Pilot[None], text: str) -> None:
    """Until the command palette lists ``text`` first (it searches in the background)."""

    def offered() -> bool:
        found = pilot.app.screen.query(CommandList)
        if not found:
            return False
        commands = found.first()
        return commands.option_count > 0 and text in str(commands.get_option_at_index(0).prompt)

    await wait_for(pilot, offered)


async def plan_pending_again(pilot: Pilot[None]) -> None:
    """Until the dashboard has read that the plan answered in a step before is pending again
    (``FakeRuntime.reopen``): its events reach the queue in the next batch, not at once."""
    queue = pilot.app.screen.query_one(ApprovalsQueue)
    await wait_for(pilot, lambda: PLAN_ID in [a.request_id for a in queue.approvals])


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


# ---------------------------------------------------------------------- the key registry


def test_help_lists_every_binding() -> None:
    documented = " ".join(key for key, _ in KEYS).replace("question_mark", "?")
    screens = [DeckScreen, LeaderScreen, AgentScreen, PlanReviewScreen, PermissionScreen]
    screens += [MessageScreen, QuitScreen, LeftTeamsScreen, SpawnModeScreen]
    for screen in [*screens, ConfirmScreen, FeedbackScreen]:
        for binding in screen.BINDINGS:
            assert not isinstance(binding, tuple | str)
            for key in binding.key.split(","):
                key = {"question_mark": "?", "escape": "esc", "slash": "/"}.get(key, key)
                if key.isdigit():
                    key = "0" if key == "0" else "1-9"
                assert key in documented, f"{screen.__name__}: {key} is not in the help"


def test_the_views_and_their_dialogs_bind_only_keys_of_the_registry() -> None:
    """Each key's binding and help row are one ``Key`` of ``app.dashboard.keys``: a binding
    written outside it would have no help row of its own."""
    registered = [b for _, rows in SECTIONS for row in rows for b in row.bindings]
    screens = [DeckScreen, LeaderScreen, AgentScreen, PlanReviewScreen, PermissionScreen]
    for screen in [*screens, MessageScreen, QuitScreen, LeftTeamsScreen, ConfirmScreen]:
        for binding in screen.BINDINGS:
            assert isinstance(binding, Binding)
            assert any(binding is b for b in registered), f"{screen.__name__}: {binding}"
            assert binding.tooltip, f"{screen.__name__}: {binding.key} has no help text"


def test_readme_key_table_is_the_registry_s() -> None:
    """README.md's key table is ``key_table_markdown()`` (``python -m app.dashboard.keys``
    prints it: paste it between the table's two comment lines)."""
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- key table:")
    start = readme.index("\n", start) + 1
    end = readme.index("<!-- end of the key table -->", start)
    assert readme[start:end] == key_table_markdown()


# ---------------------------------------------------------------------- moving around


async def test_selection_views_and_typing(
    deck: TeamDeckApp, runtime: FakeRuntime, subtests: SubTests
) -> None:
    """Keys that select, open views, type and show things: none answers a request, so one
    app runs them all, each step from the lead's view."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        step = Steps(pilot, subtests, runtime.calls.clear)

        async with step("shift+arrows select agents and wrap"):
            assert deck.selected == "team-lead"
            await pilot.press("shift+down")
            assert deck.selected == "researcher"
            await pilot.press("shift+down", "shift+down")
            assert deck.selected == "tester"
            await pilot.press("shift+down")
            assert deck.selected == "team-lead"
            await pilot.press("shift+up")
            assert deck.selected == "tester"
            panel = deck.screen.query_one("#roster").query(".-selected").first()
            assert panel.agent.name == "tester"  # type: ignore[attr-defined]

        async with step("digits jump to teammates and zero to the lead"):
            await pilot.press("2")
            assert deck.selected == "engineer"
            await pilot.press("3")
            assert deck.selected == "tester"
            await pilot.press("0")
            assert deck.selected == "team-lead"
            await pilot.press("9")
            assert deck.selected == "team-lead"
            assert "No agent 9." in notes(deck)

        async with step("roster arrows and a click select"):
            await pilot.press("down", "down")
            assert deck.selected == "engineer"
            await pilot.click("TeammatePanel", offset=(5, 1))
            assert deck.selected == "team-lead"

        async with step("enter opens the agent view and esc returns"):
            await pilot.press("1", "enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            screen = deck.screen
            assert isinstance(screen, AgentScreen) and screen.agent == "researcher"
            text = screen_text(deck)
            assert "Survey auth/ and report the entry points." in text
            assert "⚙ Bash  grep -rn def auth/  ✓" in text  # long result: collapsed
            assert "auth/x.py:29" not in text
            await pilot.press("enter")  # opens the compose box
            await pilot.press("escape")  # leaves it
            assert isinstance(deck.screen, AgentScreen)
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))

        async with step("the agent view follows the selection"):
            await pilot.press("1", "enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            await pilot.press("shift+down")
            screen = deck.screen
            assert isinstance(screen, AgentScreen)
            assert screen.agent == "engineer"
            await pilot.press("shift+up", "shift+up")
            assert screen.agent == "team-lead"

        # Seed 000 ``injectUserMessageToTeammate``: typed in a teammate's view, sent as the
        # person's message (handled first, seed 002 §"Message Polling" step 1).
        async with step("a message typed in a teammate's view is injected"):
            await pilot.press("2", "enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            await pilot.press("enter")  # the compose box
            await type_text(pilot, "use the new API")
            await pilot.press("enter")
            assert ("inject_message", "engineer", "use the new API") in runtime.calls
            box = deck.screen.query_one("#inject", ComposeBox)
            assert box.value == "" and not box.is_open  # sent: the keys act again

        async with step("the agent view of the lead submits"):
            await pilot.press("0", "enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            await pilot.press("i")  # the compose box (enter opens it too)
            await type_text(pilot, "status?")
            await pilot.press("enter")
            assert ("submit", "status?") in runtime.calls

        async with step("a prompt to the lead from the leader view"):
            await pilot.press("i")
            await type_text(pilot, "ship it")
            await pilot.press("enter")
            assert ("submit", "ship it") in runtime.calls
            await pilot.press("escape")  # leaves the input: single keys work again
            await pilot.press("1")
            assert deck.selected == "researcher"

        async with step("ctrl+t toggles the task board"):
            board = deck.screen.query_one(TaskBoard)
            assert board.display
            await pilot.press("ctrl+t")
            assert not board.display
            await pilot.press("ctrl+t")
            assert board.display

        async with step("f filters the feed by the selected agent"):
            feed = deck.screen.query_one(MessageFeed)
            assert feed.item_count == 9
            await pilot.press("3", "f")
            assert feed.lines() == [
                "team-lead -> tester: shutdown requested (tests are covered)",
                "tester approved shutdown",
            ]
            await pilot.press("f")
            assert feed.item_count == 9

        async with step("? shows every key"):
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(deck.screen, HelpScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))

        async with step("a view is switched from the command palette"):
            await pilot.press("ctrl+p")
            await type_text(pilot, "Open view: engineer")
            await palette_offers(pilot, "Open view: engineer")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            assert deck.screen.agent == "engineer"  # type: ignore[attr-defined]

        async with step("streamed text is batched, then replaced by the entry"):
            lead = deck.screen.query_one("#lead", TranscriptTail)
            before = len(lead.lines)
            for chunk in ("Split", "ting the ", "work ", "now."):
                runtime.emit(TextDelta("team-lead", chunk))
            await wait_for(pilot, lambda: "Splitting the work now." in screen_text(deck))
            assert deck.partial["team-lead"] == "Splitting the work now."
            runtime.emit(TranscriptEntry("team-lead", "assistant", "Splitting the work now."))
            await pilot.pause(0.1)
            assert lead.lines[before:] == ["Splitting the work now."]  # one line, not two
            assert "team-lead" not in deck.partial

        async with step("text streamed before opening a view is shown"):
            runtime.emit(TextDelta("engineer", "Reading the refresh code"))
            await pilot.pause(0.1)
            await pilot.press("2", "enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            await wait_for(pilot, lambda: "Reading the refresh code" in screen_text(deck))
            runtime.stream("engineer", " and the tests")
            await wait_for(pilot, lambda: "and the tests" in screen_text(deck))


async def test_compact_rows_at_80x24(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        panels = list(deck.screen.query("TeammatePanel"))
        assert panels and all(p.size.height == 1 for p in panels)
        text = screen_text(deck)
        for name in ("team-lead", "researcher", "engineer", "tester", "Tasks", "Messages"):
            assert name in text
        await pilot.press("1", "enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        assert "Survey auth/" in screen_text(deck)


# ---------------------------------------------------------------------- approvals by key


async def test_answering_the_plan(
    deck: TeamDeckApp, runtime: FakeRuntime, subtests: SubTests
) -> None:
    """The engineer's plan answered, or not, every way the keys offer: after each answer
    the request is made pending again for the next step."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        step = Steps(pilot, subtests, runtime.calls.clear)

        async with step("esc closes a review without answering"):
            deck.screen.query_one(ApprovalsQueue).focus()
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, PlanReviewScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))
            assert runtime.calls == []

        async with step("a rejection cancelled with esc sends nothing"):
            await pilot.press("2", "r")
            await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
            await pilot.press("enter")  # empty feedback is refused
            assert isinstance(deck.screen, FeedbackScreen)
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))
            assert not [c for c in runtime.calls if c[0] == "reject_plan"]

        async with step("a approves the selected teammate's plan"):
            await pilot.press("2", "a")
            assert ("approve_plan", PLAN_ID) in runtime.calls
            await pilot.pause()
            queue = deck.screen.query_one(ApprovalsQueue)
            assert [a.request_id for a in queue.approvals] == [PERM_ID, STOP_ID]
            assert any("approved" in n for n in notes(deck))
        runtime.reopen(PLAN_ID)

        async with step("r rejects a plan with feedback"):
            await plan_pending_again(pilot)
            await pilot.press("2", "r")
            await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
            await type_text(pilot, "add tests first")
            await pilot.press("enter")
            await wait_for(
                pilot, lambda: ("reject_plan", PLAN_ID, "add tests first") in runtime.calls
            )
            assert isinstance(deck.screen, LeaderScreen)
        runtime.reopen(PLAN_ID)

        async with step("the plan dialog shows the markdown and approves"):
            await plan_pending_again(pilot)
            deck.screen.query_one(ApprovalsQueue).focus()
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, PlanReviewScreen))
            text = screen_text(deck)
            assert "Plan: auth module" in text and "def refresh(token)" in text
            await pilot.press("a")
            await wait_for(pilot, lambda: ("approve_plan", PLAN_ID) in runtime.calls)
        runtime.reopen(PLAN_ID)

        async with step("the plan dialog rejects with feedback"):
            await plan_pending_again(pilot)
            deck.screen.query_one(ApprovalsQueue).focus()
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, PlanReviewScreen))
            await pilot.press("r")
            await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
            await type_text(pilot, "smaller steps")
            await pilot.press("enter")
            await wait_for(
                pilot, lambda: ("reject_plan", PLAN_ID, "smaller steps") in runtime.calls
            )
            await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))
        runtime.reopen(PLAN_ID)

        async with step("the queue updates and the dialog closes when answered elsewhere"):
            queue = deck.screen.query_one(ApprovalsQueue)
            await wait_for(pilot, lambda: len(queue.approvals) == 3)
            queue.focus()
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, PlanReviewScreen))
            runtime._resolve(PLAN_ID, "approved")  # the lead model answered it
            await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))
            queue = deck.screen.query_one(ApprovalsQueue)
            await wait_for(pilot, lambda: len(queue.approvals) == 2)
            assert "That request was answered elsewhere." in notes(deck)
        runtime.reopen(PLAN_ID)

        async with step("an answer already given is shown"):
            queue = deck.screen.query_one(ApprovalsQueue)
            await wait_for(pilot, lambda: len(queue.approvals) == 3)
            runtime._approvals[PLAN_ID].outcome = "approved"  # answered, but no event yet
            await pilot.press("2", "a")
            await pilot.pause()
            assert any("already resolved" in n for n in notes(deck))
            queue = deck.screen.query_one(ApprovalsQueue)
            assert PLAN_ID not in [a.request_id for a in queue.approvals]


async def test_answering_a_permission(
    deck: TeamDeckApp, runtime: FakeRuntime, subtests: SubTests
) -> None:
    """The researcher's permission request answered with each key, pending again after
    each; then the requests that are not the person's, and a new one arriving."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        step = Steps(pilot, subtests, runtime.calls.clear)

        for key, allow, always in [("y", True, False), ("A", True, True), ("n", False, False)]:
            async with step(f"the permission dialog's {key}"):
                queue = deck.screen.query_one(ApprovalsQueue)
                await wait_for(pilot, lambda q=queue: len(q.approvals) == 3)  # type: ignore[misc]
                queue.focus()
                await pilot.pause()
                await pilot.press("down", "enter")
                await wait_for(pilot, lambda: isinstance(deck.screen, PermissionScreen))
                assert "git status --short" in screen_text(deck)
                await pilot.press(key)
                if not allow:  # a denial asks why first (enter alone: no reason)
                    await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
                    await pilot.press("enter")
                await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))
                assert ("answer_permission", PERM_ID, allow, always) in runtime.calls
            runtime.reopen(PERM_ID)

        async with step("a and r answer a permission directly"):
            queue = deck.screen.query_one(ApprovalsQueue)
            await wait_for(pilot, lambda: len(queue.approvals) == 3)
            await pilot.press("1", "r")  # researcher's own request: why? (enter: no reason)
            await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
            await pilot.press("enter")
            await wait_for(
                pilot, lambda: ("answer_permission", PERM_ID, False, False) in runtime.calls
            )
            await pilot.press("a")  # the researcher has nothing left: a answers another request
            await pilot.pause()
            assert ("answer_permission", PERM_ID, True, False) not in runtime.calls
        runtime.reopen(PERM_ID)
        runtime.reopen(PLAN_ID)  # the a above answered it

        # Issue 10: the teammate answers its own shutdown request; a/r never answer it for it.
        async with step("a shutdown request is not the person's to answer"):
            await pilot.press("3")  # the tester, whose shutdown request is pending
            await pilot.press("a")
            await pilot.pause()
            assert runtime.calls == []
            assert any("answers its own shutdown request" in n for n in notes(deck))

        async with step("new requests are queued and announced"):
            queue = deck.screen.query_one(ApprovalsQueue)
            await wait_for(pilot, lambda: len(queue.approvals) == 3)
            runtime.add_approval(
                Approval("perm-2@engineer", "permission", "engineer", "engineer: Edit")
            )
            await wait_for(pilot, lambda: len(queue.approvals) == 4)
            assert any("engineer asks for a permission" in n for n in notes(deck))
            assert "4 pending approvals" in screen_text(deck)


# ---------------------------------------------------------------------- teammates come and go


async def test_shutdown_kill_and_status(
    deck: TeamDeckApp, runtime: FakeRuntime, subtests: SubTests
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        step = Steps(pilot, subtests, runtime.calls.clear)

        async with step("the panel shows a teammate leave plan mode"):
            assert "plan mode · " in screen_text(deck)  # the engineer's panel: its badge first
            await pilot.press("2", "a")
            assert runtime.calls == [("approve_plan", PLAN_ID)]
            runtime.set_mode("engineer", "default")  # the teammate read the approval
            await wait_for(pilot, lambda: "plan mode" not in screen_text(deck))
            assert "engineer" in screen_text(deck)

        async with step("s requests the shutdown of the selected teammate"):
            await pilot.press("s")  # the lead is selected: refused
            assert runtime.calls == []
            await pilot.press("1", "s")  # asks first
            await wait_for(pilot, lambda: "Ask researcher to shut down? y/n" in screen_text(deck))
            assert runtime.calls == []
            await pilot.press("y")
            await wait_for(pilot, lambda: bool(runtime.calls))
            assert runtime.calls[-1][:2] == ("request_shutdown", "researcher")
            assert any("shutdown requested from researcher" in n for n in notes(deck))
            # A second s while the first waits for its answer: refused, nothing sent.
            await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))
            await pilot.press("s")
            await wait_for(pilot, lambda: any("Already asked researcher" in n for n in notes(deck)))
            assert [c for c in runtime.calls if c[0] == "request_shutdown"] == [runtime.calls[-1]]

        async with step("a failed teammate is announced"):
            runtime.set_status("researcher", "failed", "model error 529")
            await wait_for(pilot, lambda: "researcher failed: model error 529" in notes(deck))
            assert "failed" in screen_text(deck)

        async with step("K kills after a confirmation"):
            await pilot.press("2", "K")
            await wait_for(pilot, lambda: isinstance(deck.screen, ConfirmScreen))
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))
            assert ("kill", "engineer") not in runtime.calls
            await pilot.press("K")
            await wait_for(pilot, lambda: isinstance(deck.screen, ConfirmScreen))
            await pilot.press("y")
            await wait_for(pilot, lambda: ("kill", "engineer") in runtime.calls)
            await wait_for(pilot, lambda: deck.agent("engineer").status == "killed")  # type: ignore[union-attr]
            assert "killed" in screen_text(deck)


async def test_the_command_palette_and_the_header(
    deck: TeamDeckApp, runtime: FakeRuntime, subtests: SubTests
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        step = Steps(pilot, subtests, runtime.calls.clear)

        async with step("the header counts the teammates the panels show alive"):
            assert "3 teammates" in screen_text(deck)
            runtime.kill("engineer")
            await wait_for(pilot, lambda: "2 teammates" in screen_text(deck))
            assert deck.agent("engineer").status == "killed"  # type: ignore[union-attr]

        async with step("a teammate is spawned from the command palette"):
            await pilot.press("ctrl+p")
            await type_text(pilot, "Spawn teammate")
            await palette_offers(pilot, "Spawn teammate")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
            await type_text(pilot, "reviewer")
            await pilot.press("enter")
            await pilot.pause()
            await type_text(pilot, "review the diff")
            await pilot.press("enter")
            # the permission mode last (seed 001 §7's modes), the team's highlighted: enter
            # keeps it
            await wait_for(pilot, lambda: isinstance(deck.screen, SpawnModeScreen))
            await pilot.press("enter")
            await wait_for(pilot, lambda: deck.agent("reviewer") is not None)
            spawned = ("spawn_teammate", "reviewer", "review the diff", False, "default")
            assert spawned in runtime.calls

        async with step("a teammate is killed from the command palette"):
            await pilot.press("ctrl+p")
            await type_text(pilot, "Kill: tester")
            await palette_offers(pilot, "Kill: tester")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, ConfirmScreen))
            await pilot.press("y")
            await wait_for(pilot, lambda: ("kill", "tester") in runtime.calls)

        # The lead's team has ended: "Spawn teammate…" asks no name, prompt nor mode only to
        # fail after them; it says why at once, in one line (the palette entry says it too).
        async with step("spawning with no team says so before asking anything"):
            runtime.team = None
            await pilot.press("ctrl+p")
            await type_text(pilot, "Spawn teammate")
            await palette_offers(pilot, "Spawn teammate")
            assert "the lead's team has ended" in screen_text(deck)
            await pilot.press("enter")
            await wait_for(pilot, lambda: any("no team to spawn" in n for n in notes(deck)))
            assert isinstance(deck.screen, LeaderScreen)  # no "Spawn a teammate: its name"
            assert not [c for c in runtime.calls if c[0] == "spawn_teammate"]
