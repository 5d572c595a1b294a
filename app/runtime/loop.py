"""One agent turn: stream the model's answer, run its tool calls, feed results back, repeat
until ``end_turn``.

* Streaming through ``client.messages.stream``; text deltas become TextDelta events.
* Tool calls pass the permission check first (``permissions.decide``; an "ask" goes to the
  session's ``ask_permission``). Independent read-only calls in one response run concurrently.
* Prompt caching: ``cache_control`` on the system prompt, the last tool and the conversation
  tail, so each request re-reads the previous prefix from the cache.
* Messages that arrive while the agent is busy are added at the next tool-result boundary
  (``drain``), never held until ``end_turn``.
* Interrupting ends the turn cleanly ("interrupted"); API errors after the SDK's own retries
  end it with a visible error. Nothing here can hang on a dead connection: the SDK has a timeout.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from app.runtime.compaction import compact
from app.runtime.model import MODEL_ERRORS
from app.runtime.permissions import allowed_roots, decide
from app.runtime.session import AgentSession
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult

CACHE = {"type": "ephemeral"}
RESULT_PREVIEW = 2000
#: A turn that keeps calling tools this many times is stopped (a model stuck in a loop must not
#: burn tokens forever); the agent goes idle with a visible error.
MAX_ROUNDS = 100
Drain = Callable[[], list[str]]


@dataclass
class TurnOutcome:
    status: Literal["end_turn", "max_tokens", "interrupted", "error"]
    text: str = ""
    error: str | None = None


def _append_user(session: AgentSession, blocks: list[dict[str, Any]]) -> None:
    """Add a user message, merging into a trailing user message (after an interrupt or error
    the conversation may already end with one; the API wants strict alternation)."""
    if session.messages and session.messages[-1]["role"] == "user":
        session.messages[-1]["content"].extend(blocks)
    else:
        session.messages.append({"role": "user", "content": blocks})


def request_params(session: AgentSession) -> dict[str, Any]:
    """The Messages API request for the session's current conversation, with cache markers."""
    dropped = compact(session.messages)
    if dropped:
        session.record("notice", f"compacted the conversation: {dropped} old messages dropped")
    tools = [t.to_api() for t in session.tools]
    if tools:
        tools[-1] = {**tools[-1], "cache_control": CACHE}
    messages = session.messages
    if messages:
        # Copy only the last message: it is the one that gets the tail marker.
        tail = copy.deepcopy(messages[-1])
        content = tail["content"]
        if isinstance(content, list) and content:
            content[-1] = {**content[-1], "cache_control": CACHE}
        messages = [*messages[:-1], tail]
    params: dict[str, Any] = {
        "model": session.model,
        "max_tokens": session.max_tokens,
        "system": [{"type": "text", "text": session.system_prompt, "cache_control": CACHE}],
        "messages": messages,
        "metadata": {"user_id": session.identity.agent_id},
    }
    if tools:
        params["tools"] = tools
    return params


async def run_turn(
    session: AgentSession, prompt: str | list[dict[str, Any]], drain: Drain | None = None
) -> TurnOutcome:
    """Run one turn from ``prompt`` until the model ends it (or it is interrupted / fails)."""
    blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
    if isinstance(prompt, str):
        session.record("user", prompt)
    _append_user(session, blocks)
    session.interrupt_event.clear()
    session.completed_this_turn = []
    texts: list[str] = []
    rounds = 0
    while True:
        rounds += 1
        if rounds > MAX_ROUNDS:
            message = f"stopped after {MAX_ROUNDS} model calls in one turn"
            session.record("error", message)
            return TurnOutcome("error", "\n".join(texts), message)
        started = time.perf_counter()
        if session.interrupted:
            return _interrupted(session, texts)
        model_started = time.perf_counter()
        try:
            final = await _stream(session)
        except asyncio.CancelledError:
            raise
        except MODEL_ERRORS as exc:
            message = describe_api_error(exc)
            session.record("error", message)
            session.snapshot.error = message
            return TurnOutcome("error", "\n".join(texts), message)
        model_seconds = time.perf_counter() - model_started
        if final is None:
            return _interrupted(session, texts)
        session.snapshot.error = None
        content = [_block_dict(b) for b in final.content]
        session.messages.append({"role": "assistant", "content": content})
        tool_uses = [b for b in content if b["type"] == "tool_use"]
        for block in content:
            if block["type"] == "text" and block["text"].strip():
                texts.append(block["text"])
                session.record("assistant", block["text"])
        session.add_usage(final.usage, tool_calls=len(tool_uses))
        if final.stop_reason != "tool_use" or not tool_uses:
            _account(session, started, model_seconds)
            status: Literal["end_turn", "max_tokens"] = (
                "max_tokens" if final.stop_reason == "max_tokens" else "end_turn"
            )
            return TurnOutcome(status, "\n".join(texts))
        results = await execute_tools(session, tool_uses)
        extra = drain() if drain else []
        _append_user(session, results + [{"type": "text", "text": t} for t in extra])
        for text in extra:
            session.record("user", text)
        _account(session, started, model_seconds)
        if session.interrupted:
            return _interrupted(session, texts)


