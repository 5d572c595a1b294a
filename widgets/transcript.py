"""One agent's transcript: the person's prompts, streamed assistant text (Markdown), tool
calls with their inputs and results (``Collapsible``, collapsed when long; a result that
carries a message is shown as that message, not as JSON), notices, errors.

Text streams in as ``add_text`` chunks (already batched by the app); the whole assistant
entry that follows replaces the streamed copy, so nothing is shown twice. Only the newest
``max_items`` entries (``MAX_ITEMS`` unless told) stay mounted.

Prompts are shown in words: mail delivered to an agent arrives wrapped as
``<teammate_message ...>`` with protocol frames (JSON) inside; each is drawn as one line
("✉ researcher approved shutdown"), never as raw JSON. A message the person typed is recorded
once as theirs ("› you: ...") and again when the agent's turn starts: it is shown once.

The transcript is one stop for tab: its tool calls open and close with a click, so focus does
not step through every one of them.

Search (``set_query``): only the entries matching every word typed stay shown (their text,
kind, tool name and input, a tool's result), and ``move_hit`` scrolls from one to the next.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import weakref
from collections.abc import Callable
from contextlib import ExitStack

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.scrollbar import ScrollBar
from textual.widget import AwaitMount, Widget
from textual.widgets import Markdown, Static

from app.core.protocol import parse_frame
from app.display.format import describe, one_line
from app.display.text_search import haystack, matches, query_words
from app.runtime.events import TranscriptEntry
from widgets.agent_text import agent_text, shown
from widgets.literal_markdown import StaticMarkdown, literal_parser
from widgets.system_notes import split_notes
from widgets.tool_call import ToolCall

MAX_ITEMS = 200
#: Entries mounted at once when a view opens (its end, filling the screen); the older ones
#: follow above, after the first frame, without moving the view.
FIRST = 40


_WRAPPED = re.compile(
    r'<teammate_message teammate_id="(?P<sender>[^"]*)"(?P<attrs>[^>]*)>\n?(?P<body>.*?)\n?'
    r"</teammate_message>",
    re.DOTALL,
)
_SUMMARY = re.compile(r'summary="([^"]*)"')


def in_words(text: str, recipient: str = "") -> str:
    """A prompt as a person reads it: delivered mail and frames described, not raw."""

    def mail(match: re.Match[str]) -> str:
        sender = html.unescape(match["sender"])
        found = _SUMMARY.search(match["attrs"])
        summary = html.unescape(found[1]) if found else None
        body = match["body"].replace("&lt;", "<")
        if 'type="text"' in match["attrs"] or parse_frame(body) is None:
            about = f"{summary} — " if summary else ""
            return f"✉ {sender}: {about}{body}"
        return f"✉ {describe(sender, recipient, body, summary).plain()}"

    if parse_frame(text) is not None:  # a bare frame
        return f"✉ {describe('?', recipient, text).plain()}"
    return _WRAPPED.sub(mail, text)


def _rows_at_least(entry: TranscriptEntry) -> int:
    """The fewest rows ``entry`` takes: a view this tall at least opens anchored at its end
    (the layout that first places it shows the end; anchoring later would move it)."""
    if entry.kind == "tool_result":
        return 0  # drawn in its call
    if entry.kind == "tool_call":
        return 1  # folded
    return entry.text.count("\n") + 1


class FollowsTranscript:
    """What both views of a transcript share (this one and ``TranscriptTail``): ``follow``, in
    terms of their own ``show`` and ``add_entry``."""

    agent: str | None
    _empty: str
    #: The first entry shown and how many: what ``follow`` compares a re-read list with.
    _followed: tuple[TranscriptEntry | None, int]

    show: Callable[..., None]  # (agent, entries, partial="", *, empty=...)
    add_entry: Callable[[TranscriptEntry], None]

    def follow(self, entries: list[TranscriptEntry]) -> None:
        """The shown agent's whole transcript again, as read from a file that grows: only the
        entries past those already shown are added. A list that was replaced (its first entry
        differs, or it is shorter: found later, another team) is shown afresh."""
        head, count = self._followed
        if not entries or entries[0] != head or len(entries) < count:
            self.show(self.agent, entries, empty=self._empty)
            return
        for entry in entries[count:]:
            self.add_entry(entry)
        self._followed = (head, len(entries))


class Transcript(FollowsTranscript, VerticalScroll):
    """See the module docstring. ``agent`` is the agent shown (``None``: nobody yet)."""

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        scrollbar-size-vertical: 1;  scrollbar-gutter: stable;  /* no re-wrap as the bar comes */
        & > .user { color: $text-accent; text-style: bold; padding: 0 1; height: auto; }
        & .system-note { color: $text-muted; text-style: italic not bold; }
        & > .notice { color: $text-muted; text-style: italic; padding: 0 1; }
        & > .error { color: $text-error; padding: 0 1; }
        & > Markdown { margin: 0; padding: 0 1; }
        & > Static.assistant { padding: 0 1; margin: 0 0 1 0; }
        & > .tool-call { padding: 0; margin: 0; border: none; }
        & .tool-result { color: $text-muted; }
        & > .empty { color: $text-muted; text-style: italic; padding: 0 1; }
        & > .-hit { background: $accent 30%; }
    }
    """

    def __init__(self, *, id: str | None = None, max_items: int = MAX_ITEMS) -> None:
        super().__init__(id=id)
        self.max_items = max_items
        self.agent: str | None = None
        self._stream: Markdown | None = None
        self._stream_text = ""
        self._stream_given = 0
        self._calls: dict[str, ToolCall] = {}
        self._said: list[str] = []  # the person's messages not yet echoed by the agent's turn
        #: What search matches for each entry shown (``haystack``).
        self._texts: weakref.WeakKeyDictionary[Widget, str] = weakref.WeakKeyDictionary()
        self._words: tuple[str, ...] = ()
        self._hit: Widget | None = None
        self._empty = "nothing yet"
        self._followed: tuple[TranscriptEntry | None, int] = (None, 0)  # see ``follow``

    # ------------------------------------------------------------------ following

    _person_scrolls = False

    def release_anchor(self) -> None:
        """Stop following the newest entry -- only when the person scrolls up (the wheel, the
        scrollbar, a scroll key). Textual also lets go when a widget inside scrolls itself into
        view (a tool call unfolding after it is mounted); the transcript keeps following then."""
        captured = self.app.mouse_captured
        grabbed = isinstance(captured, ScrollBar) and captured.parent is self
        if self._person_scrolls or grabbed:
            super().release_anchor()

    def _by_person(self, scroll: Callable[[], None]) -> None:
        self._person_scrolls = True
        try:
            scroll()
        finally:
            self._person_scrolls = False

    def on_mouse_scroll_up(self, _: events.MouseScrollUp) -> None:
        self._by_person(super().release_anchor)  # the wheel already moved it (Textual's handler)

    def action_scroll_up(self) -> None:
        self._by_person(super().action_scroll_up)

    def action_page_up(self) -> None:
        self._by_person(super().action_page_up)

    def action_scroll_home(self) -> None:
        self._by_person(super().action_scroll_home)

    _arranged_in = Size(0, 0)

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Anchor (stay at the bottom while text streams in) in the layout in which the content
        first overflows: Textual scrolls an anchored view to its end right after this arrange,
        so that layout's frame is already at the end. Anchoring once the new size was known
        (``watch_virtual_size``) drew one frame at the start first, then jumped to the end: a
        view opening on entries whose open tool calls make them taller than ``show`` counted.
        Not before it overflows: Textual bottom-aligns shorter anchored content, leaving a gap
        at the top. Not while searching: the person steps through the hits."""
        self._arranged_in = size  # see ``container_size``
        arranged = super().arrange(size, optimal)
        if (
            not self._anchored
            and arranged.total_region.bottom > size.height
            and not self._words
            and not self.query_children(".empty")  # a long "nothing yet" is read from its start
        ):
            self._anchored, self._anchor_released = True, False  # what anchor() sets, no scroll
        return arranged

    @property
    def container_size(self) -> Size:
        """Textual scrolls an anchored view to its end in the layout that first places it,
        with a container size it does not know yet (none): the view's first frame would be
        scrolled past its end, blank. Until it is known, the size just arranged in."""
        return super().container_size or self._arranged_in

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
        self._stream = None
        self._calls.clear()
        self._said.clear()
        self.anchor(False)
        if self.is_attached:
            self.remove_children()
        widgets: list[Widget] = []
        self._hit = None
        for entry in entries[-self.max_items :]:
            widget = self._widget_for(entry)
            if widget is not None:
                widgets.append(widget)
                widget.display = self._shown(widget)
        if not widgets and not partial:
            widgets.append(Static(Text(empty), classes="empty"))
        self._shown_at += 1
        older, newest = widgets[: -FIRST or None], widgets[-FIRST:]
        rows = sum(_rows_at_least(entry) for entry in entries[-FIRST:])
        if older or rows > self.app.size.height:
            self.anchor()  # the newest fill the view at its end; the older go above it
        if self._composed:
            self._draw_once_mounted(self.mount_all(newest))
        else:  # shown before the view is: composed with it, whole in its first frame
            self._first = newest
        if older:
            self._older = (older, self._shown_at)
            if self._composed:
                self.call_after_refresh(self._mount_older)
        if partial:
            self.add_text(partial)

    _shown_at = 0  # how many times ``show`` was called: older entries of a replaced view go

    #: The longest the app's frames are held for a view's newest entries (``_draw_once_mounted``).
    HOLD_LIMIT = 2.0
    _hold: ExitStack | None = None

    def _draw_once_mounted(self, mounted: AwaitMount) -> None:
        """Hold the app's frames until the newest entries (each composed whole) are mounted:
        the view's first frame shows them drawn and at its end -- never a blank view, nor a
        tool call's rows blank while its parts mount (each Collapsible composes its parts on
        its own turn, after the frame that first lays it out)."""
        self._release_hold()
        self._hold = hold = ExitStack()
        hold.enter_context(self.app.batch_update())

        async def release() -> None:
            try:
                async with asyncio.timeout(self.HOLD_LIMIT):
                    await asyncio.ensure_future(mounted)
            except Exception:  # noqa: BLE001 - timed out (a loaded machine): drawn as it mounts
                pass
            finally:  # also when the view closes (the worker is cancelled)
                hold.close()

        self.run_worker(release(), group="hold", exit_on_error=False)

    def _release_hold(self) -> None:
        hold, self._hold = self._hold, None
        if hold is not None:
            hold.close()

    def on_unmount(self) -> None:
        self._release_hold()

    _composed = False  # see ``compose``
    _first: list[Widget] = []  # the newest entries of a view shown before it was mounted
    _older: tuple[list[Widget], int] = ([], 0)  # the older ones still to mount, for which show

    def compose(self) -> ComposeResult:
        """The newest entries given to ``show`` before the view was mounted: mounted with the
        screen, each tool call composed with its parts, before the screen's first frame (the
        parts of a widget mounted later are composed after the frame that lays it out: rows
        drawn blank, then filled)."""
        self._composed = True
        first, self._first = self._first, []
        yield from first

    def on_mount(self) -> None:
        if self._older[0]:
            self.call_after_refresh(self._mount_older)

    def _mount_older(self) -> None:
        """The entries before the first ``FIRST``, above them: the view stays at its end."""
        (older, shown_at), self._older = self._older, ([], 0)
        if shown_at != self._shown_at or not self.is_attached or not self.children or not older:
            return
        self.mount_all(older, before=self.children[0])

    def add_entry(self, entry: TranscriptEntry) -> None:
        if entry.kind == "assistant" and self._stream is not None:
            self._stream.update(shown(entry.text))  # the whole entry replaces the streamed copy
            self._texts[self._stream] = haystack("assistant", entry.text)
            self._stream.display = self._shown(self._stream)
            self._end_stream()
            return
        self._end_stream()
        widget = self._widget_for(entry)
        if widget is not None:
            self._append(widget)

    def add_text(self, text: str) -> None:
        """A chunk of streamed assistant text (escapes shown: ``widgets.agent_text``)."""
        text = shown(text)
        if self._stream is None:
            self._stream = Markdown(text, classes="assistant", parser_factory=literal_parser)
            self._texts[self._stream] = haystack("assistant", text)
            self._stream_text = text
            self._stream_given = len(text)
            self._append(self._stream)
            return
        self._stream_text += text
        if self._stream.is_mounted:
            self._stream.append(self._stream_text[self._stream_given :])
            self._stream_given = len(self._stream_text)

    def _end_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None and self._stream_given < len(self._stream_text):
            stream.update(self._stream_text)
        self._stream_text = ""
        self._stream_given = 0

    def _widget_for(self, entry: TranscriptEntry) -> Widget | None:
        widget = self._make_widget(entry)
        if widget is not None:
            tool = entry.data.get("tool")
            detail = json.dumps(entry.data.get("input"), default=str) if tool else None
            self._texts[widget] = haystack(entry.kind, tool, detail, entry.text)
        return widget

    def _make_widget(self, entry: TranscriptEntry) -> Widget | None:
        match entry.kind:
            case "user":
                if entry.data.get("source") == "person":
                    self._said.append(entry.text)
                    return Static(agent_text(f"› you: {entry.text}"), classes="user")
                if entry.text in self._said:  # the turn that delivers it: already shown
                    self._said.remove(entry.text)
                    return None
                said, notes = split_notes(entry.text)
                if not notes:
                    return Static(
                        agent_text(f"› {in_words(said, self.agent or '')}"), classes="user"
                    )
                return Vertical(  # the message, then the system's notes: dim, no sender
                    *(
                        [Static(agent_text(f"› {in_words(said, self.agent or '')}"))]
                        if said
                        else []
                    ),
                    *(Static(agent_text(note), classes="system-note") for note in notes),
                    classes="user",
                )
            case "assistant":  # whole: drawn at its height at once (streamed text: Markdown)
                return Static(StaticMarkdown(shown(entry.text)), classes="assistant")
            case "tool_call":
                call = ToolCall(entry)
                tool_use_id = entry.data.get("tool_use_id")
                if tool_use_id:
                    self._calls[str(tool_use_id)] = call
                return call
            case "tool_result":
                found = self._calls.pop(str(entry.data.get("tool_use_id")), None)
                if found is not None:
                    found.set_result(entry)
                    self._texts[found] = haystack(self._texts.get(found), entry.text)
                    found.display = self._shown(found)
                    return None
                return Static(agent_text(f"↳ {one_line(entry.text, 400)}"), classes="notice")
            case "notice":
                return Static(agent_text(entry.text), classes="notice")
            case _:
                return Static(agent_text(f"✗ {entry.text}"), classes="error")

    def _append(self, widget: Widget) -> None:
        if not self._composed:  # shown before the view is (``compose``)
            self._first.append(widget)
            return
        if not self.is_attached:  # the view is being torn down (quitting while agents work)
            return
        for empty in self.query(".empty"):
            empty.remove()
        widget.display = self._shown(widget)
        self.mount(widget)
        excess = len(self.children) - self.max_items
        for old in list(self.children[: max(0, excess)]):
            old.remove()

    # ------------------------------------------------------------------ search

    def _shown(self, widget: Widget) -> bool:
        if not self._words:
            return True
        text = self._texts.get(widget)
        return text is not None and matches(self._words, text)

    def prepare_search(self) -> None:
        """Nothing to prepare: each entry's search text is kept as it is shown."""

    def set_query(self, text: str) -> int:
        """Show only the entries matching every word of ``text`` (``""``: all); returns how
        many are shown."""
        self._words = query_words(text)
        self._set_hit(None)
        shown = 0
        for child in self.children:
            child.display = self._shown(child) if child in self._texts else not self._words
            shown += bool(child.display and child in self._texts)
        if self._words:
            self.anchor(False)  # stay where the person reads, not at the newest entry
            self.scroll_end(animate=False, immediate=True)
        return shown

    def move_hit(self, step: int) -> bool:
        """With a search: scroll to the next (``step`` 1) or previous (-1) matching entry,
        wrapping; from none, the first or the last. Whether there was one."""
        hits = [c for c in self.children if c.display and c in self._texts]
        if not self._words or not hits:
            return False
        if self._hit in hits:
            index = (hits.index(self._hit) + step) % len(hits)
        else:
            index = 0 if step > 0 else len(hits) - 1
        self._set_hit(hits[index])
        self.scroll_to_widget(hits[index], animate=False, top=True, immediate=True)
        return True

    def _set_hit(self, widget: Widget | None) -> None:
        if self._hit is not None:
            self._hit.remove_class("-hit")
        self._hit = widget
        if widget is not None:
            widget.add_class("-hit")
