"""Requests and answers in the engine (``app.core.store.RequestStore``).

An agent records its request; only the desk's role may answer it (the server refuses the
``UPDATE`` to any other role), and the answer is a conditional ``UPDATE ... WHERE answer IS
NULL``: the first answer wins, every later one is told so and changes nothing.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from app.core.errors import NotFoundError
from app.engine.errors import AlreadyAnsweredError
from app.engine.link import Link


class EngineRequests:
    def __init__(self, link: Link, team: str, me: str) -> None:
        self.link = link
        self.team = team
        self.me = me
        self.role = link.role

    def ask(self, request_id: str, requester: str, kind: str, body: dict[str, Any]) -> None:
        self.link.run(
            lambda c: c.execute(
                "INSERT INTO teamdeck.requests (team, id, requester, kind, body)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (team, id) DO NOTHING",
                (self.team, request_id, requester, kind, Jsonb(body)),
            )
        )

    def answer(self, request_id: str, body: dict[str, Any]) -> None:
        """Answer once; AlreadyAnsweredError if someone answered first, NotFoundError for an
        unknown id, AccessRefusedError if this role may not answer."""

        def update(conn: psycopg.Connection) -> int:
            return conn.execute(
                "UPDATE teamdeck.requests SET answer = %s, answered_by = current_user,"
                " answered_at = now() WHERE team = %s AND id = %s AND answer IS NULL",
                (Jsonb(body), self.team, request_id),
            ).rowcount

        if self.link.run(update) == 1:
            return
        row = self._row(request_id)
        if row is None:
            raise NotFoundError(f"request {request_id} does not exist in team {self.team!r}")
        if row[0] == body and row[1] == self.role:
            return  # this very answer, repeated after a lost acknowledgement
        raise AlreadyAnsweredError(f"request {request_id} was already answered")

    def _row(self, request_id: str) -> tuple[Any, ...] | None:
        return self.link.run(
            lambda c: c.execute(
                "SELECT answer, answered_by FROM teamdeck.requests WHERE team = %s AND id = %s",
                (self.team, request_id),
            ).fetchone()
        )

    def answer_of(self, request_id: str) -> dict[str, Any] | None:
        row = self._row(request_id)
        return row[0] if row else None

    def pending(self) -> list[tuple[str, str, str, dict[str, Any]]]:
        """Open requests this role can see: ``(id, requester, kind, body)``, oldest first."""
        rows = self.link.run(
            lambda c: c.execute(
                "SELECT id, requester, kind, body FROM teamdeck.requests"
                " WHERE team = %s AND answer IS NULL ORDER BY n",
                (self.team,),
            ).fetchall()
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]
