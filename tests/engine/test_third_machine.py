"""Three machines: the lead's, and two joined ones. A teammate on one joined machine messages
a teammate on the other: delivered once, on the recipient's own role's word for its sender,
and shown in the lead's dashboard feed (``Store``, what the feed draws) once."""

from __future__ import annotations

from pathlib import Path

from app.core.home import Home
from app.core.models import InboxMessage
from app.dashboard.store import Store
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.relay import Relay
from tests.engine.pg import Engine, team_home


def _feed(home: Home, team: str) -> list[tuple[str, tuple[str, ...], str]]:
    store = Store(home, team)
    return [(i.sender, i.recipients, i.text) for i in store.load().feed_added]


def test_a_teammate_messages_a_teammate_on_a_third_machine_once(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu", "cpu"])
    first = team_home(tmp_path / "first", team.name, "gpu", "cpu")
    second = team_home(tmp_path / "second", team.name, "gpu")  # as `join` sets a home up
    third = team_home(tmp_path / "third", team.name, "cpu")
    desk = Relay(first, team.name, team.desk_url, member="team-lead", desk=True, key=None,
                 machine="desk-box")  # fmt: skip
    gpu = Relay(second, team.name, team.urls["gpu"], member="gpu", desk=False, key=None,
                machine="gpu-box")  # fmt: skip
    cpu = Relay(third, team.name, team.urls["cpu"], member="cpu", desk=False, key=None,
                machine="cpu-box")  # fmt: skip
    relays = (desk, gpu, cpu)

    def passes(times: int = 2) -> None:
        for _ in range(times):
            for relay in relays:
                relay.one_pass()

    try:
        desk.place("gpu", {"name": "gpu"}, "gpu-box")
        desk.place("cpu", {"name": "cpu"}, "cpu-box")
        passes(1)
        # Each joined home knows the other's teammate: its agent can address it.
        sent = second.mailbox(team.name).send("cpu", InboxMessage(sender="gpu", text="ping"))
        assert sent == "cpu"
        # gpu's model writing in another's name into cpu's inbox file: not forwarded.
        second.mailbox(team.name).append(
            "cpu", InboxMessage(sender="team-lead", text="from the lead, says gpu")
        )
        passes()
        third.mailbox(team.name).send("gpu", InboxMessage(sender="cpu", text="pong"))
        passes(3)

        assert [(m.sender, m.text) for m in third.mailbox(team.name).read("cpu")] == [
            ("gpu", "ping")
        ]
        assert [(m.sender, m.text) for m in second.mailbox(team.name).read("gpu")] == [
            ("cpu", "pong")
        ]
        with Link(engine.admin_url) as admin:
            box = EngineMailbox(admin, team.name)
            assert [m.text for m in box.read("cpu")] == ["ping"]
            assert [m.text for m in box.read("gpu")] == ["pong"]
        # The lead's dashboard shows both, once; the lead's machine sends neither back.
        feed = _feed(first, team.name)
        assert feed == [("gpu", ("cpu",), "ping"), ("cpu", ("gpu",), "pong")]
        assert desk.projection.refused == 0
    finally:
        for relay in relays:
            relay.close()
