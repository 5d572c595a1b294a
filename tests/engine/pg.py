"""The engine tests' handles on their throwaway server: teams with a desk and agents."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core import Home
from app.core.models import TeamMember
from app.engine import roles
from app.engine.link import Link
from app.engine.server import LocalServer

_counter = [0]


@dataclass
class Engine:
    server: LocalServer
    admin_url: str

    def admin(self) -> Link:
        return Link(self.admin_url)

    def team(self, members: list[str]) -> Team:
        """A fresh team with a desk and one role per member."""
        _counter[0] += 1
        name = f"t{_counter[0]}"
        with self.admin() as admin:
            roles.create_team(admin, name, {"description": "test"})
            desk = roles.desk(admin, name)
            agents = {m: roles.agent(admin, name, m) for m in members}
        return Team(
            name, desk.url(self.admin_url), {m: c.url(self.admin_url) for m, c in agents.items()}
        )


@dataclass
class Team:
    name: str
    desk_url: str
    urls: dict[str, str]

    def member(self, name: str) -> TeamMember:
        return TeamMember(agent_id=f"{name}@{self.name}", name=name)


def team_home(root: Path, team: str, *members: str) -> Home:
    """A home on one of the test's "machines": ``team`` made there, with ``members`` (the
    teammates that machine knows of)."""
    home = Home(root)
    home.teams.create(team, dedupe=False)
    for name in members:
        home.teams.add_member(team, TeamMember(agent_id=f"{name}@{team}", name=name))
    return home
