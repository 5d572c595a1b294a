"""Token estimates and an in-memory prompt cache, so usage numbers behave like the real API's.

The point is observability: the runtime places `cache_control` markers, and the UI shows cache
hits. Offline, the first request with a marked prefix reports `cache_creation_input_tokens`, and a
later request sharing that prefix reports `cache_read_input_tokens`. The API's lookback rule is
kept (a hit may be found up to 20 blocks before the last breakpoint), so a breakpoint that moves
along a growing conversation still reads what the previous turn wrote.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4
"""Rough chars-per-token ratio used for every estimate; good enough for meters and tests."""


def estimate_tokens(chars: int) -> int:
    return max(1, math.ceil(chars / CHARS_PER_TOKEN))


@dataclass(frozen=True)
class InputUsage:
    """The three input counts of a response; their sum is the whole prompt."""

    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _block(value: object, role: str = "") -> tuple[str, bool]:
    if isinstance(value, dict):
        marked = "cache_control" in value
        stripped = {k: v for k, v in value.items() if k != "cache_control"}
        return role + _canonical(stripped), marked
    return role + _canonical(value), False


Segment = tuple[int, bytes, bool]
"""A block of the prompt as the counts need it: the length of its canonical text, that text's
SHA-256 digest, and whether it carries ``cache_control``. Not the text itself: a server that
remembers recent conversations' segments (``SegmentMemo``) would otherwise hold a canonical
copy of each, and a big team's lead's conversation grows with the team (issue 33)."""

Segments = list[Segment]


def _segment(block: tuple[str, bool]) -> Segment:
    text, marked = block
    return len(text), hashlib.sha256(text.encode()).digest(), marked


def _head_segments(body: Mapping[str, Any]) -> Iterator[Segment]:
    """The blocks before the messages, in the API's cache order: tools, then system."""
    for tool in body.get("tools") or []:
        yield _segment(_block(tool))
    system = body.get("system")
    if isinstance(system, list):
        for item in system:
            yield _segment(_block(item))
    elif system:
        yield _segment(_block(system))


def _message_segments(message: object) -> Segments:
    role = str(message.get("role", "")) + ":" if isinstance(message, dict) else ""
    content = message.get("content") if isinstance(message, dict) else message
    if isinstance(content, list):
        return [_segment(_block(item, role)) for item in content]
    return [_segment(_block(content, role))]


def _segments(body: Mapping[str, Any]) -> Iterator[Segment]:
    """The prompt's blocks (``Segment``), in the API's cache order: tools, then system, then
    messages."""
    yield from _head_segments(body)
    for message in body.get("messages") or []:
        yield from _message_segments(message)


def prompt_segments(body: Mapping[str, Any]) -> Segments:
    """The prompt's blocks, canonically encoded (compute once per request: it is the costly
    part, and both the size check and the cache accounting need it)."""
    return list(_segments(body))


@dataclass
class _Seen:
    """One conversation's last request: its parts, and their segments."""

    tools: object
    system: object
    head: Segments
    messages: list[Any]
    per_message: list[Segments]


class SegmentMemo:
    """``prompt_segments`` for a server that sees the same conversations grow: the segments of
    what a request repeats of a recent one (its tools and system prompt, the messages up to
    the first that differs, equal as parsed values) are reused, and only the rest is encoded.
    A conversation's request repeats all but its last message or two (the cache marker moves
    to the newest), so a call's encoding no longer grows with the conversation. The last
    request of ``size`` conversations is kept (most recent first); a request of another is
    encoded whole, as without the memo. What it keeps of a conversation is its parsed
    messages (to compare) and each block's length and digest (``Segment``), not a canonical
    copy of its text."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._recent: list[_Seen] = []
        self._lock = threading.Lock()  # the transport receives requests in worker threads

    def segments(self, body: Mapping[str, Any]) -> Segments:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return prompt_segments(body)
        tools, system = body.get("tools"), body.get("system")
        with self._lock:
            recent = list(self._recent)
        seen = next(
            (
                c
                for c in recent
                if c.messages[0] == messages[0] and c.tools == tools and c.system == system
            ),
            None,
        )
        head = seen.head if seen is not None else list(_head_segments(body))
        per_message: list[Segments] = []
        for index, message in enumerate(messages):
            same = seen is not None and index < len(seen.messages)
            if same and seen is not None and seen.messages[index] == message:
                per_message.append(seen.per_message[index])
            else:
                seen = None  # past the first difference, nothing more is repeated
                per_message.append(_message_segments(message))
        latest = _Seen(tools, system, head, messages, per_message)
        with self._lock:
            kept = [c for c in self._recent if c.messages[0] != messages[0]]
            self._recent = [latest, *kept][: self.size]
        return [*head, *(segment for part in per_message for segment in part)]


def estimate_input_tokens(body: Mapping[str, Any], segments: Segments | None = None) -> int:
    """Whole-prompt size, as `count_tokens` would report it."""
    blocks = segments if segments is not None else _segments(body)
    return estimate_tokens(sum(chars for chars, _, _ in blocks))


class PromptCache:
    """Prefix cache keyed by a rolling hash over the prompt's blocks.

    Args:
        ttl: Seconds an entry lives after its last write or hit (the API's default is 5 minutes).
        lookback: How many blocks before the last breakpoint are checked for a hit.
        min_tokens: Prefixes shorter than this are not cached (the API's floor is ~1024 tokens;
            offline defaults to 0 so caching is visible with small test prompts).
        clock: Monotonic clock, injectable for tests.
    """

    def __init__(
        self,
        *,
        ttl: float = 300.0,
        lookback: int = 20,
        min_tokens: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.lookback = lookback
        self.min_tokens = min_tokens
        self._clock = clock
        self._expires: dict[bytes, float] = {}
        self._lock = threading.Lock()  # the transport accounts requests in worker threads

    def account(self, body: Mapping[str, Any], segments: Segments | None = None) -> InputUsage:
        """Split the prompt into uncached / written / read tokens and update the cache
        (``segments``: ``prompt_segments(body)`` if already computed)."""
        digests: list[bytes] = []
        cumulative: list[int] = []
        marks: list[int] = []
        rolling = hashlib.sha256(str(body.get("model", "")).encode())
        chars = 0
        blocks = segments if segments is not None else _segments(body)
        for index, (length, digest, marked) in enumerate(blocks):
            rolling.update(digest)  # a prefix's key: the chain of its blocks' digests
            digests.append(rolling.copy().digest())
            chars += length
            cumulative.append(chars)
            if marked:
                marks.append(index)

        total = estimate_tokens(chars)
        if not marks:
            return InputUsage(total)
        last = marks[-1]
        prefix = estimate_tokens(cumulative[last])
        if prefix < self.min_tokens:
            return InputUsage(total)

        with self._lock:
            now = self._clock()
            self._expires = {d: t for d, t in self._expires.items() if t > now}
            hit: int | None = None
            for index in range(last, max(-1, last - self.lookback), -1):
                if digests[index] in self._expires:
                    hit = index
                    break
            read = estimate_tokens(cumulative[hit]) if hit is not None else 0
            for index in [*marks, *([hit] if hit is not None else [])]:
                self._expires[digests[index]] = now + self.ttl
        return InputUsage(
            input_tokens=max(total - prefix, 0),
            cache_creation_input_tokens=prefix - read,
            cache_read_input_tokens=read,
        )

    def clear(self) -> None:
        with self._lock:
            self._expires.clear()
