"""What the offline lead reads in a goal: the team's name, the files it is about (a folder, a
file, a kind of file), whether it asks for line counts; and the three roles of an unsized team.

Kept apart from ``lead_policy`` (how the lead acts, turn by turn): these are pure functions of the
goal's words, shared with the offline teammate (``COUNT_LINES``) and tested on their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Role:
    name: str
    subject: str
    action: str  # what the teammate does: inventory | definitions | summarize
    plan_mode: bool = False


ROLES = (
    Role("researcher", "Inventory the files", "inventory"),
    Role("analyst", "Map the definitions", "definitions"),
    Role("writer", "Summarize what each file does", "summarize", plan_mode=True),
)


def team_name_for(goal: str) -> str:
    words = re.findall(r"[a-zA-Z0-9]+", goal.lower())
    skip = {"the", "a", "an", "of", "in", "this", "what", "do", "does", "and", "to", "for"}
    kept = [w for w in words if w not in skip][:3] or ["team"]
    return "-".join(kept)


def file_pattern_for(goal: str) -> str:
    """The files a goal is about, as a Glob pattern: a folder or file it names (``the styles
    folder``, ``app/core/``, ``README.md``), narrowed to a kind of file it names (Python,
    Markdown); the whole project otherwise."""
    low = goal.lower()
    kind = "*"
    if "python" in low or ".py" in low:
        kind = "*.py"
    elif "markdown" in low or "docs" in low or ".md" in low:
        kind = "*.md"
    named = named_path(goal)
    if named is None:
        return f"**/{kind}"
    if named.endswith("/"):
        return f"{named}**/{kind}"
    return named


#: ``the styles folder``, ``the app/core directory``
_FOLDER_WORD = re.compile(r"([\w.\-/]+)\s+(?:folder|directory|dir)\b", re.IGNORECASE)
#: ``app/core``, ``styles/``, ``./docs``: a word with a slash in it
_PATH_WORD = re.compile(r"(?<![\w/.])((?:\./)?[\w.\-]+(?:/[\w.\-]*)+)")
#: ``README.md``, ``main.py``: a word with a file extension
_FILE_WORD = re.compile(r"(?<![\w/.])([\w\-]+(?:\.[\w\-]+)*\.[a-z0-9]{1,5})\b", re.IGNORECASE)
_NOT_FOLDERS = {"the", "this", "that", "a", "each", "every", "whole", "project", "current", "same"}


def named_path(goal: str) -> str | None:
    """A folder (ending in ``/``) or a file the goal names, relative to the project; ``None``
    when it names neither. URLs and bare extensions (``.py``) are not paths."""
    for match in _FOLDER_WORD.finditer(goal):
        word = match.group(1).strip("./") if match.group(1) not in (".", "./") else ""
        if word and word.lower() not in _NOT_FOLDERS:
            return word.rstrip("/") + "/"
    for match in _PATH_WORD.finditer(goal):
        word = match.group(1)
        if "://" in goal[match.start() : match.end() + 3] or word.startswith("/"):
            continue
        word = word.removeprefix("./")
        if not word or word == "/":
            continue
        last = word.rstrip("/").rsplit("/", 1)[-1]
        if "." in last and not word.endswith("/"):
            return word  # a file in a folder
        return word.rstrip("/") + "/"
    for match in _FILE_WORD.finditer(goal):
        word = match.group(1)
        if word.lower() in ("e.g", "i.e"):
            continue
        return word
    return None


def counts_lines(goal: str) -> bool:
    """A goal that asks for sizes: the researcher also counts lines with ``wc -l`` (a shell
    command, so the person is asked to allow it, unless a rule already does)."""
    low = goal.lower()
    return any(word in low for word in ("count their lines", "line count", "how long"))


#: Said to the researcher when the goal asks for line counts (``TeammatePolicy`` looks for it).
COUNT_LINES = "Also count the lines of each file with wc -l."
