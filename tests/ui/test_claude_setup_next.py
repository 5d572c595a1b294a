"""The newcomer's order with Claude Code 2.1.332+ (issue 30, the real Claude Code by hand):
``teamdeck claude setup`` names the next step. It said "start Claude Code, then
`teamdeck --claude`": followed literally, the first requests reach hooks nobody listens to, and
Claude Code asks in its own terminal. The dashboard goes first (the README's order)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_setup_says_to_start_the_dashboard_before_claude_code(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "TEAMDECK_HOME": str(tmp_path / "td"),
    }
    (tmp_path / "claude").mkdir()
    done = subprocess.run(
        [sys.executable, "-P", "-m", "app.cli.main", "claude", "setup"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (next_step,) = [line for line in done.stdout.splitlines() if line.startswith("next:")]
    assert next_step.index("teamdeck --claude") < next_step.index("start Claude Code"), next_step
