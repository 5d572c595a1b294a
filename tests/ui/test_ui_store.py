"""The non-Textual parts: feed lines, the store's incremental reads, the event buffer."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.core import Home, InboxChanged, InboxMessage, TaskChanged, TeamChanged, TeamRemoved
from app.core.protocol import (
    idle_notification,
    permission_request,
    permission_response,
    plan_approval_request,
    plan_approval_response,
    shutdown_approved,
    shutdown_rejected,
    shutdown_request,
    task_completed,
)
from app.dashboard.event_burst import EventBuffer, digest
from app.dashboard.store import Store
from app.display.format import describe, format_count, format_elapsed, one_line, short_time
from app.display.values import (
    TeamFiles,
    find_agent,
    header_info,
    merge_agents,
    valid_selection,
)
from app.runtime.api import AgentSnapshot
from app.runtime.events import (
    ApprovalChanged,
    MessageSent,
    ModeChanged,
    RunFinished,
    StatusChanged,
    TeamLifecycle,
    TextDelta,
    TranscriptEntry,
)
from tests.ui.data import TEAM, build_home, ts

# ---------------------------------------------------------------------- feed lines


def test_frames_read_as_sentences() -> None:
    def line(sender: str, recipient: str, frame: object) -> str:
        return describe(sender, recipient, frame.to_text()).plain()  # type: ignore[attr-defined]

    plan = plan_approval_request("p1", "engineer", "# plan")
    assert line("engineer", "team-lead", plan) == "engineer -> team-lead: plan approval requested"
    idle = idle_notification("researcher", summary="found the bug")
    assert line("researcher", "team-lead", idle) == "researcher is idle: found the bug"
    stop = shutdown_request("s1", "team-lead", None)
    assert line("team-lead", "researcher", stop) == "team-lead -> researcher: shutdown requested"
    # who wrote it into whose inbox, whatever the frame's own "from" says (never "X -> X")
    assert line("researcher", "team-lead", stop) == "researcher -> team-lead: shutdown requested"
    done = shutdown_approved("s1", "researcher")
    assert line("researcher", "team-lead", done) == "researcher approved shutdown"
    no = shutdown_rejected("s1", "researcher", "still testing")
    assert line("researcher", "team-lead", no) == "researcher rejected shutdown: still testing"
    ok = plan_approval_response("p1", True)
    assert line("team-lead", "engineer", ok) == "team-lead -> engineer: plan approved"
    bad = plan_approval_response("p1", False, "add tests")
    assert line("team-lead", "engineer", bad) == "team-lead -> engineer: plan rejected: add tests"
    task = task_completed("engineer", "3", "Implement refresh")
    assert line("engineer", "team-lead", task) == "engineer completed #3 Implement refresh"
    perm = permission_request("r1", "engineer@alpha", "Bash", "t1", "run tests", {"command": "x"})
    assert line("team-lead", "team-lead", perm) == (
        "engineer -> team-lead: permission requested: Bash (run tests)"
    )
    allowed = permission_response("r1", True)
    assert line("team-lead", "engineer", allowed) == "team-lead -> engineer: permission allowed"
    denied = permission_response("r1", False, error="no network")
    assert line("team-lead", "engineer", denied) == (
        "team-lead -> engineer: permission denied: no network"
    )


def test_dms_show_their_summary_and_one_line() -> None:
    line = describe("researcher", "engineer", "Found it:\n  the token\tis stale", "found bug")
    assert line.plain() == "researcher -> engineer: found bug — Found it: the token is stale"
    unknown = describe("a", "b", '{"type": "something_new", "x": 1}')
    assert unknown.kind == "message"


def test_formatting_helpers() -> None:
    assert one_line("x" * 300, 10) == "x" * 9 + "…"
    assert short_time("2026-01-01T00:01:02.000Z") == "00:01:02"
    assert short_time("garbage") == "garbage"
    assert (format_count(999), format_count(12_345), format_count(2_500_000)) == (
        "999",
        "12.3k",
        "2.5M",
    )
    assert (format_elapsed(75), format_elapsed(3725)) == ("1:15", "1:02:05")
    assert format_elapsed(86_399) == "23:59:59"
    assert (format_elapsed(86_400), format_elapsed(31_950_000)) == ("1d 0h", "369d 19h")


# ---------------------------------------------------------------------- store


def test_load_reads_config_tasks_and_merged_feed(tmp_path: Path) -> None:
    store = Store(build_home(tmp_path))
    delta = store.load()
    assert delta.team == TEAM and delta.reset
    assert [t.id for t in delta.task_upserts] == ["1", "2", "3", "4", "5", "7"]  # 6 is internal
    assert delta.open_tasks == 5
    assert delta.current_tasks == {
        "researcher": "#2 Design token refresh",
        "engineer": "#3 Implement token refresh",
    }
    times = [item.timestamp for item in delta.feed_added]
    assert times == sorted(times) and len(times) == 9
    assert delta.last_dm["researcher"] == "✉ engineer: entry points found"
    # requests without an answer in the files: the plan and the permission
    assert [a.kind for a in delta.pending] == ["plan", "permission"]
    assert delta.teams == [TEAM]


def test_only_new_messages_are_appended(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    store = Store(home)
    store.load()
    box = home.mailbox(TEAM)
    box.append("tester", InboxMessage(sender="engineer", text="ping", timestamp=ts(90)))
    delta = store.apply([InboxChanged(TEAM, "tester")])
    assert delta is not None
    assert [(i.sender, i.text) for i in delta.feed_added] == [("engineer", "ping")]
    assert store.apply([InboxChanged(TEAM, "tester")]) is None  # nothing new
    box.mark_all_read("tester")
    assert store.apply([InboxChanged(TEAM, "tester")]) is None  # read flags: not news


def test_a_broadcast_is_one_item_with_many_recipients(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    store = Store(home)
    store.load()
    home.mailbox(TEAM).broadcast(InboxMessage(sender="team-lead", text="standup", timestamp=ts(99)))
    events = [InboxChanged(TEAM, n) for n in ("researcher", "engineer", "tester")]
    delta = store.apply(events)
    assert delta is not None and len(delta.feed_added) == 1
    item = delta.feed_added[0]
    assert item.recipients == ("researcher", "engineer", "tester")
    assert item.line.plain() == "team-lead -> researcher, engineer, tester: standup"


def test_a_shrunk_inbox_keeps_what_the_feed_showed(tmp_path: Path) -> None:
    """Claude Code's lead deletes what it has read: the feed keeps the messages it saw land,
    adds what is new, and shows nothing twice."""
    home = build_home(tmp_path)
    store = Store(home)
    first = store.load()
    shown = len(first.feed_added)
    box = home.mailbox(TEAM)
    path = box.path("engineer")
    path.write_text("[]")
    delta = store.apply([InboxChanged(TEAM, "engineer")])
    assert delta is not None and not delta.feed_reset and delta.feed_added == []
    box.append("engineer", InboxMessage(sender="team-lead", text="after", timestamp=ts(95)))
    delta = store.apply([InboxChanged(TEAM, "engineer")])
    assert delta is not None and [i.text for i in delta.feed_added] == ["after"]
    path.write_text("[]")  # consumed again, then a new message and an old one seen elsewhere
    box.append("engineer", InboxMessage(sender="team-lead", text="later", timestamp=ts(96)))
    delta = store.apply([InboxChanged(TEAM, "engineer")])
    assert delta is not None and [i.text for i in delta.feed_added] == ["later"]
    assert shown > 0


def test_task_changes_are_row_deltas(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    store = Store(home)
    store.load()
    tasks = home.tasks(TEAM)
    tasks.update("2", status="completed")
    new = tasks.create("Ship it")
    tasks.delete("5")
    delta = store.apply([TaskChanged(TEAM, "2"), TaskChanged(TEAM, new.id), TaskChanged(TEAM, "5")])
    assert delta is not None
    assert [t.id for t in delta.task_upserts] == ["2", new.id]
    assert delta.task_removals == ["5"]
    assert [t.id for t in delta.completed] == ["2"]
    assert delta.open_tasks == 4
    assert "researcher" not in delta.current_tasks
    tasks.update("7", metadata={"_internal": True})  # hidden from now on
    delta = store.apply([TaskChanged(TEAM, "7")])
    assert delta is not None and delta.task_removals == ["7"]


def test_corrupt_files_become_errors_naming_the_file(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    store = Store(home)
    store.load()
    home.mailbox(TEAM).path("researcher").write_text("[{broken")
    (home.layout.task_dir(TEAM) / "3.json").write_text("{nope")
    delta = store.apply([InboxChanged(TEAM, "researcher"), TaskChanged(TEAM, "3")])
    assert delta is not None
    assert delta.inbox_errors["researcher"].startswith("researcher.json is corrupt")
    assert delta.task_errors["3"].startswith("3.json is corrupt")
    assert len(delta.new_errors) == 2
    home.mailbox(TEAM).path("researcher").write_text("[]")
    delta = store.apply([InboxChanged(TEAM, "researcher")])
    assert delta is not None and "researcher" not in delta.inbox_errors


def test_corrupt_config_keeps_the_last_good_one(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    store = Store(home)
    store.load()
    home.layout.config_path(TEAM).write_text("{")
    delta = store.apply([TeamChanged(TEAM)])
    assert delta is not None and delta.config is not None
    assert delta.config_error and delta.config_error.startswith("config.json is corrupt")


def test_team_removed_and_teams_list(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    store = Store(home, TEAM, pick=False)
    store.load()
    home.teams.create("beta")
    delta = store.apply([TeamChanged("beta")])
    assert delta is not None and delta.teams == ["alpha", "beta"] and delta.team == TEAM
    home.teams.delete(TEAM, force=True)
    # the deletion's stragglers change nothing: the last state stays on screen
    stragglers = [TaskChanged(TEAM, "2"), InboxChanged(TEAM, "engineer")]
    assert store.apply(stragglers) is None
    delta = store.apply([*stragglers, TeamRemoved(TEAM)])
    assert delta is not None and delta.removed and not delta.reset
    assert delta.config is not None and delta.open_tasks == 5
    assert store.apply([TaskChanged(TEAM, "3")]) is None
    home.teams.create(TEAM)  # a new team under the old name: read from scratch
    delta = store.apply([TeamChanged(TEAM)])
    assert delta is not None and delta.reset and not delta.removed and delta.open_tasks == 0


def test_the_last_messages_of_a_deleted_team_still_on_disk_reach_the_feed(
    tmp_path: Path,
) -> None:
    """A batch that ends with the team's removal still reads the inboxes it names: the
    deletion may have taken the config before the inboxes."""
    home = build_home(tmp_path)
    store = Store(home, TEAM, pick=False)
    store.load()
    home.mailbox(TEAM).append(
        "tester", InboxMessage(sender="team-lead", text="last words", timestamp=ts(97))
    )
    home.layout.config_path(TEAM).unlink()  # the deletion took the config first
    gone = InboxChanged(TEAM, "researcher")  # an inbox the deletion already took
    home.mailbox(TEAM).path("researcher").unlink()
    delta = store.apply([InboxChanged(TEAM, "tester"), gone, TeamRemoved(TEAM)])
    assert delta is not None and delta.removed
    assert [(i.sender, i.text) for i in delta.feed_added] == [("team-lead", "last words")]
    assert not delta.new_errors and not delta.inbox_errors


def test_a_message_that_failed_to_reach_the_feed_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An inbox's messages are counted as read only once they are in the feed."""
    home = build_home(tmp_path)
    store = Store(home)
    store.load()
    box = home.mailbox(TEAM)
    box.append("tester", InboxMessage(sender="engineer", text="one", timestamp=ts(90)))
    box.append("tester", InboxMessage(sender="engineer", text="two", timestamp=ts(91)))
    add = store._add_message
    calls = 0

    def fails_on_the_second(recipient: str, entry: dict[str, object], delta: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("boom")
        add(recipient, entry, delta)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_add_message", fails_on_the_second)
    with pytest.raises(RuntimeError):
        store.apply([InboxChanged(TEAM, "tester")])
    monkeypatch.setattr(store, "_add_message", add)
    delta = store.apply([InboxChanged(TEAM, "tester")])
    assert delta is not None
    # the failed batch's delta never reached the feed: both come now, once each
    assert [(i.sender, i.text) for i in delta.feed_added] == [
        ("engineer", "one"),
        ("engineer", "two"),
    ]
    assert store.apply([InboxChanged(TEAM, "tester")]) is None


def test_no_team_until_one_appears(tmp_path: Path) -> None:
    home = Home(tmp_path)
    store = Store(home)
    assert store.load().team is None
    home.teams.create("gamma")
    delta = store.apply([TeamChanged("gamma")])
    assert delta is not None and delta.team == "gamma" and delta.reset


# ---------------------------------------------------------------------- view state


def test_merge_agents_prefers_live_files_for_tasks(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    files = Store(home).load().files(TeamFiles())
    agents = merge_agents(None, files)  # read-only: from the config
    assert [a.name for a in agents] == ["team-lead", "researcher", "engineer", "tester"]
    assert agents[0].is_lead
    assert find_agent(agents, "researcher").current_task == "#2 Design token refresh"  # type: ignore[union-attr]
    runtime = [AgentSnapshot("team-lead", "blue", "running", is_lead=True)]
    runtime.append(AgentSnapshot("engineer", "green", "idle", current_task="#9 stale"))
    agents = merge_agents(runtime, files)
    assert find_agent(agents, "engineer").current_task == "#3 Implement token refresh"  # type: ignore[union-attr]
    assert valid_selection(None, agents) == "team-lead"


def test_event_buffer_merges_text_per_agent_in_order() -> None:
    buffer = EventBuffer()
    assert not buffer.push(TextDelta("a", "Hel"))
    buffer.push(TextDelta("b", "x"))
    buffer.push(TextDelta("a", "lo"))
    assert buffer.push(TranscriptEntry("a", "assistant", "Hello"))
    buffer.push(TextDelta("a", "!"))
    buffer.push(StatusChanged("b", "idle"))
    buffer.push(TextDelta("b", "y"))
    assert buffer.drain() == [
        TextDelta("a", "Hello"),
        TextDelta("b", "x"),
        TranscriptEntry("a", "assistant", "Hello"),
        TextDelta("a", "!"),
        StatusChanged("b", "idle"),
        TextDelta("b", "y"),
    ]
    assert buffer.drain() == []


def test_header_counts_what_the_panels_show(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    files = Store(home).load().files(TeamFiles())
    agents = list(merge_agents(None, files))
    header = header_info(files, agents, [], model="m", read_only=True, demo=False)
    # tester approved its shutdown in the files: its panel says gone (the files do not say it
    # completed its work), the count leaves it
    assert {a.name: a.status for a in agents}["tester"] == "gone"
    assert (header.team, header.teammates, header.open_tasks) == (TEAM, 2, 5)
    agents[1] = replace(agents[1], status="killed")  # keeps its panel, leaves the count
    header = header_info(files, agents, [], model="m", read_only=True, demo=False)
    assert header.teammates == 1
    gone = replace(files, removed=True)
    assert header_info(gone, agents, [], model="m", read_only=True, demo=False).team == (
        f"{TEAM} (deleted)"
    )


def test_a_viewer_shows_the_mode_in_the_config(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    home.teams.update_member(TEAM, "engineer", mode="plan")
    store = Store(home)
    files = store.load().files(TeamFiles())
    assert find_agent(merge_agents(None, files), "engineer").mode == "plan"  # type: ignore[union-attr]
    home.tasks(TEAM).remove_dependency("3", "4")  # #4 may start: its blocker is gone
    home.tasks(TEAM).update("4", status="in_progress")  # a delta without a config change ...
    later = store.apply([TaskChanged(TEAM, "4")])
    assert later is not None and not later.config_changed
    assert later.files(files).config is files.config  # ... keeps the config it had
    assert later.files(files).current_tasks["tester"] == "#4 Write expiry tests"


def test_digest_sorts_runtime_events_by_what_they_change() -> None:
    events = [
        TextDelta("a", "Hel"),
        ApprovalChanged("plan-1", "plan", "writer", False),
        TranscriptEntry("a", "assistant", "Hello"),
        ApprovalChanged("stop-1", "shutdown", "writer", False),
        ModeChanged("writer", "default"),
        StatusChanged("b", "failed", "model error 529"),
        TeamLifecycle("beta", "created"),
        RunFinished(False, "the lead gave up"),
    ]
    news = digest(events)
    assert news.stream == [TextDelta("a", "Hel"), TranscriptEntry("a", "assistant", "Hello")]
    assert news.agents_changed and news.approvals_changed and news.new_team == "beta"
    assert [(n.title, n.message, n.severity) for n in news.notices] == [
        (
            "Plan",
            "writer asks you to approve a plan: "
            "select writer, then a approve · r reject · v review",
            "information",
        ),
        ("", "b failed: model error 529", "error"),
        ("Run finished", "the lead gave up", "error"),
    ]
    quiet = digest([TextDelta("a", "x"), ApprovalChanged("plan-1", "plan", "w", True)])
    assert not quiet.agents_changed and quiet.approvals_changed and not quiet.notices


def test_a_permission_toast_names_its_keys_as_the_needs_you_line_does() -> None:
    """A permission is allowed once or denied; its toast said "a approve · r reject" where the
    needs-you line said "a allow once · r deny" (issue 30, found in the newcomer pass)."""
    news = digest([ApprovalChanged("perm-1", "permission", "tester", False)])
    assert [n.message for n in news.notices] == [
        "tester asks for a permission: select tester, then a allow once · r deny · v review"
    ]


def test_the_runtimes_messages_join_the_feed_once_even_when_the_files_go_first(
    tmp_path: Path,
) -> None:
    """A lead at pace 0 deletes its team a few ms after the teammates' shutdown answers land:
    the messages this process's runtime sent reach the feed from its events, and the same
    message read from its inbox later is not added twice."""
    home = build_home(tmp_path)
    store = Store(home, TEAM, pick=False)
    store.load()
    last = MessageSent(TEAM, "tester", "team-lead", "bye", None, None, ts(98))
    delta = store.apply([last])
    assert delta is not None and [(i.sender, i.text) for i in delta.feed_added] == [
        ("tester", "bye")
    ]
    home.mailbox(TEAM).append(
        "team-lead", InboxMessage(sender="tester", text="bye", timestamp=ts(98))
    )
    assert store.apply([InboxChanged(TEAM, "team-lead")]) is None  # the same message
    # after the team's removal, its runtime's last messages still join the feed
    home.teams.delete(TEAM, force=True)
    assert store.apply([TeamRemoved(TEAM)]) is not None
    after = MessageSent(TEAM, "engineer", "team-lead", "done too", None, None, ts(99))
    delta = store.apply([after])
    assert delta is not None and [(i.sender, i.text) for i in delta.feed_added] == [
        ("engineer", "done too")
    ]
    assert store.apply([MessageSent("other", "a", "b", "x", None, None, ts(99))]) is None
