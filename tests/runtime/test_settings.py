"""Claude Code's settings files: where they are, how they merge, bad files as warnings, and
the atomic "always allow" write that keeps every other key."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from app.runtime.permissions import Rule
from app.runtime.permissions.settings import (
    SettingsError,
    add_allow_rule,
    load_settings,
    local_settings_path,
    user_settings_dir,
)


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    user = tmp_path / "user"
    project.mkdir()
    user.mkdir()
    return project, user


def test_user_dir_honours_claude_config_dir(tmp_path: Path) -> None:
    assert user_settings_dir({"CLAUDE_CONFIG_DIR": str(tmp_path)}) == tmp_path
    assert user_settings_dir({}) == Path.home() / ".claude"


def test_rules_from_all_three_files_add_up(dirs: tuple[Path, Path]) -> None:
    project, user = dirs
    write(user / "settings.json", {"permissions": {"allow": ["Bash(git:*)"]}})
    write(
        project / ".claude" / "settings.json",
        {"permissions": {"deny": ["Read(./.env)"], "ask": ["Bash(rm:*)"]}, "model": "x"},
    )
    write(
        project / ".claude" / "settings.local.json",
        {"permissions": {"allow": ["Read(./src/**)", "Bash(git:*)"], "defaultMode": "plan"}},
    )
    settings = load_settings(project, user_dir=user)
    assert settings.warnings == []
    assert settings.rules.allow == [Rule("Bash", "git:*"), Rule("Read", "./src/**")]
    assert settings.rules.deny == [Rule("Read", "./.env")]
    assert settings.rules.ask == [Rule("Bash", "rm:*")]
    assert settings.default_mode == "plan"
    assert len(settings.files) == 3


def test_most_specific_file_wins_for_modes(dirs: tuple[Path, Path]) -> None:
    project, user = dirs
    write(
        user / "settings.json",
        {"permissions": {"defaultMode": "acceptEdits"}, "teammateMode": "tmux"},
    )
    write(project / ".claude" / "settings.json", {"teammateMode": "process"})
    settings = load_settings(project, user_dir=user)
    assert settings.default_mode == "acceptEdits"
    assert settings.teammate_mode == "process"


def test_hooks_in_claude_codes_shape(dirs: tuple[Path, Path]) -> None:
    project, user = dirs
    write(
        user / "settings.json",
        {
            "hooks": {
                "TaskCompleted": [
                    {"hooks": [{"type": "command", "command": "make test", "timeout": 120}]}
                ]
            }
        },
    )
    write(
        project / ".claude" / "settings.json",
        {
            "hooks": {
                "TaskCompleted": [
                    {"matcher": "", "hooks": [{"type": "command", "command": "./check"}]}
                ],
                "TeammateIdle": [{"hooks": [{"type": "command", "command": "echo idle"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}],
            }
        },
    )
    settings = load_settings(project, user_dir=user)
    completed = settings.hooks_for("TaskCompleted")
    assert [(h.command, h.timeout) for h in completed] == [("make test", 120.0), ("./check", 60.0)]
    assert [h.command for h in settings.hooks_for("TeammateIdle")] == ["echo idle"]
    assert settings.hooks_for("TaskCreated") == []
    assert settings.warnings == []


def test_bad_files_and_entries_are_one_line_warnings(dirs: tuple[Path, Path]) -> None:
    project, user = dirs
    write(user / "settings.json", "{not json")
    write(project / ".claude" / "settings.json", "[1, 2]")
    write(
        project / ".claude" / "settings.local.json",
        {
            "permissions": {
                "allow": ["Bash(git:*)", "Bash()", 7],
                "deny": "Read",
                "defaultMode": "yolo",
            },
            "hooks": {
                "TaskCreated": [{"hooks": [{"type": "prompt", "prompt": "?"}, {"command": ""}]}]
            },
        },
    )
    settings = load_settings(project, user_dir=user)
    assert settings.rules.allow == [Rule("Bash", "git:*")]
    assert settings.rules.deny == []
    assert settings.default_mode is None
    assert settings.hooks_for("TaskCreated") == []
    assert all("\n" not in w for w in settings.warnings)
    text = "\n".join(settings.warnings)
    assert "not valid JSON" in text and str(user / "settings.json") in text
    assert "expected a JSON object" in text
    assert "empty pattern" in text and "must be a string" in text
    assert "'permissions.deny' must be a list" in text
    assert "unknown permissions.defaultMode 'yolo'" in text
    assert "only 'command' hooks" in text and "without a 'command'" in text


def test_include_user_false_skips_the_home(dirs: tuple[Path, Path]) -> None:
    project, user = dirs
    write(user / "settings.json", {"permissions": {"allow": ["Bash"]}})
    assert load_settings(project, user_dir=user, include_user=False).rules.allow == []


def test_add_allow_rule_keeps_every_other_key(dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    path = write(
        local_settings_path(project),
        {
            "env": {"A": "1"},
            "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"], "x": 1},
            "z": [1],
        },
    )
    os.chmod(path, 0o644)
    assert add_allow_rule(path, "Bash(git:*)") is True
    assert add_allow_rule(path, "Bash(git:*)") is False
    data = json.loads(path.read_text())
    assert data == {
        "env": {"A": "1"},
        "permissions": {"allow": ["Read", "Bash(git:*)"], "deny": ["Bash(rm:*)"], "x": 1},
        "z": [1],
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["settings.local.json"]  # no temp left


def test_add_allow_rule_creates_the_file(dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    path = local_settings_path(project)
    add_allow_rule(path, "Edit(src/**)")
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Edit(src/**)"]}}
    assert load_settings(project, include_user=False).rules.allow == [Rule("Edit", "src/**")]


def test_add_allow_rule_never_overwrites_a_broken_file(dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    path = write(local_settings_path(project), "{broken")
    with pytest.raises(SettingsError, match="not valid JSON"):
        add_allow_rule(path, "Read")
    assert path.read_text() == "{broken"
    write(path, {"permissions": {"allow": "Read"}})
    with pytest.raises(SettingsError, match="not a list"):
        add_allow_rule(path, "Read")
    with pytest.raises(ValueError, match="invalid permission rule"):
        add_allow_rule(path, "Bash(")
