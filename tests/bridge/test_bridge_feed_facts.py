"""One line per fact in the feed (``app.display.feed_facts``): a teammate going idle is told by
its ``TeammateIdle`` hook and by its ``idle_notification`` in the lead's inbox; the feed keeps
the first line of the two, by what they are about (not their words)."""

from __future__ import annotations

import json

from app.core.frame_text import FeedLine
from app.display.feed_facts import FeedFacts, idle_fact
from app.display.values import FeedItem


def hook_idle(agent: str, at: str) -> FeedItem:
    item = FeedItem(at, -1, agent, (), "is idle", None, FeedLine(agent, None, "is idle", "hook"))
    item.fact = idle_fact(agent)
    return item


def inbox_idle(agent: str, at: str) -> FeedItem:
    frame = {"type": "idle_notification", "from": agent, "timestamp": at, "idleReason": "available"}
    return FeedItem(at, 7, agent, ("team-lead",), json.dumps(frame))


def test_the_same_idle_from_the_hook_and_the_inbox_is_one_line() -> None:
    facts = FeedFacts()
    assert not facts.told(inbox_idle("worker", "2026-11-29T07:17:09.120Z"))
    assert facts.told(hook_idle("worker", "2026-11-29T07:17:09.900Z"))  # its twin
    assert not facts.told(hook_idle("tester", "2026-11-29T07:17:09.900Z"))  # another agent
    assert not facts.told(hook_idle("worker", "2026-11-29T07:17:30.000Z"))  # idle again, later
    plain = FeedItem("2026-11-29T07:17:09.900Z", 8, "worker", ("team-lead",), "is idle")
    assert not facts.told(plain) and not facts.told(plain)  # a message is its own fact
