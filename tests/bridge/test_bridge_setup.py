"""``teamdeck claude setup``: teamdeck's hooks merged into Claude Code's settings, idempotent,
and ``--remove`` puts the file back byte for byte (or, when Claude Code changed it since, takes
out only teamdeck's entries and says so)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from app.cli.main import main
from app.runtime.bridge import install

#: A settings file as a person keeps it: their own formatting, a hook of their own, a rule.
ORIGINAL = (
    b'{\n    "permissions": {"allow": ["Bash(git status)"]},\n'
    b'    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": '
    b'[{"type": "command", "command": "my-audit"}]}]},\n'
    b'    "model": "claude-opus-5-5"\n}'
)


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    teamdeck, claude = tmp_path / "teamdeck-home", tmp_path / "claude-home"
    claude.mkdir()
    monkeypatch.setenv("TEAMDECK_HOME", str(teamdeck))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    return teamdeck, claude


def setup(*args: str) -> int:
    return main(["claude", "setup", *args])


def hooks_of(path: Path) -> dict[str, list[dict[str, object]]]:
    return json.loads(path.read_bytes())["hooks"]  # type: ignore[no-any-return]


def test_setup_merges_every_event_with_a_timeout_and_keeps_the_persons_hooks(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    settings = homes[1] / "settings.json"
    settings.write_bytes(ORIGINAL)

    assert setup() == 0

    hooks = hooks_of(settings)
    assert set(install.EVENTS) <= set(hooks)
    for event in ("PermissionRequest", "PreToolUse", "SessionStart", "TeammateIdle"):
        ours = [
            h
            for group in hooks[event]
            for h in group["hooks"]  # type: ignore[attr-defined]
            if install.is_teamdeck_command(h["command"])
        ]
        assert len(ours) == 1
        # the stdlib-only client run by this Python, isolated and without site (cheapest start)
        assert ours[0]["command"].endswith(f"hook_client.py {event}")
        assert " -I -S " in ours[0]["command"]
        assert 0 < ours[0]["timeout"] < 600  # never Claude Code's 600 s default
    assert hooks["PreToolUse"][0] == {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "my-audit"}],
    }
    data = json.loads(settings.read_bytes())
    assert data["permissions"] == {"allow": ["Bash(git status)"]}
    assert data["model"] == "claude-opus-5-5"
    assert "installed teamdeck's hooks" in capsys.readouterr().out


def test_setup_twice_changes_nothing(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    settings = homes[1] / "settings.json"
    settings.write_bytes(ORIGINAL)
    assert setup() == 0
    first = settings.read_bytes()
    assert setup() == 0
    assert settings.read_bytes() == first
    assert "already installed" in capsys.readouterr().out


def test_remove_restores_the_file_byte_for_byte(homes: tuple[Path, Path]) -> None:
    settings = homes[1] / "settings.json"
    settings.write_bytes(ORIGINAL)
    assert setup() == 0
    assert setup() == 0
    assert (homes[0] / install.STATE_DIR).is_dir()  # the original is kept in teamdeck's home

    assert setup("--remove") == 0

    assert settings.read_bytes() == ORIGINAL


def test_remove_after_setup_of_a_missing_file_removes_it(homes: tuple[Path, Path]) -> None:
    settings = homes[1] / "settings.json"
    assert setup() == 0
    assert settings.is_file()
    assert setup("--remove") == 0
    assert not settings.exists()


def test_remove_after_claude_code_changed_the_file_takes_out_only_teamdecks_entries(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    settings = homes[1] / "settings.json"
    settings.write_bytes(ORIGINAL)
    assert setup() == 0
    data = json.loads(settings.read_bytes())
    data["permissions"]["allow"].append("Bash(touch:*)")  # an "always allow" Claude Code added
    settings.write_text(json.dumps(data, indent=2))
    capsys.readouterr()

    assert setup("--remove") == 0

    out = capsys.readouterr().out
    assert "changed since setup" in out and "only teamdeck's hook entries" in out
    left = json.loads(settings.read_bytes())
    assert left["permissions"]["allow"] == ["Bash(git status)", "Bash(touch:*)"]
    assert left["hooks"] == {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-audit"}]}]
    }
    assert not install.installed_events(left)


def test_status_says_what_is_installed(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert setup("--status") == 0
    assert "not installed" in capsys.readouterr().out
    assert setup() == 0
    capsys.readouterr()
    assert setup("--status") == 0
    out = capsys.readouterr().out
    assert "are installed in" in out and "PermissionRequest" in out
    assert "byte for byte" in out
    assert "no teamdeck is listening" in out


def test_project_setup_writes_the_local_settings(
    homes: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    assert setup("--project") == 0
    local = project / ".claude" / "settings.local.json"
    assert install.installed_events(json.loads(local.read_bytes())) == list(install.EVENTS)
    assert not (homes[1] / "settings.json").exists()
    assert setup("--project", "--remove") == 0
    assert not local.exists()


def test_a_settings_file_that_is_not_json_is_left_alone(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    settings = homes[1] / "settings.json"
    settings.write_bytes(b"{not json")
    assert setup() == 1
    assert settings.read_bytes() == b"{not json"
    assert "not valid JSON" in capsys.readouterr().err


def test_status_says_when_the_hook_program_is_gone(tmp_path: Path) -> None:
    """teamdeck moved or reinstalled: the installed command names a file that is not there
    (Python would exit 2 on it, which Claude Code takes as a hook error)."""
    target = tmp_path / "settings.json"
    program = [sys.executable, "-I", "-S", str(tmp_path / "old" / "hook_client.py")]
    install.install(target, tmp_path / "td", program)
    lines = install.status(target, tmp_path / "td")
    assert any("program is missing" in line and "old/hook_client.py" in line for line in lines)
    install.install(target, tmp_path / "td")  # setup again: this installation's client
    assert not any("missing" in line for line in install.status(target, tmp_path / "td"))
