"""A deleted team stays deleted (issue 19): a writer of the lead's files (its record, event log,
conversation) never creates the team's folder again, even when the team is deleted between its
look and its write; and deleting a team removes its folder even when a writer (a config lock)
slips a file into it while it is being removed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from app.core.paths import LEAD_NAME
from app.runtime.runners.event_log import LogWriter
from app.runtime.runners.process_record import AgentRecord, TeamGoneError, write_record
from app.runtime.team import lead_state

TEAM = "gone"


@pytest.fixture
def deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A team just deleted -- though a writer that looked a moment before saw its folder: every
    ``is_dir`` answers yes, as it did before the deletion."""
    home = Home(tmp_path / "home")
    home.teams.create(TEAM)
    home.teams.delete(TEAM)
    assert not home.layout.team_dir(TEAM).exists()
    monkeypatch.setattr(Path, "is_dir", lambda self: True)
    return home


def test_the_leads_writers_never_bring_back_a_deleted_team(deleted: Home) -> None:
    layout = deleted.layout
    with pytest.raises(TeamGoneError):
        write_record(
            layout.agent_record_path(TEAM, LEAD_NAME),
            AgentRecord(LEAD_NAME, TEAM, os.getpid(), "lead"),
        )
    LogWriter(layout.agent_log_path(TEAM, LEAD_NAME)).write({"event": "status", "status": "idle"})
    with pytest.raises(TeamGoneError):
        lead_state._write_conversation(lead_state.conversation_path(deleted, TEAM), {})
    assert not layout.team_dir(TEAM).exists(), sorted(layout.team_dir(TEAM).rglob("*"))


def test_deleting_a_team_removes_a_file_a_writer_slipped_in_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Home(tmp_path / "home")
    home.teams.create(TEAM)
    team_dir = home.layout.team_dir(TEAM)
    remove = shutil.rmtree
    raced: list[Path] = []

    def racing_rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        remove(path, *args, **kwargs)
        if Path(path) == team_dir and not raced:  # a config writer's lock, created meanwhile:
            team_dir.mkdir()  # the removal's last rmdir failed, the folder stayed with it
            (team_dir / "config.json.lock").touch()
            raced.append(team_dir)

    monkeypatch.setattr("app.core.teams.shutil.rmtree", racing_rmtree)
    home.teams.delete(TEAM)
    assert raced and not team_dir.exists(), sorted(team_dir.rglob("*"))
