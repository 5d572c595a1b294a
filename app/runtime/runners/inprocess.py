"""In-process teammates: the teammate loop as a worker of this process's event loop.

The default mode. The runtime's spawner runs the loop (a Textual worker per agent in the
dashboard, an asyncio task headless); the session's events go straight to the runtime's bus.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from app.runtime.agent.session import AgentSession, Emit
from app.runtime.api import AgentSnapshot, Spawner
from app.runtime.events import TranscriptEntry
from app.runtime.permissions import PermissionRules, RulesFeed
from app.runtime.runners.base import TeammateSpec
from app.runtime.runners.build import build_teammate

if TYPE_CHECKING:
    import anthropic

    from app.core import Home
    from app.core.authority import TeamKey
    from app.runtime.agent.channel import Sent
    from app.runtime.sandbox import SandboxConfig
    from app.runtime.scheduling.turn_slots import TurnGate


class InProcessRunner:
    """A teammate running on this process's event loop."""

    backend = "in-process"

    def __init__(
        self,
        spec: TeammateSpec,
        *,
        home: Home,
        client: anthropic.AsyncAnthropic,
        spawner: Spawner,
        emit: Emit,
        rules: PermissionRules,
        permission_timeout: float,
        on_sent: Callable[[Sent], None],
        on_exit: Callable[[InProcessRunner], None],
        on_request_dropped: Callable[[str, str], None] | None = None,
        gate: Callable[[AgentSession], Awaitable[None]] | None = None,
        sandbox: SandboxConfig | None = None,
        key: TeamKey | None = None,
        bypass_allowed: Callable[[], bool] = lambda: False,
        slots: asyncio.Semaphore | None = None,
        turn_gate: TurnGate | None = None,
    ) -> None:
        self.spec = spec
        self._spawner = spawner
        self._on_exit = on_exit
        self.teammate = build_teammate(
            spec,
            home=home,
            client=client,
            emit=emit,
            rules=rules,
            backend=self.backend,
            permission_timeout=permission_timeout,
            on_sent=on_sent,
            on_exit=lambda _: self._on_exit(self),
            on_request_dropped=on_request_dropped,
            gate=gate,
            sandbox=sandbox,
            rules_feed=RulesFeed(lambda: rules),  # the run's: the same object as the lead's
            key=key,  # the runtime's, in memory: answers it signs are the ones that act
            bypass_allowed=bypass_allowed,
        )
        #: Answers come from the runtime (``give_answer``), never from message text.
        self.teammate.answers.direct = {}
        self.teammate.session.slots = slots  # model calls shared with the other teammates
        self.teammate.session.turn_gate = turn_gate  # and turns, a few at once
        self.handle: Any = None

    @property
    def session(self) -> AgentSession:
        return self.teammate.session

    @property
    def finished(self) -> bool:
        return self.teammate.finished

    @property
    def pid(self) -> int | None:
        return None

    def start(self) -> None:
        self.teammate.show()
        self.handle = self._spawner(self.spec.name, self.teammate.run)
        self.teammate.handle = self.handle

    def kill(self) -> None:
        if self.teammate.finished:
            return
        self.teammate.exit("killed", reason="terminated")
        cancel = getattr(self.handle, "cancel", None)
        if cancel is not None:
            with contextlib.suppress(RuntimeError):  # a worker that already ended
                cancel()

    def interrupt(self) -> None:
        self.session.interrupt()

    def inject(self, text: str) -> None:
        self.session.record("user", text, source="person")
        self.teammate.inject(text)

    def wake(self) -> None:
        self.teammate.wake.set()

    def snapshot(self) -> AgentSnapshot:
        return self.session.snapshot

    def transcript(self) -> list[TranscriptEntry]:
        return list(self.session.transcript)
