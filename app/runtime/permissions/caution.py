"""Calls that run code or change what runs code, whatever a broad rule says.

A prefix rule like ``Bash(git:*)`` means "git commands", not "anything git can be told to run":
``git -c alias.x='!cmd' x``, ``git -c core.fsmonitor=…``, ``git rebase --exec``, ``git bisect
run``... run arbitrary programs. Inline code (``python3 -c``, ``perl -e``, ``eval``), ``find
-delete``/``-exec`` and a command word the shell expands (``/bin/r?``, ``$CMD``) hide what they
do from every rule. And a write to the files that configure code to run (``.claude/`` settings
with hooks, ``.git/`` config and hooks, ``.gitmodules``, ``.mcp.json``) is code execution one
step later. Such calls ask even when a broad rule or ``acceptEdits`` would allow them; only an
allow rule naming them exactly (the command itself, or a path pattern naming that file or
folder) or ``bypassPermissions`` lets them through without the person.

Rules are not a sandbox: this module narrows what a rule grants; the sandbox
(:mod:`app.runtime.sandbox`) limits what a command can do once it runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from pathlib import PurePath

from app.runtime.permissions.runs_code import runs_code
from app.runtime.permissions.shell import command_parts

#: Files and folders whose content makes a program run later (hooks, git config, MCP servers).
PROTECTED_NAMES: tuple[str, ...] = (".claude", ".git", ".gitmodules", ".mcp.json")

#: git options before the subcommand that run or redirect to other programs or repositories.
_GIT_GLOBAL = {
    "-c", "--config-env", "-C", "--exec-path", "--git-dir", "--work-tree", "-p", "--paginate",
    "--namespace", "--super-prefix", "--upload-pack", "--receive-pack",
}  # fmt: skip
#: git subcommands that run a program they are given (or configure one).
_GIT_SUBCOMMANDS = {
    "filter-branch", "mergetool", "difftool", "config", "submodule", "bisect", "daemon",
    "instaweb", "credential", "hook", "web--browse", "archimport", "cvsimport", "svn", "p4",
    "send-email", "remote-ext", "fast-import", "init",
}  # fmt: skip
#: Options of any git subcommand that run a program, or write or read outside the project.
_GIT_ANY = {
    "--exec", "--upload-pack", "--receive-pack", "--output", "--ext-diff", "--template",
    "--separate-git-dir", "--open-files-in-pager",
}  # fmt: skip
#: Short or shared options that do so only for some subcommands.
_GIT_BY_SUB: dict[str, set[str]] = {
    "rebase": {"-x", "-i", "--interactive"},
    "grep": {"-O"},
    "fetch": {"-u"},
    "pull": {"-u"},
    "clone": {"-u", "-c", "--config"},
    "ls-remote": {"-u"},
    "archive": {"--remote"},
}
#: Interpreters whose flag takes code inline.
_INLINE = {
    "python": ("-c",), "python3": ("-c",), "python2": ("-c",), "pypy": ("-c",),
    "perl": ("-e", "-E"), "ruby": ("-e",), "node": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",), "php": ("-r",), "lua": ("-e",), "Rscript": ("-e",),
    "tclsh": (), "osascript": ("-e",), "bun": ("-e", "--eval", "-p", "--print"),
}  # fmt: skip
_FIND_ACTIONS = {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                 "-fprintf", "-fls"}  # fmt: skip
_EXPANDS = re.compile(r"[*?\[$`]")


def command_caution(command: str, *, hidden_only: bool = False) -> str | None:
    """Why ``command`` must be asked about whatever a rule allows (``None``: nothing of the
    kind). Looks at every simple command in it and every form of each (wrappers unwrapped).
    ``hidden_only``: only what deny rules cannot see into (inline code, ``sed e``...; not a
    wrapper's command, which deny rules unwrap)."""
    for form in command_parts(command):
        try:
            words = shlex.split(form)
        except ValueError:
            words = form.split()
        assignments: list[str] = []
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            assignments.append(words[0])
            words = words[1:]
        found = runs_code([os.path.basename(words[0]), *words[1:]] if words else [], assignments)
        if found is not None and (found[1] or not hidden_only):
            return found[0]
        if not words:
            continue
        reason = _caution_of(words)
        if reason:
            return reason
    return None


def _inline_flag(words: list[str], flags: tuple[str, ...]) -> bool:
    """An inline-code flag among the options: ``-c``, ``--eval``, ``-e'code'`` or in a cluster
    of short options (``python3 -Ic``, ``perl -ne``)."""
    for word in words:
        if word in flags or word.split("=", 1)[0] in flags:
            return True
        if word.startswith("-") and not word.startswith("--"):
            letters = {f[1] for f in flags if len(f) == 2 and f.startswith("-")}
            if letters & set(word[1:]):
                return True
    return False


def _caution_of(words: list[str]) -> str | None:
    name = os.path.basename(words[0])
    if _EXPANDS.search(words[0]):
        return f"the command name {words[0]!r} is expanded by the shell"
    if name in ("eval", "source", "."):
        return f"{name} runs code that no rule can see"
    if name == "git":
        return _git_caution(words[1:])
    if name == "find" and _FIND_ACTIONS.intersection(words[1:]):
        action = next(w for w in words[1:] if w in _FIND_ACTIONS)
        return f"find {action} deletes or runs commands on what it finds"
    base = re.sub(r"[\d.]+$", "", name)  # python3.11 -> python
    flags = _INLINE.get(name, _INLINE.get(base))
    if flags is not None and (not flags or _inline_flag(words[1:], flags)):
        return f"{name} runs inline code that no rule can see"
    return None


def _git_caution(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        option = _option_in(args[i], _GIT_GLOBAL)
        if option:
            return f"git {option} can make git run another program or leave the project"
        i += 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1 :]
    if sub == "init":
        return "git init makes a repository whose config and hooks can run programs"
    if sub in _GIT_SUBCOMMANDS:
        if sub == "config" and _reads_config_only(rest):
            return None
        if sub == "submodule" and rest[:1] not in (["foreach"], ["update"], ["add"]):
            return None
        if sub == "bisect" and rest[:1] != ["run"]:
            return None
        return f"git {sub} can run other programs or change what git runs"
    risky = _GIT_ANY | _GIT_BY_SUB.get(sub, set())
    for word in rest:
        if word == "--":
            break
        option = _option_in(word, risky)
        if option:
            return f"git {sub} {option} can run another program or reach outside the project"
    return None


def _option_in(word: str, options: set[str]) -> str | None:
    """The option of ``options`` that ``word`` is: ``--name``, ``--name=value``, or a short
    option with its value attached (``-O'cmd'``, ``-cname=value``)."""
    name = word.split("=", 1)[0]
    if name in options:
        return name
    if not word.startswith("--") and len(word) > 2 and word[:2] in options:
        return word[:2]
    return None


def _reads_config_only(args: list[str]) -> bool:
    reading = {"--get", "--get-all", "--get-regexp", "-l", "--list", "--get-urlmatch",
               "--show-origin", "--show-scope", "get", "list"}  # fmt: skip
    return any(a in reading for a in args) and not any(a.startswith("--add") for a in args)


def protected_name(path: str, cwd: str | None = None) -> str | None:
    """The protected file or folder a path is (or is inside), e.g. ``.claude``; inside ``cwd``
    only the part below it counts (a teammate's worktree lives under ``.claude/worktrees/``,
    and its own files are not settings)."""
    pure = PurePath(path)
    if cwd is not None:
        with contextlib.suppress(ValueError):  # outside cwd: the whole path counts
            pure = pure.relative_to(cwd)
    for part in pure.parts:
        if part in PROTECTED_NAMES:
            return part
    return None
