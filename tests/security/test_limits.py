"""Limits: oversized messages and inboxes are refused with one clear line, an error line never
echoes a 5,000-character input in full, and a unicode team name is converted with a notice or
refused -- never silently turned into dashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main as cli
from app.core import Home, InboxMessage, inbox_limits
from app.core.errors import InvalidNameError, TooLargeError
from app.core.paths import sanitize_name
from app.runtime.agent.channel import TeamChannel

LONG = "x" * 5000


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    home.teams.create("alpha")
    home.tasks("alpha").create("one")
    return home


def run(home: Home, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["--home", str(home.root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_oversized_message_is_refused_in_one_line(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    big = "y" * (inbox_limits.MAX_MESSAGE_BYTES + 1)
    with pytest.raises(TooLargeError, match="at most"):
        home.mailbox("alpha").send("team-lead", InboxMessage(sender="user", text=big))

    code, _, err = run(home, "send", "--team", "alpha", "--to", "team-lead", big, capsys=capsys)

    assert code == 1
    assert err.count("\n") == 1 and "bytes; at most" in err
    assert home.mailbox("alpha").read("team-lead") == []


def test_an_agent_cannot_send_an_oversized_message(home: Home) -> None:
    channel = TeamChannel(home, "alpha", "team-lead", None)
    with pytest.raises(TooLargeError):
        channel.deliver("user", "z" * (inbox_limits.MAX_MESSAGE_BYTES + 1))
    assert home.mailbox("alpha").read("user") == []


def test_an_inbox_over_its_cap_is_refused(
    home: Home, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(inbox_limits, "MAX_INBOX_BYTES", 4000)
    box = home.mailbox("alpha")
    for _ in range(3):
        box.send("team-lead", InboxMessage(sender="user", text="m" * 1000))

    code, _, err = run(
        home, "send", "--team", "alpha", "--to", "team-lead", "m" * 1000, capsys=capsys
    )

    assert code == 1
    assert err.count("\n") == 1
    assert str(home.layout.inbox_path("alpha", "team-lead")) in err and "--clear" in err
    assert len(box.read("team-lead")) == 3


@pytest.mark.parametrize(
    "argv",
    [
        ["team", "create", "x/" * 2500],
        ["team", "show", LONG],
        ["task", "show", "--team", "alpha", LONG],
        ["task", "update", "--team", "alpha", "1", "--status", LONG],
        ["task", "update", "--team", "alpha", "1", "--owner", LONG],
        ["send", "--team", "alpha", "--to", LONG, "hi"],
        ["inbox", "--team", "alpha", "--agent", LONG],
        ["approvals", "approve", LONG, LONG],
    ],
)
def test_error_lines_cut_long_inputs(
    home: Home, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(home, *argv, capsys=capsys)
    assert code in (1, 2)
    last = err.strip().splitlines()[-1]
    assert last.startswith("teamdeck: error: ")
    assert len(last) < 700, last[:200]
    assert "…" in last or "longer than" in last


def test_a_unicode_team_name_is_refused_with_its_ascii_spelling(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(home, "team", "create", "ünïcöde", capsys=capsys)
    assert code == 1
    assert err.count("\n") == 1 and "e.g. 'unicode'" in err
    code, _, err = run(home, "team", "create", "ünïcødé", capsys=capsys)
    assert code == 1
    assert err.count("\n") == 1 and "ø" in err and "e.g." not in err
    assert not home.layout.team_dir("-n-c-d-").exists()
    assert home.teams.names() == ["alpha"]
    with pytest.raises(InvalidNameError):
        sanitize_name("研究者", "agent name")
    assert sanitize_name("My Team", "team name") == "my-team"  # Claude Code's normaliser


def test_symbols_become_dashes_with_a_notice(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(home, "team", "create", "rocket 🚀 team", capsys=capsys)
    assert code == 0
    assert out.strip() == "created team rocket---team"
    assert "warning" in err and "'rocket---team'" in err
