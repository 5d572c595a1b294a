"""One agent turn: stream the model's answer, run its tool calls, feed results back, repeat
until ``end_turn``.

* Streaming through ``response.stream_response`` (text deltas become TextDelta events); a
  response that breaks after it started is retried there, bounded, with backoff.
* Tool calls pass the permission check first (``permissions.decide``; an "ask" goes to the
  session's ``ask_permission``). Independent read-only calls in one response run concurrently.
* Prompt caching: ``cache_control`` on the system prompt, the last tool and the conversation
  tail, so each request re-reads the previous prefix from the cache.
* Messages that arrive while the agent is busy are added at the next tool-result boundary
  (``drain``), never held until ``end_turn``.
* The conversation stays valid for the API whatever the model sends: a ``tool_use`` is stored
  only when it runs (a call cut off by ``max_tokens`` is dropped and the model told so), blank
  text blocks and empty replies are never stored, thinking blocks go back intact, a
  ``refusal`` removes the refused exchange, ``pause_turn`` continues the turn.
* Interrupting ends the turn cleanly ("interrupted"); API errors after all retries end it with
  one visible line. Nothing here can hang on a dead connection: the client has a read timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from app.runtime.agent.compaction import compact
from app.runtime.agent.refused import forget_refused_inputs
from app.runtime.agent.response import ResponseFailed, stream_response
from app.runtime.agent.session import AgentSession
from app.runtime.agent.shared_text import share
from app.runtime.agent.team_hooks import hooks_of
from app.runtime.events import TurnOutcome
from app.runtime.model.budget import wait_for_budget
from app.runtime.permissions import allowed_roots, decide, parse_mode
from app.runtime.scheduling.turn_slots import waiting
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult

CACHE = {"type": "ephemeral"}
RESULT_PREVIEW = 2000
#: A turn that keeps calling tools this many times is stopped (a model stuck in a loop must not
#: burn tokens forever); the agent goes idle with a visible error.
MAX_ROUNDS = 100
#: A tool call failing the same way this many times in a row ends the turn with its error: a
#: retry cannot help (a full disk, say) and each one is a paid model call.
MAX_SAME_FAILURES = 3
#: The error of a full disk, whatever the tool or the path: retrying never frees space.
DISK_FULL = "No space left on device"
#: A reply cut off at max_tokens is continued this many times in a row before the turn fails.
MAX_CONTINUATIONS = 2
Drain = Callable[[], Awaitable[list[str]]]


def _append_user(session: AgentSession, blocks: list[dict[str, Any]]) -> None:
    """Add a user message, merging into a trailing user message (after an interrupt or error
    the conversation may already end with one; the API wants strict alternation)."""
    if session.messages and session.messages[-1]["role"] == "user":
        session.messages[-1]["content"].extend(blocks)
    else:
        session.messages.append({"role": "user", "content": blocks})


#: Blocks that may not carry a ``cache_control`` marker.
_UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})


def request_params(session: AgentSession) -> dict[str, Any]:
    """The Messages API request for the session's current conversation, with cache markers."""
    dropped = compact(session.messages, session.message_sizes)
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
        if isinstance(content, list):
            for index in range(len(content) - 1, -1, -1):
                if content[index].get("type") not in _UNCACHEABLE:
                    content[index] = {**content[index], "cache_control": CACHE}
                    break
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


class _Checkpoint:
    """Where this turn's exchange starts, so a refusal can remove it again (the API asks to
    reset the refused exchange; kept, every later request would be refused too)."""

    def __init__(self, session: AgentSession) -> None:
        messages = session.messages
        self.merged: dict[str, Any] | None = None
        self.length = 0
        if messages and messages[-1]["role"] == "user":
            self.merged = messages[-1]
            self.length = len(messages[-1]["content"])
        self.count = len(messages)

    def restore(self, session: AgentSession) -> None:
        messages = session.messages
        if self.merged is not None:
            for index, message in enumerate(messages):
                if message is self.merged:
                    del messages[index + 1 :]
                    del message["content"][self.length :]
                    return
        # compaction only drops from the front, so the turn's messages are the last ones
        del messages[min(self.count, len(messages)) :]


async def run_turn(
    session: AgentSession, prompt: str | list[dict[str, Any]], drain: Drain | None = None
) -> TurnOutcome:
    """Run one turn from ``prompt`` until the model ends it (or it is interrupted / fails).

    An in-process teammate's turn holds a slot of its process's ``turn_gate`` while it works
    and gives it up while it waits (``scheduling.turn_slots``)."""
    gate = session.turn_gate
    if gate is None:
        return await _run_turn(session, prompt, drain)
    async with gate.turn() as slot:
        session.turn_slot = slot
        try:
            return await _run_turn(session, prompt, drain)
        finally:
            session.turn_slot = None


