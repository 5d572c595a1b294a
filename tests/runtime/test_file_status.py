"""What the files say: teammate statuses, stale teams, the picker's list, teammate transcripts."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from app.core import Home, InboxMessage
from app.core import protocol as proto
from app.runtime.by_files.claude_transcripts import TranscriptReader, find_transcript
from app.runtime.by_files.requests import scan_team
from app.runtime.by_files.status import (
    STALE_AFTER,
    summarize,
    team_summaries,
    teammate_states,
    teammate_statuses,
)
from app.runtime.by_files.steering import FileSteering
from tests import claude_home as ch


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return ch.build(tmp_path / "claude")


@pytest.fixture
def home(root: Path) -> Home:
    return Home(root, lock_style="mkdir")


def statuses(home: Home) -> dict[str, str]:
    return dict(teammate_statuses(home.teams.require(ch.TEAM), scan_team(home, ch.TEAM)))


def say(home: Home, to: str, sender: str, text: str, at: str) -> None:
    home.mailbox(ch.TEAM).append(to, InboxMessage(sender=sender, text=text, timestamp=at))


def test_statuses_follow_the_files(home: Home) -> None:
    """Seed 001 §12 (UI status strings of an ``in_process_teammate``: running, idle, stopping,
    awaiting approval) read from the files; "gone" once seed 000's ``shutdown_approved`` has
    removed the member."""
    assert statuses(home) == {"researcher": "awaiting approval", "writer": "awaiting approval"}
    steer = FileSteering(home, ch.TEAM)
    for request in scan_team(home, ch.TEAM).pending:
        steer.approve(request.approval)
    assert statuses(home) == {"researcher": "running", "writer": "running"}

    idle = proto.idle_notification("writer").to_text()
    say(home, "team-lead", "writer", idle, "2026-11-22T10:05:00.000Z")
    assert statuses(home)["writer"] == "idle"
    say(home, "team-lead", "writer", "back at it", "2026-11-22T10:06:00.000Z")
    assert statuses(home)["writer"] == "running"  # a newer word than the idle notification

    assert steer.shutdown("researcher").ok
    assert statuses(home)["researcher"] == "stopping"
    rid = scan_team(home, ch.TEAM).pending_shutdowns()[0].request_id
    approved = proto.shutdown_approved(rid, "researcher").to_text()
    say(home, "team-lead", "researcher", approved, "2026-11-22T10:07:00.000Z")
    assert statuses(home)["researcher"] == "gone"


def test_a_member_removed_from_the_config_is_gone(home: Home) -> None:
    home.teams.remove_member(ch.TEAM, name="writer")  # no shutdown: its inbox stays
    assert statuses(home) == {"researcher": "awaiting approval", "writer": "gone"}
    states = teammate_states(home.teams.require(ch.TEAM), scan_team(home, ch.TEAM))
    assert states["writer"].since == "2026-11-22T10:00:01.000Z"  # its last word
    assert states["researcher"].since == "2026-11-22T10:00:00.000Z"  # since it asked


def test_stopping_outranks_awaiting_approval(home: Home) -> None:
    """Seed 001 §12: ``shutdownRequested ? "stopping" : awaitingPlanApproval ? "awaiting
    approval" : isIdle ? "idle" : ...``."""
    assert FileSteering(home, ch.TEAM).shutdown("writer").ok  # its permission is still pending
    assert statuses(home)["writer"] == "stopping"


def test_stale_team_and_the_picker(home: Home, root: Path) -> None:
    now = time.time()
    fresh = summarize(home, ch.TEAM, now)
    assert (fresh.members, fresh.pending, fresh.stale) == (2, 2, False)
    # A second, older team whose members are all idle, untouched for an hour: stale.
    other = Home(root, lock_style="mkdir")
    other.teams.create("old-review")
    from app.core import TeamMember

    other.teams.add_member(
        "old-review", TeamMember(agent_id="a@old-review", name="a", is_active=False)
    )
    hour_ago = now - 2 * STALE_AFTER
    for path in (root / "teams" / "old-review").rglob("*"):
        os.utime(path, (hour_ago, hour_ago))
    for path in (root / "tasks" / "old-review").rglob("*"):
        os.utime(path, (hour_ago, hour_ago))
    listed = team_summaries(home, now)
    assert [s.name for s in listed][-1] == "old-review"
    old = listed[-1]
    assert old.stale and old.last_activity == pytest.approx(hour_ago)
    assert old.activity_text().startswith("stale since ")
    # All members idle but recent: not stale (no timer counting up forever either way).
    assert not summarize(home, "old-review", hour_ago + 60).stale


