"""Ready-made handlers: `ScriptedModel` for tests and `EchoModel` as the last-resort default."""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeAlias

from .plans import CutStream, ErrorPlan, ModelHandler, ModelRequest, Reply, ResponsePlan, reply

ScriptStep: TypeAlias = (
    ResponsePlan | str | Callable[[ModelRequest], ResponsePlan | Awaitable[ResponsePlan]]
)
"""A plan, a plain string (a text-only `end_turn` reply), or a function of the request."""


class ScriptedModel(ModelHandler):
    """Answers each request with the next step of a script and records what it was sent.

    Every HTTP attempt consumes one step, SDK retries included: `[rate_limited(), reply("hi")]`
    scripts "429, then success". When the script runs out the model answers with a non-retryable
    500 whose message says so, so the test fails loudly instead of hanging or retrying.

    Attributes:
        requests: Every request received, in order (use `.body` for the raw JSON).
    """

    def __init__(self, script: Iterable[ScriptStep] = ()) -> None:
        self._script: deque[ScriptStep] = deque(script)
        self.requests: list[ModelRequest] = []

    def add(self, *steps: ScriptStep) -> None:
        self._script.extend(steps)

    @property
    def remaining(self) -> int:
        return len(self._script)

    def assert_done(self) -> None:
        """Fail if scripted steps were never used (a test expected more requests than it sent)."""
        if self._script:
            raise AssertionError(f"ScriptedModel: {len(self._script)} scripted step(s) unused")

    async def respond(self, request: ModelRequest) -> ResponsePlan:
        self.requests.append(request)
        if not self._script:
            return ErrorPlan(
                500,
                "api_error",
                f"ScriptedModel: script exhausted; request #{len(self.requests)} has no scripted "
                f"response (last user text: {request.last_user_text[:80]!r})",
                retry_after=None,
                should_retry=False,
            )
        step = self._script.popleft()
        if isinstance(step, Reply | ErrorPlan | CutStream):
            return step
        if isinstance(step, str):
            return reply(step)
        result = step(request)
        return await result if inspect.isawaitable(result) else result


class EchoModel(ModelHandler):
    """Placeholder brain used when no offline policy module is installed: acknowledges the
    last user message so the app is usable, and says how to get a real model."""

    async def respond(self, request: ModelRequest) -> ResponsePlan:
        said = request.last_user_text.strip() or "(tool results)"
        return reply(
            "Offline model (no policy installed; set ANTHROPIC_API_KEY for Claude). "
            f"Received: {said[:200]}"
        )
