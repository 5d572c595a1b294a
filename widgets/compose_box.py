"""The compose box: the dashboard's one place for text (a goal for the lead, a message to an
agent), and a mode a person can see.

It is a multi-line ``TextArea``, hidden until opened (``i``, or ``enter`` in an agent's view).
Open, it takes every key as text, with its own border, colour and title ("typing — esc to
leave") and a line/character count. ``enter`` sends (:class:`ComposeBox.Submitted`),
``shift+enter`` or ``ctrl+j`` adds a line, a paste keeps every line of what was pasted and
sends nothing. ``esc`` leaves it (:class:`ComposeBox.Left`) with the text kept for later.

A terminal reads ``esc`` followed within a few milliseconds by a letter as ``alt+letter``: in
the box that is ``esc`` (leave) and the letter is reported as unused (``Left.dropped``), never
typed into the text nor run as a command.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import TextArea

#: The box's title while open: typing is a mode, and this is how to leave it.
TYPING_TITLE = "typing — esc to leave"


def alt_letter(key: str) -> str | None:
    """The key of ``alt+<key>`` (how a terminal reads esc and a key pressed right after it,
    ``alt+a``, ``alt+enter``), as a person would name it; ``None`` for any other key."""
    if not key.startswith("alt+") or key.count("+") > 2:
        return None
    rest = key.removeprefix("alt+")
    if rest.startswith("shift+") and len(rest) == 7:
        return rest[-1].upper()
    return rest if "+" not in rest else None


class ComposeBox(TextArea):
    """See the module docstring. ``value`` is the text, as an ``Input``'s."""

    DEFAULT_CSS = """
    ComposeBox {
        display: none;
        height: auto;
        min-height: 3;
        max-height: 8;
        border: tall $accent;
        border-title-color: $accent;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $accent 12%;
    }
    ComposeBox.-open {
        display: block;
    }
    ComposeBox:focus {
        border: tall $accent;
        background: $accent 18%;
    }
    """

    class Submitted(Message):
        """``enter``: send ``value`` (the box clears itself only once it was sent)."""

        def __init__(self, box: ComposeBox, value: str) -> None:
            super().__init__()
            self.box = box
            self.value = value

        @property
        def control(self) -> ComposeBox:
            return self.box

    class Left(Message):
        """``esc`` (or esc+letter read as alt+letter): the person leaves the box."""

        def __init__(self, box: ComposeBox, dropped: str = "") -> None:
            super().__init__()
            self.box = box
            #: A letter that came with the esc (alt+letter): not typed, not a command.
            self.dropped = dropped

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(
            id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
            placeholder=placeholder,
        )  # fmt: skip
        self.border_title = TYPING_TITLE
        self._count()

    # ------------------------------------------------------------------ an Input's API

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    # ------------------------------------------------------------------ open / closed

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self) -> None:
        """Show the box and type into it (the text left in it is kept, cursor at its end)."""
        self.add_class("-open")
        self.move_cursor(self.document.end)
        self.focus()

    def close(self) -> None:
        """Hide the box (its text stays for the next time it opens)."""
        self.remove_class("-open")

    # ------------------------------------------------------------------ keys

    async def _on_key(self, event: events.Key) -> None:
        if not self.is_open:
            # Left already (esc 3 a enter, sent as one read): the keys that came with the
            # esc were read before the view took the focus back; they are the view's keys,
            # never text (``prevent_default``: not TextArea's; not stopped: up to the view).
            event.prevent_default()
            return
        key = event.key
        if key == "alt+enter":
            # esc and enter in one read: left, and back to typing (``app.dashboard.
            # terminal_keys``). The box stays open with its text; nothing is sent.
            event.stop()
            event.prevent_default()
            return
        letter = alt_letter(key)
        if key == "escape" or letter is not None:
            event.stop()
            event.prevent_default()
            self.close()  # at once: the keys read with this one are not typed
            self.post_message(self.Left(self, letter or ""))
            return
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.text))
            return
        if key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self._replace_via_keyboard("\n", start, end)
            return
        await super()._on_key(event)

    def _on_text_area_changed(self, _: TextArea.Changed) -> None:
        self._count()

    def _on_blur(self, event: events.Blur) -> None:
        """Focus went elsewhere on its own screen (tab, a click): typing ends, the box closes
        (text kept). A dialog over the view leaves it open, to come back to."""
        super()._on_blur(event)
        if self.is_open and self.screen.is_current:
            self.close()
            self.post_message(self.Left(self))

    def _count(self) -> None:
        text = self.text
        lines = text.count("\n") + 1 if text else 0
        count = Text(f"{lines} line{'s' if lines != 1 else ''} · {len(text)} chars · ")
        count.append("enter sends · ctrl+j new line")
        self.border_subtitle = count
