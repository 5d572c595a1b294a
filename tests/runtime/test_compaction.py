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


def _many_small_calls(count: int) -> list[dict[str, Any]]:
    """A lead's setup: one turn of ``count`` small ``TaskCreate`` calls and their results (a
    list of blocks each, as a tool result may carry)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "make the tasks"}]
    ids = [f"toolu_01{i:024d}" for i in range(count)]
    messages.append(
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": t, "name": "TaskCreate", "input": {"subject": "s"}}
                for t in ids
            ],
        }
    )
    messages.append(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": t,
                    "content": [{"type": "text", "text": "ok"}],
                }
                for t in ids
            ],
        }
    )
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    return messages


def test_a_conversation_is_measured_as_the_json_it_sends(monkeypatch: Any) -> None:
    """Hundreds of small tool calls are mostly ids, names and keys: counted as their texts
    alone, a lead's conversation looked a third of its size and reached past the model's
    context window before it was compacted."""
    import json

    messages = _many_small_calls(300) + [m for i in range(2) for m in _turn(i, 100)]
    sent = len(json.dumps(messages, separators=(",", ":")))
    measured = sum(compaction._size(m) for m in messages)
    assert 0.9 * sent <= measured <= 1.1 * sent
    monkeypatch.setattr(compaction, "COMPACT_AT", sent // 2)  # its texts alone: under a sixth
    monkeypatch.setattr(compaction, "KEEP", 1_000)
    assert compact(messages) == 4  # the setup's turn goes; the two small turns stay
    assert len(messages) == 8


def test_kept_sizes_follow_a_message_that_grows() -> None:
    """The sizes kept between requests measure a message again when its content grew (tool
    results added to the last user message, a note put into the first), and let go of the
    messages that left the conversation."""
    measure = compaction.MessageSizes()
    messages = _turn(1, 100)
    first = measure(messages)
    assert first == [compaction._size(m) for m in messages]
    messages[2]["content"].append(
        {"type": "tool_result", "tool_use_id": "t9", "content": "y" * 500}
    )
    again = measure(messages)
    assert again[2] == compaction._size(messages[2]) > first[2] + 500
    del messages[:2]
    assert measure(messages) == [compaction._size(m) for m in messages]
    assert len(measure._known) == 2
