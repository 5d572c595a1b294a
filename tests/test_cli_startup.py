"""What ``teamdeck`` loads to start: each command imports what it needs, the model SDK only
where the model is called, and registering one family of commands changes no output.

Checked on ``sys.modules`` of fresh processes, never on timings (``bench/startup.py`` has the
figures).
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli import main as cli
from app.dashboard import first_frame

HEAVY = ("anthropic", "httpx2", "textual", "sqlite3", "pydantic")

PROBE = """
import contextlib, io, json, sys
from app.cli.main import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "loaded": [m for m in %r if m in sys.modules]}))
"""


def loaded_by(home: Path, *argv: str) -> tuple[int, list[str]]:
    """The exit code of ``teamdeck ARGV`` run in a fresh process, and which of HEAVY it loaded."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", PROBE % (HEAVY,), "--home", str(home), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    return result["code"], result["loaded"]


@pytest.fixture
def home_dir(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    assert cli.main(["--home", str(home), "team", "create", "alpha"]) == 0
    return home


def test_help_loads_no_model_sdk_textual_sqlite_or_models(home_dir: Path) -> None:
    assert loaded_by(home_dir, "--help") == (0, [])
    assert loaded_by(home_dir, "task", "update", "--help") == (0, [])


@pytest.mark.parametrize(
    ("argv", "allowed"),
    [
        (("team", "list"), {"pydantic"}),
        (("task", "list", "--team", "alpha"), {"pydantic"}),
        (("history",), {"pydantic", "sqlite3"}),
        (("approvals",), {"pydantic"}),
        (("send", "--team", "alpha", "--to", "team-lead", "done"), {"pydantic"}),
        (("inbox", "--team", "alpha", "--agent", "team-lead"), {"pydantic"}),
        (("ps",), {"pydantic"}),
        (("permissions", "check", "--tool", "Bash", "--input", "{}"), {"pydantic"}),
    ],
)
def test_commands_that_do_not_call_the_model_load_no_model_sdk(
    home_dir: Path, argv: tuple[str, ...], allowed: set[str]
) -> None:
    code, loaded = loaded_by(home_dir, *argv)
    assert code == 0
    assert set(loaded) <= allowed, f"teamdeck {' '.join(argv)} loaded {loaded}"


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_families_list_the_commands_they_register_in_help_order() -> None:
    listed = [name for _, _, names in cli.FAMILIES for name in names]
    assert list(_commands(cli.build_parser())) == listed


def _helps(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, str]:
    """Every (sub)command's help text, by its command line."""
    found: dict[str, str] = {}
    for name, sub in _commands(parser).items():
        found[f"{prefix}{name}"] = sub.format_help()
        found.update(_helps(sub, f"{prefix}{name} "))
    return found


def test_one_family_registered_gives_the_same_parsers_as_all() -> None:
    everything = _helps(cli.build_parser())
    for _, _, names in cli.FAMILIES:
        for name in names:
            alone = _helps(cli.build_parser([name, "--help"]))
            assert {k: v for k, v in everything.items() if k.split()[0] == name} == {
                k: v for k, v in alone.items() if k.split()[0] == name
            }
            assert set(_commands(cli.build_parser(["--claude", name]))) <= {
                n for _, _, ns in cli.FAMILIES if name in ns for n in ns
            }


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        (["team", "list"], "team"),
        (["--home", "h", "task", "list"], "task"),
        (["--home=h", "--claude", "history"], "history"),
        (["--team", "t", "tui"], "tui"),
        (["--home", "team", "list"], "list"),
        ([], None),
        (["--help"], None),
        (["--version"], None),
        (["--hom", "h", "team"], None),  # an abbreviation: everything is registered
        (["bogus"], None),
    ],
)
def test_command_word(argv: list[str], word: str | None) -> None:
    expected = word if word in {n for _, _, ns in cli.FAMILIES for n in ns} else None
    assert cli.command_word(argv) == expected


def test_choices_copied_for_the_parser_match_their_sources() -> None:
    from app.cli.modes import BACKENDS
    from app.cli.tasks import TASK_STATUSES
    from app.core.models import TASK_STATUSES as CORE_STATUSES
    from app.runtime.runners.modes import BACKENDS as RUNTIME_BACKENDS

    assert TASK_STATUSES == CORE_STATUSES
    assert BACKENDS == RUNTIME_BACKENDS


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_starting_line_on_a_terminal_only_and_erased() -> None:
    screen = Terminal()
    first_frame.announce_start(screen)
    first_frame.announce_start(screen)  # once
    assert screen.getvalue() == first_frame.STARTING
    first_frame.clear_start()
    first_frame.clear_start()  # idempotent
    assert screen.getvalue() == first_frame.STARTING + "\r\x1b[K"
    piped = io.StringIO()
    first_frame.announce_start(piped)
    first_frame.clear_start()
    assert piped.getvalue() == ""