def _account(session: AgentSession, started: float, model_seconds: float) -> None:
    session.stats.turns += 1
    session.stats.total_seconds.append(time.perf_counter() - started)
    session.stats.model_seconds.append(model_seconds)
    if len(session.stats.total_seconds) > 1000:
        del session.stats.total_seconds[:500], session.stats.model_seconds[:500]


def _interrupted(session: AgentSession, texts: list[str]) -> TurnOutcome:
    session.record("notice", "interrupted")
    return TurnOutcome("interrupted", "\n".join(texts))


async def _stream(session: AgentSession) -> Any:
    """Stream one model response; ``None`` if interrupted while streaming."""
    params = request_params(session)

    async def consume() -> Any:
        async with session.client.messages.stream(**params) as stream:
            async for event in stream:
                if event.type == "text":
                    session.delta(event.text)
                elif event.type == "content_block_start" and event.content_block.type == "tool_use":
                    session.set_activity(f"calling {event.content_block.name}")
            return await stream.get_final_message()

    return await _unless_interrupted(session, consume())


def _block_dict(block: Any) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return dict(block.model_dump(exclude_none=True))


def describe_api_error(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = ""
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            detail = str(err.get("message", ""))
    detail = detail or str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    prefix = f"API error {status}" if status else f"API error ({type(exc).__name__})"
    return f"{prefix}: {detail}"[:300]


# ---------------------------------------------------------------------------- tools


async def execute_tools(
    session: AgentSession, tool_uses: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Run the tool calls of one response; read-only ones concurrently when all are."""
    tools = [session.tool(b["name"]) for b in tool_uses]
    concurrent = len(tool_uses) > 1 and all(
        t is not None and t.is_read_only(b.get("input") or {})
        for t, b in zip(tools, tool_uses, strict=True)
    )
    if concurrent:
        return list(await asyncio.gather(*(execute_tool(session, b) for b in tool_uses)))
    results = []
    for block in tool_uses:
        if session.interrupted:
            results.append(_result_block(block["id"], ToolResult("Interrupted by the user.", True)))
            continue
        results.append(await execute_tool(session, block))
    return results


async def execute_tool(session: AgentSession, block: dict[str, Any]) -> dict[str, Any]:
    name = block["name"]
    tool_input = block.get("input") or {}
    tool = session.tool(name)
    session.record("tool_call", name, tool=name, tool_use_id=block["id"], input=tool_input)
    if tool is None:
        result = ToolResult(f"No such tool: {name}", True)
    else:
        session.set_activity(tool.describe(tool_input))
        result = await _checked_call(session, tool, tool_input, block["id"])
    preview = (
        result.content
        if len(result.content) <= RESULT_PREVIEW
        else (result.content[:RESULT_PREVIEW] + f"\n... ({len(result.content)} chars)")
    )
    session.record(
        "tool_result", preview, tool=name, tool_use_id=block["id"], is_error=result.is_error
    )
    return _result_block(block["id"], result)


async def _checked_call(
    session: AgentSession, tool: Tool, tool_input: dict[str, Any], tool_use_id: str
) -> ToolResult:
    roots = allowed_roots(session.rules, session.identity.cwd)
    decision = decide(
        tool,
        tool_input,
        session.mode,  # type: ignore[arg-type]
        session.rules,
        session.identity.cwd,
        roots,
    )
    if decision.behavior == "deny":
        return ToolResult(f"Permission denied: {decision.reason}", True)
    if decision.behavior == "ask":
        if session.ask_permission is None:
            return ToolResult(f"Permission denied: {decision.reason} (no one to ask)", True)
        asked = await _unless_interrupted(
            session, session.ask_permission(session, tool, tool_input, tool_use_id)
        )
        if asked is None:
            return ToolResult("Interrupted by the user while waiting for permission.", True)
        allowed, reason = asked
        if not allowed:
            return ToolResult(f"Permission denied: {reason}", True)
    ctx = ToolContext(
        home=session.home,
        agent=session.identity,
        services=session.services,
        tool_use_id=tool_use_id,
        extra_roots=roots,
    )
    try:
        return await tool.call(tool_input, ctx)
    except ToolError as exc:
        return ToolResult(str(exc), True)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a tool bug must not kill the agent: the model sees it
        return ToolResult(f"{tool.name} failed: {type(exc).__name__}: {exc}", True)


async def _unless_interrupted(session: AgentSession, awaitable: Any) -> Any:
    """Await ``awaitable`` unless the session is interrupted first (then cancel it: ``None``)."""
    task = asyncio.ensure_future(awaitable)
    waiter = asyncio.ensure_future(session.interrupt_event.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        waiter.cancel()
    if task in done:
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return None


def _result_block(tool_use_id: str, result: ToolResult) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": result.content,
        "is_error": result.is_error,
    }
