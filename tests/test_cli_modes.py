"""Permission options on ``teamdeck tui|demo|run``: validation, the settings files, the
bypassPermissions guard, and the modes and rules reaching the runtime."""

from __future__ import annotations

import argparse
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from app.cli import main as cli
from app.cli.modes import ModeError, resolve_modes
from app.core import Home
from app.runtime.permissions import Rule


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project as the cwd, with its own home and Claude config dir."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("TEAMDECK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return root


def settings(root: Path, data: dict[str, Any], name: str = "settings.json") -> None:
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / name).write_text(json.dumps(data))


def args(**values: Any) -> argparse.Namespace:
    defaults: dict[str, Any] = {
        "permission_mode": None,
        "teammate_permission_mode": None,
        "allow": [],
        "deny": [],
        "dangerously_skip_permissions": False,
    }
    return argparse.Namespace(**{**defaults, **values})


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace the dashboard and headless entry points; record what they are given."""
    calls: list[dict[str, Any]] = []

    def fake_dashboard(home: Home, **kwargs: Any) -> int:
        calls.append({"ui": True, **kwargs})
        return 0

    def fake_headless(home: Home, goal: str, json_output: bool, **kwargs: Any) -> int:
        calls.append({"ui": False, **kwargs})
        return 0

    monkeypatch.setitem(
        sys.modules, "app.dashboard.launch", types.SimpleNamespace(run_dashboard=fake_dashboard)
    )
    monkeypatch.setitem(
        sys.modules, "app.cli.headless", types.SimpleNamespace(run_headless=fake_headless)
    )
    return calls


def test_unknown_mode_and_bad_rule_are_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str], captured: list[dict[str, Any]]
) -> None:
    code, _, err = run(capsys, "run", "goal", "--headless", "--permission-mode", "yolo")
    assert code == 2 and "invalid choice: 'yolo'" in err
    code, _, err = run(capsys, "run", "goal", "--headless", "--allow", "Bash(")
    assert code == 2 and "invalid permission rule 'Bash('" in err
    code, _, err = run(capsys, "tui", "--teammate-permission-mode", "delegate")
    assert code == 2 and "invalid choice" in err
    assert captured == []


def test_bypass_headless_needs_the_dangerous_flag(
    project: Path, capsys: pytest.CaptureFixture[str], captured: list[dict[str, Any]]
) -> None:
    code, _, err = run(capsys, "run", "g", "--headless", "--permission-mode", "bypassPermissions")
    assert code == 1
    assert err.count("\n") == 1 and "needs --dangerously-skip-permissions" in err
    settings(project, {"permissions": {"defaultMode": "bypassPermissions"}})
    code, _, err = run(capsys, "run", "g", "--headless")
    assert code == 1 and "--dangerously-skip-permissions" in err
    assert captured == []
    code, _, _ = run(capsys, "run", "g", "--headless", "--dangerously-skip-permissions")
    assert code == 0
    assert captured[-1]["lead_mode"] == captured[-1]["teammate_mode"] == "bypassPermissions"


def test_flags_and_settings_reach_the_runtime(
    project: Path, capsys: pytest.CaptureFixture[str], captured: list[dict[str, Any]]
) -> None:
    settings(project, {"permissions": {"allow": ["Bash(git:*)"], "deny": ["Read(./.env)"]}})
    settings(project, {"permissions": {"allow": ["Bash(make:*)"]}}, "settings.local.json")
    code, _, err = run(
        capsys, "run", "g", "--headless", "--permission-mode", "acceptEdits",
        "--allow", "Read(./src/**)", "--deny", "Bash(rm:*)",
    )  # fmt: skip
    assert code == 0, err
    call = captured[-1]
    assert (call["lead_mode"], call["teammate_mode"]) == ("acceptEdits", "acceptEdits")
    assert call["rules"].allow == [
        Rule("Bash", "git:*"),
        Rule("Bash", "make:*"),
        Rule("Read", "./src/**"),
    ]
    assert call["rules"].deny == [Rule("Read", "./.env"), Rule("Bash", "rm:*")]


def test_a_bad_settings_file_is_a_warning(
    project: Path, capsys: pytest.CaptureFixture[str], captured: list[dict[str, Any]]
) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{oops")
    code, _, err = run(capsys, "run", "g", "--headless")
    assert code == 0
    assert err.startswith("teamdeck: warning: ignoring settings file ") and "not valid JSON" in err
    assert err.count("\n") == 1
    assert (project / ".claude" / "settings.json").read_text() == "{oops"


def test_the_dashboard_gets_the_modes(
    project: Path, capsys: pytest.CaptureFixture[str], captured: list[dict[str, Any]]
) -> None:
    assert run(capsys, "tui", "--permission-mode", "plan")[0] == 0
    modes = captured[-1]["modes"]
    assert (modes.lead_mode, modes.teammate_mode) == ("plan", "default")
    assert run(capsys, "demo", "--permission-mode", "bypassPermissions")[0] == 0
    modes = captured[-1]["modes"]
    assert modes.confirm_bypass and modes.lead_mode == "default"
    assert modes.requested_lead_mode == "bypassPermissions"


def test_resolve_modes_rules(project: Path) -> None:
    settings(project, {"permissions": {"defaultMode": "acceptEdits"}})
    resolved = resolve_modes(args(), project, headless=True)
    assert (resolved.lead_mode, resolved.teammate_mode) == ("acceptEdits", "acceptEdits")
    resolved = resolve_modes(args(permission_mode="delegate"), project, headless=True)
    assert (resolved.lead_mode, resolved.teammate_mode) == ("delegate", "default")
    resolved = resolve_modes(
        args(permission_mode="plan", teammate_permission_mode="dontAsk"), project, headless=True
    )
    assert (resolved.lead_mode, resolved.teammate_mode) == ("plan", "dontAsk")
    resolved = resolve_modes(args(dangerously_skip_permissions=True), project, headless=True)
    assert resolved.lead_mode == "bypassPermissions" and resolved.bypass_allowed
    with pytest.raises(ModeError):
        resolve_modes(args(teammate_permission_mode="bypassPermissions"), project, headless=True)
    ui = resolve_modes(args(teammate_permission_mode="bypassPermissions"), project, headless=False)
    assert ui.confirm_bypass and ui.teammate_mode == "default"
    assert ui.requested_teammate_mode == "bypassPermissions" and not ui.bypass_allowed


def test_disable_bypass_permissions_mode_in_settings(
    project: Path, capsys: pytest.CaptureFixture[str], captured: list[dict[str, Any]]
) -> None:
    """Seed 001 §7: bypassPermissions "Can be disabled via ... permissions.
    disableBypassPermissionsMode". Asking for it is then one line, headless or not; a settings
    defaultMode of bypassPermissions falls back to default with a warning."""
    settings(project, {"permissions": {"disableBypassPermissionsMode": "disable"}})
    where = str(project / ".claude" / "settings.json")
    for argv in (
        ("run", "g", "--headless", "--dangerously-skip-permissions"),
        ("tui", "--permission-mode", "bypassPermissions"),
        ("tui", "--teammate-permission-mode", "bypassPermissions"),
    ):
        code, _, err = run(capsys, *argv)
        assert code == 1 and err.count("\n") == 1, argv
        assert "disabled by permissions.disableBypassPermissionsMode" in err and where in err
    assert captured == []
    assert run(capsys, "tui")[0] == 0
    modes = captured[-1]["modes"]
    assert modes.bypass_disabled and not modes.bypass_allowed and not modes.confirm_bypass

    settings(
        project,
        {"permissions": {"defaultMode": "bypassPermissions"}},
        "settings.local.json",
    )
    code, _, err = run(capsys, "run", "g", "--headless")
    assert code == 0
    assert "defaultMode bypassPermissions is disabled" in err
    assert captured[-1]["lead_mode"] == "default" and captured[-1]["allow_bypass"] is False

    settings(project, {"permissions": {"disableBypassPermissionsMode": True}})
    resolved = resolve_modes(args(dangerously_skip_permissions=True), project, headless=True)
    assert resolved.bypass_allowed  # not "disable": ignored, with a warning
    assert any('must be "disable"' in w for w in resolved.warnings)


def test_the_runtime_is_told_whether_bypass_is_allowed(
    project: Path, capsys: pytest.CaptureFixture[str], captured: list[dict[str, Any]]
) -> None:
    """Seed 000 §"Permission modes": bypassPermissions "requires flag". The flag reaches the
    runtime as ``allow_bypass`` (which gates the Task tool's ``mode`` too)."""
    assert run(capsys, "run", "g", "--headless", "--dangerously-skip-permissions")[0] == 0
    assert captured[-1]["allow_bypass"] is True
    assert run(capsys, "run", "g", "--headless", "--permission-mode", "acceptEdits")[0] == 0
    assert captured[-1]["allow_bypass"] is False


def test_the_stop_line_counts_in_the_singular_and_the_plural() -> None:
    """Issue 19, item 19: the headless stop line said "1 pending tasks"."""
    from app.cli.headless import counted

    assert counted(1, "pending task") == "1 pending task"
    assert counted(0, "pending task") == "0 pending tasks"
    assert counted(3, "teammate") == "3 teammates"


def test_the_permission_timeout_reaches_the_runtime_and_process_teammates(
    project: Path, capsys: pytest.CaptureFixture[str], captured: list[dict[str, Any]]
) -> None:
    """``--permission-timeout`` on every command that runs a team (default 300, 0: no
    limit), carried to the teammate processes' command line."""
    assert run(capsys, "run", "g", "--headless", "--permission-timeout", "12.5")[0] == 0
    assert captured[-1]["permission_timeout"] == 12.5
    assert run(capsys, "run", "g", "--permission-timeout", "0")[0] == 0
    assert captured[-1]["modes"].runtime_kwargs()["permission_timeout"] == 0
    assert run(capsys, "demo", "--permission-timeout", "30")[0] == 0
    assert captured[-1]["modes"].runtime_kwargs()["permission_timeout"] == 30
    assert run(capsys, "tui")[0] == 0
    assert captured[-1]["modes"].runtime_kwargs()["permission_timeout"] == 300
    assert run(capsys, "tui", "--permission-timeout", "0")[0] == 0
    modes = captured[-1]["modes"]
    assert modes.runtime_kwargs()["permission_timeout"] == 0

    from app.runtime.agent_main import build_parser
    from app.runtime.runners.base import TeammateSpec
    from app.runtime.team.runtime import TeamRuntime

    kwargs = {**modes.runtime_kwargs(), "teammate_backend": "process"}
    runtime = TeamRuntime(Home(project.parent / "home"), cwd=project, **kwargs)
    assert runtime.processes is not None
    spec = TeammateSpec("crew", "ann", "", "sonnet", "default", "blue", project)
    command = runtime.processes._launch().command(spec, "process")
    assert build_parser().parse_args(command[4:]).permission_timeout == 0


@pytest.mark.parametrize("value", ["-1", "soon", "nan", "inf"])
def test_a_bad_permission_timeout_is_one_usage_line(
    value: str,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    captured: list[dict[str, Any]],
) -> None:
    code, _, err = run(capsys, "run", "g", "--headless", "--permission-timeout", value)
    assert code == 2 and captured == []
    assert err.count("\n") == 1
    assert err.startswith("teamdeck run: error: argument --permission-timeout: expected seconds, "
                          f"0 or more (0: no limit), not {value!r}")  # fmt: skip
