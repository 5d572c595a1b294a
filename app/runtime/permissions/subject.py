"""What the permission engine needs to know of a tool: a Protocol, so the engine imports no tool
(``tools.base.Tool`` satisfies it) and stays a leaf the tools build on."""

from __future__ import annotations

from typing import Any, Protocol


class PermissionSubject(Protocol):
    """A tool as the rules and modes see it."""

    @property
    def name(self) -> str: ...

    @property
    def read_only(self) -> bool:
        """Never changes anything (allowed in plan mode)."""
        ...

    @property
    def edits_files(self) -> bool:
        """Edits files (acceptEdits allows it without asking)."""
        ...

    @property
    def coordination(self) -> bool:
        """A coordination tool (SendMessage, Task*, Team*): always allowed."""
        ...

    def is_read_only(self, tool_input: dict[str, Any]) -> bool: ...

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None: ...

    def describe(self, tool_input: dict[str, Any]) -> str: ...