async def _run_turn(
    session: AgentSession, prompt: str | list[dict[str, Any]], drain: Drain | None
) -> TurnOutcome:
    blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
    blocks = [b for b in blocks if not _is_blank_text(b)]
    if isinstance(prompt, str):
        session.record("user", prompt)
    checkpoint = _Checkpoint(session)
    if blocks:
        _append_user(session, blocks)
    elif not session.messages or session.messages[-1]["role"] != "user":
        session.record("notice", "empty prompt ignored")  # the API refuses empty text
        return TurnOutcome("end_turn")
    session.interrupt_event.clear()
    session.completed_this_turn = []
    texts: list[str] = []
    #: Messages delivered to this turn at tool-result boundaries (kept even after a refusal).
    delivered: list[dict[str, Any]] = []
    rounds = 0
    cut_offs = 0
    failures = _Failures()
    while True:
        rounds += 1
        if rounds > MAX_ROUNDS:
            return _failed(session, texts, f"stopped after {MAX_ROUNDS} model calls in one turn")
        started = time.perf_counter()
        async with waiting(session.turn_slot):
            await wait_for_budget(session)
        if session.interrupted:
            return _interrupted(session, texts)
        model_started = time.perf_counter()
        try:
            params = request_params(session)
            # The model's wait is not the turn's work: the slot goes to another turn meanwhile.
            async with waiting(session.turn_slot), session.slots or contextlib.nullcontext():
                final = await stream_response(
                    session, params, lambda a: _unless_interrupted(session, a)
                )
        except ResponseFailed as exc:
            return _failed(session, texts, str(exc))
        model_seconds = time.perf_counter() - model_started
        if final is None:
            return _interrupted(session, texts)
        session.set_error(None)
        session.add_usage(final.usage)
        stop = final.stop_reason
        if stop == "refusal":
            checkpoint.restore(session)
            if delivered:  # teammates' messages are not part of what was refused
                _append_user(session, delivered)
            _account(session, started, model_seconds)
            return _failed(session, [], _refusal_line(final))
        content = [_block_dict(b) for b in final.content if not _is_blank_text(b)]
        tool_uses = [b for b in content if b["type"] == "tool_use"]
        run_tools = bool(tool_uses) and stop in ("tool_use", "pause_turn")
        if tool_uses and not run_tools:
            # A cut-off (max_tokens) tool call has a truncated input: never run, never kept,
            # so no tool_use is ever stored without its tool_result.
            content = [b for b in content if b["type"] != "tool_use"]
        if any(b["type"] not in _UNCACHEABLE for b in content) or (
            stop == "pause_turn" and content
        ):
            session.messages.append({"role": "assistant", "content": content})
        for block in content:
            if block["type"] == "text":
                texts.append(block["text"])
                session.record("assistant", block["text"])
        if run_tools:
            cut_offs = 0
            results = await execute_tools(session, tool_uses)
            forget_refused_inputs(tool_uses, results)
            extra = [{"type": "text", "text": t} for t in ((await drain()) if drain else [])]
            delivered.extend(extra)
            _append_user(session, results + extra)
            for block in extra:
                session.record("user", block["text"])
            _account(session, started, model_seconds)
            if session.interrupted:
                return _interrupted(session, texts)
            stuck = failures.add(tool_uses, results)
            if stuck is not None:
                return _failed(session, texts, stuck)
            continue
        _account(session, started, model_seconds)
        if stop == "pause_turn":
            # The API paused a long turn: sending its content back continues it.
            session.record("notice", "the model paused its turn; continuing")
            continue
        if stop == "max_tokens":
            cut_offs += 1
            dropped = [b["name"] for b in tool_uses]
            if cut_offs > MAX_CONTINUATIONS:
                return _failed(
                    session,
                    texts,
                    f"the reply hit max_tokens ({session.max_tokens}) {cut_offs} times in a row",
                    status="max_tokens",
                )
            note = _cut_off_note(session.max_tokens, dropped)
            session.record("notice", note)
            _append_user(session, [{"type": "text", "text": note}])
            continue
        return TurnOutcome("end_turn", "\n".join(texts))


class _Failures:
    """The tool calls of a turn failing the same way in a row (same tool, same error; any tool
    for a full disk). Any success in between starts the count again."""

    def __init__(self) -> None:
        self.last: tuple[str, str] | None = None
        self.count = 0

    def add(self, calls: list[dict[str, Any]], results: list[dict[str, Any]]) -> str | None:
        """Count a round's results; the line that ends the turn once one failed
        ``MAX_SAME_FAILURES`` times in a row, else ``None``."""
        for call, result in zip(calls, results, strict=True):
            if not result.get("is_error"):
                self.last, self.count = None, 0
                continue
            error = str(result.get("content") or "")
            key = ("", DISK_FULL) if DISK_FULL in error else (call["name"], error)
            self.count = self.count + 1 if key == self.last else 1
            self.last = key
            if self.count >= MAX_SAME_FAILURES:
                first = " ".join(error.split())
                if len(first) > 300:
                    first = first[:299] + "…"
                return f"{call['name']} failed the same way {self.count} times in a row: {first}"
        return None


