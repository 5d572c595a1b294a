"""Faults a real server produces, each against the conformance server: the agent either
recovers (retried, continued) or ends its turn with one clear line in its transcript and
panel — never a traceback, never a hang, never a tool_use left without its result (the
server's reference checks would flag the next request)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic._base_client
import anyio
import anyio.lowlevel
import pytest

from app.core import Home
from app.runtime.events import TurnOutcome
from app.runtime.model.client import make_client
from app.runtime.team.runtime import TeamRuntime
from tests.conformance.conftest import READ_TIMEOUT, blocks, errors_of
from tests.conformance.server import (
    Empty,
    Fail,
    MessagesServer,
    Text,
    ToolCall,
    Turn,
    call,
    say,
)
from tests.runtime.conftest import Observer, until

TEAM = "faults"


async def lead_turn(runtime: TeamRuntime, observer: Observer, prompt: str) -> TurnOutcome:
    count = len(observer.outcomes)
    runtime.submit(prompt)
    await until(lambda: len(observer.outcomes) > count, "the lead's turn")
    return observer.outcomes[-1]


def one_clear_line(runtime: TeamRuntime, agent: str, outcome: TurnOutcome) -> str:
    """The turn failed with exactly one readable line, shown in the transcript and panel."""
    assert outcome.status in ("error", "max_tokens")
    error = outcome.error or ""
    assert error and "\n" not in error and "Traceback" not in error
    assert errors_of(runtime, agent) == [error]
    snapshot = next(s for s in runtime.snapshot() if s.name == agent)
    assert snapshot.error == error
    return error


def answers(api: MessagesServer, agent: str = "team-lead") -> list[str]:
    return [r.answer for r in api.requests_of(agent)]


# ------------------------------------------------------------------ errors before the response


class RetryClock:
    """Stands in for the SDK's ``anyio`` so its retry waits are recorded, not slept: each wait
    with how many requests the server had received when it began."""

    def __init__(self, api: MessagesServer) -> None:
        self.api = api
        self.waits: list[tuple[float, int]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(anyio, name)

    async def sleep(self, seconds: float) -> None:
        self.waits.append((seconds, len(self.api.requests)))
        await anyio.lowlevel.checkpoint()


async def test_429_with_retry_after_is_retried(
    api: MessagesServer,
    team_runtime: tuple[TeamRuntime, Observer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The retry waits exactly the ``retry-after`` the 429 asked for, between the refused
    request and the next (a fake clock: no wall-clock threshold, and no 7 s in the suite)."""
    clock = RetryClock(api)
    monkeypatch.setattr(anthropic._base_client, "anyio", clock)
    runtime, observer = team_runtime
    limited = Fail(429, "rate_limit_error", "Number of requests exceeded", {"retry-after": "7"})
    api.script("team-lead", [limited, say("Fine.")])
    outcome = await lead_turn(runtime, observer, "hello")
    assert (outcome.status, outcome.text) == ("end_turn", "Fine.")
    assert answers(api) == ["Fail", "Turn"]
    assert clock.waits == [(7.0, 1)]
    retry = api.requests_of("team-lead")[1]
    assert retry.headers["x-stainless-retry-count"] == "1"


@pytest.mark.parametrize(
    ("status", "kind", "message"),
    [(529, "overloaded_error", "Overloaded"), (500, "api_error", "Internal server error")],
)
async def test_overloaded_and_server_errors_are_retried(
    api: MessagesServer,
    team_runtime: tuple[TeamRuntime, Observer],
    status: int,
    kind: str,
    message: str,
) -> None:
    runtime, observer = team_runtime
    api.script("team-lead", [Fail(status, kind, message), say("Recovered.")])
    outcome = await lead_turn(runtime, observer, "hello")
    assert (outcome.status, outcome.text) == ("end_turn", "Recovered.")
    assert answers(api) == ["Fail", "Turn"]


