"""Issue 31's "done when", tried as a new user would, on one box: a first home runs
``teamdeck server init && teamdeck server start``, ``teamdeck invite`` and ``teamdeck run
--engine URL --spread GOAL`` (its dashboard, driven by Pilot); a second home, in its own
network namespace, runs ``teamdeck join URL`` over a virtual link (the invitation carries the
server's certificate, the joiner pins it, its link is encrypted). The lead places a teammate on
the joined machine; the first home's dashboard shows its panel and transcript, and its
permission request is answered there by ``a``; PostgreSQL is killed (``kill -9``) mid-run and
restarted; the run ends with every task done once and every message delivered once; and the
joined machine's role cannot read another inbox, forge a sender, claim for another or answer a
request. Needs root and ``ip`` (CI has both); skipped otherwise, with the reason."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from app.cli.main import main
from app.cli.server import across_for
from app.core import authority
from app.core.home import Home
from app.core.models import InboxMessage
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import build_dashboard
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.server import LocalServer
from tests.timing import scaled
from tests.ui.helpers import screen_text

ROOT = Path(__file__).resolve().parents[2]
GOAL = "Summarize what the Python files in this folder do and count their lines"
GUARD = 180.0  # a hang guard on a loaded machine, not a speed requirement
ATTACKS = """
import sys
import psycopg
url = open(sys.argv[1]).read().strip()
said = []
def attempt(sql, params=()):
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute(sql, params)
            said.append(f"rows {cur.rowcount}")
    except psycopg.Error as exc:
        said.append(type(exc).__name__)
attempt("SELECT * FROM teamdeck.messages WHERE recipient = 'writer'")
attempt("INSERT INTO teamdeck.messages (team, recipient, uuid, sender, body) VALUES"
        " ('alpha', 'writer', gen_random_uuid(), 'team-lead', '{}')")
attempt("UPDATE teamdeck.tasks SET owner = 'writer' WHERE team = 'alpha'")
attempt("UPDATE teamdeck.requests SET answer = '{}' WHERE team = 'alpha'")
with psycopg.connect(url, autocommit=True) as conn:  # the namespace reaches it over TLS only
    row = conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()
