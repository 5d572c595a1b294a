"""The offline model through the real SDK: `make_client(handler=ScriptedModel([...]))` is an
`anthropic.AsyncAnthropic` whose HTTP goes to `OfflineTransport`, so these tests pin down the
wire format, retries, streaming and failure modes the agent loop will rely on."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import MessageParam, TextBlockParam

from app.runtime.model.client import (
    MODEL_ERRORS,
    OFFLINE_DESCRIPTION,
    describe_model,
    has_api_key,
    is_offline,
    make_client,
)
from app.runtime.model.names import MODEL_ALIASES, resolve_model
from app.runtime.offline import (
    ModelRequest,
    OfflineTransport,
    Pace,
    PromptCache,
    ScriptedModel,
    cut_stream,
    error,
    overloaded,
    rate_limited,
    reply,
    text,
    tool_use,
)
from app.runtime.offline.transport import chunk_text

MODEL = MODEL_ALIASES["sonnet"]
USER: list[MessageParam] = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("TEAMDECK_MODEL", raising=False)


def client_for(*script: Any) -> tuple[anthropic.AsyncAnthropic, ScriptedModel]:
    model = ScriptedModel(script)
    return make_client(handler=model), model


async def create(client: anthropic.AsyncAnthropic, **kwargs: Any) -> anthropic.types.Message:
    params: dict[str, Any] = {"model": MODEL, "max_tokens": 1024, "messages": USER, **kwargs}
    return await client.messages.create(**params)


# --------------------------------------------------------------------------------------------------
# Non-streaming


async def test_create_returns_text_and_tool_use_with_usage() -> None:
    call = tool_use("Write", {"path": "notes.md", "content": "# hi"}, id="toolu_fixed")
    client, model = client_for(reply(text("Writing it."), call))

    message = await create(client)

    assert message.id.startswith("msg_")
    assert message.model == MODEL and message.role == "assistant"
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[0].type == "text" and message.content[0].text == "Writing it."
    block = message.content[1]
    assert block.type == "tool_use"
    assert (block.id, block.name, block.input) == (
        "toolu_fixed",
        "Write",
        {"path": "notes.md", "content": "# hi"},
    )
    assert message.stop_reason == "tool_use" and message.stop_sequence is None
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert message.usage.cache_creation_input_tokens == 0
    assert message.usage.cache_read_input_tokens == 0
    assert len(model.requests) == 1


async def test_reply_defaults_and_overrides() -> None:
    assert reply("done").stop_reason == "end_turn"
    assert reply(tool_use("Read")).stop_reason == "tool_use"
    assert reply("cut off", stop_reason="max_tokens").stop_reason == "max_tokens"
    client, _ = client_for(reply("x", usage={"output_tokens": 7}), "plain string step")
    assert (await create(client)).usage.output_tokens == 7
    message = await create(client)
    assert message.content[0].type == "text" and message.content[0].text == "plain string step"
    assert message.stop_reason == "end_turn"


async def test_request_accessors_see_what_was_sent() -> None:
    client, model = client_for("ok")
    conversation = [
        {"role": "user", "content": "read both files"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a"}},
                {"type": "tool_use", "id": "t2", "name": "Read", "input": {"path": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "alpha"},
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": [{"type": "text", "text": "no such file"}],
                    "is_error": True,
                },
                {"type": "text", "text": "and summarise"},
            ],
        },
    ]
    tools = [
        {"name": "Read", "description": "read", "input_schema": {"type": "object"}},
        {"name": "Write", "description": "write", "input_schema": {"type": "object"}},
    ]
    await create(
        client,
        system=[{"type": "text", "text": "You are bob."}, {"type": "text", "text": "Be brief."}],
        messages=conversation,
        tools=tools,
        metadata={"user_id": "bob"},
    )

    request = model.requests[0]
    assert request.system_text == "You are bob.\n\nBe brief."
    assert request.tools == ["Read", "Write"]
    assert request.user_id == "bob" and request.metadata == {"user_id": "bob"}
    assert request.last_user_text == "and summarise"
    assert [(r.tool_use_id, r.content, r.is_error) for r in request.tool_results] == [
        ("t1", "alpha", False),
        ("t2", "no such file", True),
    ]
    assert request.turn == 1 and not request.stream and request.max_tokens == 1024
    assert request.body["messages"] == conversation


async def test_callable_steps_receive_the_request() -> None:
    async def echo(request: ModelRequest) -> Any:
        return reply(f"you said {request.last_user_text}")

    client, _ = client_for(echo, lambda request: reply(request.model))
    first = await create(client)
    second = await create(client)
    assert first.content[0].type == "text" and first.content[0].text == "you said hello"
    assert second.content[0].type == "text" and second.content[0].text == MODEL


# --------------------------------------------------------------------------------------------------
# Streaming


async def test_stream_yields_text_deltas_and_assembles_tool_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    long_input = {"path": "src/app.py", "content": "print('hello world')\n" * 5}
    model = ScriptedModel(
        [reply("Let me write the file now.", tool_use("Write", long_input, id="toolu_s"))]
    )

    async def no_wait(seconds: float) -> None:
        pass

    # A paced stream (at pace 0 each block is one delta): its waits skipped.
    monkeypatch.setattr("app.runtime.offline.transport.sleep", no_wait)
    client = make_client(handler=model, pace=0.01)

    deltas: list[str] = []
    json_parts: list[str] = []
    event_types: list[str] = []
    async with client.messages.stream(model=MODEL, max_tokens=1024, messages=USER) as stream:
        async for event in stream:
            event_types.append(event.type)
            if event.type == "text":
                deltas.append(event.text)
            elif event.type == "input_json":
                json_parts.append(event.partial_json)
        final = await stream.get_final_message()

    assert model.requests[0].stream
    assert len(deltas) > 1 and "".join(deltas) == "Let me write the file now."
    assert len(json_parts) > 2  # the input really arrived in pieces
    assert event_types[0] == "message_start" and event_types[-1] == "message_stop"
    assert final.stop_reason == "tool_use"
    assert final.content[0].type == "text" and final.content[0].text == "Let me write the file now."
    block = final.content[1]
    assert block.type == "tool_use" and block.id == "toolu_s" and block.input == long_input
    assert final.usage.output_tokens > 1 and final.usage.input_tokens > 0


async def test_raw_stream_has_the_api_event_sequence() -> None:
    client, _ = client_for(reply("hi", tool_use("Read", {"path": "a"})))
    raw = await client.messages.create(model=MODEL, max_tokens=64, messages=USER, stream=True)
    kinds = [event.type async for event in raw]
    assert kinds == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",  # the empty opening partial_json
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


def test_chunk_text_round_trips() -> None:
    for sample in ["", "one", "  two words  ", "a b c d e f g", "line\nbreak  and\ttab "]:
        assert "".join(chunk_text(sample)) == sample
    assert chunk_text("a b c d e") == ["a b ", "c d ", "e"]


async def test_pace_zero_is_fast_and_pace_is_honoured() -> None:
    words = " ".join(f"w{i}" for i in range(200))  # 100 text deltas
    client, _ = client_for(reply(words))
    started = time.perf_counter()
    async with client.messages.stream(model=MODEL, max_tokens=1024, messages=USER) as stream:
        assert (await stream.get_final_text()) == words
    assert time.perf_counter() - started < 1.0

    paced = make_client(handler=ScriptedModel([reply("a b c d e f g h i j")]), pace=0.05)
    started = time.perf_counter()
    async with paced.messages.stream(model=MODEL, max_tokens=64, messages=USER) as stream:
        await stream.get_final_message()
    assert time.perf_counter() - started >= 0.2  # 5 deltas x 0.05 s


# --------------------------------------------------------------------------------------------------
# Errors and retries


@pytest.mark.parametrize("failure", [rate_limited(), overloaded()], ids=["429", "529"])
async def test_retryable_errors_are_retried_by_the_sdk(failure: Any) -> None:
    client, model = client_for(failure, failure, reply("made it"))
    started = time.perf_counter()
    message = await create(client)
    assert message.content[0].type == "text" and message.content[0].text == "made it"
    assert len(model.requests) == 3
    assert time.perf_counter() - started < 1.0  # retry-after-ms: 1, not the SDK's 0.5 s backoff


async def test_streaming_request_is_retried_too() -> None:
    client, model = client_for(overloaded(), reply("streamed after retry"))
    async with client.messages.stream(model=MODEL, max_tokens=64, messages=USER) as stream:
        assert await stream.get_final_text() == "streamed after retry"
    assert len(model.requests) == 2


async def test_retries_run_out_with_typed_errors() -> None:
    client, model = client_for(*[overloaded()] * 3)
    with pytest.raises(anthropic.OverloadedError) as caught:
        await create(client)
    assert caught.value.status_code == 529 and caught.value.type == "overloaded_error"
    assert len(model.requests) == 3  # first attempt + max_retries=2

    client, _ = client_for(*[rate_limited()] * 3)
    with pytest.raises(anthropic.RateLimitError):
        await create(client)


async def test_bad_request_is_not_retried() -> None:
    client, model = client_for(error(400, "invalid_request_error", "prompt is too long"))
    with pytest.raises(anthropic.BadRequestError) as caught:
        await create(client)
    assert caught.value.api_message == "prompt is too long"
    assert caught.value.request_id is not None and caught.value.request_id.startswith("req_")
    assert len(model.requests) == 1


async def test_unpaired_tool_use_is_rejected_like_the_api() -> None:
    client, model = client_for("never used")
    conversation = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t9", "name": "Read", "input": {}}],
        },
        {"role": "user", "content": "forgot the tool result"},
    ]
    with pytest.raises(anthropic.BadRequestError, match="t9"):
        await create(client, messages=conversation)
    assert model.requests == []  # rejected before the handler was asked


async def test_script_exhaustion_fails_loudly_without_retries() -> None:
    client, model = client_for()
    with pytest.raises(anthropic.InternalServerError, match="script exhausted"):
        await create(client)
    assert len(model.requests) == 1
    model.assert_done()
    with pytest.raises(AssertionError, match="unused"):
        ScriptedModel(["left over"]).assert_done()


async def test_handler_crash_is_a_visible_500_not_a_retried_connection_error() -> None:
    def broken(request: ModelRequest) -> Any:
        raise KeyError("policy bug")

    client, model = client_for(broken)
    with pytest.raises(anthropic.InternalServerError, match="KeyError"):
        await create(client)
    assert len(model.requests) == 1


async def test_handler_returning_garbage_is_a_visible_500() -> None:
    client, model = client_for(lambda request: {"content": "a dict, not a plan"})
    with pytest.raises(anthropic.InternalServerError, match="must return a ResponsePlan"):
        await create(client)
    client, _ = client_for(reply(tool_use("Write", {"data": object()})))
    with pytest.raises(anthropic.InternalServerError, match="not JSON serializable"):
        await create(client)
    assert len(model.requests) == 1


# --------------------------------------------------------------------------------------------------
# Dropped connections


async def test_cut_stream_raises_a_transport_error_instead_of_hanging() -> None:
    call = tool_use("Write", {"path": "big.txt", "content": "x" * 200})
    client, _ = client_for(cut_stream("Writing.", call))

    seen: list[str] = []

    async def consume() -> None:
        async with client.messages.stream(model=MODEL, max_tokens=1024, messages=USER) as stream:
            async for event in stream:
                seen.append(event.type)

    with pytest.raises(httpx2.RemoteProtocolError) as caught:
        await asyncio.wait_for(consume(), timeout=5)
    # The SDK does not wrap mid-stream transport errors, hence `MODEL_ERRORS`.
    assert isinstance(caught.value, MODEL_ERRORS)
    assert not isinstance(caught.value, anthropic.APIError)
    assert "input_json" in seen and "message_stop" not in seen


async def test_cut_with_error_event_raises_api_status_error() -> None:
    client, _ = client_for(cut_stream("partial answer", after_blocks=0, error=overloaded()))
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
        async with client.messages.stream(model=MODEL, max_tokens=64, messages=USER) as stream:
            await stream.get_final_message()


async def test_cut_non_streaming_body_is_a_connection_error_and_retried() -> None:
    client, model = client_for(cut_stream("half a body"), reply("second try"))
    message = await create(client)
    assert message.content[0].type == "text" and message.content[0].text == "second try"
    assert len(model.requests) == 2

    # Out of retries, it surfaces as APIConnectionError. (A dropped connection carries no
    # retry-after header, so the SDK's own backoff applies: 0.5 s, 1 s, ... - hence max_retries=0.)
    client, _ = client_for(cut_stream("again"))
    with pytest.raises(anthropic.APIConnectionError):
        await create(client.with_options(max_retries=0))


# --------------------------------------------------------------------------------------------------
# Prompt caching


def cached_system(prompt: str) -> list[TextBlockParam]:
    return [{"type": "text", "text": prompt, "cache_control": {"type": "ephemeral"}}]


async def test_cache_control_reports_creation_then_reads() -> None:
    client, model = client_for("one", "two", "three")
    system = cached_system("You are the lead. " * 50)

    first = await create(client, system=system)
    second = await create(client, system=system, messages=[{"role": "user", "content": "again"}])
    other = await create(client, system=cached_system("A different prompt. " * 50))

    assert (first.usage.cache_creation_input_tokens or 0) > 0
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert other.usage.cache_read_input_tokens == 0
    assert "cache_control" in model.requests[0].body["system"][0]


async def test_moving_breakpoint_reads_the_previous_turns_prefix() -> None:
    client, _ = client_for("a", "b")
    turn1 = [{"role": "user", "content": [_marked("first question " * 40)]}]
    turn2 = [
        {"role": "user", "content": [{"type": "text", "text": "first question " * 40}]},
        {"role": "assistant", "content": "answer"},
        {"role": "user", "content": [_marked("follow up " * 40)]},
    ]
    first = await create(client, messages=turn1)
    second = await create(client, messages=turn2)
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert (second.usage.cache_creation_input_tokens or 0) > 0  # the new tail is written


async def test_streamed_usage_carries_cache_counts() -> None:
    client, _ = client_for("one", "two")
    system = cached_system("Stable prefix. " * 40)
    for expect_read in (False, True):
        async with client.messages.stream(
            model=MODEL, max_tokens=64, messages=USER, system=system
        ) as stream:
            usage = (await stream.get_final_message()).usage
        assert ((usage.cache_read_input_tokens or 0) > 0) is expect_read
        assert ((usage.cache_creation_input_tokens or 0) > 0) is not expect_read


def test_prompt_cache_entries_expire() -> None:
    now = [0.0]
    cache = PromptCache(ttl=10, clock=lambda: now[0])
    body = {"model": "m", "system": cached_system("x" * 400), "messages": USER}
    assert cache.account(body).cache_creation_input_tokens > 0
    now[0] = 5
    assert cache.account(body).cache_read_input_tokens > 0
    now[0] = 100
    assert cache.account(body).cache_read_input_tokens == 0


def _marked(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value, "cache_control": {"type": "ephemeral"}}


# --------------------------------------------------------------------------------------------------
# Client selection


async def test_offline_needs_no_api_key() -> None:
    client = make_client()  # no key in the env (fixture), no handler: the default offline brain
    assert is_offline(client)
    assert describe_model(client) == OFFLINE_DESCRIPTION == describe_model()
    message = await create(client)
    assert message.role == "assistant" and message.content


async def test_count_tokens_is_served_offline() -> None:
    client, _ = client_for()
    counted = await client.messages.count_tokens(model=MODEL, messages=USER)
    assert counted.input_tokens > 0


def test_api_key_in_env_selects_the_real_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real")
    client = make_client()
    assert not is_offline(client)
    assert client.base_url.host == "api.anthropic.com"
    assert describe_model(client, "opus") == f"Claude · {MODEL_ALIASES['opus']}"
    # An explicit handler still wins, so tests never reach the network.
    assert is_offline(make_client(handler=ScriptedModel()))


def test_resolve_model(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_model() == MODEL_ALIASES["sonnet"]
    assert resolve_model("Haiku") == MODEL_ALIASES["haiku"]
    assert resolve_model("claude-some-full-id") == "claude-some-full-id"
    monkeypatch.setenv("TEAMDECK_MODEL", "opus")
    assert resolve_model() == resolve_model("") == MODEL_ALIASES["opus"]
    assert resolve_model("haiku") == MODEL_ALIASES["haiku"]


def test_an_auth_token_alone_selects_the_real_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-not-real")
    assert has_api_key()
    client = make_client()
    assert not is_offline(client)
    assert (client.api_key, client.auth_token) == (None, "token-not-real")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real")
    client = make_client()  # a key wins over a token, as in the SDK
    assert (client.api_key, client.auth_token) == ("sk-ant-test-not-real", None)


def test_a_key_with_whitespace_fails_every_request_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real\n")

    async def ask() -> None:
        await create(make_client())

    with pytest.raises(anthropic.AuthenticationError, match="contains whitespace"):
        asyncio.run(ask())


def test_hold_credentials_takes_the_key_out_of_the_process_environment() -> None:
    """In a fresh process (so the key is in its start-up environment block): after
    ``hold_credentials()`` neither ``os.environ`` nor ``/proc/self/environ`` has the key, and
    clients still use it."""
    script = (
        "import os\n"
        "from app.runtime.model.client import hold_credentials, make_client, is_offline\n"
        "hold_credentials()\n"
        "assert 'ANTHROPIC_API_KEY' not in os.environ\n"
        "raw = open('/proc/self/environ', 'rb').read()\n"
        "assert b'sk-ant-held' not in raw, raw\n"
        "assert b'ANTHROPIC_BASE_URL=http://x.invalid' in raw\n"
        "client = make_client()\n"
        "assert not is_offline(client) and client.api_key == 'sk-ant-held-0123'\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_API_KEY="sk-ant-held-0123", ANTHROPIC_BASE_URL="http://x.invalid")
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr


# --------------------------------------------------------------------------------------------------
# Realistic offline pace


def test_realistic_pace_waits_ttft_then_tokens_per_second() -> None:
    pace = Pace(per_delta=0.02, ttft=0.8, tps=80.0)
    first = {"delta": {"type": "text_delta", "text": "x" * 40}}  # ~10 tokens
    assert pace.before(0, first) == pytest.approx(0.8 + 10 / 80)
    assert pace.before(1, first) == pytest.approx(10 / 80)
    assert pace.before(2, {"delta": {"type": "input_json_delta", "partial_json": ""}}) == 0
    assert Pace(per_delta=0.02).before(3, first) == 0.02  # without tps: the per-chunk pace


def test_realistic_pace_from_env_and_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAMDECK_OFFLINE_TTFT", "0.8")
    monkeypatch.setenv("TEAMDECK_OFFLINE_TPS", "80")
    assert OfflineTransport(ScriptedModel()).timing == Pace(per_delta=0.0, ttft=0.8, tps=80.0)
    given = OfflineTransport(ScriptedModel(), pace=0.01, ttft=0.1, tps=500.0).timing
    assert given == Pace(per_delta=0.01, ttft=0.1, tps=500.0)
    monkeypatch.setenv("TEAMDECK_OFFLINE_TPS", "fast")  # invalid: ignored
    assert OfflineTransport(ScriptedModel()).timing.tps is None


async def test_time_to_first_token_is_honoured() -> None:
    client = make_client(handler=ScriptedModel([reply("a b c d")]), pace=0, ttft=0.3, tps=1e6)
    started = time.perf_counter()
    async with client.messages.stream(model=MODEL, max_tokens=64, messages=USER) as stream:
        first = None
        async for event in stream:
            if event.type == "text" and first is None:
                first = time.perf_counter() - started
        assert (await stream.get_final_text()) == "a b c d"
    assert first is not None and first >= 0.3
