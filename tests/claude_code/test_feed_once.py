"""No line twice in the feed (the real Claude Code 2.1.332, interactive, tmux), before and after
a restart of the dashboard.

A teammate going idle is told twice by Claude Code: its ``TeammateIdle`` hook, and the
``idle_notification`` it leaves in the lead's inbox; a restarted dashboard reads the inbox again
and rebuilds the hooks' lines from the run archive. Each fact is one line.
"""

from __future__ import annotations

import re

from tests.claude_code.interactive import Session, wait_until
from tests.claude_code.test_teammates import panel_status

IDLE = re.compile(r"worker\b.{0,20}\bis idle")


FEED_ENTRY = re.compile(r"│\d\d:\d\d:\d\d ([^│]*)")


def feed_lines(screen: str, pattern: re.Pattern[str]) -> list[str]:
    """The feed's entries (a time, then the text) that match: a toast saying the same words,
    drawn over another panel for a few seconds, is not a line of the feed."""
    return [
        entry.group(0)
        for line in screen.splitlines()
        for entry in FEED_ENTRY.finditer(line)
        if pattern.search(entry.group(1))
    ]


def test_each_line_once_before_and_after_a_restart(session: Session) -> None:
    session.setup("in-process")
    target = session.home.project / "made-by-worker"
    session.script_worker({"command": f"touch {target}", "description": "Worker makes the marker"})
    session.start_dashboard()
    session.start_claude("Please spawn a worker.")
    deck = session.terminals
    deck.wait_for("deck", lambda s: panel_status(s, "worker") == "awaiting approval", "asking")
    deck.keys("deck", "a")
    wait_until(target.exists, "the approved command to run")
    screen = deck.wait_for("deck", lambda s: bool(feed_lines(s, IDLE)), "the idle line")
    wait_until(lambda: not session.held() and not session.pending(), "nothing pending")
    screen = deck.screen("deck")
    print(screen)
    assert len(feed_lines(screen, IDLE)) == 1, screen

    deck.tmux("kill-window", "-t", "t:deck")  # the dashboard ends; the team goes on
    wait_until(lambda: not session.listening(), "the dashboard gone")
    session.start_dashboard()
    screen = deck.wait_for("deck", lambda s: bool(feed_lines(s, IDLE)), "the rebuilt feed")
    wait_until(lambda: "allowed worker's Bash" in deck.screen("deck"), "the answer's line")
    screen = deck.screen("deck")
    print(screen)
    assert len(feed_lines(screen, IDLE)) == 1, screen
    assert len(feed_lines(screen, re.compile("allowed worker's Bash"))) == 1, screen
    assert len(feed_lines(screen, re.compile(r"asks: Bash touch"))) == 1, screen


def test_a_restarted_dashboard_knows_who_waits_and_who_completed(session: Session) -> None:
    """The dashboard ends while a teammate's request is held: the request goes back to Claude
    Code's own prompt, and a new dashboard shows the teammate awaiting approval (before:
    "running", and an empty feed). Answered there, it goes idle; the person then ends the
    lead's session (``/exit``): the lead shows completed (before, never shown)."""
    session.setup("in-process")
    target = session.home.project / "made-by-worker"
    session.script_worker({"command": f"touch {target}", "description": "Worker makes the marker"})
    session.start_dashboard()
    session.start_claude("Please spawn a worker.")
    deck = session.terminals
    deck.wait_for("deck", lambda s: panel_status(s, "worker") == "awaiting approval", "asking")

    deck.tmux("kill-window", "-t", "t:deck")
    wait_until(lambda: not session.listening(), "the dashboard gone")
    deck.wait_for("claude", lambda s: "Do you want to proceed?" in s, "Claude Code's own prompt")
    session.start_dashboard()
    screen = deck.wait_for(
        "deck", lambda s: panel_status(s, "worker") == "awaiting approval", "awaiting, rebuilt"
    )
    assert feed_lines(screen, re.compile(r"worker asks: Bash touch")), screen
    assert not target.exists()

    deck.keys("claude", "1")  # the person answers in Claude Code's own prompt
    wait_until(target.exists, "the command to run")
    deck.wait_for("deck", lambda s: panel_status(s, "worker") == "idle", "worker idle")
    deck.wait_for("claude", lambda s: "Do you want to proceed?" not in s, "the prompt gone")
    end_the_leads_session(session)


def end_the_leads_session(session: Session, tries: int = 3) -> None:
    """``/exit`` in Claude Code, until the dashboard shows the lead completed.

    ``/exit`` typed while the lead's turn goes on is queued as its next message, and the lead
    may start a turn of its own right after one ends (the worker's idle notice): so each try
    waits for a turn to be over, and a ``/exit`` taken as a message is typed again."""
    deck = session.terminals
    for attempt in range(tries):
        deck.wait_for("claude", lambda s: "esc to interrupt" not in s, "the lead's turn over")
        deck.keys("claude", "/exit")
        deck.wait_for("claude", lambda s: "/exit" in s, "/exit typed")
        deck.keys("claude", "Enter")
        try:
            # with the worker alive Claude Code asks first ("Exit and stop tasks"): confirm it
            if wait_until(lambda: ended_or_asked(session), "lead completed", within=20) == "asked":
                deck.keys("claude", "Enter")
                wait_until(
                    lambda: panel_status(deck.screen("deck"), "team-lead") == "completed",
                    "lead completed",
                )
            return
        except AssertionError:
            if attempt == tries - 1 or not claude_running(session):
                # Claude Code is gone: only the dashboard's news is late
                wait_until(
                    lambda: panel_status(deck.screen("deck"), "team-lead") == "completed",
                    "lead completed",
                )
                return


def ended_or_asked(session: Session) -> str | None:
    """ "completed" once the dashboard shows the lead so, "asked" while Claude Code asks
    whether to stop the background work (the in-process worker) before it exits."""
    if panel_status(session.terminals.screen("deck"), "team-lead") == "completed":
        return "completed"
    return "asked" if "Exit and stop tasks" in session.terminals.screen("claude") else None


def claude_running(session: Session) -> bool:
    """Claude Code's pane is alive (its window stays after it exits: ``remain-on-exit``)."""
    dead = session.terminals.tmux("display-message", "-p", "-t", "t:claude", "#{pane_dead}")
    return dead.strip() == "0"
