"""The "needs you" line: one steady row, above the footer of the leader and agent views, that
names the one request ``a``/``r``/``v`` answer and how long it has waited::

    ▶ writer's plan waiting 0:12 — a approve · r reject · v review  (+1 more)

It is always there (a row that comes and goes moves everything above it): with nothing to
answer it says so. The answer keys act on the request it names and on no other (see
``DeckScreen.named_request``).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


def waited(seconds: float) -> str:
    """``0:12``, ``12:03``, ``1:02:03``."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


class NeedsYou(Static):
    """See the module docstring.

    Its size never follows its text (one row, the screen's width), so a new line repaints it
    without a layout, and the same line (every key press, every tick shows it again) does
    nothing: ``Static.update`` lays out the whole screen, which with a hundred teammates'
    panels in the roster took tens of milliseconds of each key press."""

    _shown: Text | None = None

    DEFAULT_CSS = """
    NeedsYou {
        height: 1;
        padding: 0 1;
        background: $boost;
        color: $text-muted;
    }
    NeedsYou.-waiting {
        background: $warning 20%;
        color: $text;
    }
    """

    def show(
        self,
        label: str | None,
        *,
        since: float = 0.0,
        now: float = 0.0,
        keys: str = "a approve · r reject · v review",
        more: int = 0,
        idle: str = "nothing needs you",
    ) -> None:
        """Name ``label`` (a request in a few words), waiting since ``since``; ``None``:
        nothing waits (``idle`` says so)."""
        self.set_class(label is not None, "-waiting")
        line = Text(no_wrap=True, overflow="ellipsis")
        if label is None:
            line.append(idle)
        else:
            head = f"▶ {label} waiting {waited(now - since)} — "
            room = self.content_region.width
            extra = f"  (+{more} more)" if more else ""
            if room and len(head) + len(keys) + len(extra) > room:
                extra = ""  # a narrow row drops whole keys, last first, never a word of one
                parts = keys.split(" · ")
                while len(parts) > 1 and len(head) + len(" · ".join(parts)) > room:
                    parts.pop()
                keys = " · ".join(parts)
            line.append("▶ ", style="bold yellow")
            line.append(label, style="bold")
            line.append(f" waiting {waited(now - since)}")
            line.append(" — ")
            line.append(keys, style="bold")
            if extra:
                line.append(extra, style="dim")
        if line != self._shown:
            self._shown = line
            self.update(line, layout=False)
