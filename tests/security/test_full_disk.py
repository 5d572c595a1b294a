"""A full disk (a small tmpfs; skipped where mounting one is refused): every failure names "No
space left on device" and the path in one line, nothing half-made is left behind, and
``teamdeck history`` works during and after. Also: a dangling ``history.db`` symlink is refused,
never followed."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.archive import NullRecorder, Recorder, connect, start_run
from app.cli import main as cli
from app.core import Home
from app.runtime.events import TranscriptEntry


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip("mounting a small tmpfs is refused here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
    with open(filler, "ab", buffering=0) as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 512)
    return filler


def run(home: Home, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["--home", str(home.root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def record_a_run(home: Home) -> None:
    recorder = start_run(home, None, source="headless", goal="before the disk filled")
    assert isinstance(recorder, Recorder)
    recorder.on_event(TranscriptEntry("worker", "assistant", "hello", {}))
    recorder.close("finished")


def test_a_full_disk_is_named_and_history_keeps_working(
    disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Home(disk / "home")
    home.teams.create("alpha")
    record_a_run(home)
    filler = fill(disk)

    code, _, err = run(home, "team", "create", "beta", capsys=capsys)
    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith("teamdeck: error: No space left on device: ")
    assert str(home.layout.teams_dir / "beta") in err
    assert not home.layout.team_dir("beta").exists()
    assert not home.layout.task_dir("beta").exists()

    code, _, err = run(home, "task", "create", "--team", "alpha", "work", capsys=capsys)
    assert code == 1 and err.count("\n") == 1
    assert "No space left on device: " in err and str(home.layout.task_dir("alpha")) in err

    warnings: list[str] = []
    recorder = start_run(home, None, source="headless", warn=warnings.append)
    recorder.on_event(TranscriptEntry("worker", "assistant", "lost", {}))
    recorder.close("finished")
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert f"No space left on device: {home.root / 'history.db'}" in warnings[0]

    code, out, err = run(home, "history", capsys=capsys)
    assert (code, err) == (0, "")
    assert "finished" in out

    filler.unlink()
    code, out, err = run(home, "history", capsys=capsys)
    assert (code, err) == (0, "")
    assert "finished" in out
    code, out, _ = run(home, "team", "create", "beta", capsys=capsys)
    assert code == 0


def test_a_history_started_on_a_full_disk_leaves_no_empty_file(
    disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Home(disk / "home")
    home.root.mkdir()
    filler = fill(disk)

    warnings: list[str] = []
    recorder = start_run(home, None, source="headless", warn=warnings.append)
    assert isinstance(recorder, NullRecorder)
    assert len(warnings) == 1 and "No space left on device" in warnings[0]
    assert not (home.root / "history.db").exists()

    filler.unlink()
    code, out, err = run(home, "history", capsys=capsys)
    assert (code, out.strip(), err) == (0, "no runs recorded yet", "")


def test_a_dangling_history_symlink_is_refused(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.root.mkdir()
    target = tmp_path / "elsewhere" / "planted.db"
    target.parent.mkdir()
    (home.root / "history.db").symlink_to(target)

    warnings: list[str] = []
    recorder = start_run(home, None, source="headless", warn=warnings.append)
    recorder.close("finished")

    assert isinstance(recorder, NullRecorder)
    assert len(warnings) == 1 and "symlink" in warnings[0]
    assert not target.exists()
    with pytest.raises(Exception, match="symlink"):
        connect(home.root / "history.db")
    assert os.listdir(target.parent) == []
