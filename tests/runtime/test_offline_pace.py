"""The offline model's pace: a pause per chunk, or a realistic one (time to first token, then
tokens per second), from a spec in the environment, ``--offline-pace`` or the benchmarks.
The waits are checked with a fake clock: what the stream would sleep, never how long it took."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import app.runtime.offline.transport as transport
from app.cli import main as cli
from app.runtime.model.client import make_client
from app.runtime.model.names import MODEL_ALIASES
from app.runtime.offline import (
    PACE_ENV,
    REALISTIC,
    TPS_ENV,
    TTFT_ENV,
    Pace,
    ScriptedModel,
    estimate_tokens,
    pace_from_env,
    parse_pace,
    reply,
    text,
    tool_use,
)
from app.runtime.offline.transport import chunk_text

MODEL = MODEL_ALIASES["sonnet"]


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """A fake clock for the response body: records each wait instead of sleeping."""
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(transport, "sleep", fake_sleep)
    for name in (PACE_ENV, TTFT_ENV, TPS_ENV):
        monkeypatch.delenv(name, raising=False)
    return waits


def test_pace_specs() -> None:
    assert parse_pace("0") == Pace(per_delta=0.0)
    assert parse_pace(" 0.05 ") == Pace(per_delta=0.05)
    assert parse_pace("realistic") == REALISTIC == Pace(per_delta=0.0, ttft=0.8, tps=80.0)
    assert parse_pace("0.5,120") == Pace(per_delta=0.0, ttft=0.5, tps=120.0)
    assert REALISTIC.describe() == "0.8 s to first token, 80 tok/s"
    assert parse_pace("0").describe() == "0 s per chunk"
    for bad in ("fast", "-1", "0.5,0", "-0.1,80", "nan", "1,2,3", ""):
        with pytest.raises(ValueError, match="invalid offline pace"):
            parse_pace(bad)


def test_the_environment_spec_and_the_separate_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (PACE_ENV, TTFT_ENV, TPS_ENV):
        monkeypatch.delenv(name, raising=False)
    assert pace_from_env() == Pace()  # the default: 0.02 s per chunk
    monkeypatch.setenv(PACE_ENV, "realistic")
    assert pace_from_env() == REALISTIC
    monkeypatch.setenv(TPS_ENV, "40")  # a separate figure wins over the spec's
    assert pace_from_env() == Pace(per_delta=0.0, ttft=0.8, tps=40.0)
    monkeypatch.setenv(PACE_ENV, "sometimes")  # invalid: ignored (logged), default used
    monkeypatch.delenv(TPS_ENV)
    assert pace_from_env() == Pace()


async def test_a_realistic_stream_waits_ttft_then_each_chunks_tokens(slept: list[float]) -> None:
    words = "The quick brown fox jumps over the lazy dog and keeps on running far away"
    client = make_client(handler=ScriptedModel([reply(words)]), pace=0, ttft=0.8, tps=80)
    async with client.messages.stream(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        assert await stream.get_final_text() == words
    chunks = chunk_text(words)
    expected = [estimate_tokens(len(c)) / 80 for c in chunks]
    expected[0] += 0.8
    assert slept == pytest.approx(expected)
    assert sum(slept) == pytest.approx(0.8 + sum(estimate_tokens(len(c)) for c in chunks) / 80)


async def test_tool_input_streams_at_the_same_token_rate(
    slept: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    call = tool_use("Read", {"file_path": "/tmp/some/long/path/to/a/file.py"})
    client = make_client(handler=ScriptedModel([reply(text("Reading."), call)]))
    monkeypatch.setenv(PACE_ENV, "0.5,100")  # a spec in the environment, read per request
    async with client.messages.stream(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        await stream.get_final_message()
    assert slept[0] == pytest.approx(0.5 + estimate_tokens(len("Reading.")) / 100)
    assert all(w > 0 for w in slept)  # the empty opening partial_json costs no time
    assert len(slept) == 1 + -(-len('{"file_path": "/tmp/some/long/path/to/a/file.py"}') // 16)


async def test_pace_zero_never_sleeps(slept: list[float]) -> None:
    client = make_client(handler=ScriptedModel([reply("one two three four")]), pace=0)
    async with client.messages.stream(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        await stream.get_final_text()
    assert slept == []


async def _streamed(client: Any) -> tuple[list[tuple[str, str]], Any]:
    """The SDK's events as (type, text or partial JSON), and the final message."""
    seen: list[tuple[str, str]] = []
    async with client.messages.stream(
        model=MODEL, max_tokens=256, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        async for event in stream:
            seen.append(
                (event.type, getattr(event, "text", "") or getattr(event, "partial_json", ""))
            )
        final = await stream.get_final_message()
    return seen, final


async def test_at_pace_zero_each_block_is_one_delta_and_the_message_is_the_same(
    slept: list[float],
) -> None:
    """Pace 0 waits between no deltas: each block's content comes as one delta (a tool input
    after the API's empty opening), and the client assembles the same message as from the
    word-sized deltas of a paced stream -- the text the transcript shows is the same."""
    words = " ".join(f"word{i}" for i in range(40))
    edit = {"file_path": "/repo/a.py", "old_string": "x = 1\n" * 20, "new_string": "x = 2\n" * 20}
    script = [reply(words, tool_use("Edit", edit, id="toolu_1"))]
    fast, fast_final = await _streamed(make_client(handler=ScriptedModel(script), pace=0))
    paced, paced_final = await _streamed(make_client(handler=ScriptedModel(script), pace=0.01))
    assert [t for kind, t in fast if kind == "text"] == [words]
    assert [t for kind, t in fast if kind == "input_json"] == ["", transport.json.dumps(edit)]
    assert len([k for k, _ in paced if k == "text"]) == len(chunk_text(words)) > 1
    assert "".join(t for kind, t in paced if kind == "text") == words
    assert fast_final.content == paced_final.content  # the same text and tool input
    assert fast_final.stop_reason == paced_final.stop_reason == "tool_use"
    assert len(fast) < len(paced) // 4
    assert len(slept) == len([k for k, _ in paced if k in ("text", "input_json")])


async def test_a_time_to_first_token_alone_still_streams_whole_blocks(slept: list[float]) -> None:
    script = [reply("one two three four five six")]
    seen, final = await _streamed(make_client(handler=ScriptedModel(script), pace=0, ttft=0.5))
    assert [t for kind, t in seen if kind == "text"] == ["one two three four five six"]
    assert slept == [0.5]
    assert final.content[0].text == "one two three four five six"


def test_offline_pace_option_sets_the_pace_for_the_run_and_its_processes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[str | None] = []

    async def fake_headless(home: Any, goal: str, json_output: bool, **options: Any) -> int:
        seen.append(os.environ.get(PACE_ENV))
        return 0

    monkeypatch.setitem(
        sys.modules, "app.cli.headless", types.SimpleNamespace(run_headless=fake_headless)
    )
    monkeypatch.setenv(TTFT_ENV, "3")  # would override the option's figures: cleared
    monkeypatch.setenv(PACE_ENV, "0.02")
    home = ["--home", str(tmp_path / "home")]
    assert cli.main([*home, "run", "x", "--headless", "--offline-pace", "realistic"]) == 0
    assert seen == ["realistic"] and TTFT_ENV not in os.environ
    assert pace_from_env() == REALISTIC

    assert cli.main([*home, "run", "x", "--headless", "--offline-pace", "fast"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        err[-1]
        .removesuffix(" (teamdeck run --help)")
        .endswith(
            "argument --offline-pace: invalid offline pace 'fast': use SECONDS "
            "per streamed chunk (default 0.02), 'realistic' (0.8 s to the "
            "first token, then 80 tokens/s) or TTFT,TPS (e.g. 0.5,120)"
        )
    )
    assert seen == ["realistic"]  # nothing ran
