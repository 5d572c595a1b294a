"""The offline lead's first look at the project: is there anything to work on?

Before it makes a team, the lead Globs the files the goal is about, as a person would glance at
the folder first. A team of three to read an empty folder only costs model calls and leaves
the person waiting for a report about nothing; with no matching file the lead makes no team and
says so in its report, with what to do. A goal that says the team's size (``offline.sizing``:
a throughput run) and a lead without Glob (``delegate`` mode) skip the look and make the team.
"""

from __future__ import annotations

from app.runtime.offline.history import Call
from app.runtime.offline.plans import ResponsePlan, reply, text, tool_use


def survey(pattern: str) -> ResponsePlan:
    """The lead's first response: a look at the files the goal is about."""
    return reply(
        text(f"Looking at the files first: {pattern}"),
        tool_use("Glob", {"pattern": pattern}),
    )


def found_nothing(call: Call) -> bool:
    """The look answered and matched no file (a refused or failed Glob says nothing: the lead
    then makes its team as it would have)."""
    return call.ok and not any(
        line.strip().startswith("/") for line in (call.result or "").splitlines()
    )


def nothing_to_do(goal: str, pattern: str) -> str:
    """The lead's report when the project has nothing the goal could be about."""
    return (
        f"Final report:\n- There is nothing to work on: no file in the project matches "
        f"{pattern}, so I made no team (teammates would have had nothing to read).\n\n"
        f"Add the files (or name a folder that has them) and send the goal again. "
        f"The goal was: {goal}"
    )
