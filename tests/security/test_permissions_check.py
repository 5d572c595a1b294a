"""``teamdeck permissions check``: the decision, the rule or reason, and clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main as cli


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["permissions", "check", "--no-settings", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_allowed_call_names_its_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(
        capsys, "--tool", "Bash", "--input", '{"command": "git status"}', "--allow", "Bash(git:*)"
    )
    assert code == 0
    assert out == "allow: Bash(git status) is allowed by the rule Bash(git:*)\n"


def test_json_gives_the_decision_reason_rule_and_mode(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(
        capsys, "--tool", "Bash", "--input", '{"command": "stdbuf -o0 rm -rf build"}',
        "--deny", "Bash(rm:*)", "--mode", "bypassPermissions", "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out) == {
        "decision": "deny",
        "reason": "Bash(stdbuf -o0 rm -rf build) is denied by the rule Bash(rm:*)",
        "rule": "Bash(rm:*)",
        "mode": "bypassPermissions",
    }


def test_a_protected_write_asks_in_accept_edits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = json.dumps({"file_path": str(tmp_path / ".claude/settings.json"), "content": ""})
    code, out, _ = check(
        capsys, "--tool", "Write", "--cwd", str(tmp_path), "--mode", "acceptEdits",
        "--input", target,
    )  # fmt: skip
    assert code == 0 and out.startswith("ask: ") and "configures code to run" in out


def test_settings_files_of_the_folder_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "user"))
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(curl:*)"]}})
    )
    code = cli.main(["permissions", "check", "--tool", "Bash", "--cwd", str(tmp_path),
                     "--input", '{"command": "curl x"}'])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("deny: ") and "Bash(curl:*)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tool", "Bash", "--input", "{nope"], "--input is not JSON"),
        (["--tool", "Bash", "--input", "[1]"], "--input must be a JSON object"),
        (["--tool", "Bash", "--input", "{}", "--mode", "yolo"], "unknown mode 'yolo'"),
        (["--tool", "Bash", "--input", "{}", "--allow", "Bash(("], "invalid permission rule"),
    ],
)
def test_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = check(capsys, *argv)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