async def test_a_500_that_persists_ends_the_turn_with_one_line(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer]
) -> None:
    runtime, observer = team_runtime
    api.script("team-lead", [Fail(500, "api_error", "Internal server error")] * 3)
    outcome = await lead_turn(runtime, observer, "hello")
    assert one_clear_line(runtime, "team-lead", outcome) == ("API error 500: Internal server error")
    assert answers(api) == ["Fail"] * 3  # the SDK's two retries, then the turn ends


async def test_401_bad_key_is_one_line_and_not_retried(
    api: MessagesServer, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    runtime = TeamRuntime(home, client=make_client(timeout=READ_TIMEOUT), cwd=project)
    observer = Observer(runtime)
    await runtime.start()
    try:
        outcome = await lead_turn(runtime, observer, "hello")
    finally:
        await runtime.stop()
    error = one_clear_line(runtime, "team-lead", outcome)
    assert error.startswith("API error 401: invalid x-api-key")
    assert "ANTHROPIC_API_KEY" in error
    assert answers(api) == ["401"]


async def test_a_key_with_a_trailing_newline_says_so(
    api: MessagesServer, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-conformance-0123456789abcdef\n")
    runtime = TeamRuntime(home, client=make_client(timeout=READ_TIMEOUT), cwd=project)
    observer = Observer(runtime)
    await runtime.start()
    try:
        outcome = await lead_turn(runtime, observer, "hello")
    finally:
        await runtime.stop()
    error = one_clear_line(runtime, "team-lead", outcome)
    assert "ANTHROPIC_API_KEY contains whitespace" in error
    assert "Connection error" not in error
    assert answers(api) == []  # nothing sent with a key the API would refuse


async def test_400_invalid_request_is_one_line_and_not_retried(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer]
) -> None:
    runtime, observer = team_runtime
    bad = Fail(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    api.script("team-lead", [bad, say("Shorter now.")])
    outcome = await lead_turn(runtime, observer, "hello")
    assert one_clear_line(runtime, "team-lead", outcome) == (
        "API error 400: prompt is too long: 210000 tokens > 200000 maximum"
    )
    assert answers(api) == ["Fail"]
    # the agent is not broken: the next prompt is a valid request
    assert (await lead_turn(runtime, observer, "again")).text == "Shorter now."


# ------------------------------------------------------------------ failures after it started


def write_call(project: Path) -> ToolCall:
    return ToolCall("Write", {"file_path": str(project / "out.txt"), "content": "x" * 300})


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param({"cut_after": 9}, id="connection-cut-mid-tool-call"),
        pytest.param({"stall_after": 4}, id="stream-stalls"),
        pytest.param({"end_early_after": 9}, id="ends-without-message_stop"),
        pytest.param({"error_after": 5}, id="overloaded_error-event-mid-stream"),
        pytest.param({"stray_delta_at": 4}, id="delta-for-a-block-never-started"),
    ],
)
async def test_a_response_that_breaks_after_it_started_is_retried(
    api: MessagesServer,
    team_runtime: tuple[TeamRuntime, Observer],
    project: Path,
    broken: dict[str, Any],
) -> None:
    runtime, observer = team_runtime
    call_ = write_call(project)
    api.script(
        "team-lead",
        [Turn([Text("Writing."), call_], **broken), Turn([Text("Writing."), call_]), say("Done.")],
    )
    outcome = await lead_turn(runtime, observer, "write out.txt")
    assert (outcome.status, outcome.text) == ("end_turn", "Writing.\nDone.")
    assert (project / "out.txt").read_text() == "x" * 300
    assert len([e for e in runtime.transcript("team-lead") if e.kind == "tool_call"]) == 1
    notices = [e.text for e in runtime.transcript("team-lead") if e.kind == "notice"]
    assert len([n for n in notices if "retrying" in n]) == 1, notices
    lead = runtime.snapshot()[0]
    assert lead.tool_calls == 1
    assert lead.model_calls == 3  # the broken response's tokens are counted too


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param({"cut_after": 3}, id="connection-cut"),
        pytest.param({"end_early_after": 4}, id="ends-without-message_stop"),
        pytest.param({"error_after": 4}, id="overloaded_error-event"),
        pytest.param({"stray_delta_at": 3}, id="malformed-event-stream"),
    ],
)
async def test_the_tokens_of_a_broken_stream_are_counted(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer], broken: dict[str, Any]
) -> None:
    """A response that broke after ``message_start`` still cost its input tokens: the lead's
    usage adds up what every stream the server sent reported, the broken one included."""
    runtime, observer = team_runtime
    api.script("team-lead", [say("Half an answer", **broken), say("Done.")])
    outcome = await lead_turn(runtime, observer, "hello")
    assert (outcome.status, outcome.text) == ("end_turn", "Done.")
    sent = [r.input_tokens for r in api.requests_of("team-lead")]
    assert len(sent) == 2 and all(sent)
    lead = runtime.snapshot()[0]
    assert lead.input_tokens == sum(sent)
    assert lead.model_calls == 2


