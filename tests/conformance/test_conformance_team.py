"""A whole team against the conformance server: the lead thinks, creates a team, a task and a
teammate; the teammate thinks, reads a file, runs Bash, completes its task and reports; the
lead asks it to shut down and deletes the team. Every request must pass the reference checks
(the ``api`` fixture fails the test otherwise), and the lead that answers a question itself
ends its turn with the answer in its transcript."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from app.runtime.team.runtime import TeamRuntime
from tests.conformance.checks import authenticated
from tests.conformance.conftest import FAKE_KEY, blocks, errors_of
from tests.conformance.server import (
    MessagesServer,
    Text,
    Thinking,
    ToolCall,
    Turn,
    call,
    last_user_text,
    say,
)
from tests.runtime.conftest import Observer, until

TEAM = "conf"
ENV_PROBE = (
    'echo "name=$CLAUDE_CODE_AGENT_NAME team=$CLAUDE_CODE_TEAM_NAME id=$CLAUDE_CODE_AGENT_ID '
    'type=$CLAUDE_CODE_AGENT_TYPE plan=$CLAUDE_CODE_PLAN_MODE_REQUIRED"; env | grep -c sk-ant-; '
    # the agent's own process (the teammate process in process mode): its starting environment
    "tr '\\0' '\\n' < /proc/$PPID/environ | grep -c sk-ant-"
)


def lead_brain() -> Any:
    """The lead after spawning: shut the reader down once it reports, then delete the team."""
    state = {"asked": False, "deleted": False}

    def respond(body: dict[str, Any]) -> Turn:
        said = last_user_text(body)
        if state["deleted"]:
            return say("The reader found it: the answer is 42.")
        asked = _request_id(said, "permission_request")
        if asked:
            return call(
                "SendMessage",
                {
                    "type": "permission_response",
                    "request_id": asked,
                    "approve": True,
                    "recipient": "reader",
                },
            )
        if "shutdown_approved" in said:
            state["deleted"] = True
            return call("TeamDelete", {})
        if "The answer is 42" in said and not state["asked"]:
            state["asked"] = True
            return call(
                "SendMessage",
                {"type": "shutdown_request", "recipient": "reader", "content": "Thanks."},
            )
        return say("Waiting for the reader.")

    return respond


def _request_id(text: str, frame: str) -> str | None:
    if f'"type":"{frame}"' not in text.replace(" ", ""):
        return None
    match = re.search(r'"(?:requestId|request_id)":\s*"([^"]+)"', text)
    return match.group(1) if match else None


def reader_brain(body: dict[str, Any]) -> Turn:
    request_id = _request_id(last_user_text(body), "shutdown_request")
    if request_id:
        return call(
            "SendMessage",
            {"type": "shutdown_response", "request_id": request_id, "approve": True},
        )
    return say("Done.")


@pytest.mark.parametrize("team_runtime", ["in-process", "process"], indirect=True)
async def test_a_team_runs_against_the_reference_server(
    api: MessagesServer,
    team_runtime: tuple[TeamRuntime, Observer],
    home: Home,
    project: Path,
) -> None:
    runtime, observer = team_runtime
    notes = str(project / "notes.md")
    api.script(
        "team-lead",
        [
            Turn(
                [
                    Thinking("A team of one reader is enough."),
                    Text("Setting up a team."),
                    ToolCall("TeamCreate", {"team_name": TEAM, "description": "Read notes"}),
                ]
            ),
            call("TaskCreate", {"subject": "Read the notes", "description": f"Read {notes}"}),
            call("Task", {"name": "reader", "prompt": "Read the notes and report the answer."}),
        ],
        then=lead_brain(),
    )
    api.script(
        "reader",
        [
            Turn([Thinking("I will read the file first."), ToolCall("Read", {"file_path": notes})]),
            call("Bash", {"command": ENV_PROBE, "description": "probe env"}),
            call("TaskUpdate", {"taskId": "1", "status": "completed"}),
            call(
                "SendMessage",
                {
                    "type": "message",
                    "recipient": "team-lead",
                    "content": "The answer is 42.",
                    "summary": "the answer",
                },
            ),
            say("Reported."),
        ],
        then=reader_brain,
    )

    runtime.submit("What is the answer in notes.md?")
    try:
        await until(
            lambda: any("answer is 42" in o.text for o in observer.outcomes), "the lead's answer"
        )
    finally:  # shown when the test fails
        for r in api.requests:
            print(r.agent, r.answer, last_user_text(r.body)[:200].replace("\n", " "))

    assert not errors_of(runtime, "team-lead")
    assert home.teams.get(TEAM) is None  # deleted at the end
    reader = [r.body for r in api.requests_of("reader")]
    # the file's content and the Bash output went back as tool results
    results = [json.dumps(b) for body in reader for b in blocks(body, "tool_result")]
    assert any("The answer is 42." in r for r in results)
    probe = next(r for r in results if "name=reader" in r)
    assert f"team={TEAM} id=reader@{TEAM} type=general-purpose plan=false" in probe
    assert "\\n0\\n0" in probe  # the key reached neither the command nor its agent's process
    # the thinking block came back intact with its tool call
    assert any(b.get("type") == "thinking" for b in blocks(reader[1], "thinking"))
    # every request authenticated with the key from the environment
    assert all(authenticated(r.headers, FAKE_KEY) for r in api.requests)
    lead = runtime.snapshot()[0]
    assert lead.model_calls == len(api.requests_of("team-lead"))
    assert lead.input_tokens > 0 and lead.output_tokens > 0


async def test_the_lead_answers_a_small_goal_itself(
    api: MessagesServer, team_runtime: tuple[TeamRuntime, Observer]
) -> None:
    runtime, observer = team_runtime
    api.script("team-lead", [Turn([Thinking("Simple."), Text("  "), Text("4.")])])
    runtime.submit("What is 2 + 2?")
    await until(lambda: observer.outcomes, "the lead's turn")
    [outcome] = observer.outcomes
    assert (outcome.status, outcome.text) == ("end_turn", "4.")
    assert [e.text for e in runtime.transcript("team-lead") if e.kind == "assistant"] == ["4."]
    # the blank block was not kept: a follow-up request passes the reference checks
    api.script("team-lead", [say("Yes.")])
    runtime.submit("Sure?")
    await until(lambda: len(observer.outcomes) == 2, "the follow-up")
    assert observer.outcomes[1].text == "Yes."
    stored = runtime.lead_session.messages[1]["content"]
    assert [b["type"] for b in stored] == ["thinking", "text"]