DEFERRED = """
import json, sys
from app.runtime.model.client import is_offline, make_client
client = make_client(deferred=True)
before = [m for m in ("anthropic", "httpx2") if m in sys.modules]
offline = is_offline(client)
messages = client.messages  # the first use builds it
print(json.dumps({"before": before, "offline": offline, "built": "anthropic" in sys.modules,
                  "same": is_offline(client.resolve()) == offline}))
"""


@pytest.mark.parametrize("key", [None, "sk-test"])
def test_deferred_client_builds_at_first_use(key: str | None) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    if key:
        env["ANTHROPIC_API_KEY"] = key
    done = subprocess.run(
        [sys.executable, "-P", "-c", DEFERRED], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "before": [],
        "offline": key is None,
        "built": True,
        "same": True,
    }


DASHBOARD = """
import asyncio, json, sys, tempfile
from pathlib import Path
import app.dashboard.app as dashboard
from app.core import Home
from app.dashboard.launch import build_dashboard

seen = {}

def first_frame():
    seen["at_first_frame"] = [m for m in ("anthropic", "httpx2") if m in sys.modules]

dashboard.report_first_frame = first_frame

async def main():
    app = build_dashboard(Home(Path(tempfile.mkdtemp()) / "home"), history=False)
    async with app.run_test() as pilot:
        for _ in range(600):
            await pilot.pause(0.05)
            if "at_first_frame" in seen and "anthropic" in sys.modules:
                break
        seen["later"] = "anthropic" in sys.modules

asyncio.run(main())
print(json.dumps(seen))
"""


def test_dashboard_first_frame_is_drawn_before_the_model_sdk_loads(tmp_path: Path) -> None:
    import os

    env: dict[str, Any] = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["TEAMDECK_HOOKS"] = "0"
    done = subprocess.run(
        [sys.executable, "-P", "-c", DASHBOARD],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"at_first_frame": [], "later": True}  # loaded by the runtime, afterwards


TEAMMATE = """
import asyncio, json, sys, time
from pathlib import Path
from app.core import Home, TeamMember
from app.runtime.runners.hold import clear_hold, set_hold
from app.runtime.runners.teammate_process import run_agent

home, team = Home(Path(sys.argv[1])), "alpha"
home.teams.create(team)
member = TeamMember(agent_id="worker@alpha", name="worker", prompt="Say hello.", cwd=sys.argv[2])
home.teams.add_member(team, member)
set_hold(home, team, "paused: budget")  # the run's budget spent: it waits before its call
log = home.layout.agent_log_path(team, "worker")
seen = {}

async def until(condition):
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)

async def main():
    agent = asyncio.ensure_future(run_agent(home, team, "worker", offline=True))
    await until(lambda: log.exists() and "paused: budget" in log.read_text())
    seen["held"] = [m for m in ("anthropic", "textual") if m in sys.modules]
    clear_hold(home, team)
    await until(lambda: "anthropic" in sys.modules)
    await until(lambda: '"assistant"' in log.read_text())  # it answered: the client works
    seen["called"] = "anthropic" in sys.modules
    agent.cancel()
    await asyncio.gather(agent, return_exceptions=True)

asyncio.run(main())
print(json.dumps(seen))
"""


def test_a_teammate_process_loads_the_model_sdk_at_its_first_model_call(tmp_path: Path) -> None:
    """A teammate process held before its first model call (the run's budget spent) has not
    imported the SDK (a second of CPU each); its first call imports it, and is answered."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    done = subprocess.run(
        [sys.executable, "-P", "-c", TEAMMATE, str(tmp_path / "home"), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"held": [], "called": True}


def test_a_run_on_this_machine_loads_no_postgresql_driver() -> None:
    """The engine's relay (and psycopg with it) loads only for a run across machines."""
    probe = (
        "import json, sys, app.cli.headless, app.runtime.team.runtime; "
        "print(json.dumps([m for m in ('psycopg', 'app.engine.relay') if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
