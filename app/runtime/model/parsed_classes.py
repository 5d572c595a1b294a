"""The SDK's generic classes for a streamed response, held while the process runs.

Its own module so that :mod:`app.runtime.model.client` (which holds them when it builds a
client) and :mod:`app.runtime.model.warm_up` (which streams one response through a client)
import it without importing each other."""

from __future__ import annotations

from typing import Any

#: The SDK's generic classes each streamed response is parsed into (see
#: :func:`hold_parsed_classes`).
_held: list[type] = []


def hold_parsed_classes() -> None:
    """Keep the classes the SDK parametrises for every streamed response alive.

    The SDK writes ``ParsedMessage[ResponseFormatT]`` (and the message-stop event's class) in
    the functions that assemble a stream. pydantic caches a parametrised class weakly, and
    nothing else holds it once the response's snapshot is dropped: each garbage collection
    freed it and the next response built it again, schema and all (~1 ms of CPU per model call,
    in profiles of teammate processes, whose previous response is not kept). Held here, every
    response finds them in the cache. Without these SDK internals (another SDK version) this
    does nothing."""
    if _held:
        return
    try:
        from anthropic.lib._parse._response import ResponseFormatT
        from anthropic.lib.streaming._types import ParsedMessageStopEvent
        from anthropic.types.parsed_message import ParsedMessage
    except ImportError:
        return
    generics: tuple[Any, ...] = (ParsedMessage, ParsedMessageStopEvent)
    _held.extend(generic[ResponseFormatT] for generic in generics)
