"""``teamdeck serve`` in a real browser: Debian's headless Chromium, driven by Selenium through
Debian's chromedriver (nothing downloads a browser), opens the printed URL; the screenshot shows
the dashboard; ``a`` pressed in the browser answers the demo's permission request (the
researcher's inbox gets the answer); a wrong or missing token is refused."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.timing import scaled

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait(condition: Any, within: float, what: str) -> Any:
    deadline = time.monotonic() + scaled(within)
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what}: not in time")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``teamdeck serve demo`` on a free port; its demos make their homes under ``tmp``."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "TEAMDECK_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "app.cli.entry", "serve", "--port", str(free_port()), "demo"]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("teamdeck serve: http://127.0.0.1:"), line + proc.stderr.read()
        yield line.split()[-1], tmp
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def browser() -> Iterator[Any]:
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager never fetches anything
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-dev-shm-usage", "--window-size=1280,800",
    ):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def inbox(tmp: Path, agent: str) -> list[dict[str, Any]]:
    for path in tmp.glob(f"teamdeck-demo-*/teams/*/inboxes/{agent}.json"):
        try:
            return list(json.loads(path.read_text()))
        except (OSError, ValueError):
            return []  # being written: read again on the next round
    return []


def frames(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    found = []
    for message in messages:
        try:
            frame = json.loads(message.get("text", ""))
        except ValueError:
            continue
        if isinstance(frame, dict) and frame.get("type") == kind:
            found.append(frame)
    return found


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_dashboard_in_a_browser_answers_a_request(
    served: tuple[str, Path], browser: Any, tmp_path: Path
) -> None:
    url, tmp = served
    base = url.split("?")[0]
    assert status(base) == 403 and status(f"{base}?token=wrong") == 403
    assert status(f"{base}static/js/textual.js") == 403
    browser.get(f"{base}?token=wrong")
    assert "open the URL printed when it started" in browser.page_source

    browser.get(url)
    asked = wait(
        lambda: frames(inbox(tmp, "team-lead"), "permission_request"), 90, "the permission request"
    )
    time.sleep(scaled(1.0))  # the dashboard draws it
    shot = tmp_path / "dashboard.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 30_000  # a drawn dashboard, not a blank page
    browser.execute_script("document.querySelector('textarea')?.focus()")
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys("a").perform()
    answer = wait(lambda: frames(inbox(tmp, "researcher"), "permission_response"), 30, "the answer")
    assert answer[0]["request_id"] == asked[0]["request_id"]
    assert answer[0].get("subtype") == "success" or answer[0].get("decision") == "approved"
