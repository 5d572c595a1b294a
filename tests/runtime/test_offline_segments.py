"""The offline server's prompt segments (the usage counts' and the size check's input) reused
across a growing conversation: the same segments as encoding each request whole, with only
what a request adds encoded."""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

import pytest

import app.runtime.offline.cache as cache
from app.runtime.offline.cache import PromptCache, SegmentMemo, prompt_segments

TOOLS = [{"name": "Read", "description": "Reads.", "input_schema": {"type": "object"}}]
SYSTEM = [{"type": "text", "text": "You are a worker.", "cache_control": {"type": "ephemeral"}}]


def conversation(turns: int, *, first: str = "Take task 1") -> list[dict[str, Any]]:
    """A teammate's requests as they grow: each ends with the newest tool result, which
    carries the cache marker (moved off the previous one), as the agent loop sends them."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": first}]
    bodies = []
    for turn in range(turns):
        use = {"type": "tool_use", "id": f"t{turn}", "name": "Read", "input": {"path": f"{turn}"}}
        messages.append(
            {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, use]}
        )
        result = {"type": "tool_result", "tool_use_id": f"t{turn}", "content": "x\n" * turn}
        messages.append(
            {"role": "user", "content": [{**result, "cache_control": {"type": "ephemeral"}}]}
        )
        sent = json.loads(
            json.dumps({"model": "m", "tools": TOOLS, "system": SYSTEM, "messages": messages})
        )
        bodies.append(sent)  # parsed from the wire, as the server sees it
        messages[-1]["content"][0].pop("cache_control")
    return bodies


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every block the server encodes."""
    blocks: list[object] = []
    block = cache._block

    def counted(value: object, role: str = "") -> tuple[str, bool]:
        blocks.append(value)
        return block(value, role)

    monkeypatch.setattr(cache, "_block", counted)
    return blocks


def test_the_memo_gives_the_segments_of_the_whole_request() -> None:
    memo = SegmentMemo()
    for body in conversation(12):
        assert memo.segments(body) == prompt_segments(body)


def test_a_growing_conversation_encodes_only_what_each_request_adds(encoded: list[object]) -> None:
    memo = SegmentMemo()
    bodies = conversation(20)
    memo.segments(bodies[0])
    first = len(encoded)
    encoded.clear()
    for body in bodies[1:]:
        memo.segments(body)
    # per request: the result whose marker moved off, and the two new messages (3 blocks)
    assert len(encoded) == 4 * (len(bodies) - 1)
    assert first == len(TOOLS) + len(SYSTEM) + 1 + 3  # the task, then a turn


def test_interleaved_conversations_each_reuse_their_own(encoded: list[object]) -> None:
    memo = SegmentMemo()
    ours, theirs = conversation(8), conversation(8, first="Take task 2")
    for a, b in zip(ours, theirs, strict=True):
        assert memo.segments(a) == prompt_segments(a)
        assert memo.segments(b) == prompt_segments(b)
    encoded.clear()
    memo.segments(ours[-1])
    assert len(encoded) == 0  # the same request again: nothing encoded


def test_a_changed_message_is_encoded_again_and_the_rest_after_it() -> None:
    memo = SegmentMemo()
    bodies = conversation(6)
    memo.segments(bodies[-1])
    edited = copy.deepcopy(bodies[-1])
    edited["messages"][3]["content"][0]["text"] = "Something else."
    assert memo.segments(edited) == prompt_segments(edited)
    other_tools = {**bodies[-1], "tools": [*TOOLS, {"name": "Write", "input_schema": {}}]}
    assert memo.segments(other_tools) == prompt_segments(other_tools)


def test_it_keeps_the_last_request_of_a_few_conversations_only(encoded: list[object]) -> None:
    memo = SegmentMemo(size=2)
    firsts = [conversation(3, first=f"Task {k}")[-1] for k in range(3)]
    for body in firsts:
        memo.segments(body)
    encoded.clear()
    memo.segments(firsts[0])  # pushed out by the two after it: encoded whole
    assert len(encoded) == len(prompt_segments(firsts[0]))


def test_the_usage_counts_are_those_of_the_whole_request() -> None:
    with_memo, without = PromptCache(), PromptCache()
    memo = SegmentMemo()
    for body in conversation(10):
        assert with_memo.account(body, memo.segments(body)) == without.account(body)


def test_the_memo_keeps_no_copy_of_the_conversations_text() -> None:
    """A block's length and digest, not its canonical text: a big team's lead's conversation
    (the team's messages) is not kept twice over by the server (issue 33)."""
    memo = SegmentMemo()
    body = conversation(3)[-1]
    body["messages"][-1]["content"][0]["content"] = "y" * 1_000_000
    segments = memo.segments(body)
    assert segments == prompt_segments(body)
    held = sum(sys.getsizeof(part) for segment in segments for part in segment)
    assert held < 20_000
    assert sum(chars for chars, _, _ in segments) > 1_000_000  # the counts still see it all