def _cut_off_note(max_tokens: int, dropped: list[str]) -> str:
    if dropped:
        return (
            f"[Your reply was cut off at the max_tokens limit ({max_tokens}) in the middle of "
            f"a {dropped[-1]} tool call, which was not run. Call it again with a smaller input "
            "(split large content over several calls).]"
        )
    return (
        f"[Your reply was cut off at the max_tokens limit ({max_tokens}). Continue exactly "
        "where it stopped.]"
    )


def _refusal_line(final: Any) -> str:
    details = getattr(final, "stop_details", None)
    explanation = getattr(details, "explanation", None) if details is not None else None
    category = getattr(details, "category", None) if details is not None else None
    label = f" ({category})" if category else ""
    reason = explanation or "no explanation given"
    return (
        f"the model refused{label}: {reason} — the refused exchange was removed from the "
        "conversation"
    )


def _is_blank_text(block: Any) -> bool:
    """An empty or whitespace-only text block: the API rejects them, so none is kept."""
    kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
    if kind != "text":
        return False
    value = block.get("text") if isinstance(block, dict) else getattr(block, "text", "")
    return not isinstance(value, str) or not value.strip()


def _failed(
    session: AgentSession,
    texts: list[str],
    message: str,
    status: Literal["error", "max_tokens"] = "error",
) -> TurnOutcome:
    session.record("error", message)
    session.set_error(message)
    return TurnOutcome(status, "\n".join(texts), message)


def _account(session: AgentSession, started: float, model_seconds: float) -> None:
    session.stats.turns += 1
    session.stats.total_seconds.append(time.perf_counter() - started)
    session.stats.model_seconds.append(model_seconds)
    if len(session.stats.total_seconds) > 1000:
        del session.stats.total_seconds[:500], session.stats.model_seconds[:500]


def _interrupted(session: AgentSession, texts: list[str]) -> TurnOutcome:
    session.record("notice", "interrupted")
    return TurnOutcome("interrupted", "\n".join(texts))


def _block_dict(block: Any) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if block.type == "thinking":  # passed back exactly as received (the signature covers it)
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return dict(block.model_dump(exclude_none=True))


# ---------------------------------------------------------------------------- tools


async def execute_tools(
    session: AgentSession, tool_uses: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Run the tool calls of one response; read-only ones concurrently when all are, and
    spawns (``Task``) concurrently when all are: a team spawned in one response is registered
    in the team config together (``team.registrar``), not one rewrite per teammate."""
    tools = [session.tool(b["name"]) for b in tool_uses]
    concurrent = len(tool_uses) > 1 and (
        all(
            t is not None and t.is_read_only(b.get("input") or {})
            for t, b in zip(tools, tool_uses, strict=True)
        )
        or all(b["name"] == "Task" and t is not None for t, b in zip(tools, tool_uses, strict=True))
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
    # Teammates reading the same board or files hold one copy of the text (shared_text).
    content = share(result.content)
    preview = (
        content
        if len(content) <= RESULT_PREVIEW
        else share(content[:RESULT_PREVIEW] + f"\n... ({len(content)} chars)")
    )
    session.record(
        "tool_result", preview, tool=name, tool_use_id=block["id"], is_error=result.is_error
    )
    return _result_block(block["id"], ToolResult(content, result.is_error))


async def _checked_call(
    session: AgentSession, tool: Tool, tool_input: dict[str, Any], tool_use_id: str
) -> ToolResult:
    if session.rules_feed is not None:  # what the person accepted since the last call
        session.rules_feed.refresh(session.rules)
    roots = allowed_roots(session.rules, session.identity.cwd)
    decision = decide(
        tool,
        tool_input,
        parse_mode(session.mode),
        session.rules,
        session.identity.cwd,
        roots,
    )
    if decision.behavior == "deny":
        return ToolResult(f"Permission denied: {decision.reason}", True)
    if decision.behavior == "ask":
        if session.ask_permission is None:
            return ToolResult(f"Permission denied: {decision.reason} (no one to ask)", True)
        async with waiting(session.turn_slot):  # the person may take minutes
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
        hooks=hooks_of(session),
        lane=session.io,
        sandbox=session.sandbox,
        slot=session.turn_slot,
    )
    # Only calls that actually run are counted; the next usage event carries the total.
    session.snapshot.tool_calls += 1
    try:
        if tool.waits(tool_input):  # a command: the turn's slot goes to another meanwhile
            async with waiting(session.turn_slot):
                return await tool.call(tool_input, ctx)
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
