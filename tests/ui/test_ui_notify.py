"""Notifications: a request left unanswered for ``notify.after`` seconds sends exactly one
notification through apprise to a local HTTP receiver (an apprise ``json://`` URL), with the
request in words and the command that answers it; the feed says so; a failing URL is one feed
line, not a crash; no URL sends nothing (the terminal is still rung)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from app.dashboard.app import TeamDeckApp
from app.dashboard.notify_watch import NotifyWatch
from app.dashboard.streams import RunEnded
from app.runtime.review.notify import NotifySettings, notify_settings
from tests.ui.data import TEAM, agents, approvals, make_app, transcripts
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import wait_for
from widgets.message_feed import MessageFeed

PERM = "perm-1767225650000@researcher"


class Receiver:
    """An HTTP server on 127.0.0.1 that keeps every JSON body POSTed to it."""

    def __init__(self) -> None:
        got: list[dict[str, Any]] = []
        self.got = got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", 0))
                got.append(json.loads(self.rfile.read(size)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"json://127.0.0.1:{self.server.server_port}/teamdeck"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.server.shutdown()


def one_request_app(root: Path, urls: tuple[str, ...]) -> tuple[TeamDeckApp, NotifyWatch]:
    """The test team with one pending request (researcher's Bash, waiting 75 s)."""
    runtime = FakeRuntime(
        TEAM, agents(), [a for a in approvals() if a.request_id == PERM], transcripts()
    )
    app = make_app(root, runtime)
    watch = NotifyWatch(NotifySettings(urls, after=20.0))
    app.notify_watch = watch  # type: ignore[attr-defined]  # as attach_notifications does
    return app, watch


def feed_lines(app: TeamDeckApp) -> list[str]:
    return app.leader.query_one(MessageFeed).lines()


async def test_a_waiting_request_sends_one_notification(tmp_path: Path, receiver: Receiver) -> None:
    app, watch = one_request_app(tmp_path, (receiver.url,))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(receiver.got) == 1, within=15)
        [sent] = receiver.got
        assert sent["title"] == "teamdeck: researcher waits for you"
        assert "researcher: Bash(git status --short) has waited 75s for you" in sent["message"]
        assert f"teamdeck --home {tmp_path} approve {PERM}" in sent["message"]
        await wait_for(pilot, lambda: any("notified (1 URL)" in x for x in feed_lines(app)))
        for _ in range(3):  # three more of the watch's one-second checks
            watch.check()
            await pilot.pause(0.4)
        assert len(receiver.got) == 1 and watch.rang == 1
        line = next(x for x in feed_lines(app) if "notified" in x)
        assert line == "teamdeck notified (1 URL): teamdeck: researcher waits for you"


async def test_a_failing_url_is_one_feed_line(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    app, _ = one_request_app(tmp_path, (f"json://127.0.0.1:{closed}/x", "nonsense://here"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: any("notification failed" in x for x in feed_lines(app)), 15)
        [line] = [x for x in feed_lines(app) if "notification failed" in x]
        assert line.startswith("teamdeck notification failed: A Connection error occurred")
        assert line.endswith("; apprise does not know the URL nonsense://…")  # never the rest
        assert app.is_running


async def test_no_url_sends_nothing_but_rings(tmp_path: Path) -> None:
    app, watch = one_request_app(tmp_path, ())
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: watch.rang == 1, within=5)
        app.streamed.publish(RunEnded("the goal is done", ok=True))
        await wait_for(pilot, lambda: watch.rang == 2)
        assert watch.notifier._thread is None  # no worker: nothing leaves the machine
        assert not any("notif" in x for x in feed_lines(app))


def test_settings_and_flags_merge() -> None:
    files = [{"notify": {"urls": ["ntfy://a"], "after": 5}}, {"notify": {"after": 30}}, {}]
    settings, warnings = notify_settings(files, ["json://localhost/x", "ntfy://a"])
    assert settings == NotifySettings(("ntfy://a", "json://localhost/x"), 30.0, True)
    assert warnings == []
    settings, warnings = notify_settings([{"notify": {"urls": "x", "after": -1, "bell": 1}}])
    assert settings == NotifySettings(("x",), 20.0, True)
    assert len(warnings) == 2 and "notify.after" in warnings[0] and "notify.bell" in warnings[1]


class Budget:
    limit = 5.0

    def describe(self) -> str:
        return "$4.10 of $5.00"


async def test_the_budget_passing_80_percent_is_told_once(
    tmp_path: Path, receiver: Receiver
) -> None:
    app, watch = one_request_app(tmp_path, (receiver.url,))
    watch.settings = NotifySettings((receiver.url,), after=3600.0)  # the request stays quiet
    watch.notifier.settings = watch.settings
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for _ in range(2):  # the budget tells its listeners "warning" once; told twice here
            watch._budget(Budget(), "warning")
        await wait_for(pilot, lambda: len(receiver.got) == 1, within=15)
        await pilot.pause(0.5)
        [sent] = receiver.got
        assert sent["title"] == "teamdeck: the budget passed 80%"
        assert "Spent $4.10 of $5.00" in sent["message"]
        assert len(receiver.got) == 1 and watch.rang == 1
