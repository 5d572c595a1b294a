"""A viewer's transcripts from the agents' own session files (a Claude Code team's): read as
they grow, in a worker thread, one read at a time; what each agent's file gained goes to the
open views, its token usage to the panels.

Kept out of ``app.py``: the app builds a :class:`SessionFiles` when its viewer has a transcript
source, polls it every ``TeamDeckApp.TRANSCRIPT_POLL_SECONDS`` and applies what it reports.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from textual.app import App

from app.runtime.by_files.claude_transcripts import Usage
from app.runtime.events import TranscriptEntry

#: An agent's usage as the panels take it: (input, output, cache read tokens, tool calls, USD
#: of the priced calls, calls with no known price).
AgentUsage = tuple[int, int, int, int, float, int]
#: ``on_read(agents whose file gained entries, usage per agent)``, on the app's thread.
OnRead = Callable[[set[str], dict[str, AgentUsage]], None]


class TranscriptSource(Protocol):
    """Where a viewer's transcripts come from (``app.runtime.by_files.claude_transcripts``)."""

    def entries(self, agent: str) -> Iterable[TranscriptEntry]: ...

    def poll(self, agents: Iterable[str]) -> set[str]: ...

    def usage(self, agent: str) -> Usage | None: ...


class SessionFiles:
    """Polls a :class:`TranscriptSource` for ``app``; see the module docstring."""

    def __init__(self, app: App[Any], source: TranscriptSource, on_read: OnRead) -> None:
        self.app = app
        self.source = source
        self.on_read = on_read
        self._polling = False

    def entries(self, agent: str) -> list[TranscriptEntry]:
        return list(self.source.entries(agent))

    def poll(self, agents: list[str]) -> None:
        """Read what ``agents``' files gained, unless a read is still under way."""
        if self._polling:
            return
        self._polling = True
        self.app.run_worker(
            lambda: self._read(agents),
            thread=True,
            group="transcripts",
            exit_on_error=False,
            name="transcripts",
        )

    def _read(self, agents: list[str]) -> None:
        """In the worker thread: one read of every agent's file, then back to the app."""
        changed: set[str] = set()
        usage: dict[str, AgentUsage] = {}
        try:
            changed = self.source.poll(agents)
            for name in agents:
                u = self.source.usage(name)
                if u is not None:
                    tokens = (u.input_tokens, u.output_tokens, u.cache_read_tokens)
                    usage[name] = (*tokens, u.tool_calls, u.cost_usd, u.unpriced_calls)
        finally:
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.app.call_from_thread(self._done, changed, usage)

    def _done(self, changed: set[str], usage: dict[str, AgentUsage]) -> None:
        self._polling = False
        self.on_read(changed, usage)
