"""The administrator's side: teams, the desk role of each team and one role per agent.

Run with the administrator's link (the role that owns the schema, e.g. the local server's
``teamdeck`` superuser, or a managed server's role with CREATEROLE). Every role gets a long
random password (scram); a role's name is derived from the team and member
(``td_<team>_<member>``, shortened with a hash past PostgreSQL's 63 bytes).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from app.core.paths import LEAD_NAME
from app.engine.link import Link, make_url

DESK = "desk"


@dataclass(frozen=True)
class Credentials:
    role: str
    password: str
    team: str
    member: str
    desk: bool

    def url(self, base: str) -> str:
        """``base`` (the server's URL) with this role's user and password."""
        info = psycopg.conninfo.conninfo_to_dict(base)
        info.update(user=self.role, password=self.password)
        return make_url(info)


def role_name(team: str, member: str) -> str:
    base = re.sub(r"[^a-z0-9_]", "_", f"td_{team}_{member}".lower())
    if len(base) <= 60:
        return base
    digest = hashlib.sha256(base.encode()).hexdigest()[:10]
    return f"{base[:49]}_{digest}"


def create_team(link: Link, team: str, config: dict[str, object] | None = None) -> None:
    link.run(
        lambda c: c.execute(
            "INSERT INTO teamdeck.teams (name, config) VALUES (%s, %s)"
            " ON CONFLICT (name) DO NOTHING",
            (team, Jsonb(config or {})),
        )
    )


def _make_role(conn: psycopg.Connection, role: str, password: str, group: str) -> None:
    with conn.transaction():
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        verb = "ALTER" if exists else "CREATE"
        conn.execute(
            sql.SQL("{} ROLE {} LOGIN PASSWORD {}").format(
                sql.SQL(verb), sql.Identifier(role), sql.Literal(password)
            )
        )
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), sql.Identifier(role)))


def _identity(conn: psycopg.Connection, role: str, team: str, member: str, desk: bool) -> None:
    conn.execute(
        "INSERT INTO teamdeck.identities (role, team, member, desk) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (role) DO UPDATE SET team = excluded.team, member = excluded.member,"
        " desk = excluded.desk",
        (role, team, member, desk),
    )


def desk(link: Link, team: str) -> Credentials:
    """The team's desk role (the person's side: the dashboard and the lead, ``team-lead``),
    with a new password."""
    role = role_name(team, DESK)
    password = secrets.token_urlsafe(32)

    def make(conn: psycopg.Connection) -> None:
        _make_role(conn, role, password, "teamdeck_desk")
        _identity(conn, role, team, LEAD_NAME, True)

    link.run(make)
    return Credentials(role, password, team, LEAD_NAME, True)


def agent(link: Link, team: str, member: str, *, machine: str | None = None) -> Credentials:
    """An agent's role (a new password each time: an invitation replaces the last one) and
    its member row, placed on ``machine``."""
    role = role_name(team, member)
    password = secrets.token_urlsafe(32)

    def make(conn: psycopg.Connection) -> None:
        _make_role(conn, role, password, "teamdeck_agent")
        _identity(conn, role, team, member, False)
        conn.execute(
            "INSERT INTO teamdeck.members (team, name, data, machine)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (team, name) DO UPDATE"
            " SET machine = coalesce(excluded.machine, teamdeck.members.machine)",
            (team, member, Jsonb({"agentId": f"{member}@{team}", "name": member}), machine),
        )

    link.run(make)
    return Credentials(role, password, team, member, False)


def set_password(link: Link, role: str, password: str) -> None:
    link.run(
        lambda c: c.execute(
            sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(role), sql.Literal(password))
        )
    )
