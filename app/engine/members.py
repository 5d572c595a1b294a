"""Teams and their members in the engine (``app.core.store.MemberStore``), and each member's
machine, process and heartbeat: a member whose heartbeat is older than the timeout counts as
gone, and its open tasks return to the board (:meth:`EngineTeams.reap`)."""

from __future__ import annotations

import builtins
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from app.core.errors import NotFoundError
from app.core.models import TeamConfig, TeamMember
from app.engine.link import Link

HEARTBEAT_TIMEOUT = 30.0
"""Seconds without a heartbeat after which a member counts as gone."""


class EngineTeams:
    """The teams this role belongs to."""

    def __init__(self, link: Link) -> None:
        self.link = link

    def get(self, name: str) -> TeamConfig | None:
        def query(conn: psycopg.Connection) -> tuple[Any, list[Any]] | None:
            team = conn.execute(
                "SELECT config FROM teamdeck.teams WHERE name = %s", (name,)
            ).fetchone()
            if team is None:
                return None
            members = conn.execute(
                "SELECT name, data, machine FROM teamdeck.members WHERE team = %s"
                " ORDER BY (data->>'joinedAt')::bigint NULLS FIRST, name",
                (name,),
            ).fetchall()
            return team[0], members

        found = self.link.run(query)
        if found is None:
            return None
        config, rows = found
        members = []
        for member, data, _machine in rows:
            members.append(
                TeamMember.model_validate({"agentId": f"{member}@{name}", **data, "name": member})
            )
        return TeamConfig.model_validate(
            {**config, "name": name, "members": [m.to_json_dict() for m in members]}
        )

    def require(self, name: str) -> TeamConfig:
        config = self.get(name)
        if config is None:
            raise NotFoundError(f"team {name!r} does not exist in the engine")
        return config

    def names(self) -> builtins.list[str]:
        rows = self.link.run(
            lambda c: c.execute("SELECT name FROM teamdeck.teams ORDER BY name").fetchall()
        )
        return [r[0] for r in rows]

    def add_member(
        self, team: str, member: TeamMember, *, machine: str | None = None
    ) -> TeamConfig:
        """Add (or replace) a member: the desk's to do."""
        data = member.to_json_dict()
        self.link.run(
            lambda c: c.execute(
                "INSERT INTO teamdeck.members (team, name, data, machine) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (team, name) DO UPDATE SET data = excluded.data,"
                " machine = coalesce(excluded.machine, teamdeck.members.machine)",
                (team, member.name, Jsonb(data), machine),
            )
        )
        return self.require(team)

    def update_member(self, team: str, name: str, **fields: Any) -> TeamMember:
        config = self.require(team)
        member = config.member(name)
        if member is None:
            raise NotFoundError(f"{name!r} is not a member of team {team!r}")
        updated = member.model_copy(update=fields)
        self.add_member(team, updated)
        return updated

    # ------------------------------------------------------------------ machines

    def machine_of(self, team: str) -> dict[str, str | None]:
        rows = self.link.run(
            lambda c: c.execute(
                "SELECT name, machine FROM teamdeck.members WHERE team = %s", (team,)
            ).fetchall()
        )
        return {name: machine for name, machine in rows}

    def heartbeat(self, team: str, name: str, *, machine: str, pid: int) -> None:
        """This member is alive, on ``machine`` as process ``pid``."""
        self.link.run(
            lambda c: c.execute(
                "UPDATE teamdeck.members SET heartbeat = now(), pid = %s, machine = %s,"
                " state = 'running' WHERE team = %s AND name = %s",
                (pid, machine, team, name),
            )
        )

    def reap(self, team: str, timeout: float = HEARTBEAT_TIMEOUT) -> list[str]:
        """The desk's sweep: members silent for ``timeout`` seconds are marked gone and their
        open tasks go back to the board (unowned, pending), in one statement. The names marked
        gone."""
        rows = self.link.write(
            "WITH gone AS (UPDATE teamdeck.members SET state = 'gone' WHERE team = %(team)s"
            " AND state = 'running' AND heartbeat < now() - make_interval(secs => %(secs)s)"
            " RETURNING name), freed AS (UPDATE teamdeck.tasks SET owner = NULL,"
            " status = 'pending', claim_token = NULL WHERE team = %(team)s"
            " AND owner IN (SELECT name FROM gone) AND status NOT IN ('completed', 'deleted')"
            " RETURNING id) SELECT name, (SELECT count(*) FROM freed) FROM gone",
            {"team": team, "secs": timeout},
        )
        return [r[0] for r in rows]