said.append("ssl" if row and row[0] else "plain")
print(" | ".join(said))
"""


def _project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "alpha.py").write_text('"""Alpha: the first module."""\n\n\ndef a():\n    pass\n')
    (root / "beta.py").write_text("# beta helpers\ndef b():\n    pass\n")
    return root


def _folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="teamdeck-done-"))
    folder.chmod(0o711)
    _project(folder / "project")
    _project(folder / "far")
    return folder


def _first_home(first: Path, address: str, capsys: pytest.CaptureFixture[str]) -> str:
    """``server init && server start`` and ``invite``: the join URL."""
    assert main(["--home", str(first), "server", "init", "--listen", address]) == 0
    assert main(["--home", str(first), "server", "start"]) == 0
    assert main(["--home", str(first), "invite", "alpha", "--name", "gpu",
                 "--machine", "gpu-box"]) == 0  # fmt: skip
    return capsys.readouterr().out.strip().splitlines()[-1]


def _join(
    ns: str, second: Path, url: str, folder: Path, env: dict[str, str]
) -> subprocess.Popen[str]:
    """``teamdeck join URL`` in the namespace, once it has redeemed the invitation."""
    joined = subprocess.Popen(
        ["ip", "netns", "exec", ns, sys.executable, "-m", "app.cli.entry", "--home",
         str(second), "join", url, "--folder", str(folder / "far"), "--offline",
         "--no-sandbox"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + scaled(60)
    while not (second / "engine" / "alpha.gpu.url").exists():
        assert joined.poll() is None, joined.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.1)
    return joined


def _attacks(ns: str, kept: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        ["ip", "netns", "exec", ns, sys.executable, "-c", ATTACKS, str(kept)],
        capture_output=True, text=True, env=env, timeout=scaled(60),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [part.strip() for part in done.stdout.split(" | ")]


async def test_a_team_across_two_machines_as_a_new_user_runs_it(
    netns: tuple[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ns, address = netns
    monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    folder = _folder()
    first, second = folder / "first", folder / "second"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TEAMDECK_OFFLINE_PACE": "0"}
    joined: subprocess.Popen[str] | None = None
    try:
        url = _first_home(first, address, capsys)
        joined = _join(ns, second, url, folder, env)
        kept = second / "engine" / "alpha.gpu.url"
        deadline = time.monotonic() + scaled(60)
        project = folder / "project"
        home = Home(first)
        across = across_for(home, None, spread=True)  # run --engine (the home's) --spread
        assert not across.url.startswith("postgresql://teamdeck:")  # the desk, not the admin
        assert "sslrootcert=" in kept.read_text()  # the joiner pinned the server's certificate
        app = build_dashboard(home, goal=GOAL, cwd=project, history=False, across=across)
        server = LocalServer(first / "engine" / "server")
        answered: list[str] = []
        killed = False
        async with app.run_test(size=(120, 40)) as pilot:
            assert isinstance(app, TeamDeckApp)
            runtime = app.runtime
            assert runtime is not None

            def progress() -> bool:
                nonlocal killed
                if not killed and "gpu" in runtime.runners and runtime.transcript("gpu"):
                    server.kill()  # kill -9 mid-run, restarted at once
                    server.start()
                    killed = True
                return runtime.team is None and killed

            while not progress():
                if app.approvals and not app.screen.is_modal:
                    answered.extend(a.agent for a in app.approvals)
                    await pilot.press("a")
                if "gpu" in runtime.runners and runtime.transcript("gpu"):
                    text = screen_text(app)
                    assert "gpu" in text and "on gpu-box" in text  # the remote teammate's
                    # panel, naming its machine (the engine's members' machine column)
                await pilot.pause(0.2)
                assert joined.poll() is None or joined.returncode == 0
                assert time.monotonic() < deadline + scaled(GUARD), (answered, runtime.team)
            transcript = [e.text for e in runtime.transcript("gpu")]
        assert "gpu" in answered  # its request was in this machine's Approvals, answered by a
        assert any("Starting task" in t for t in transcript)
        out, err = joined.communicate(timeout=scaled(60))
        assert joined.returncode == 0, err
        assert "gpu left team alpha" in out

        # Every task done once, every message delivered once (the engine holds the record).
        admin_url = json.loads((first / "engine" / "settings.json").read_text())["url"]
        with Link(admin_url) as admin:
            tasks = admin.run(
                lambda c: c.execute(
                    "SELECT id, status, owner FROM teamdeck.tasks WHERE team = 'alpha'"
                ).fetchall()
            )
            sent = admin.run(
                lambda c: c.execute(
                    "SELECT recipient, sender, body->>'timestamp', body->>'text'"
                    " FROM teamdeck.messages WHERE team = 'alpha'"
                ).fetchall()
            )
        assert tasks and all(status == "completed" and owner for _, status, owner in tasks)
        assert "gpu" in {owner for _, _, owner in tasks}
        assert max(Counter(sent).values()) == 1
        done = Counter(
            json.loads(text)["taskId"] for _, _, _, text in sent if '"task_completed"' in text
        )
        assert set(done.values()) == {1}
        far = Home(second)
        gpu_box = [(m.sender, m.timestamp, m.text) for m in far.mailbox("alpha").read("gpu")]
        assert len(gpu_box) == len(set(gpu_box))
        key = authority.load_key(second, "alpha")
        assert key is not None
        origins = [key.check(text, to="gpu") for _, _, text in gpu_box]
        assert "person" in origins  # the desk's answer, signed again by the gpu's own home

        with Link(across.url) as desk:  # the lead writes to a teammate of its own machine
            EngineMailbox(desk, "alpha").send("writer", InboxMessage(sender="team-lead", text="x"))
        attacks = _attacks(ns, kept, env)
        # nothing of another's inbox; a forged sender, a claim for another and an answer
        # refused by the server (the agent's role sees no task it may give away)
        assert attacks[0] == "rows 0"
        assert attacks[1] == "InsufficientPrivilege"
        assert attacks[2] in ("rows 0", "InsufficientPrivilege")
        assert attacks[3] == "InsufficientPrivilege"
        assert attacks[4] == "ssl"
    finally:
        if joined is not None and joined.poll() is None:
            joined.kill()
            joined.wait()
        main(["--home", str(first), "server", "stop"])
        shutil.rmtree(folder, ignore_errors=True)
