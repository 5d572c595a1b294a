"""A tool call in an agent's transcript: its name and input summary as a ``Collapsible``
title, the input (JSON) and, once it arrives, the result inside; collapsed when long.

A call whose result is already known when it is built (a view opening on a transcript) is
composed whole, in one pass: title mark, input, result and collapsed state are all set before
the first frame. Mounting the result afterwards left the call's rows blank on the view's first
frame and moved the view when the call folded up after it was drawn."""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.widgets import Collapsible, Static

from app.display.format import one_line
from app.runtime.events import TranscriptEntry
from widgets.agent_text import agent_markup, agent_text

LONG_LINES = 8
LONG_CHARS = 600


def is_long(text: str) -> bool:
    return text.count("\n") >= LONG_LINES or len(text) > LONG_CHARS


def input_summary(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "path", "pattern", "recipient", "subject", "name"):
            if isinstance(tool_input.get(key), str):
                return one_line(tool_input[key], 60)
        return one_line(", ".join(f"{k}={v}" for k, v in tool_input.items()), 60)
    return one_line(str(tool_input), 60) if tool_input is not None else ""


def result_in_words(text: str) -> str:
    """A tool result as a person reads it: an answer in JSON that carries a ``message``
    (TeamDelete's, SendMessage's) is that message; anything else is shown as it came."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return text
    try:
        data = json.loads(stripped)
    except ValueError:
        return text
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) and message.strip() else text


class ToolCall(Collapsible):
    """A tool call and (once it arrives) its result."""

    def __init__(self, entry: TranscriptEntry) -> None:
        self.tool = str(entry.data.get("tool") or entry.text)
        tool_input = entry.data.get("input")
        if tool_input in (None, {}):
            self.body = "(no input)"
        else:
            self.body = json.dumps(tool_input, indent=2, ensure_ascii=False, default=str)
        self.summary = input_summary(tool_input)
        self._composed = False
        self._pending: TranscriptEntry | None = None
        super().__init__(
            Static(agent_text(self.body), classes="tool-input"),
            title=self._label_text(""),
            collapsed=bool(entry.data.get("collapsed")) or is_long(self.body),
            classes="tool-call",
        )

    def compose(self) -> ComposeResult:
        self._composed = True  # from here on a result is mounted into the contents
        yield from super().compose()

    def on_mount(self) -> None:
        for title in self.query("CollapsibleTitle"):
            title.can_focus = False  # tab moves past the transcript, not through each call
        if self._pending is not None:
            self._show_result()

    def _label_text(self, mark: str) -> str:
        title = f"⚙ {self.tool}" + (f"  {self.summary}" if self.summary else "")
        return agent_markup(title + (f"  {mark}" if mark else ""))

    def set_result(self, entry: TranscriptEntry) -> None:
        if not self._composed:  # still to be drawn: drawn with its result, in one pass
            self._contents_list.append(self._result(entry))
            return
        self._pending = entry
        if self.is_mounted:
            self._show_result()

    def _result(self, entry: TranscriptEntry) -> Static:
        """The result's widget; sets the title's mark and folds a long call."""
        failed = bool(entry.data.get("is_error"))
        self.title = self._label_text("✗" if failed else "✓")
        words = result_in_words(entry.text)
        if is_long(words) or is_long(self.body):
            self.collapsed = True
        return Static(agent_text(words, style="red" if failed else ""), classes="tool-result")

    def _show_result(self) -> None:
        contents = self.query_one(Collapsible.Contents)
        if not contents.is_attached:
            # Removed (pruned, or the app is closing) -- or its contents not mounted yet.
            if self.is_attached:
                self.call_after_refresh(self._show_result)
            return
        entry, self._pending = self._pending, None
        if entry is not None:
            contents.mount(self._result(entry))
