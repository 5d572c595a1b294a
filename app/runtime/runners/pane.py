"""A teammate's transcript as plain lines, for the tmux window it runs in (``--print``)."""

from __future__ import annotations

import json
import shutil
import time
from typing import IO

from app.runtime.events import RuntimeEvent, StatusChanged, TranscriptEntry

MARKS = {
    "user": "›",
    "assistant": " ",
    "tool_call": "⚙",
    "tool_result": "←",
    "notice": "·",
    "error": "✗",
}


class PanePrinter:
    """Prints status changes and transcript entries, one line each (long texts cut to the
    terminal's width, except the agent's own words)."""

    def __init__(self, name: str, out: IO[str]) -> None:
        self.name = name
        self.out = out

    def __call__(self, event: RuntimeEvent) -> None:
        if isinstance(event, StatusChanged):
            detail = f" ({event.detail})" if event.detail else ""
            self._line(f"── {self.name}: {event.status}{detail}")
        elif isinstance(event, TranscriptEntry):
            self._entry(event)

    def _entry(self, entry: TranscriptEntry) -> None:
        mark = MARKS.get(entry.kind, "·")
        if entry.kind == "assistant":
            self._line(entry.text, cut=False)
            return
        text = entry.text
        if entry.kind == "tool_call":
            text = f"{text} {json.dumps(entry.data.get('input', {}), ensure_ascii=False)}"
        self._line(f"{mark} {' '.join(text.split())}")

    def _line(self, text: str, *, cut: bool = True) -> None:
        width = shutil.get_terminal_size((120, 40)).columns
        if cut and len(text) > width - 9:
            text = text[: max(10, width - 10)] + "…"
        try:
            self.out.write(f"{time.strftime('%H:%M:%S')} {text}\n")
            self.out.flush()
        except (OSError, ValueError):  # the window was closed: keep working without it
            pass
