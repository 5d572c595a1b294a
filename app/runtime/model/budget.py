"""``--budget USD``: the run's spending cap, consulted by the agent loop before each model call.

``Budget`` follows the run's cost from the runtime's usage events (``observe``; the counts are
cumulative per agent, so each event's difference is one call, priced by ``pricing``). At 80%
of the limit it tells its listeners once ("warning"); once the cost reaches the limit, every
agent that is about to call the model waits in ``wait_for_room`` ("paused: budget" on its
panel) until the person raises the limit (``raise_to``) or the team is shut down. Calls
already streaming finish (their tokens are already being paid for). Listeners get "stopped"
the first time an agent is held, "resumed" when the limit is raised above the cost.
``holders`` are told ``True``/``False`` each time the cost reaches the limit / the limit is
raised above it (teammates in processes of their own are held through a file, see
``runners.hold``).

The runtime finds the gate as ``runtime.budget`` (``session.services.budget``): the loop's one
line is ``await wait_for_budget(session)``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Literal, Protocol

from app.runtime.api import AgentSnapshot
from app.runtime.events import RuntimeEvent
from app.runtime.model.pricing import call_cost, format_usd

log = logging.getLogger(__name__)

BudgetState = Literal["ok", "warning", "stopped"]
BudgetListener = Callable[["Budget", str], None]
WARN_FRACTION = 0.8
PAUSED = "paused: budget"


class Budgeted(Protocol):
    """What a budget is installed on (``TeamRuntime``): it keeps the gate as ``budget`` and
    tells the budget its usage events."""

    budget: Budget | None

    def subscribe(self, callback: Callable[[RuntimeEvent], None]) -> Callable[[], None]: ...

    def snapshot(self) -> list[AgentSnapshot]: ...


class Budget:
    def __init__(
        self,
        limit_usd: float,
        *,
        offline: bool = False,
        model: str = "",
        models: Callable[[str], str | None] | None = None,
    ) -> None:
        """``models(agent)`` names an agent's model (default: ``model`` for everyone)."""
        if not limit_usd > 0:
            raise ValueError("the budget must be more than $0")
        self.limit = float(limit_usd)
        self.offline = offline
        self.model = model
        self.models = models
        self.spent = 0.0
        self.warned = False
        self.stopped = False
        self.listeners: list[BudgetListener] = []
        self.holders: list[Callable[[bool], None]] = []
        self._exhausted = False
        self._usage: dict[str, tuple[int, int, int, int]] = {}
        self._room = asyncio.Event()
        self._room.set()

    @classmethod
    def for_runtime(cls, limit_usd: float, runtime: Budgeted) -> Budget:
        """A budget for ``runtime``, installed as ``runtime.budget`` and fed by its events."""
        from app.runtime.model.client import is_offline

        client = getattr(runtime, "client", None)
        offline = bool(client is not None and is_offline(client))

        def model_of(agent: str) -> str | None:
            for snap in runtime.snapshot():
                if snap.name == agent:
                    return str(snap.model)
            return None

        budget = cls(
            limit_usd, offline=offline, model=getattr(runtime, "model", ""), models=model_of
        )
        budget.install(runtime)
        return budget

    def install(self, runtime: Budgeted) -> Callable[[], None]:
        runtime.budget = self
        hold = getattr(runtime, "hold_teammates", None)
        if hold is not None:  # it holds what the gate cannot (teammate processes)
            self.holders.append(hold)
        return runtime.subscribe(self.observe)

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> BudgetState:
        if self.spent >= self.limit:
            return "stopped"
        if self.spent >= self.limit * WARN_FRACTION:
            return "warning"
        return "ok"

    @property
    def has_room(self) -> bool:
        return self.spent < self.limit

    def describe(self) -> str:
        return f"{format_usd(self.spent)} of {format_usd(self.limit)}"

    def _tell(self, what: str) -> None:
        """Tell every listener; one that fails is logged with its traceback (a notification
        that could not be shown must not stop the gate, nor the other listeners)."""
        for listener in list(self.listeners):
            try:
                listener(self, what)
            except Exception:
                log.exception("budget listener %r failed on %r", listener, what)

    # ------------------------------------------------------------------ cost

    def observe(self, event: Any) -> None:
        """A runtime event; usage events add their call's cost."""
        if type(event).__name__ != "UsageChanged":
            return
        agent = str(event.agent)
        now = (
            int(event.input_tokens),
            int(event.output_tokens),
            int(event.cache_read_tokens),
            int(getattr(event, "cache_creation_tokens", 0) or 0),
        )
        before = self._usage.get(agent, (0, 0, 0, 0))
        self._usage[agent] = now
        diff = [max(0, a - b) for a, b in zip(now, before, strict=True)]
        if not any(diff):
            return
        model = (self.models(agent) if self.models else None) or self.model
        self.add(call_cost(model, *diff, offline=self.offline) or 0.0)

    def add(self, cost: float) -> None:
        self.spent += cost
        if not self.warned and self.spent >= self.limit * WARN_FRACTION:
            self.warned = True
            self._tell("warning")
        if not self.has_room:
            self._room.clear()
            if not self._exhausted:
                self._exhausted = True
                self._hold(True)

    def _hold(self, exhausted: bool) -> None:
        for holder in list(self.holders):
            holder(exhausted)

    def note_held(self) -> None:
        """An agent is held (the first time: listeners get "stopped")."""
        if not self.stopped:
            self.stopped = True
            self._tell("stopped")

    def raise_to(self, limit_usd: float) -> None:
        """A new limit (the person raised the budget); held agents go on if it leaves room."""
        if not limit_usd > 0:
            raise ValueError("the budget must be more than $0")
        self.limit = float(limit_usd)
        if self.spent < self.limit * WARN_FRACTION:
            self.warned = False
        if self.has_room:
            self._room.set()
            if self._exhausted:
                self._exhausted = False
                self._hold(False)
            if self.stopped:
                self.stopped = False
                self._tell("resumed")
        else:
            self._room.clear()

    # ------------------------------------------------------------------ the gate

    async def wait_for_room(self, session: Any = None) -> bool:
        """Return at once while there is room; otherwise hold (``session`` shows "paused:
        budget") until the limit is raised or the session is interrupted. Returns whether
        the caller may call the model."""
        if self.has_room:
            return True
        self.note_held()
        if session is not None:
            session.set_activity(PAUSED)
            session.set_status(session.status, PAUSED)
        interrupt = getattr(session, "interrupt_event", None)
        waits = [asyncio.ensure_future(self._room.wait())]
        if interrupt is not None:
            waits.append(asyncio.ensure_future(interrupt.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waits:
                waiter.cancel()
        if session is not None and self.has_room:
            session.set_activity("")
            session.set_status(session.status, "")
        return self.has_room


async def wait_for_budget(session: Any) -> None:
    """The agent loop's gate: hold before a model call while the run's budget is spent."""
    if session.gate is not None:
        await session.gate(session)


def attach_budget(budget: float | Budget | None, runtime: Budgeted) -> Budget | None:
    """Install ``--budget`` on ``runtime``: an amount makes a Budget priced for its model; a
    ready Budget (tests: priced as if online) is installed as is."""
    if budget is None:
        return None
    if isinstance(budget, Budget):
        budget.install(runtime)
        return budget
    return Budget.for_runtime(float(budget), runtime)


def stop_line(budget: Budget) -> str:
    return (
        f"budget of {format_usd(budget.limit)} reached ({format_usd(budget.spent)} spent):"
        " no new model call was started and the team was stopped"
    )
