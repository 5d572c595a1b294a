"""One model response, streamed, with the failures after the response started retried.

The SDK retries a request that fails *before* its response starts (429/5xx status, a refused
connection). Once a stream is flowing it cannot: a dropped connection, an ``error`` event in
the stream (``overloaded_error`` mid-response), a stream that goes silent past the read
timeout, a stream that ends without ``message_stop`` and an empty 200 body all surface here.
Nothing of a broken response is kept (tools only run on a complete response, so replaying it
has no side effect): it is retried up to ``STREAM_RETRIES`` times with jittered exponential
backoff, then the turn fails with one readable line. Tokens a broken stream already reported
are still counted.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from app.runtime.model.client import model_errors
from app.runtime.scheduling.model_loop import on_model_loop
from app.runtime.scheduling.offload import on_loop

if TYPE_CHECKING:  # the SDK is imported by whoever builds the client (model.client)
    import anthropic


class StreamingSession(Protocol):
    """What a response stream tells its agent's session (``agent.session.AgentSession``)."""

    @property
    def client(self) -> anthropic.AsyncAnthropic: ...

    def record(self, kind: Any, text: str, **data: Any) -> None: ...

    def delta(self, text: str) -> None: ...

    def set_activity(self, text: str) -> None: ...

    def add_usage(self, usage: Any, tool_calls: int = 0) -> None: ...


#: Retries of a response that broke after it started (on top of the SDK's own retries of a
#: request that failed before).
STREAM_RETRIES = 2
#: First backoff in seconds; doubled per retry, with jitter (half to full).
RETRY_BACKOFF = 1.0
#: Error types of an ``error`` event in the stream worth another attempt.
RETRYABLE_STREAM_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


class ResponseFailed(Exception):
    """A model call that failed for good; ``str(exc)`` is the one line to show."""


class BrokenStream(Exception):
    """A response that started and then broke; ``retryable`` says whether to try again."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


Waiter = Callable[[Awaitable[Any]], Awaitable[Any]]


async def stream_response(
    session: StreamingSession, params: dict[str, Any], until_interrupted: Waiter
) -> Any:
    """The complete final message for ``params``; ``None`` if interrupted.

    Raises ``ResponseFailed`` when the request fails before the response starts (after the
    SDK's retries) or when it keeps breaking after it started.
    """
    attempt = 0
    while True:
        try:
            return await until_interrupted(_stream_once(session, params))
        except BrokenStream as exc:
            if not exc.retryable or attempt >= STREAM_RETRIES:
                suffix = f" (after {attempt + 1} attempts)" if attempt else ""
                raise ResponseFailed(f"{exc}{suffix}") from exc
            attempt += 1
            delay = RETRY_BACKOFF * 2 ** (attempt - 1) * random.uniform(0.5, 1.0)
            session.record(
                "notice", f"{exc}; retrying in {delay:.1f}s ({attempt}/{STREAM_RETRIES})"
            )
            if await until_interrupted(asyncio.sleep(delay, result=True)) is None:
                return None
        except model_errors() as exc:
            raise ResponseFailed(describe_api_error(exc)) from exc


async def _stream_once(session: StreamingSession, params: dict[str, Any]) -> Any:
    """Stream one response on the model loop (``app.runtime.scheduling.model_loop``: the SDK's
    encoding
    and parsing stay off the dashboard's loop). Errors before it starts propagate (the SDK
    retried them); errors after it started become ``BrokenStream`` (after counting the tokens
    it used)."""
    return await on_model_loop(_stream(session, params))


async def _stream(session: StreamingSession, params: dict[str, Any]) -> Any:
    """``_stream_once`` on the model loop: the session is told things through ``on_loop``."""
    async with session.client.messages.stream(**params) as stream:
        stopped = False
        try:
            async for event in stream:
                if event.type == "text":
                    on_loop(session.delta, event.text)
                elif event.type == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        on_loop(session.set_activity, f"calling {block.name}")
                    elif block.type == "thinking":
                        on_loop(session.set_activity, "thinking")
                elif event.type == "message_stop":
                    stopped = True
        except model_errors() as exc:
            _count_partial(session, stream)
            raise BrokenStream(describe_api_error(exc), retryable=_retryable(exc)) from exc
        except ValueError as exc:  # the SDK could not parse a tool input's JSON
            _count_partial(session, stream)
            detail = str(exc).split(". JSON:")[0].split("Error: ")[-1]
            raise BrokenStream(
                f"the model sent malformed JSON for a tool input ({detail}); "
                "no tool was run and the turn was stopped",
                retryable=False,
            ) from exc
        except (IndexError, KeyError, TypeError, RuntimeError) as exc:
            # events the SDK cannot assemble (e.g. a delta for a block that never started)
            _count_partial(session, stream)
            raise BrokenStream(
                f"the API sent a malformed event stream ({type(exc).__name__}: {exc})",
                retryable=True,
            ) from exc
        snapshot = _snapshot(stream)
        if snapshot is None:
            raise BrokenStream(
                "the API sent an empty response (HTTP 200 without any event)", retryable=True
            )
        if not stopped:
            _count_partial(session, stream)
            raise BrokenStream(
                "the API closed the response stream before message_stop", retryable=True
            )
        return snapshot


def _snapshot(stream: Any) -> Any:
    try:
        return stream.current_message_snapshot
    except AssertionError:  # no message_start arrived
        return None


def _count_partial(session: StreamingSession, stream: Any) -> None:
    snapshot = _snapshot(stream)
    if snapshot is not None:
        on_loop(session.add_usage, snapshot.usage)


def _retryable(exc: BaseException) -> bool:
    import httpx2

    if isinstance(exc, httpx2.TransportError):
        return True
    kind = _error_type(exc)
    return kind in RETRYABLE_STREAM_ERRORS


def _error_type(exc: BaseException) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("type"), str):
            return str(err["type"])
    return None


def _error_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def describe_api_error(exc: BaseException) -> str:
    """One line a person can act on, for any error a model call raises."""
    import anthropic
    import httpx2

    if isinstance(exc, httpx2.TimeoutException):
        return f"no data from the API for {_read_timeout(exc)} (read timeout)"
    if isinstance(exc, anthropic.APITimeoutError):
        return "the API did not answer in time (request timed out, after retries)"
    if isinstance(exc, httpx2.TransportError):
        detail = str(exc).strip() or type(exc).__name__
        return f"the connection to the API dropped mid-response: {detail}"
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__
        detail = f": {cause}" if cause is not None and str(cause) else ""
        return f"could not reach the API (connection error{detail})"
    status = getattr(exc, "status_code", None)
    kind = _error_type(exc)
    message = _error_message(exc)
    if status == 200:  # an `error` event inside a stream that had started fine
        return f"API error mid-response ({kind or 'error'}): {message}"[:300]
    if status == 401:
        hint = " — check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN"
        return f"API error 401: {message}{hint}"[:300]
    if status is not None:
        return f"API error {status}: {message}"[:300]
    return f"API error ({type(exc).__name__}): {message}"[:300]


def _read_timeout(exc: BaseException) -> str:
    request = getattr(exc, "_request", None)
    try:
        timeout = request.extensions.get("timeout", {}).get("read") if request else None
    except AttributeError:
        timeout = None
    return f"{timeout:g}s" if isinstance(timeout, int | float) else "too long"
