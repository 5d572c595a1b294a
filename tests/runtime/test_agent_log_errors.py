"""A teammate in another process reports its panel's error through its event log: the
``ErrorChanged`` it emits is logged, and the dashboard's runner turns the line back into the
same event and the same snapshot."""

from __future__ import annotations

from app.runtime.api import AgentSnapshot
from app.runtime.events import ErrorChanged
from app.runtime.runners.event_log import LoggedAgent, event_line


def test_an_error_and_its_clearing_travel_through_the_log() -> None:
    agent = LoggedAgent(AgentSnapshot("worker", "cyan", "idle"))
    for event in (ErrorChanged("worker", "inbox unreadable"), ErrorChanged("worker", None)):
        line = event_line(event)
        assert line is not None
        assert agent.apply(line) == [event]
        assert agent.snapshot.error == event.error
