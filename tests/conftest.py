"""The order the suite runs in: the tests that start real processes spread from the start.

``make test`` spreads the tests over xdist workers (``--dist load``), which hand them out in
collection order. A test that starts teammate processes, a tmux server or the real Claude Code
takes seconds where most take milliseconds; collected where they fall (``tests/ui`` last),
they made a tail in which a worker or two ran them one after the other while the others had
nothing left to do. Spread from the start, mixed with the others (``REST_BETWEEN``), they run
on every worker while the short tests fill the gaps, and short tests end the run. Only the
order changes: every test runs. A module missing from :data:`SLOW_FIRST` only runs in its
place; the list is a matter of speed, never of correctness.

For the slow tests to spread, the workers take them one at a time: xdist's load scheduling
otherwise hands each worker a quarter of its share at once (the first ~90 tests of 1,400 to
worker 0: all the slow ones), so ``--maxschedchunk`` is 1 unless the command line sets it.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests judge their inputs, never the machine's speed: no deadline per example and no
# "input generation is slow" failure when the suite's other workers keep the cores busy.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

# Bytecode caches (``__pycache__``, gitignored) even where ``PYTHONDONTWRITEBYTECODE`` is set,
# as it is in some containers and CI images. Without them every xdist worker parses, rewrites
# (pytest's assertions) and compiles all ~250 test modules again: 16 s of CPU per worker to
# collect the suite rather than 7. The ``teamdeck`` processes the tests start (the CLI, hooks,
# teammate processes) inherit the environment: without it each compiled its changed modules
# again. Caches only change how fast modules load, never what a test runs.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

#: ``--cpu-report PREFIX``: what each test costs in CPU (:mod:`tests.cpu_report`).
pytest_plugins = ["tests.cpu_report"]

#: Modules (paths from the repository, or endings of them) whose tests start real processes,
#: roughly longest first.
SLOW_FIRST = (
    "tests/security/test_lead_flood.py",  # one test, the longest: a lead under a flood of mail
    "tests/claude_code/",  # the real Claude Code binary
    "tests/ui/test_modes_tmux.py",
    "tests/engine/",  # a throwaway PostgreSQL, two homes, kill -9 rounds
    "tests/ui/test_serve_browser.py",  # a headless browser
    "tests/ui/test_goals_tmux.py",
    "tests/runtime/test_teammate_modes.py",
    "tests/security/test_orphans.py",
    "tests/ui/test_quit_process_teammates.py",
    "tests/security/test_sandboxed_agents.py",
    "tests/security/test_no_door.py",
    "tests/security/test_signed_answers.py",  # a tmux team among them
    "_tmux.py",  # a dashboard in a real terminal
    "tests/archive/test_archive_safety.py",
    "tests/archive/test_archive_dashboard.py",
    "tests/security/test_key_handoff.py",
    "tests/runtime/test_forkserver.py",
    "tests/conformance/test_conformance_headless.py",
    "tests/ui/test_ui_claude_steering.py",
    "tests/ui/test_ui_permission_timeout.py",  # a real runtime under the dashboard
    "tests/security/test_board_memory.py",  # 5,000 tasks
    "tests/archive/test_archive_two_goals.py",
    "tests/test_cli_startup.py",  # fresh interpreters
    # one dashboard each for many named steps: seconds a test, not tenths
    "tests/ui/test_ui_keys.py",
    "tests/ui/test_ui_transcript.py",
    "tests/ui/test_ui_readable.py",
    "tests/ui/test_ui_focus.py",
)


#: How many of the other tests run between two tests of :data:`SLOW_FIRST` modules.
REST_BETWEEN = 4


#: trio (imported late by a plugin) hands Hypothesis a PRNG it may collect; Hypothesis warns
#: at that import, outside pytest's capture, and the line landed on the suite's summary line.
warnings.filterwarnings("ignore", message="It looks like `register_random` was passed")


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "maxschedchunk", 0) is None:  # xdist installed, not set
        config.option.maxschedchunk = 1


def _rank(nodeid: str) -> int:
    path = nodeid.split("::", 1)[0]
    for rank, pattern in enumerate(SLOW_FIRST):
        if path.startswith(pattern) or path.endswith(pattern):
            return rank
    return len(SLOW_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The listed modules' tests taken in turns: the first test of each listed module in the
    list's order, then the second of each, and so on; in turns, the tests running together
    are of different kinds (a Claude Code session, a tmux dashboard, a PostgreSQL engine, a
    headless run ...), where one module's tests taken at once had every worker wait on the
    same kind of process. Between two of them come :data:`REST_BETWEEN` of the other tests,
    in collection order, and what is left of those ends the run (short tests: no tail).

    Mixed, not first: the listed tests mostly wait (processes starting, a team's turns, a
    terminal polled: a fifth to a third of a core each), the others mostly compute (a Pilot
    dashboard: most of a core). All listed first, the workers spent the first 60% of a run
    waiting together with a core idle, then computed together; mixed, the cores are kept
    busy throughout. Deterministic (each worker must see the same order)."""
    groups: dict[int, list[pytest.Item]] = {}
    for item in items:
        groups.setdefault(_rank(item.nodeid), []).append(item)
    rest = groups.pop(len(SLOW_FIRST), [])
    ordered = sorted(groups.items(), key=lambda group: group[0])
    turns = max((len(tests) for _, tests in ordered), default=0)
    slow = [tests[k] for k in range(turns) for _, tests in ordered if k < len(tests)]
    mixed: list[pytest.Item] = []
    for k, item in enumerate(slow):
        mixed.append(item)
        mixed.extend(rest[k * REST_BETWEEN : (k + 1) * REST_BETWEEN])
    items[:] = mixed + rest[len(slow) * REST_BETWEEN :]


@pytest.fixture(autouse=True)
def _own_teamdeck_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every test gets its own ``$TEAMDECK_HOME`` (not created: the first write makes it), so
    none writes into the real ``~/.teamdeck`` -- e.g. the note of an answer given in a Claude
    Code home (``app.core.answer_credits``). A folder's conftest may name another."""
    monkeypatch.setenv("TEAMDECK_HOME", str(tmp_path / "teamdeck-home"))


@pytest.fixture(autouse=True)
def _no_key_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pilot presses keys microseconds apart, far inside the 0.3 s during which a
    single-letter key is ignored after a view changes (``DeckView.KEY_GUARD``): off here,
    except in the tests of the guard itself (they set it back); tmux tests run with it. For
    every Pilot test, not only tests/ui's: a test elsewhere that pressed esc then a letter
    lost the letter to the guard when it ran fast, and passed when it ran slow."""
    from app.dashboard.screens.deck_view import DeckView

    monkeypatch.setattr(DeckView, "KEY_GUARD", 0.0)
