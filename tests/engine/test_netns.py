"""A second home in its own network namespace joins the first home's server over a virtual
link, so the join leaves "the machine": the invitation carries the server's certificate, the
joiner checks it (sslmode=verify-ca) and its traffic is encrypted. Needs root and ``ip``
(CI has both); skipped otherwise, with the reason."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from app.cli.main import main
from app.engine.link import Link
from app.engine.messages import EngineMailbox

ROOT = Path(__file__).resolve().parents[2]
AGENT = """
import sys
from app.core.models import InboxMessage
from app.engine.link import Link
from app.engine.messages import EngineMailbox
url = open(sys.argv[1]).read().strip()
with Link(url) as link:
    EngineMailbox(link, "alpha").send("team-lead", InboxMessage(sender="gpu", text="hello"))
    with link.pool.connection() as conn:
        row = conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()
print("ssl" if row and row[0] else "plain")
"""


def test_a_home_in_another_network_namespace_joins_over_tls(
    netns: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    ns, address = netns
    folder = Path(tempfile.mkdtemp(prefix="teamdeck-ns-"))
    folder.chmod(0o711)
    first, second = folder / "first", folder / "second"
    try:
        assert main(["--home", str(first), "server", "init", "--listen", address]) == 0
        assert main(["--home", str(first), "invite", "alpha", "--name", "gpu"]) == 0
        url = capsys.readouterr().out.strip().splitlines()[-1]
        assert f"@{address}:" in url and "sslmode=verify-ca" in url and "td_cert=" in url
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        teamdeck = [sys.executable, "-m", "app.cli.entry"]
        if not (ROOT / "app" / "cli" / "entry.py").is_file():  # pragma: no cover
            teamdeck = [str(Path(sys.executable).parent / "teamdeck")]
        joined = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                ns,
                *teamdeck,
                "--home",
                str(second),
                "join",
                url,
                "--register-only",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert joined.returncode == 0, joined.stderr
        kept = second / "engine" / "alpha.gpu.url"
        assert "sslrootcert=" in kept.read_text()
        # The loopback of the namespace is not the server's: only the veth reaches it.
        agent = subprocess.run(
            ["ip", "netns", "exec", ns, sys.executable, "-c", AGENT, str(kept)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert agent.returncode == 0, agent.stderr
        assert agent.stdout.strip() == "ssl"
        admin_url = json.loads((first / "engine" / "settings.json").read_text())["url"]
        with Link(admin_url) as admin:
            assert [m.text for m in EngineMailbox(admin, "alpha").read("team-lead")] == ["hello"]
    finally:
        main(["--home", str(first), "server", "stop"])
        shutil.rmtree(folder, ignore_errors=True)
