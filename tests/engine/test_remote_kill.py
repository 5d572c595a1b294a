"""The palette's "Interrupt" and ``K`` on a remote teammate across machines: the lead's
dashboard asks, the engine carries the desk's request, and the joined machine's ``join`` acts
on the process there as the dashboard acts on a local one: an interrupt (SIGINT) ends its turn
and it stays, taking its next message; ``K`` stops it. Only the desk's role may ask: an
agent's role is refused by the server."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.home import Home
from app.core.models import InboxMessage, TeamMember
from app.engine.errors import AccessRefusedError
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.programs import alive
from app.engine.relay import Relay
from app.runtime.runners.base import spec_from_member
from app.runtime.runners.process_record import pid_exists
from app.runtime.runners.remote import RemoteRunner
from app.runtime.team.across import Across
from app.runtime.team.joined import Joined
from tests.engine.pg import Engine, team_home
from tests.timing import scaled


async def _until(check: Callable[[], object], what: str, within: float = 30.0) -> None:
    give_up = time.monotonic() + scaled(within)
    while not check():
        assert time.monotonic() < give_up, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def test_interrupt_and_k_on_a_remote_teammate_act_on_its_process_on_its_machine(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The offline model waits ten minutes before its first word: a turn runs until interrupted.
    monkeypatch.setenv("TEAMDECK_OFFLINE_TTFT", "600")
    team = engine.team(["gpu", "cpu"])
    first = team_home(tmp_path / "first", team.name, "gpu")
    member = TeamMember(agent_id=f"gpu@{team.name}", name="gpu", prompt="Profile the kernels")
    desk = Relay(first, team.name, team.desk_url, member="team-lead", desk=True, key=None,
                 machine="desk-box")  # fmt: skip
    across = Across(team.desk_url, team.name, machine="desk-box", relay=desk)
    cpu = Relay(Home(tmp_path / "third"), team.name, team.urls["cpu"], member="cpu",
                desk=False, key=None, machine="cpu-box")  # fmt: skip
    (tmp_path / "far").mkdir()
    joined = Joined(Home(tmp_path / "second"), team.urls["gpu"], folder=tmp_path / "far",
                    offline=True, interval=0.05)  # fmt: skip
    job = asyncio.ensure_future(joined.run())

    def said(kind: str, text: str) -> bool:
        assert joined.runner is not None
        joined.runner.on_log()
        return any(e.kind == kind and text in e.text for e in joined.runner.transcript())

    def interrupted() -> int:
        assert joined.runner is not None
        joined.runner.on_log()
        return [(e.kind, e.text) for e in joined.runner.transcript()].count(
            ("notice", "interrupted")
        )

    try:
        desk.place("gpu", member.to_json_dict(), "gpu-box")
        await _until(lambda: job.done() or (joined.runner is not None and joined.runner.pid),
                     "the joined machine to start gpu")  # fmt: skip
        assert not job.done()
        assert joined.runner is not None
        pid = joined.runner.pid
        assert pid is not None and pid_exists(pid)

        await _until(lambda: said("user", "Profile the kernels"), "gpu's first turn")

        # Another agent's role (cpu's machine) can neither stop nor interrupt gpu, nor mark
        # itself.
        for name in ("gpu", "cpu"):
            for ask in (cpu.kill, cpu.interrupt):
                with pytest.raises(AccessRefusedError):
                    await asyncio.to_thread(ask, name)
        passes = joined.relay.passes
        await _until(lambda: joined.relay.passes >= passes + 3, "three more passes")
        assert not joined.runner.finished and pid_exists(pid) and not joined.relay.killed()
        assert joined.relay.interrupts() == 0 and not said("notice", "interrupted")

        # The person's "Interrupt" on the lead's dashboard: gpu's turn ends on its machine ...
        spec = spec_from_member(team.name, member, tmp_path)
        runner = RemoteRunner(spec, home=first, emit=lambda event: None,
                              on_exit=lambda r: None, relay=across, machine="gpu-box")  # fmt: skip
        runner.interrupt()
        await across.kills_sent()
        assert desk.error is None
        await _until(lambda: said("notice", "interrupted"), "gpu's turn to end")
        assert any("interrupted" in line for line in joined.said)
        # ... and it stays: the same process takes the lead's next message.
        with Link(team.desk_url) as link:
            EngineMailbox(link, team.name).send(
                "gpu", InboxMessage(sender="team-lead", text="Now count the lines")
            )
        await _until(lambda: said("user", "Now count the lines"), "gpu's next turn")
        assert not job.done() and not joined.runner.finished and pid_exists(pid)
        assert interrupted() == 1
        runner.interrupt()  # each ask ends one turn: this one too
        await across.kills_sent()
        await _until(lambda: interrupted() == 2, "gpu's second turn to end")

        # The person's K on the lead's dashboard: the panel shows it killed at once ...
        runner.kill()
        assert runner.finished and runner.snapshot().status == "killed"
        assert "gpu-box" in (runner.snapshot().error or "")
        await across.kills_sent()
        assert desk.error is None
        # ... and the joined machine stops the process there, and its join ends.
        assert await asyncio.wait_for(job, scaled(30)) == 0
        assert joined.runner.finished and joined.runner.snapshot().status == "killed"
        # (ended and collected by ``join``: not even a zombie is left, test_join_reaps.py)
        await _until(lambda: not alive(pid), "gpu's process to end", within=10)
        assert any("killed" in line for line in joined.said)
        # The lead hears of it once: from its own dashboard, not again from gpu's machine.
        lead_mail = [m.text for m in joined.home.mailbox(team.name).read("team-lead")]
        assert not any("killed" in text for text in lead_mail)
        lead_mail = [m.text for m in first.mailbox(team.name).read("team-lead")]
        assert sum("killed" in text for text in lead_mail) == 1
        # A join run again with the kept URL does not start the killed teammate.
        again = Relay(joined.home, team.name, team.urls["gpu"], member="gpu", desk=False,
                      key=None, machine="gpu-box")  # fmt: skip
        try:
            assert again.placement() is None
        finally:
            again.close()
    finally:
        if not job.done():
            job.cancel()
            with contextlib.suppress(BaseException):
                await job
        desk.close()
        cpu.close()
