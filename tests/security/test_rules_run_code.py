"""Issue 28, item 5: a prefix rule for a tool does not allow the forms of that tool that run
another program (an exact rule naming the whole command still does), and ``teamdeck
permissions check`` says why. Item 4's ``git init``/``git config`` ask under ``Bash(git:*)``."""

from __future__ import annotations

import json

import pytest

from app.cli import main as cli

#: (prefix rule, command that runs something else)
FORMS = [
    ("awk", "awk 'BEGIN{system(\"id\")}'"),
    ("awk", "awk '{print | \"sh\"}' notes.md"),
    ("awk", "awk '{\"id\" | getline x; print x}' notes.md"),
    ("awk", "awk '{print > \"/home/p/.bashrc\"}' notes.md"),
    ("sed", "sed -n '1e id' notes.md"),
    ("sed", "sed 's/a/id/e' notes.md"),
    ("sed", "sed -n 'w /home/p/.profile' notes.md"),
    ("sed", "sed -f script.sed notes.md"),
    ("tar", "tar --to-command='sh -c id' -xf a.tar"),
    ("tar", "tar -I 'sh -c id' -xf a.tar"),
    ("tar", "tar --use-compress-program=./x -xf a.tar"),
    ("tar", "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=id ."),
    ("rsync", "rsync -e 'sh -c id' a host:b"),
    ("rsync", "rsync --rsh=./x a host:b"),
    ("zip", "zip a.zip notes.md -T -TT 'sh -c id'"),
    ("zip", "zip a.zip notes.md -T --unzip-command ./x"),
    ("less", "less '+!id' notes.md"),
    ("man", "man -P 'sh -c id' ls"),
    ("vim", "vim -c '!id' notes.md"),
    ("vim", "vim +'!id' notes.md"),
    ("find", "find . -exec id \\;"),
    ("find", "find . -execdir id \\;"),
    ("find", "find . -ok id \\;"),
    ("find", "find . -fprint /home/p/.bashrc"),
    ("xargs", "xargs rm -rf"),
    ("env", "env -S 'sh -c id'"),
    ("env", "env FOO=1 sh"),
    ("perl", "perl -e 'system q(id)'"),
    ("ruby", "ruby -e 'system %q(id)'"),
    ("node", 'node -e \'require("child_process").execSync("id")\''),
    ("python3", "python3 -c 'import os; os.system(\"id\")'"),
    ("make", "make test"),
    ("git", "git init"),
    ("git", "git config core.fsmonitor ./x"),
]
#: The same tools doing what their rule means: still allowed.
PLAIN = [
    ("awk", "awk '{print $1}' notes.md"),
    ("awk", "awk '$3 > 100' notes.md"),
    ("sed", "sed -n 's/a/b/p' notes.md"),
    ("tar", "tar -xzf a.tgz"),
    ("rsync", "rsync -av a b"),
    ("zip", "zip a.zip notes.md"),
    ("less", "less notes.md"),
    ("man", "man ls"),
    ("vim", "vim notes.md"),
    ("find", "find . -name '*.md'"),
    ("env", "env"),
    ("python3", "python3 tool.py"),
    ("git", "git status"),
]


def check(capsys: pytest.CaptureFixture[str], command: str, rule: str) -> dict[str, str]:
    code = cli.main(
        ["permissions", "check", "--no-settings", "--tool", "Bash", "--json",
         "--input", json.dumps({"command": command}), "--allow", rule]
    )  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0
    return json.loads(out)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("tool", "command"), FORMS)
def test_a_prefix_rule_does_not_allow_what_runs_another_program(
    capsys: pytest.CaptureFixture[str], tool: str, command: str
) -> None:
    said = check(capsys, command, f"Bash({tool}:*)")
    assert said["decision"] == "ask", said
    assert "needs approval: " in said["reason"] and said["reason"].endswith(
        f"(rule Bash({tool}:*))"
    )
    # An exact rule naming the whole command is the person's word for that command.
    assert check(capsys, command, f"Bash({command})")["decision"] == "allow"


@pytest.mark.parametrize(("tool", "command"), PLAIN)
def test_the_prefix_rule_still_allows_the_plain_forms(
    capsys: pytest.CaptureFixture[str], tool: str, command: str
) -> None:
    assert check(capsys, command, f"Bash({tool}:*)")["decision"] == "allow"


def test_check_says_why_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        ["permissions", "check", "--no-settings", "--tool", "Bash",
         "--input", json.dumps({"command": "sed -n '1e id' f"}), "--allow", "Bash(sed:*)"]
    )  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0
    assert out == (
        "ask: Bash(sed -n '1e id' f) needs approval: sed's script runs commands or writes "
        "files (e, w, s///e) (rule Bash(sed:*))\n"
    )