async def test_a_stall_is_described_as_a_read_timeout(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer]
) -> None:
    runtime, observer = team_runtime
    api.script("team-lead", [say("Hm", stall_after=2) for _ in range(3)])
    outcome = await lead_turn(runtime, observer, "hello")
    error = one_clear_line(runtime, "team-lead", outcome)
    assert error == (
        f"no data from the API for {READ_TIMEOUT:g}s (read timeout) (after 3 attempts)"
    )
    assert "ReadTimeout" not in error


async def test_a_mid_stream_error_that_persists_is_one_line_naming_it(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer]
) -> None:
    runtime, observer = team_runtime
    api.script("team-lead", [say("Hm", error_after=3) for _ in range(3)])
    outcome = await lead_turn(runtime, observer, "hello")
    assert one_clear_line(runtime, "team-lead", outcome) == (
        "API error mid-response (overloaded_error): Overloaded (after 3 attempts)"
    )


# ------------------------------------------------------------------ stop reasons


async def test_max_tokens_in_the_middle_of_a_tool_call(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer], project: Path
) -> None:
    runtime, observer = team_runtime
    target = project / "big.txt"
    truncated = ToolCall(
        "Write", {}, raw_json='{"file_path": "' + str(target) + '", "content": "xxxxxxxx'
    )

    def after_cut(body: dict[str, Any]) -> Turn:
        note = body["messages"][-1]["content"][-1]["text"]
        assert "max_tokens" in note and "Write tool call, which was not run" in note
        return call("Write", {"file_path": str(target), "content": "small"})

    api.script(
        "team-lead",
        [Turn([Text("Writing it."), truncated], stop_reason="max_tokens"), after_cut, say("Ok.")],
    )
    outcome = await lead_turn(runtime, observer, "write big.txt")
    assert (outcome.status, outcome.text) == ("end_turn", "Writing it.\nOk.")
    assert target.read_text() == "small"
    stored = [b["id"] for b in blocks({"messages": runtime.lead_session.messages}, "tool_use")]
    assert truncated.id not in stored


async def test_max_tokens_again_and_again_ends_the_turn_with_one_line(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer]
) -> None:
    runtime, observer = team_runtime
    api.script("team-lead", [say(f"part {i}", stop_reason="max_tokens") for i in range(3)])
    outcome = await lead_turn(runtime, observer, "write a novel")
    error = one_clear_line(runtime, "team-lead", outcome)
    assert error.startswith("the reply hit max_tokens (") and "3 times in a row" in error
    assert outcome.text == "part 0\npart 1\npart 2"


async def test_pause_turn_continues_the_turn(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer]
) -> None:
    runtime, observer = team_runtime

    def continued(body: dict[str, Any]) -> Turn:
        last = body["messages"][-1]
        assert last["role"] == "assistant" and last["content"][0]["text"] == "Searching..."
        return say("Found it.")

    api.script("team-lead", [say("Searching...", stop_reason="pause_turn"), continued])
    outcome = await lead_turn(runtime, observer, "search")
    assert (outcome.status, outcome.text) == ("end_turn", "Searching...\nFound it.")


