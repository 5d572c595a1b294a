"""The replay's transcript shows each Edit/Write/MultiEdit call with its diff under it, as the
call was made (``app.runtime.review.diffs.recorded_diff``: the file as it was then is not kept),
computed once per event."""

from __future__ import annotations

from rich.text import Text

from app.archive.query import Event
from app.runtime.review.diffs import FileDiff, ReviewError, recorded_diff
from widgets.diff_view import unified

#: A call's diff shows at most this many lines under its line.
DIFF_LINES = 12
INDENT = "        "


class EditDiffs:
    """Diff lines per transcript event (nothing for events that are no edit)."""

    def __init__(self, most: int = DIFF_LINES) -> None:
        self.most = most
        self._found: dict[int, FileDiff | None] = {}

    def diff(self, event: Event) -> FileDiff | None:
        if event.kind != "transcript" or event.frame != "tool_call":
            return None
        if event.id not in self._found:
            data = event.data or {}
            try:
                self._found[event.id] = recorded_diff(event.target, data.get("input"))
            except ReviewError as exc:
                self._found[event.id] = FileDiff(str(event.target), note=str(exc))
        return self._found[event.id]

    def lines(self, event: Event) -> Text:
        """The diff's first lines, indented under the call (and how many more there are)."""
        diff = self.diff(event)
        out = Text()
        if diff is None:
            return out
        body = unified(diff).split("\n") if diff.text else [Text(diff.note, style="yellow")]
        for line in body[: self.most]:
            out.append(INDENT).append_text(line).append("\n")
        if len(body) > self.most:
            out.append(f"{INDENT}… {len(body) - self.most} more lines\n", style="dim")
        return out
