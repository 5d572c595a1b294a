"""One feed message in full (``enter`` or a click on a feed line): who sent it to whom and
when, and the whole text. A protocol frame is shown parsed, one field per line in words (the
request id stays: a person may need it for ``teamdeck approvals``); never as raw JSON.
"""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from app.core.protocol import parse_frame
from app.dashboard import keys
from app.display.format import short_time
from app.display.values import FeedItem
from widgets.agent_text import agent_text, shown
from widgets.footer import KeyFooter

#: Frame fields shown elsewhere in the dialog (or of no use to a person).
_SKIPPED = frozenset({"type", "timestamp", "sender"})


def _words(field: str) -> str:
    """``plan_content`` / ``requestId`` -> ``plan content`` / ``request id``."""
    spaced = "".join(f" {c.lower()}" if c.isupper() else c for c in field)
    return spaced.replace("_", " ").strip()


def _value(value: Any) -> Text:
    if isinstance(value, bool):
        return Text("yes" if value else "no")
    if isinstance(value, dict | list):
        return agent_text(json.dumps(value, indent=2, ensure_ascii=False, default=str))
    return agent_text(value)


def frame_fields(text: str) -> list[tuple[str, Text]] | None:
    """The frame's fields as ``(label, value)`` rows, or ``None`` if ``text`` is no frame."""
    frame = parse_frame(text)
    if frame is None:
        return None
    rows: list[tuple[str, Text]] = []
    data = frame.model_dump(exclude_none=True)
    # Short fields first, the long ones (a plan, a tool input) last.
    order = sorted(data, key=lambda f: isinstance(data[f], dict | list) or len(str(data[f])) > 60)
    for field in order:
        value = data[field]
        if field in _SKIPPED or value in ("", [], {}):
            continue
        rows.append((_words(field), _value(value)))
    return rows


class MessageScreen(ModalScreen[None]):
    """See the module docstring; esc, q or enter closes."""

    AUTO_FOCUS = ".dialog-body"  # up/down/page keys scroll the text
    BINDINGS = [keys.MESSAGE_CLOSE.binding()]

    def __init__(self, item: FeedItem) -> None:
        super().__init__(classes="dialog-screen")
        self.item = item

    def compose(self) -> ComposeResult:
        item = self.item
        line = item.line
        head = Text.assemble(
            (shown(item.sender), "bold"), " -> ", (shown(", ".join(item.recipients)), "bold")
        )
        clock = getattr(self.app, "clock", None)  # the dashboard's (tests: a fixed one)
        head.append(f"  {short_time(item.timestamp, clock() if clock else None)}", style="dim")
        with Vertical(classes="dialog wide", id="message"):
            yield Static(head, classes="dialog-question")
            with VerticalScroll(classes="dialog-body"):
                fields = frame_fields(item.text)
                if fields is None:
                    if item.summary:
                        yield Static(agent_text(f"summary: {item.summary}", style="italic"))
                    yield Static(agent_text(item.text), id="message-text")
                else:
                    yield Static(Text(line.plain(), style="bold"), id="message-text")
                    table = Table.grid(padding=(0, 2))
                    table.add_column(style="dim", no_wrap=True)
                    table.add_column()
                    for label, value in fields:
                        table.add_row(agent_text(label), value)
                    yield Static(table, id="message-fields")
            yield Static(Text("esc to close", style="dim"), classes="dialog-hint")
        yield KeyFooter()  # the dialog's keys, over the view's

    def action_close(self) -> None:
        self.dismiss(None)
