"""Members across machines: a heartbeat records the machine and process; a member silent past
the timeout counts as gone and its open tasks return to the board; it rejoins cleanly."""

from __future__ import annotations

import psycopg

from app.engine.link import Link
from app.engine.members import EngineTeams
from app.engine.tasks import EngineTasks
from tests.engine.pg import Engine


def test_a_silent_member_is_gone_and_its_tasks_return_to_the_board(engine: Engine) -> None:
    team = engine.team(["gpu", "local"])
    with Link(team.urls["gpu"]) as g, Link(team.urls["local"]) as lo, Link(team.desk_url) as d:
        gpu, local, desk = EngineTeams(g), EngineTeams(lo), EngineTeams(d)
        board = EngineTasks(d, team.name)
        task = board.create("train")
        gpu.heartbeat(team.name, "gpu", machine="m2", pid=4242)
        local.heartbeat(team.name, "local", machine="m1", pid=1)
        got = EngineTasks(g, team.name).claim_next("gpu", status="in_progress")
        assert got is not None and got.success
        assert desk.machine_of(team.name) == {"gpu": "m2", "local": "m1"}
        with psycopg.connect(engine.admin_url, autocommit=True) as admin:  # gpu's link is cut
            admin.execute(
                "UPDATE teamdeck.members SET heartbeat = now() - interval '1 hour'"
                " WHERE team = %s AND name = 'gpu'",
                (team.name,),
            )
        assert desk.reap(team.name) == ["gpu"]  # local spoke within the timeout
        again = board.require(task.id)
        assert again.owner is None and again.status == "pending"
        # Back on the link: it heartbeats again and can claim.
        gpu.heartbeat(team.name, "gpu", machine="m2", pid=4243)
        got = EngineTasks(g, team.name).claim_next("gpu")
        assert got is not None and got.task and got.task.id == task.id


def test_an_agent_cannot_reap_nor_move_another_member(engine: Engine) -> None:
    team = engine.team(["gpu", "mallory"])
    with Link(team.urls["mallory"]) as m, Link(team.desk_url) as d:
        with m.pool.connection() as conn:
            done = conn.execute(
                "UPDATE teamdeck.members SET state = 'gone', machine = 'evil' WHERE team = %s"
                " AND name = 'gpu'",
                (team.name,),
            )
            assert done.rowcount == 0
        assert EngineTeams(m).reap(team.name, timeout=0) == []
        assert EngineTeams(d).machine_of(team.name)["gpu"] is None
