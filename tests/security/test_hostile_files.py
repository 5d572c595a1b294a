"""Hostile files in a home: a symlink or a FIFO where a task or a team config belongs, a huge
``.highwatermark``, a lone surrogate in an inbox. Each one warns (or fails) with one line
naming the file; the rest of the listing still shows, and nothing ever blocks on a FIFO.
Also: nothing is left behind by a failed ``task update``, and dependency cycles are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main as cli
from app.core import Home
from app.core.errors import CorruptFileError, DependencyCycleError, UnreadableFileError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    home.teams.create("alpha")
    home.teams.create("beta")
    tasks = home.tasks("alpha")
    tasks.create("one")
    tasks.create("two")
    return home


def run(home: Home, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["--home", str(home.root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _teamdeck(home: Home, *argv: str) -> subprocess.CompletedProcess[str]:
    """A real process: a FIFO that blocked would hang it (the timeout only guards the suite)."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "app.cli.main", "--home", str(home.root), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_one_odd_task_file_warns_and_the_list_goes_on(
    home: Home, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = home.layout.task_dir("alpha")
    odd = folder / "5.json"
    if kind == "symlink":
        odd.symlink_to(folder / "1.json")
    else:
        os.mkfifo(odd)

    code, out, err = run(home, "task", "list", "--team", "alpha", capsys=capsys)

    assert code == 0
    assert "one" in out and "two" in out
    assert err.count("\n") == 1 and err.startswith("teamdeck: warning: ")
    assert str(odd) in err
    with pytest.raises(UnreadableFileError, match="5.json"):
        home.tasks("alpha").get("5")
    with pytest.raises(CorruptFileError):  # handled wherever a corrupt file is
        home.tasks("alpha").get("5")


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_one_odd_team_config_warns_and_the_list_goes_on(
    home: Home, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = home.layout.config_path("beta")
    saved = config.with_name("saved.json")
    config.rename(saved)
    if kind == "symlink":
        config.symlink_to(saved)
    else:
        os.mkfifo(config)

    code, out, err = run(home, "team", "list", capsys=capsys)

    assert code == 0
    assert "alpha" in out
    assert err.count("\n") == 1 and err.startswith("teamdeck: warning: ")
    assert str(config) in err


def test_a_fifo_task_file_never_blocks_a_real_process(home: Home) -> None:
    os.mkfifo(home.layout.task_dir("alpha") / "7.json")
    os.mkfifo(home.layout.config_path("beta").with_name("fifo"))
    listed = _teamdeck(home, "task", "list", "--team", "alpha")
    assert listed.returncode == 0, listed.stderr
    assert "7.json" in listed.stderr
    shown = _teamdeck(home, "task", "show", "--team", "alpha", "7")
    assert shown.returncode == 1
    assert shown.stderr.count("\n") == 1 and "7.json is not a regular file" in shown.stderr


def test_a_huge_highwatermark_is_one_line_naming_it(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    mark = home.layout.highwatermark_path("alpha")
    mark.write_text("9" * 5000)

    code, _, err = run(home, "task", "create", "--team", "alpha", "three", capsys=capsys)

    assert code == 1
    assert err.count("\n") == 1
    assert str(mark) in err and "5000 digits" in err
    assert "sys.set_int_max_str_digits" not in err
    assert len(err) < 400


def test_updating_a_missing_task_leaves_no_lock_file(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = home.layout.task_dir("alpha")
    before = sorted(os.listdir(folder))

    code, _, err = run(
        home, "task", "update", "--team", "alpha", "77", "--status", "completed", capsys=capsys
    )

    assert code == 1 and "task #77 does not exist" in err
    assert sorted(os.listdir(folder)) == before


def test_deleting_a_task_leaves_no_lock_file(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = home.layout.task_dir("alpha")
    home.tasks("alpha").update("2", status="in_progress")  # its lock file is made
    before = sorted(os.listdir(folder))
    assert "2.json" in before

    code, _, err = run(home, "task", "delete", "--team", "alpha", "2", capsys=capsys)

    assert (code, err) == (0, "")
    after = sorted(os.listdir(folder))
    assert "2.json" not in after and "2.json.lock" not in after
    assert set(after) <= set(before)


def test_a_lone_surrogate_in_an_inbox_prints(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    inbox = home.layout.inbox_path("alpha", "team-lead")
    inbox.write_text(
        '[{"from": "a", "text": "bad \\ud800 text", "timestamp": "2024-01-01T00:00:00Z", '
        '"read": false}]'
    )

    code, out, err = run(home, "inbox", "--team", "alpha", "--agent", "team-lead", capsys=capsys)
    assert (code, err) == (0, "")
    assert "bad \\ud800 text" in out

    code, out, err = run(
        home, "inbox", "--team", "alpha", "--agent", "team-lead", "--json", capsys=capsys
    )
    assert (code, err) == (0, "")
    assert json.loads(out)[0]["text"] == "bad \ud800 text"


def test_self_blocking_and_cycles_are_refused(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = home.tasks("alpha")
    with pytest.raises(DependencyCycleError):
        tasks.update("1", add_blocked_by=["1"])
    tasks.update("2", add_blocked_by=["1"])
    with pytest.raises(DependencyCycleError):
        tasks.update("1", add_blocked_by=["2"])
    with pytest.raises(DependencyCycleError):
        tasks.update("2", add_blocks=["1"])

    code, _, err = run(
        home, "task", "update", "--team", "alpha", "1", "--blocked-by", "2", capsys=capsys
    )
    assert code == 1 and "cycle" in err and err.count("\n") == 1
    assert tasks.require("1").blocked_by == [] and tasks.require("2").blocks == []
