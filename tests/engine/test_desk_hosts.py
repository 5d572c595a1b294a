"""A teammate on the lead's machine (no role of its own: the desk's machine hosts it) and a
teammate on a joined machine message each other: each message delivered once and shown once
in the lead's dashboard feed. The desk's role may send as the teammates its machine hosts and
as no one else; an agent's role only as itself. The attacks are raw SQL on each role's own
login, as a hostile holder of its credentials would send them, not teamdeck's client."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb

from app.core.home import Home
from app.core.models import InboxMessage
from app.dashboard.store import Store
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.relay import Relay
from tests.engine.pg import Engine, team_home


def _feed(home: Home, team: str) -> list[tuple[str, tuple[str, ...], str]]:
    return [(i.sender, i.recipients, i.text) for i in Store(home, team).load().feed_added]


def _send(url: str, team: str, recipient: str, sender: str, text: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO teamdeck.messages (team, recipient, uuid, sender, body)"
            " VALUES (%s, %s, %s, %s, %s)",
            (team, recipient, uuid.uuid4(), sender, Jsonb({"from": sender, "text": text})),
        )


def test_a_teammate_on_the_lead_machine_and_a_remote_teammate_message_each_other_once(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu"])  # cpu runs on the lead's machine: no role of its own
    first = team_home(tmp_path / "first", team.name, "gpu", "cpu")
    second = team_home(tmp_path / "second", team.name, "gpu")  # as `join` sets a home up
    desk = Relay(first, team.name, team.desk_url, member="team-lead", desk=True, key=None,
                 machine="desk-box")  # fmt: skip
    gpu = Relay(second, team.name, team.urls["gpu"], member="gpu", desk=False, key=None,
                machine="gpu-box")  # fmt: skip
    relays = (desk, gpu)

    def passes(times: int = 2) -> None:
        for _ in range(times):
            for relay in relays:
                relay.one_pass()

    try:
        desk.place("gpu", {"name": "gpu"}, "gpu-box")
        passes(1)
        # cpu (the lead's machine's teammate process or in-process teammate) writes to gpu.
        first.mailbox(team.name).send("gpu", InboxMessage(sender="cpu", text="ping"))
        passes()
        second.mailbox(team.name).send("cpu", InboxMessage(sender="gpu", text="pong"))
        passes(3)

        assert [(m.sender, m.text) for m in second.mailbox(team.name).read("gpu")] == [
            ("cpu", "ping")
        ]
        assert [(m.sender, m.text) for m in first.mailbox(team.name).read("cpu")] == [
            ("gpu", "pong")
        ]
        with Link(engine.admin_url) as admin:
            box = EngineMailbox(admin, team.name)
            assert [(m.sender, m.text) for m in box.read("gpu")] == [("cpu", "ping")]
            assert [(m.sender, m.text) for m in box.read("cpu")] == [("gpu", "pong")]
            machine = admin.run(
                lambda c: c.execute(
                    "SELECT machine FROM teamdeck.members WHERE team = %s AND name = 'cpu'",
                    (team.name,),
                ).fetchone()
            )
        assert machine == ("desk-box",)
        assert _feed(first, team.name) == [("cpu", ("gpu",), "ping"), ("gpu", ("cpu",), "pong")]
        assert desk.projection.refused == 0 and gpu.projection.refused == 0
    finally:
        for relay in relays:
            relay.close()


def test_the_desk_speaks_for_its_machines_teammates_only_and_an_agent_for_itself_only(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu"])
    first = team_home(tmp_path / "first", team.name, "gpu", "cpu")
    desk = Relay(first, team.name, team.desk_url, member="team-lead", desk=True, key=None,
                 machine="desk-box")  # fmt: skip
    try:
        desk.place("gpu", {"name": "gpu"}, "gpu-box")
        desk.one_pass()  # cpu is enlisted: a member of the team on the desk's machine
    finally:
        desk.close()
    _send(team.desk_url, team.name, "gpu", "cpu", "from the lead's machine's teammate")

    # The joined machine's role cannot speak for the lead's machine's teammate.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _send(team.urls["gpu"], team.name, "team-lead", "cpu", "cpu says: approve gpu")
    # The desk cannot speak for the joined machine's teammate (it has a role of its own), not
    # even once its member row is moved to the desk's machine and unplaced (the desk may
    # write the row; the role stays the member's own) ...
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _send(team.desk_url, team.name, "cpu", "gpu", "gpu says: done")
    with psycopg.connect(team.desk_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE teamdeck.members SET machine = 'desk-box', data = data - 'teamdeckPlacedOn'"
            " WHERE team = %s AND name = 'gpu'",
            (team.name,),
        )
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _send(team.desk_url, team.name, "cpu", "gpu", "gpu says: done")
    # ... nor for a name that is no member of the team, nor for a member of another team.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _send(team.desk_url, team.name, "cpu", "ghost", "made up")
    other = engine.team(["tpu"])
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _send(team.desk_url, team.name, "cpu", "tpu", "another team's")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _send(team.desk_url, other.name, "tpu", "cpu", "into another team")

    with Link(engine.admin_url) as admin:
        box = EngineMailbox(admin, team.name)
        assert [(m.sender, m.text) for m in box.read("gpu")] == [
            ("cpu", "from the lead's machine's teammate")
        ]
        assert box.read("cpu") == [] and box.read("team-lead") == []
