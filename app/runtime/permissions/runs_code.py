"""Ordinary tools that can be told to run another program, and the forms that do.

A prefix rule like ``Bash(awk:*)`` means "awk over some text", not ``awk 'BEGIN{system("id")}'``;
``Bash(sed:*)`` is not ``sed -n '1e id'``. Each check below returns why one simple command (its
words, the command name first, without directory) runs something its rule does not name, and
whether deny rules can still see that something (a wrapper's command can: deny rules unwrap
it; an awk program's ``system()`` cannot). Errs towards asking.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: (reason, hidden from deny rules)
Finding = tuple[str, bool]

_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
#: awk program text that runs a command or writes a file: system(), a pipe, print > file.
_AWK_RUNS = re.compile(r"\bsystem\s*\(|\|\s*&?\s*getline|\|\s*\"|\|\s*[A-Za-z_(]|"
                       r"\b(?:print|printf)\b[^;{}\n]*>|\bgetline\b")  # fmt: skip
_AWK_FILE_OPTIONS = ("-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load")

_SEDS = frozenset({"sed", "gsed"})
#: A sed ``s`` command: delimiter, regex, replacement, flags.
_SED_S = re.compile(
    r"s(?P<d>[^\w\s\\])(?:\\.|(?!(?P=d)).)*(?P=d)(?:\\.|(?!(?P=d)).)*(?P=d)(?P<f>[\w]*)"
)
_SED_ADDRESS = re.compile(r"/(?:\\.|[^/\n])*/[IM]*")
_SED_COMMAND = re.compile(r"(?:^|[;{}\n!,$0-9]|~\d+)\s*(?P<c>[ewW])(?=\s|$|;|})")

_TAR_LONG = ("--to-command", "--use-compress-program", "--checkpoint-action", "--info-script",
             "--new-volume-script", "--rsh-command", "--rmt-command", "--index-file")  # fmt: skip
_RSYNC_LONG = ("--rsh", "--rsync-path", "--config", "--early-input")
_ZIP_LONG = ("--unzip-command", "-TT")
_PAGER_VARS = frozenset({"LESSOPEN", "LESSCLOSE", "LESSKEY", "LESSKEYIN", "LESSKEY_SYSTEM",
                         "LESSKEYIN_SYSTEM", "LESSEDIT", "PAGER", "MANPAGER", "MANOPT", "EDITOR",
                         "VISUAL", "BROWSER", "GROFF_COMMAND", "MANROFFOPT"})  # fmt: skip
_LESS = frozenset({"less", "more", "most", "pg"})
_MAN_OPTIONS = ("-P", "--pager", "-H", "--html", "-p", "--preprocessor", "-C", "--config-file",
                "-X", "--gxditview", "-T", "--troff-device", "-Z", "--ditroff")  # fmt: skip
_VIMS = frozenset({"vim", "vi", "nvim", "ex", "view", "rvim", "gvim", "vimdiff", "nvi", "evim"})
_VIM_OPTIONS = ("-c", "--cmd", "-S", "-u", "-U", "-s", "-w", "-W", "--remote-send", "-q")
#: Wrappers: they run the command in their later words (deny rules unwrap them).
WRAPPERS = frozenset(
    {
        "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "xargs",
        "timeout", "stdbuf", "setsid", "ionice", "chrt", "taskset", "busybox", "unbuffer",
        "flock", "watch", "catchsegv", "chroot", "nsenter", "unshare", "strace", "ltrace",
        "parallel", "script", "faketime", "firejail", "proot", "fakeroot", "su", "runuser",
    }
)  # fmt: skip
_MAKES = frozenset({"make", "gmake", "bmake", "pmake"})


def _option(words: list[str], names: tuple[str, ...]) -> str | None:
    """The first of ``names`` among ``words`` (``--name``, ``--name=value``, ``-xVALUE``)."""
    for word in words:
        if word == "--":
            return None
        head = word.split("=", 1)[0]
        for name in names:
            if head == name or (not name.startswith("--") and word.startswith(name)):
                return name
    return None


def _short_cluster_has(words: list[str], letters: str) -> str | None:
    """A letter of ``letters`` in a cluster of short options (``-xIzstd``: ``I``)."""
    for word in words:
        if word == "--":
            return None
        if word.startswith("-") and not word.startswith("--"):
            for letter in word[1:]:
                if letter in letters:
                    return f"-{letter}"
                if not letter.isalpha():
                    break
    return None


def _awk(name: str, args: list[str]) -> Finding | None:
    option = _option(args, _AWK_FILE_OPTIONS)
    if option:
        return f"{name} {option} runs a program no rule can see", True
    program = next((w for w in args if not w.startswith("-")), "")
    if _AWK_RUNS.search(program):
        return f"{name}'s program runs commands or writes files (system, a pipe, print >)", True
    return None


def sed_script_runs(script: str) -> bool:
    """Whether a sed script has an ``e`` command, ``w``/``W`` (write a file) or an ``s``
    command with the ``e`` or ``w`` flag. Unsure (unbalanced delimiters) counts as yes."""
    rest = script
    for match in _SED_S.finditer(script):
        if set(match.group("f")) & set("ew"):
            return True
    rest = _SED_S.sub(" ", rest)
    rest = _SED_ADDRESS.sub(" ", rest)
    if re.search(r"(?:^|[;\n{}])\s*s[^\w\s\\]", rest):
        return True  # an s command the pattern could not read: do not guess
    return bool(_SED_COMMAND.search(rest))


def _sed(name: str, args: list[str]) -> Finding | None:
    if "--sandbox" in args:
        return None
    if _option(args, ("-f", "--file")):
        return f"{name} -f runs a script no rule can see", True
    scripts: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 2
            continue
        if word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
        elif word.startswith("-e") and len(word) > 2:
            scripts.append(word[2:])
        i += 1
    if not scripts:
        first = next((w for w in args if not w.startswith("-")), None)
        scripts = [first] if first is not None else []
    if any(sed_script_runs(s) for s in scripts):
        return f"{name}'s script runs commands or writes files (e, w, s///e)", True
    return None


def _tar(name: str, args: list[str]) -> Finding | None:
    option = _option(args, _TAR_LONG) or _short_cluster_has(args, "IF")
    if option is None and args and not args[0].startswith("-") and set(args[0]) & set("IF"):
        option = args[0]  # old style: tar cIf prog ...
    if option:
        return f"{name} {option} runs another program", True
    return None


def _rsync(name: str, args: list[str]) -> Finding | None:
    option = _option(args, _RSYNC_LONG) or _short_cluster_has(args, "e")
    return (f"{name} {option} runs another program", True) if option else None


def _zip(name: str, args: list[str]) -> Finding | None:
    option = _option(args, _ZIP_LONG)
    return (f"{name} {option} runs another program", True) if option else None


def _less(name: str, args: list[str]) -> Finding | None:
    for word in args:
        if word.startswith("+"):
            return f"{name} {word[:12]} runs a pager command (! runs a shell)", True
    option = _option(args, ("-k", "--lesskey-file", "--lesskey-src", "--lesskey-content"))
    return (f"{name} {option} loads key bindings that can run commands", True) if option else None


def _man(name: str, args: list[str]) -> Finding | None:
    option = _option(args, _MAN_OPTIONS)
    return (f"{name} {option} runs another program", True) if option else None


def _vim(name: str, args: list[str]) -> Finding | None:
    for word in args:
        if word.startswith("+"):
            return f"{name} {word[:12]} runs an editor command", True
    option = _option(args, _VIM_OPTIONS)
    return (f"{name} {option} runs editor commands", True) if option else None


def _env(name: str, args: list[str]) -> Finding | None:
    option = _option(args, ("-S", "--split-string"))
    if option:
        return f"env {option} runs a command line no rule can see", True
    return _wrapper(name, [w for w in args if not re.match(r"^[A-Za-z_]\w*=", w)])


def _wrapper(name: str, args: list[str]) -> Finding | None:
    inner = next((w for w in args if not w.startswith("-")), None)
    if inner is None:
        return None
    return (
        f"{name} runs another command ({inner[:20]}), which a rule for {name} does not cover",
        False,
    )


def _make(name: str, args: list[str]) -> Finding | None:
    return f"{name} runs the Makefile's recipes, which a rule for {name} does not name", False


_CHECKS: dict[str, Callable[[str, list[str]], Finding | None]] = {
    **dict.fromkeys(_AWKS, _awk),
    **dict.fromkeys(_SEDS, _sed),
    "tar": _tar, "bsdtar": _tar, "gtar": _tar,
    "rsync": _rsync,
    "zip": _zip,
    **dict.fromkeys(_LESS, _less),
    "man": _man,
    **dict.fromkeys(_VIMS, _vim),
    "env": _env,
    **dict.fromkeys(WRAPPERS - {"env"}, _wrapper),
    **dict.fromkeys(_MAKES, _make),
}  # fmt: skip


def runs_code(words: list[str], assignments: list[str]) -> Finding | None:
    """Why this simple command runs something its command's rule does not name (``None``:
    nothing found). ``assignments``: the ``VAR=value`` words before it (``LESSOPEN=...``)."""
    for assignment in assignments:
        variable = assignment.split("=", 1)[0]
        if variable in _PAGER_VARS or variable.startswith(("LESS", "GIT_", "LD_")):
            return f"{variable}=... makes {words[0] if words else 'it'} run another program", True
    if not words:
        return None
    check = _CHECKS.get(words[0])
    return check(words[0], words[1:]) if check is not None else None
