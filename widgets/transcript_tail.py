"""The newest entries of an agent's transcript, one line each: the lead's pane in the leader
view, beside the board and the feed.

The pane is a few lines tall and changes at every step the lead takes while a team works. As a
:class:`~widgets.transcript.Transcript` (a widget mounted per entry: Markdown, tool-call
collapsibles) each entry reflowed the whole screen: ~1,500 of the ~2,000 layout requests of a
bench/live.py key-press run came from it, and key presses waited behind those frames. Here the
pane is one widget that redraws its lines and is never laid out again; the lead's own view
(``0`` then enter) keeps the whole transcript, as Markdown, with its tool calls to open.

An entry reads as in the full transcript (``in_words``): the person's messages once, prompts
and protocol frames in words, streamed text replaced by the entry that ends it, a tool call
marked ✓ or ✗ when its result arrives. Lines longer than the pane end in an ellipsis, but for
an error, the run's end (what to do next) and the lead's final report before it, which take
the rows they need; only the newest
``max_items`` entries are kept.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.app import RenderResult
from textual.strip import Strip
from textual.widget import Widget

from app.core.frame_text import one_line
from app.runtime.events import TranscriptEntry
from widgets.agent_text import agent_text, shown
from widgets.line_strips import line_strip
from widgets.system_notes import split_notes
from widgets.tool_call import input_summary, result_in_words
from widgets.transcript import FollowsTranscript, in_words

MAX_ITEMS = 20
LINE_LIMIT = 400


_HEADING = re.compile(r"^#{1,6}\s+", re.MULTILINE)
#: ``**bold**``: a pair of marks around words. A lone ``**`` is text (a glob: ``app/**/*.py``).
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")


def _plain(markdown: str) -> str:
    """Model text on one line: emphasis and code marks and heading hashes dropped (names such
    as ``__init__`` and globs such as ``app/**/*.py`` are kept as written)."""
    return _BOLD.sub(r"\1", _HEADING.sub("", markdown)).replace("`", "")


def _flat(text: str) -> str:
    """One line, at most ``LINE_LIMIT`` characters (the pane shows fewer)."""
    return one_line(text, LINE_LIMIT)


@dataclass
class _Line:
    kind: str  # a component class: user, text, tool, notice, error
    text: str
    mark: str = ""
    #: What a tool's answer says in words (TeamDelete's, SendMessage's ``message``).
    note: str = ""
    #: Shown whole, over as many rows as it takes: what the person must read (an error, the
    #: run's end and what to do next).
    wrap: bool = False
    #: What ``_text`` drew last, and from what.
    drawn: tuple[object, Text] | None = field(default=None, compare=False, repr=False)


def _cut(text: Text, width: int) -> Text:
    """The line in ``width`` cells, ending in one "…" when it is longer. Cut here, not by the
    pane (Textual would end a line cut just after an agent's own "…" in a second one: a
    double ellipsis), and only the start of a long line is measured: a line is up to
    ``LINE_LIMIT`` characters, and the pane is repainted at most beats while a team works."""
    head = text[: 2 * width + 2]  # enough for a line of wide characters
    if len(head.plain) == len(text.plain) and cell_len(head.plain) <= width:
        return text  # it fits
    if cell_len(head.plain) <= width:  # zero-width characters: all of it
        head = text
        if cell_len(head.plain) <= width:
            return text
    return _ended(head, width)


def _ended(text: Text, width: int) -> Text:
    """``text`` cut to ``width - 1`` cells, its trailing "…" and spaces dropped, then one "…"."""
    out = text.copy()
    out.truncate(max(0, width - 1))
    while out.plain.endswith(("…", " ", "…")):
        out.right_crop(1)
    out.append("…")
    return out


class TranscriptTail(FollowsTranscript, Widget, can_focus=True):
    """See the module docstring. ``agent`` is the agent shown (``None``: nobody yet)."""

    COMPONENT_CLASSES = {
        "transcript-tail--user",
        "transcript-tail--tool",
        "transcript-tail--notice",
        "transcript-tail--error",
    }

    DEFAULT_CSS = """
    TranscriptTail {
        height: 1fr;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        &.-empty { text-wrap: wrap; color: $text-muted; text-style: italic; }
        & > .transcript-tail--user { color: $text-accent; text-style: bold; }
        & > .transcript-tail--tool { color: $text-muted; }
        & > .transcript-tail--notice { color: $text-muted; text-style: italic; }
        & > .transcript-tail--error { color: $text-error; }
    }
    """

    def __init__(self, *, id: str | None = None, max_items: int = MAX_ITEMS) -> None:
        super().__init__(id=id)
        self.max_items = max_items
        self.agent: str | None = None
        self._lines: deque[_Line] = deque(maxlen=max_items)
        self._calls: dict[str, _Line] = {}
        self._said: list[str] = []  # the person's messages not yet echoed by the agent's turn
        self._stream: str | None = None
        self._empty = "nothing yet"
        self._followed = (None, 0)
        #: The rows' strips as made last (``render_line``; ``None``: Textual's own render).
        self._made: list[Strip] | None = None

    @property
    def lines(self) -> list[str]:
        """The entries kept, as shown (without styles, not cut), oldest first."""
        shown = [
            "  ".join(part for part in (line.text, line.mark, line.note) if part)
            for line in self._lines
        ]
        return shown + ([self._stream_line] if self._stream is not None else [])

    # ------------------------------------------------------------------ content in

    def show(
        self,
        agent: str | None,
        entries: list[TranscriptEntry],
        partial: str = "",
        *,
        empty: str = "nothing yet",
    ) -> None:
        """Replace the content with ``agent``'s transcript (+ text still streaming); ``empty``
        is shown until the first entry arrives."""
        self.agent = agent
        self._empty = empty
        self._followed = (entries[0] if entries else None, len(entries))
        self._lines.clear()
        self._calls.clear()
        self._said.clear()
        self._stream = None
        for entry in entries:
            self._take(entry)
        self._stream = partial or None
        self._changed()

    def add_entry(self, entry: TranscriptEntry) -> None:
        self._take(entry)
        self._changed()

    def add_text(self, text: str) -> None:
        """A chunk of streamed assistant text."""
        self._stream = (self._stream or "") + text
        self._changed()

    @property
    def _stream_line(self) -> str:
        return _flat(_plain(self._stream or ""))

    def _take(self, entry: TranscriptEntry) -> None:
        if entry.kind == "assistant":
            self._stream = None  # the whole entry replaces the streamed copy
        self._after: list[_Line] = []
        line = self._line_for(entry)
        if line is not None:
            self._lines.append(line)
        self._lines.extend(self._after)
        if len(self._calls) > 4 * self.max_items:  # calls whose result never came, long gone
            self._calls.clear()

    def _line_for(self, entry: TranscriptEntry) -> _Line | None:
        text = entry.text
        match entry.kind:
            case "user":
                if entry.data.get("source") == "person":
                    self._said.append(text)
                    return _Line("user", f"› you: {_flat(text)}")
                if text in self._said:  # the turn that delivers it: already shown
                    self._said.remove(text)
                    return None
                said, notes = split_notes(text)
                # The system's notes: notices after the message, not part of it.
                self._after = [_Line("notice", _flat(note)) for note in notes]
                if not said:
                    return None
                return _Line("user", f"› {_flat(in_words(said, self.agent or ''))}")
            case "assistant":
                return _Line("text", _flat(_plain(text)))
            case "tool_call":
                tool = str(entry.data.get("tool") or text)
                summary = input_summary(entry.data.get("input"))
                line = _Line("tool", f"⚙ {tool}" + (f"  {summary}" if summary else ""))
                if tool_use_id := entry.data.get("tool_use_id"):
                    self._calls[str(tool_use_id)] = line
                return line
            case "tool_result":
                call = self._calls.pop(str(entry.data.get("tool_use_id")), None)
                if call is not None:
                    call.mark = "✗" if entry.data.get("is_error") else "✓"
                    said = result_in_words(text)
                    call.note = _flat(said) if said != text else ""
                    return None
                return _Line("notice", f"↳ {_flat(result_in_words(text))}")
            case "notice":
                finished = bool(entry.data.get("finished"))
                if finished:
                    self._report_wraps()
                return _Line("notice", _flat(text), wrap=finished)
            case _:
                return _Line("error", f"✗ {_flat(text)}", wrap=True)

    def _report_wraps(self) -> None:
        """The run ended: the lead's last words (its final report) are shown whole, over the
        rows they take, not cut to one line (issue 30)."""
        for line in reversed(self._lines):
            if line.kind == "text":
                line.wrap, line.drawn = True, None
                return

    def _changed(self) -> None:
        self.set_class(not self._lines and self._stream is None, "-empty")
        self.refresh()  # a repaint of this widget only: its size does not depend on its lines

    # ------------------------------------------------------------------ drawing

    def render(self) -> RenderResult:
        rows = self._rows()
        return Text(self._empty) if rows is None else Text("\n").join(rows)

    def render_line(self, y: int) -> Strip:
        """Row ``y``: each row made by ``line_strip`` (the strip Textual makes of the rows
        joined, for a fraction of its cost: a new entry moves every row of the pane, and a
        busy lead's pane was repainted at most beats), else Textual's own (the empty pane,
        text being selected)."""
        if self._dirty_regions:
            self._made = self._strips()
            if self._made is not None:
                self._dirty_regions.clear()
        if self._made is None:
            return super().render_line(y)
        if y < len(self._made):
            return self._made[y]
        return Strip.blank(self.size.width, self.visual_style.rich_style)

    def _strips(self) -> list[Strip] | None:
        rows = self._rows()
        if rows is None:
            return None
        width, style, made = self.size.width, self.visual_style, []
        for y, row in enumerate(rows):
            strip = line_strip(self, row, width, style, y)
            if strip is None:
                return None
            made.append(strip)
        return made

    def _rows(self) -> list[Text] | None:
        """The rows shown, top to bottom (``None``: no entry yet)."""
        if not self._lines and self._stream is None:
            return None
        height = max(1, self.size.height)
        width = max(1, self.size.width)
        shown: list[Text] = []
        if self._stream is not None:
            shown.append(_cut(agent_text(self._stream_line), width))
        for line in reversed(self._lines):
            if len(shown) >= height:
                break
            text = self._text(line, width)
            rows = text.wrap(self.app.console, width) if line.wrap else [text]
            shown.extend(reversed(rows))
        return list(reversed(shown[:height]))

    def _text(self, line: _Line, width: int) -> Text:
        """The line as drawn; kept with the line until it, its style or the width changes
        (most of the pane's lines are the same from one repaint to the next)."""
        style = (
            self.get_component_rich_style(f"transcript-tail--{line.kind}")
            if line.kind != "text"
            else Style()
        )
        key = (line.mark, line.note, style, width)
        if line.drawn is not None and line.drawn[0] == key:
            return line.drawn[1]
        text = agent_text(line.text, style=style)
        if line.mark:
            text.append(f"  {line.mark}", style="red" if line.mark == "✗" else "green")
        if line.note:
            text.append(f"  {shown(line.note)}")
        if not line.wrap:
            text = _cut(text, width)
        line.drawn = (key, text)
        return text
