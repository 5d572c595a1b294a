"""Two goals in a row on one runtime (the dashboard's case): the second goal's team starts
with no teammates of the first, and each teammate of the second team is listed once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.core import Home
from app.runtime.events import TeamLifecycle
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Observer, until

FIRST = "Describe the python files in this project"
SECOND = "Describe the markdown docs in this project"


async def finished(observer: Observer, count: int) -> None:
    await until(
        lambda: sum("Final report" in o.text for o in observer.outcomes) >= count,
        f"final report #{count}",
    )


async def test_a_new_team_starts_without_the_previous_teammates(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    (project / "guide.md").write_text("# Guide\n\nHow to use it.\n")
    runtime = make_runtime(decider="lead")
    observer = Observer(runtime)
    at_creation: dict[str, list[str]] = {}

    def on_event(event: object) -> None:
        if isinstance(event, TeamLifecycle) and event.event == "created":
            at_creation[event.team] = [s.name for s in runtime.snapshot()]

    runtime.subscribe(on_event)
    await runtime.start()
    runtime.submit(FIRST)
    await finished(observer, 1)
    first_team = [e.team for e in observer.of(TeamLifecycle) if e.event == "created"][0]
    assert [(s.name, s.status) for s in runtime.snapshot()[1:]] == [
        ("researcher", "completed"),
        ("analyst", "completed"),
        ("writer", "completed"),
    ]  # the finished team's panels stay until a new team starts

    runtime.submit(SECOND)
    await finished(observer, 2)
    second_team = [e.team for e in observer.of(TeamLifecycle) if e.event == "created"][1]
    assert (first_team, second_team) == ("describe-python-files", "describe-markdown-docs")
    assert at_creation[second_team] == ["team-lead"]  # nobody of the first team
    names = [s.name for s in runtime.snapshot()]
    assert names == ["team-lead", "researcher", "analyst", "writer"]  # each once
    # The second team's teammates, with the second run's work in their transcripts.
    researcher = " ".join(e.text for e in runtime.transcript("researcher"))
    assert "guide.md" in researcher
    assert set(runtime.departed) == {"researcher", "analyst", "writer"}