async def test_a_refusal_drops_the_exchange_and_shows_the_explanation(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer]
) -> None:
    runtime, observer = team_runtime
    api.script("team-lead", [say("Hello.")])
    await lead_turn(runtime, observer, "first question")
    details = {
        "type": "refusal",
        "category": "cyber",
        "explanation": "This request was declined because it could enable cyber harm.",
    }
    api.script("team-lead", [say("Sure, here", stop_reason="refusal", stop_details=details)])
    outcome = await lead_turn(runtime, observer, "something refused")
    error = one_clear_line(runtime, "team-lead", outcome)
    assert "refused (cyber): This request was declined" in error

    def clean(body: dict[str, Any]) -> Turn:
        text = str(body["messages"])
        assert "something refused" not in text and "Sure, here" not in text
        assert "first question" in text
        return say("Next.")

    api.script("team-lead", [clean])
    assert (await lead_turn(runtime, observer, "another question")).text == "Next."


# ------------------------------------------------------------------ teammates


async def spawn_worker(api: MessagesServer, runtime: TeamRuntime, observer: Observer) -> None:
    api.script(
        "team-lead",
        [
            call("TeamCreate", {"team_name": TEAM}),
            call("Task", {"name": "worker", "prompt": "Say hello."}),
        ],
        then="Noted.",
    )
    await lead_turn(runtime, observer, "start")


@pytest.mark.parametrize(
    ("steps", "shown"),
    [
        pytest.param(
            [Empty(), Empty(), Empty()],
            "the API sent an empty response (HTTP 200 without any event) (after 3 attempts)",
            id="empty-200",
        ),
        pytest.param(
            [Turn([ToolCall("Read", {}, raw_json='{"file_path": nope}')])],
            "the model sent malformed JSON for a tool input",
            id="malformed-tool-json",
        ),
    ],
)
async def test_a_teammates_broken_response_fails_its_turn_not_the_teammate(
    api: MessagesServer,
    team_runtime: tuple[TeamRuntime, Observer],
    home: Home,
    steps: list[Any],
    shown: str,
) -> None:
    runtime, observer = team_runtime
    api.script("worker", [*steps, say("Hello again.")])
    await spawn_worker(api, runtime, observer)
    await until(lambda: errors_of(runtime, "worker"), "the worker's failed turn")
    [error] = errors_of(runtime, "worker")
    assert error.startswith(shown) and "AssertionError" not in error
    await until(lambda: runtime.status_of("worker") == "idle", "the worker idle")
    config = home.teams.get(TEAM)
    assert config is not None and "worker" in [m.name for m in config.members]
    runtime.inject_message("worker", "try again")
    await until(
        lambda: any(e.text == "Hello again." for e in runtime.transcript("worker")),
        "the worker's next turn",
    )


async def test_a_teammates_failed_turn_wakes_the_lead(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer], home: Home
) -> None:
    """A teammate whose turn failed for good must not leave the lead asleep with the task
    in progress: the lead gets a turn about it."""
    runtime, observer = team_runtime
    api.script("worker", [Fail(500, "api_error", "Internal server error")] * 3)
    await spawn_worker(api, runtime, observer)
    await until(lambda: errors_of(runtime, "worker"), "the worker's failed turn")
    await until(lambda: len(observer.outcomes) >= 2, "a lead turn about it")
    said = str(api.requests_of("team-lead")[-1].body["messages"][-1])
    assert "worker" in said and "Internal server error" in said


async def test_an_unreachable_api_is_one_line_naming_it(
    api: MessagesServer, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    runtime = TeamRuntime(home, client=make_client(timeout=READ_TIMEOUT), cwd=project)
    observer = Observer(runtime)
    await runtime.start()
    try:
        outcome = await lead_turn(runtime, observer, "hello")
    finally:
        await runtime.stop()
    error = one_clear_line(runtime, "team-lead", outcome)
    assert error.startswith("could not reach the API (connection error"), error
