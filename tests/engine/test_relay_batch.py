"""A relay's pass sends what its machine's teammates changed in one transaction: one commit,
counted in the server's write-ahead log, however many messages and task changes the pass
carries; a teammate's finish and next claim go as the engine's one-call claim; a losing local
claim is still undone and told, in that same one commit."""

from __future__ import annotations

from pathlib import Path

import psycopg

from app.core.models import InboxMessage
from app.engine.relay import Relay
from tests.engine.pg import Engine, commits, desk_and_gpu


def _relays(engine: Engine, tmp_path: Path) -> tuple[Relay, Relay, str]:
    team = engine.team(["gpu"])
    _, _, desk, gpu = desk_and_gpu(team, tmp_path, desk_knows=("gpu", "cpu"), heartbeat=3600)
    return desk, gpu, team.name


def _tokens(admin_url: str, team: str) -> dict[str, bool]:
    """Task id -> whether its claim was the engine's own (``claim_next`` sets its token)."""
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute(
            "SELECT id, claim_token IS NOT NULL FROM teamdeck.tasks WHERE team = %s", (team,)
        ).fetchall()
    return {str(r[0]): bool(r[1]) for r in rows}


def test_a_pass_sends_a_burst_of_changes_in_one_commit(engine: Engine, tmp_path: Path) -> None:
    desk, gpu, team = _relays(engine, tmp_path)
    try:
        lead_board = desk.home.tasks(team)
        ids = [lead_board.create(f"t{i}").id for i in range(3)]
        desk.one_pass()
        gpu.one_pass()
        gpu.one_pass()  # the heartbeat and the first passes' settling: nothing left to send
        board, box = gpu.home.tasks(team), gpu.home.mailbox(team)

        # The teammate claims as the runtime does (its machine's files) and writes five
        # messages: one pass, one commit, the claim the engine's own.
        claim = board.claim_next("gpu", status="in_progress")
        assert claim is not None and claim.task is not None and claim.task.id == ids[0]
        for i in range(5):
            box.send("team-lead", InboxMessage(sender="gpu", text=f"note {i}"))
        with commits(engine.admin_url) as counted:
            gpu.one_pass()
        assert counted.data == 1
        assert _tokens(engine.admin_url, team)[ids[0]]

        # It finishes the task and claims the next, and writes three more: one call for both.
        board.update(ids[0], status="completed")
        claim = board.claim_next("gpu", status="in_progress")
        assert claim is not None and claim.task is not None and claim.task.id == ids[1]
        for i in range(3):
            box.send("team-lead", InboxMessage(sender="gpu", text=f"more {i}"))
        with commits(engine.admin_url) as counted:
            gpu.one_pass()
        assert counted.data == 1
        assert _tokens(engine.admin_url, team)[ids[1]]

        desk.one_pass()
        lead = [m.text for m in desk.home.mailbox(team).read("team-lead")]
        assert lead == [f"note {i}" for i in range(5)] + [f"more {i}" for i in range(3)]
        done, now = lead_board.require(ids[0]), lead_board.require(ids[1])
        assert (done.owner, done.status) == ("gpu", "completed")
        assert (now.owner, now.status) == ("gpu", "in_progress")
        for _ in range(2):  # nothing moves any more, and nothing is committed for it
            with commits(engine.admin_url) as counted:
                gpu.one_pass()
                desk.one_pass()
            assert counted.data == 0
    finally:
        desk.close()
        gpu.close()


def test_a_losing_local_claim_is_undone_and_told_within_the_one_commit(
    engine: Engine, tmp_path: Path
) -> None:
    desk, gpu, team = _relays(engine, tmp_path)
    try:
        lead_board = desk.home.tasks(team)
        first, second = lead_board.create("train"), lead_board.create("evaluate")
        desk.one_pass()
        gpu.one_pass()
        # cpu, on the lead's machine, takes #1 and reaches the engine first; gpu claims #1 on
        # its own machine, where the files still show it free.
        lead_board.update(first.id, owner="cpu", status="in_progress")
        desk.one_pass()
        claim = gpu.home.tasks(team).claim_next("gpu", status="in_progress")
        assert claim is not None and claim.task is not None and claim.task.id == first.id
        gpu.home.mailbox(team).send("team-lead", InboxMessage(sender="gpu", text="on it"))
        with commits(engine.admin_url) as counted:
            gpu.one_pass()
        assert counted.data == 1  # the message; the engine's claim for gpu rolled back
        lost = gpu.home.tasks(team).require(first.id)
        assert (lost.owner, gpu.board.reverted) == ("cpu", 1)
        told = [m.text for m in gpu.home.mailbox(team).read("gpu")]
        assert len(told) == 1 and f"#{first.id}" in told[0] and "cpu" in told[0]
        desk.one_pass()
        untouched = lead_board.require(second.id)  # the engine gave gpu nothing else
        assert (untouched.owner, untouched.status) == (None, "pending")
        assert [m.text for m in desk.home.mailbox(team).read("team-lead")] == ["on it"]
    finally:
        desk.close()
        gpu.close()
