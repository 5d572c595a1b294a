"""A stopped dashboard never stalls the team (the real Claude Code 2.1.332, interactive, tmux).

The real dashboard (``teamdeck --claude``, a shell's child in its tmux window: tmux resumes a
stopped program of its own at once) holds the hooks' requests; it is stopped (SIGSTOP:
any hang does the same) before the lead asks. The lead's ``Read`` goes through (the hook hands
it over without waiting), and its ``Bash`` reaches Claude Code's own prompt, where the person
answers it and the command runs (the PermissionRequest hook, which would wait for the stopped
dashboard's acknowledgement, ``hook_client.ACK_WAIT``, at most, is let go by Claude Code).
Before, the hook waited for the dashboard on every call: the lead's plain Read took 45.8 s and
each held call would have waited 280 s.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from tests.claude_code.interactive import Session, wait_until
from tests.claude_code.server import Rule, Turn, call, user_text

PROMPT = "Do you want to proceed?"


def dashboard_pid(session: Session) -> int:
    """The dashboard's process: the child of the deck window's shell (``env -i`` execs it)."""
    shell = session.terminals.tmux("display-message", "-p", "-t", "t:deck", "#{pane_pid}")
    children = Path(f"/proc/{shell.strip()}/task/{shell.strip()}/children").read_text().split()
    (pid,) = children
    return int(pid)


def stopped(pid: int) -> bool:
    """Whether ``pid`` is stopped (its state in ``/proc/PID/stat`` is ``T``)."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "T"


def test_a_stopped_dashboard_hands_the_call_to_claude_codes_prompt(session: Session) -> None:
    session.setup("in-process")
    project = session.home.project
    target = project / "made-by-lead"
    served: dict[str, float] = {}

    def bash(body: dict[str, Any]) -> Turn:
        served["bash"] = time.monotonic()  # the model's Bash call leaves the API now
        return call("Bash", {"command": f"touch {target}", "description": "Create the marker"})

    def read(body: dict[str, Any]) -> Turn:
        served["read"] = time.monotonic()
        return call("Read", {"file_path": str(project / "README.md")})

    session.home.api.add(Rule(read, last="Please make the marker", tool="Read"))
    session.home.api.add(Rule(bash, last="Demo project", tool="Bash"))
    session.start_dashboard(in_shell=True)
    pid = dashboard_pid(session)
    terminals = session.terminals

    os.kill(pid, signal.SIGSTOP)
    try:
        session.start_claude("Please make the marker file.")
        screen = terminals.wait_for("claude", lambda s: PROMPT in s, "Claude Code's own prompt")
        assert "touch" in screen
        terminals.keys("claude", "1")  # the person answers in Claude Code at once: "1. Yes"
        wait_until(target.exists, "the command to run")
        ran = time.monotonic()
        assert stopped(pid), "the dashboard was resumed: the test proves nothing"
    finally:
        os.kill(pid, signal.SIGCONT)

    # measured, not judged: the 3 s of the issue, against 45.8 s for a Read and 280 s for each
    # held call before
    print(
        f"with the dashboard stopped: Read to Bash {served['bash'] - served['read']:.2f} s, "
        f"Bash to its command run through Claude Code's prompt {ran - served['bash']:.2f} s"
    )
    results = [r for r in session.home.api.messages() if "Demo project" in user_text(r.body)]
    assert results, "the Read went through with the dashboard stopped"
