"""``teamdeck run GOAL --headless`` against the conformance server, configured only through the
environment, as a person runs it: the lead that answers itself, ``--json``'s report, the
credentials never reaching a Bash command (not even through the parent's
``/proc/<pid>/environ``) nor any file, ``ANTHROPIC_AUTH_TOKEN`` alone, the offline model named
in the output, and SIGINT stopping the team cleanly.

A separate process where the process is what is checked (the entry point's exit codes, what a
command can read of its parent, SIGINT); the entry function in this process (:func:`run_here`,
the same environment) where only the output is: each process imports the model SDK, two
seconds of CPU."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from tests.conformance.conftest import FAKE_KEY, blocks
from tests.conformance.server import Fail, MessagesServer, Text, Thinking, Turn, call, say
from tests.timing import scaled

ROOT = Path(__file__).resolve().parents[2]
RUN_LIMIT = 60


def child_env(api: MessagesServer | None, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "TEAMDECK_")) and "PROXY" not in k.upper()
    }
    env.update(PYTHONPATH=str(ROOT), NO_PROXY="127.0.0.1", TEAMDECK_OFFLINE_PACE="0")
    if api is not None:
        env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=FAKE_KEY)
    env.update(extra)
    return env


def command(home: Path, goal: str, *flags: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "app.cli.main",
        "--home",
        str(home),
        "run",
        goal,
        "--headless",
        *flags,
    ]


def run(home: Path, project: Path, env: dict[str, str], goal: str, *flags: str) -> Any:
    """``teamdeck run GOAL --headless FLAGS`` as a separate process, in ``project``."""
    return subprocess.run(
        command(home, goal, *flags),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT,
        check=False,
    )


def run_here(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    home: Path,
    project: Path,
    env: dict[str, str],
    goal: str,
    *flags: str,
) -> Any:
    """What :func:`run` does, through ``teamdeck``'s entry function in this process: its
    environment made ``env`` for the call, in ``project``. The credentials the command holds
    stay the test's (``hold_credentials`` keeps them process-wide, and would mark the test's
    process undumpable): that hold itself is checked in a separate process,
    :func:`test_the_key_never_reaches_a_command_nor_a_file`."""
    from app.cli.main import main
    from app.runtime.model import credentials

    before = dict(os.environ)  # as it was, whatever the command sets (e.g. the offline pace)
    try:
        with monkeypatch.context() as patch:
            for name in set(os.environ) - set(env):
                patch.delenv(name)
            for name, value in env.items():
                patch.setenv(name, value)
            patch.chdir(project)
            patch.setattr(credentials, "_held", {})
            patch.setattr(credentials, "scrub_initial_environ", lambda name: False)
            patch.setattr(credentials, "refuse_same_user_readers", lambda: False)
            capsys.readouterr()
            code = main(command(home, goal, *flags)[3:])
            out, err = capsys.readouterr()
    finally:
        if os.environ != before:
            os.environ.clear()
            os.environ.update(before)
    return subprocess.CompletedProcess(command(home, goal, *flags), code, out, err)


def test_the_lead_answering_itself_ends_the_run_with_its_answer(
    api: MessagesServer, home: Home, project: Path
) -> None:
    api.script("team-lead", [Turn([Thinking("Easy."), Text("2 + 2 = 4.")])])
    done = run(home.root, project, child_env(api), "What is 2 + 2?")
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0].startswith("teamdeck: Claude")
    assert lines[-1] == "2 + 2 = 4."


def test_json_output_carries_the_lead_report(
    api: MessagesServer,
    home: Home,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    api.script("team-lead", [say("The answer is 4.")])
    env = child_env(api)
    done = run_here(monkeypatch, capsys, home.root, project, env, "What is 2 + 2?", "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "start" and events[0]["offline"] is False
    report = [e for e in events if e["event"] == "report"]
    assert report == [{"event": "report", "agent": "team-lead", "text": "The answer is 4."}]
    assert events[-1] == {"event": "done", "code": 0, "reason": "the lead answered without a team"}


def test_the_key_never_reaches_a_command_nor_a_file(
    api: MessagesServer, home: Home, project: Path
) -> None:
    api.script(
        "team-lead",
        [
            call("TeamCreate", {"team_name": "keys"}),
            call(
                "Task",
                {"name": "prober", "prompt": "Look around.", "mode": "bypassPermissions"},
            ),
            say("Waiting for the prober."),
        ],
        then="Noted.",
    )
    api.script(
        "prober",
        [
            call("Bash", {"command": "env"}),
            call("Bash", {"command": "cat /proc/$PPID/environ"}),
            call("Bash", {"command": "cat /proc/self/environ"}),
            say("Looked."),
        ],
        then="Done.",
    )
    # bypassPermissions for the prober needs the person's flag (seed 000: "requires flag")
    run = Headless(
        home.root,
        project,
        child_env(api),
        "Show your environment",
        "--dangerously-skip-permissions",
    )
    until(lambda: len(api.requests_of("prober")) == 4, "the prober's last request")
    code, err = run.interrupt()
    assert code == 130, err
    last = api.requests_of("prober")[3].body
    results = blocks(last, "tool_result")
    assert len(results) == 3 and not any(b["is_error"] for b in results), results
    env_out, parent_env, own_env = (str(b["content"]) for b in results)
    # the commands did see an environment (the sandbox's allowlist: no ANTHROPIC_* at all),
    # their parent's start-up environment included...
    assert "PATH=" in env_out and "PATH=" in parent_env
    assert "CLAUDE_CODE_AGENT_NAME=prober" in env_out
    assert "ANTHROPIC_BASE_URL=" not in env_out
    # ...but never the key
    for output in (env_out, parent_env, own_env):
        assert FAKE_KEY not in output and "sk-ant-" not in output
    for path in home.root.rglob("*"):
        if path.is_file():
            assert FAKE_KEY not in path.read_text(errors="replace"), path
    assert FAKE_KEY not in err


def test_an_auth_token_alone_uses_the_real_api(
    api: MessagesServer,
    home: Home,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    api.script("team-lead", [say("Hello with a token.")])
    env = child_env(api)
    del env["ANTHROPIC_API_KEY"]
    env["ANTHROPIC_AUTH_TOKEN"] = FAKE_KEY
    done = run_here(monkeypatch, capsys, home.root, project, env, "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "Hello with a token."
    [request] = api.requests_of("team-lead")
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"


class Headless:
    """A headless run in the background, its stdout lines collected by a reader thread."""

    def __init__(
        self, home: Path, project: Path, env: dict[str, str], goal: str, *flags: str
    ) -> None:
        self.proc = subprocess.Popen(
            command(home, goal, *flags),
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, wanted: str) -> str:
        deadline = time.monotonic() + scaled(RUN_LIMIT)
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if wanted in line:
                return line
        self.proc.kill()
        raise AssertionError(f"never printed {wanted!r}: {self.seen}")

    def interrupt(self) -> tuple[int, str]:
        """SIGINT; the exit code and stderr once it has exited."""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=RUN_LIMIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        assert self.proc.stderr is not None
        return self.proc.returncode, self.proc.stderr.read()


def until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + scaled(RUN_LIMIT)
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_without_credentials_the_output_says_offline_model(home: Home, project: Path) -> None:
    run = Headless(home.root, project, child_env(None), "Summarise the notes")
    first = run.wait_for("teamdeck:")
    assert "offline model" in first and run.seen == [first]
    code, err = run.interrupt()
    assert code == 130 and err.count("\n") == 1 and err.startswith("teamdeck: interrupted")


def test_sigint_stops_the_team_and_gives_its_tasks_back(
    api: MessagesServer, home: Home, project: Path
) -> None:
    api.script(
        "team-lead",
        [
            call("TeamCreate", {"team_name": "sig"}),
            call("TaskCreate", {"subject": "Long job", "description": "Take your time"}),
            call("Task", {"name": "worker", "prompt": "Do the long job."}),
            say("Waiting for the worker."),
        ],
        then="Noted.",
    )
    # the worker claims the task, then its model goes silent (a stalled stream)
    claim = call("TaskUpdate", {"taskId": "1", "status": "in_progress", "owner": "worker"})
    api.script("worker", [claim, say("...", stall_after=2)])
    env = child_env(api, TEAMDECK_READ_TIMEOUT="30")
    run = Headless(home.root, project, env, "Do the long job")
    until(lambda: len(api.requests_of("worker")) == 2, "the worker's stalled response")
    code, err = run.interrupt()
    assert code == 130, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("teamdeck: interrupted: ") and "team sig kept" in err
    task = home.tasks("sig").get("1")
    assert task is not None and task.status == "pending" and not task.owner
    config = home.teams.get("sig")
    assert config is not None and "worker" not in [m.name for m in config.members]


@pytest.mark.parametrize(
    ("steps", "key", "line"),
    [
        pytest.param(  # a separate process: the entry point's exit code and stderr
            [], "sk-ant-wrong", "teamdeck: error: API error 401: invalid x-api-key", id="401"
        ),
        pytest.param(
            [Fail(500, "api_error", "Internal server error")] * 3,
            FAKE_KEY,
            "teamdeck: error: API error 500: Internal server error",
            id="500-persisting",
        ),
        pytest.param(
            [say("Sure", stop_reason="refusal", stop_details={"type": "refusal"})],
            FAKE_KEY,
            "teamdeck: error: the model refused: no explanation given",
            id="refusal",
        ),
    ],
)
def test_a_failed_run_is_one_line_on_stderr(
    api: MessagesServer,
    home: Home,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    steps: list[Any],
    key: str,
    line: str,
) -> None:
    api.script("team-lead", steps)
    env = child_env(api, ANTHROPIC_API_KEY=key)
    if request.node.callspec.id == "401":
        done = run(home.root, project, env, "hello")
    else:
        done = run_here(monkeypatch, capsys, home.root, project, env, "hello")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(line), done.stderr
    assert "Traceback" not in done.stdout + done.stderr
