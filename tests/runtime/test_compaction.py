"""Conversation compaction keeps tool_use/tool_result pairs and role alternation intact."""

from __future__ import annotations

from typing import Any

from app.runtime.agent import compaction
from app.runtime.agent.compaction import compact


def _turn(i: int, size: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": f"prompt {i}"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * size}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]},
    ]


def test_small_conversation_is_untouched() -> None:
    messages = _turn(1, 100)
    assert compact(messages) == 0 and len(messages) == 4


def test_big_conversation_drops_whole_old_turns(monkeypatch: Any) -> None:
    monkeypatch.setattr(compaction, "COMPACT_AT", 10_000)
    monkeypatch.setattr(compaction, "KEEP", 4_000)
    messages = [m for i in range(10) for m in _turn(i, 3_000)]
    dropped = compact(messages)
    assert dropped > 0 and dropped % 4 == 0
    assert messages[0]["role"] == "user" and messages[0]["content"][0]["text"].startswith("[")
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False))
    uses = {b["id"] for m in messages for b in m["content"] if b.get("type") == "tool_use"}
    results = {
        b["tool_use_id"] for m in messages for b in m["content"] if b.get("type") == "tool_result"
    }
    assert uses == results
    assert messages[-1]["content"][0]["text"] == "done 9"


def test_one_giant_turn_cannot_be_cut(monkeypatch: Any) -> None:
    monkeypatch.setattr(compaction, "COMPACT_AT", 1_000)
    messages = _turn(1, 50_000)
    assert compact(messages) == 0 and len(messages) == 4


def test_the_note_names_the_teammates_the_dropped_turns_spawned(monkeypatch: Any) -> None:
    """A lead whose spawns were dropped still knows whom to ask to shut down."""
    monkeypatch.setattr(compaction, "COMPACT_AT", 10_000)
    monkeypatch.setattr(compaction, "KEEP", 4_000)
    messages = [m for i in range(10) for m in _turn(i, 3_000)]
    for i, name in ((1, "researcher"), (2, "writer")):
        messages[4 * i + 1]["content"][0].update(name="Task", input={"name": name, "prompt": "p"})
    compact(messages)
    note = messages[0]["content"][0]["text"]
    assert note.endswith("Teammates spawned in them: researcher, writer.]"), note


def test_a_second_compaction_carries_the_first_notes_names_on(monkeypatch: Any) -> None:
    monkeypatch.setattr(compaction, "COMPACT_AT", 10_000)
    monkeypatch.setattr(compaction, "KEEP", 4_000)
    messages = [m for i in range(10) for m in _turn(i, 3_000)]
    messages[1]["content"][0].update(name="Task", input={"name": "researcher"})
    compact(messages)
    messages += [m for i in range(10, 20) for m in _turn(i, 3_000)]
    messages[-3]["content"][0].update(name="Task", input={"name": "tester"})
    messages += _turn(20, 3_000) + _turn(21, 3_000)
    compact(messages)
    note = messages[0]["content"][0]["text"]
    assert note.endswith("Teammates spawned in them: researcher, tester.]"), note