def test_teammate_transcript_is_found_and_read_incrementally(home: Home, root: Path) -> None:
    config = home.teams.require(ch.TEAM)
    path = find_transcript(home, config, "researcher")
    assert path is not None and path.stem == ch.RESEARCHER_SESSION
    reader = TranscriptReader(path)
    lines = reader.read_new()
    assert [(line.kind, line.text) for line in lines] == [
        ("prompt", "Survey the codebase, plan first."),
        ("text", "I'll look at the package first."),
        ("tool", f'Read(file_path="{ch.PROJECT}/app/__init__.py")'),
        ("result", '"""The package.""" (+1 lines)'),
    ]
    assert (reader.usage.input_tokens, reader.usage.output_tokens) == (1200, 80)
    assert reader.usage.cache_read_tokens == 300 and reader.usage.tool_calls == 1
    assert reader.read_new() == []

    record = {
        "type": "assistant",
        "sessionId": ch.RESEARCHER_SESSION,
        "message": {
            "id": "msg_2",
            "role": "assistant",
            "content": [{"type": "text", "text": "Plan ready."}],
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    }
    text = json.dumps(record)
    with path.open("a") as fh:  # a record arrives in two writes: the half waits
        fh.write(text[:20])
    assert reader.read_new() == []
    with path.open("a") as fh:
        fh.write(text[20:] + "\n")
    assert [line.text for line in reader.read_new()] == ["Plan ready."]
    assert reader.usage.input_tokens == 1210

    # Through the team and agent names on the records when the config names no session.
    member = config.member("researcher")
    assert member is not None
    member.__pydantic_extra__.pop("sessionId")  # type: ignore[union-attr]
    assert find_transcript(home, config, "researcher") == path
    assert find_transcript(home, config, "writer") is None  # the view says "no transcript found"


def test_the_lead_transcript_is_found_by_its_session_id(home: Home) -> None:
    config = home.teams.require(ch.TEAM)
    path = find_transcript(home, config, "team-lead")
    assert path is not None and path.stem == ch.LEAD_SESSION


def test_no_transcript_found_is_remembered_and_looked_for_again(
    home: Home, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.runtime.by_files import claude_transcripts

    searches: list[str] = []
    walks: list[Path] = []
    real_find, real_walk = claude_transcripts.find_transcript, claude_transcripts._jsonl_files

    def counting(home: Home, config: Any, agent: str, files: Any = None) -> Path | None:
        searches.append(agent)
        return real_find(home, config, agent, files)

    def walking(folder: Path) -> list[Path]:
        walks.append(folder)
        return real_walk(folder)

    monkeypatch.setattr(claude_transcripts, "find_transcript", counting)
    monkeypatch.setattr(claude_transcripts, "_jsonl_files", walking)
    now = [100.0]
    source = claude_transcripts.ClaudeTranscripts(
        home, lambda: ch.TEAM, recheck=10.0, clock=lambda: now[0]
    )
    for _ in range(5):  # every poll and every look at the view: projects/ is walked once
        assert source.entries("writer")[0].text.startswith("no transcript found for writer")
        assert source.poll(["writer"]) == set()
    assert searches == ["writer"] and source.usage("writer") is None
    assert len(walks) == 1
    source.poll(["researcher", "team-lead"])  # found in the same listing: no other walk
    assert len(walks) == 1 and source.usage("researcher") is not None

    # The writer's session appears; it is found at the next search (after ``recheck``).
    record = {
        "type": "user",
        "sessionId": "w-session",
        "teamName": ch.TEAM,
        "agentName": "writer",
        "message": {"role": "user", "content": "Write the docs."},
    }
    writer = root / "projects" / "-work-demo-project" / "w-session.jsonl"
    writer.write_text(json.dumps(record) + "\n")
    now[0] += 5
    assert source.poll(["writer"]) == set() and len(searches) == 3
    now[0] += 6
    assert source.poll(["writer"]) == {"writer"} and len(searches) == 4  # (+ researcher, lead)
    assert len(walks) == 2
    entries = source.entries("writer")
    assert entries[0].text == f"transcript: {writer}"
    assert [(e.kind, e.text) for e in entries[1:]] == [("user", "Write the docs.")]
    assert source.poll(["writer"]) == set() and len(searches) == 4  # found: never searched again


def test_an_in_process_teammates_transcript_is_found_through_its_meta_file(
    home: Home, root: Path
) -> None:
    """2.1.332 writes an in-process teammate's transcript under the lead's session folder,
    ``subagents/agent-a<name>-<hex>.jsonl``; its records name no teammate, the sibling
    ``.meta.json`` does (the shapes observed in the real binary)."""
    config = home.teams.require(ch.TEAM)
    member = config.member("writer")
    assert member is not None
    folder = next(root.glob("projects/*")) / ch.LEAD_SESSION / "subagents"
    folder.mkdir(parents=True)
    path = folder / "agent-awriter-216d8aef5ef51c86.jsonl"
    record = {
        "type": "assistant",
        "isSidechain": True,
        "agentId": "awriter-216d8aef5ef51c86",
        "sessionId": ch.LEAD_SESSION,
        "message": {
            "id": "msg_w1",
            "role": "assistant",
            "content": [{"type": "text", "text": "Writing the docs."}],
            "usage": {"input_tokens": 40, "output_tokens": 7},
        },
    }
    path.write_text(json.dumps(record) + "\n")
    meta = {"agentType": "writer", "name": "writer", "teamName": ch.TEAM, "color": "blue"}
    meta_path = folder / "agent-awriter-216d8aef5ef51c86.meta.json"
    meta_path.write_text(json.dumps(meta))

    assert find_transcript(home, config, "writer") == path
    assert [line.text for line in TranscriptReader(path).read_new()] == ["Writing the docs."]
    meta_path.write_text(json.dumps({**meta, "teamName": "session-other"}))
    assert find_transcript(home, config, "writer") is None  # another team's writer


def test_a_team_whose_lead_process_is_gone_is_gone(home: Home, root: Path) -> None:
    """2.1.332's config names the lead's process (``leadProcess``): once it is not running
    (a pid of nobody, or one started at another time) every member is gone."""
    from app.runtime.by_files.liveness import proc_start
    from app.runtime.by_files.status import panel_statuses

    path = root / "teams" / ch.TEAM / "config.json"
    data = json.loads(path.read_text())
    me = {"pid": os.getpid(), "procStart": proc_start(os.getpid())}
    for lead, gone in ((me, False), ({**me, "procStart": "1"}, True), ({"pid": 2**22 + 7}, True)):
        path.write_text(json.dumps({**data, "leadProcess": lead}))
        config = home.teams.require(ch.TEAM)
        found = panel_statuses(config, scan_team(home, ch.TEAM))
        assert (set(found.values()) == {"gone"}) is gone, lead
        assert ("team-lead" in found) is gone
