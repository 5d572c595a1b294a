"""UI test setup: times shown in UTC, a deterministic team, a FakeRuntime and the app."""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_textual_snapshot import node_to_report_path

from app.dashboard.app import TeamDeckApp
from tests.ui.data import make_app, make_runtime
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.snapshot_text import explain

os.environ["TZ"] = "UTC"  # feed timestamps are drawn in local time
time.tzset()


@pytest.fixture(autouse=True)
def _own_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """teamdeck's own home under ``tmp_path``: a viewer records its runs there. The hook
    processes a test starts wait up to 10 s for the dashboard's acknowledgement (1 s in use,
    ``hook_client.ACK_WAIT``): a Pilot app on a loaded machine is slower to answer than a
    person's dashboard, and a request let go would close its dialog under the test. The
    let-go itself is tested with the real Claude Code (``tests/claude_code/test_stall.py``)."""
    monkeypatch.setenv("TEAMDECK_HOME", str(tmp_path / "teamdeck-home"))
    monkeypatch.setenv("TEAMDECK_HOOK_ACK_WAIT", "10")


@pytest.fixture
def runtime() -> FakeRuntime:
    return make_runtime()


@pytest.fixture
def deck(tmp_path: Path, runtime: FakeRuntime) -> TeamDeckApp:
    """The dashboard over the test team, steered through ``runtime``."""
    return make_app(tmp_path, runtime)


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool], request: pytest.FixtureRequest) -> Any:
    """The plugin's ``snap_compare``, whose mismatch says what differs (the rows of text
    expected and drawn) instead of a bare ``False``: a CI log shows no HTML report."""

    def compare(*args: Any, **kwargs: Any) -> bool:
        if snap_compare(*args, **kwargs):
            return True
        data = pickle.loads(node_to_report_path(request.node).read_bytes())
        expected, actual = data[1], data[2]  # the plugin's report record
        raise AssertionError(explain(expected, actual))

    return compare
