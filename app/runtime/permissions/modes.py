"""Permission modes (the seeds' names) and the tools each mode offers to the model."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, TypeVar

if TYPE_CHECKING:
    from app.runtime.permissions.subject import PermissionSubject

PermissionMode = Literal[
    "default", "acceptEdits", "bypassPermissions", "plan", "delegate", "dontAsk"
]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "bypassPermissions",
    "plan",
    "delegate",
    "dontAsk",
)


def parse_mode(value: str) -> PermissionMode:
    """A permission mode by its seeds' name; ValueError (one line) for anything else."""
    for mode in PERMISSION_MODES:
        if mode == value:
            return mode
    modes = ", ".join(PERMISSION_MODES)
    raise ValueError(f"unknown permission mode {value!r} (use {modes})")


#: The only tools a lead in delegate mode may use (seeds 000 + ``Task`` to spawn teammates).
DELEGATE_ALLOWED_TOOLS: frozenset[str] = frozenset(
    {
        "TeamCreate",
        "TeamDelete",
        "SendMessage",
        "TaskCreate",
        "TaskGet",
        "TaskUpdate",
        "TaskList",
        "Task",
    }
)


T = TypeVar("T", bound="PermissionSubject")


def tools_for_mode(tools: Iterable[T], mode: PermissionMode) -> list[T]:
    """The tools offered to the model in ``mode``: only DELEGATE_ALLOWED_TOOLS in delegate."""
    if mode == "delegate":
        return [t for t in tools if t.name in DELEGATE_ALLOWED_TOOLS]
    return list(tools)
