"""One teammate's panel: colour, name, status badge, current task, last activity, counters
(tokens, cost in US dollars, tool calls; with its permission mode, in a team across machines
its machine, and with ``--worktrees`` its worktree).

Four lines when the layout gives it room, one compact row when its height is 1 (narrow
terminals). Rendered from an ``AgentSnapshot`` the app passes in; the time shown beside the
status is the time in that status, from an injected clock so snapshots of the UI are stable.

Only the lines that changed are repainted. A working teammate's snapshot changes at most beats
(tokens, its last activity) and the clock moves its time every second, but most of its panel
reads the same: with 8 teammates at work the panels were the largest part of every frame of
the dashboard (bench/live.py's ``keypress`` row). So the panel keeps the lines it drew and
repaints those that read differently (``refresh`` with their rows); each line is drawn on its
own (``render_line``), the others stay as Textual cached them.

Textual forgets a panel's lines when it is refreshed whole, and a panel out of view is (its
agent changed, the clock moved: ``stale``): when the roster's page scroll brings six panels into
view, each of their lines was made again (~0.3 ms of the loop each, most of that key's frame,
bench/live.py), and every key press made the lines of the panel it left and of the one it
selected. So the panel keeps each row's strip, selected and not, with the line it was made
from, and a line that reads the same at the same width and style is not made again; a line
that reads differently is made by ``line_strip`` (the strip Textual makes, at a fraction of
its cost).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import Visual, visualize
from textual.widget import Widget

from app.display.agent_text import flat, shown
from app.display.fit import cut
from app.display.format import agent_cost, format_count, format_elapsed, rich_color
from app.runtime.api import AgentSnapshot
from app.runtime.events import TERMINAL_STATUSES
from widgets.agent_text import agent_text
from widgets.line_strips import line_strip

BADGE_STYLES: dict[str, str] = {
    "running": "bold green",
    "idle": "dim",
    "stopping": "bold yellow",
    "awaiting approval": "bold magenta",
    "completed": "green",
    "failed": "bold red",
    "killed": "red",
    "gone": "dim",
}


#: The fewest cells of a name a narrow panel keeps (with its "…"), before a badge is cut.
MIN_NAME = 4
#: A console to wrap a problem over two rows with (its width is given at each wrap).
CONSOLE = Console(width=80, color_system=None)

#: Permission modes in words; "default" shows nothing.
MODE_LABELS: dict[str, str] = {
    "plan": "plan mode",
    "acceptEdits": "accepts edits",
    "bypassPermissions": "bypasses permissions",
    "delegate": "delegate mode",
}


#: A status's short form, for a panel too narrow for it and the whole name.
SHORT_STATUS = {"awaiting approval": "awaiting"}


def badge(status: str, *, short: bool = False) -> Text:
    words = SHORT_STATUS.get(status, status) if short else status
    return Text(words, style=BADGE_STYLES.get(status, ""))


#: The modes' short forms, for a one-line panel (whole, or not shown there: never cut).
SHORT_MODES = {
    "plan mode": "plan",
    "accepts edits": "edits",
    "bypasses permissions": "bypass",
    "delegate mode": "delegate",
}


def mode_label(mode: str) -> str:
    """The agent's permission mode as shown on its panel ("" for the default mode)."""
    if not mode or mode == "default":
        return ""
    return MODE_LABELS.get(mode, mode)


def worktree_label(path: str) -> str:
    """``--worktrees``: the folder of the agent's worktree, short (``⎇ alpha-researcher``)."""
    return f"⎇ {PurePath(path).name}"


def machine_label(machine: str) -> str:
    """A team across machines: the machine the agent runs on (``on gpu-box``). The name is
    what the joined machine registered: agent text, shown inert on one line."""
    return f"on {flat(machine, 40)}"


def _same(drawn: Text, line: Text) -> bool:
    """Whether ``line`` draws as ``drawn`` did: the same words, spans and style (a Text's
    ``==`` leaves its own style out)."""
    return drawn == line and drawn.style == line.style and drawn.end == line.end


class TeammatePanel(Widget):
    """A teammate (or the lead) at a glance."""

    DEFAULT_CSS = """
    TeammatePanel {
        height: 4;
        width: 1fr;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        &.-selected { background: $accent 30%; text-style: bold; }
    }
    """

    @dataclass
    class Clicked(Message):
        """The panel was clicked: select this teammate."""

        name: str

    def __init__(
        self,
        agent: AgentSnapshot,
        *,
        key: str = "",
        file_error: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.agent = agent
        self.key = key
        self.file_error = file_error
        self.clock = clock
        #: The lines ``render_line`` draws, and the size and selection they were made for.
        self._drawn: tuple[tuple[Size, bool], list[Text]] | None = None
        #: Each row's strip as drawn last, selected and not, with the width, style and line it
        #: was made from: a line that reads the same is not made again (``render_line``).
        self._strips: dict[tuple[int, bool], tuple[tuple[int, VisualStyle, str], Text, Strip]] = {}

    @property
    def size(self) -> Size:
        """The content's size, from the panel's size at the last layout. Textual's asks the
        screen where the panel is, and for a panel scrolled out of view that arranges the
        whole screen again and drops what the screen knew of its visible part: the roster's
        next scroll then repaints every line of the screen (see ``Roster``). The panels of a
        busy team are redrawn (and restyled, selected) out of view all the time."""
        outer, gutter = self.outer_size, self.styles.gutter
        return Size(max(0, outer.width - gutter.width), max(0, outer.height - gutter.height))

    def set_agent(
        self, agent: AgentSnapshot, key: str, file_error: str | None, *, in_view: bool = True
    ) -> None:
        """Show ``agent``: its changed lines now if the panel is in view, else (``stale``)
        when it comes into view. A hundred teammates' snapshots change on every beat, and
        making each one's lines to draw the few in view was most of the roster's work."""
        if (agent, key, file_error) != (self.agent, self.key, self.file_error):
            self.agent, self.key, self.file_error = agent, key, file_error
            if in_view:
                self.redraw()
            else:
                self.stale()

    def redraw(self) -> None:
        """Repaint the lines that read differently now (the clock moved, the agent changed);
        all of them if the size or the selection changed since they were drawn."""
        drawn = self._drawn
        made_for = (self.size, self.selected)
        lines = self._lines()
        self._drawn = (made_for, lines)
        if drawn is None or drawn[0] != made_for:
            self.refresh()
            return
        before = drawn[1]
        width = self.size.width
        changed = [
            Region(0, y, width, 1)
            for y, line in enumerate(lines)
            if y >= len(before) or line != before[y]
        ]
        if changed:
            self.refresh(*changed)

    def stale(self) -> None:
        """Out of view: its lines are made when it is drawn next, not now (once)."""
        if self._drawn is not None:
            self._drawn = None
            self.refresh()

    def forget(self) -> None:
        """Far out of view: as ``stale``, and the strips kept of its lines go too (they are
        made again when it is drawn next). What a page scroll brings in keeps them (the
        roster's ``tick``); the rest of a big team's would be the dashboard's largest
        memory growing with the team."""
        self.stale()
        self._strips.clear()

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Clicked(self.agent.name))

    # ------------------------------------------------------------------ rendering

    def _elapsed(self) -> str:
        """How long the agent has been in its status ("idle 2:05": idle for 2 min 5 s); one
        that finished or left, how long it was there. Without a known start of the status,
        the time since it joined. A team gone quiet (``ended_at`` set) stops the clock."""
        agent = self.agent
        finished = agent.status in TERMINAL_STATUSES or agent.status == "gone"
        if finished and agent.ended_at and agent.started_at:
            return format_elapsed(agent.ended_at - agent.started_at)
        since = agent.status_since or agent.started_at
        if not since:
            return ""
        return format_elapsed((agent.ended_at or self.clock()) - since)

    @property
    def selected(self) -> bool:
        return self.has_class("-selected")

    def _bar(self) -> tuple[str, str]:
        """The left edge of the first line: the agent's colour bar, or a marker when selected
        (visible in every theme, and in plain text)."""
        color = rich_color(self.agent.color, "bold")
        return ("▶", f"bold {color}") if self.selected else ("▌", color)

    def _named(self, room: int) -> Text:
        """The bar, the jump key and the name, the name cut to leave ``room`` cells (never
        below ``MIN_NAME``): at a narrow width the name gives way, not the badges after it."""
        agent = self.agent
        color = rich_color(agent.color, "bold")
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(*self._bar())
        head.append(f"{self.key} " if self.key else "  ", style="dim")
        name = shown(agent.name)
        left = max(MIN_NAME, room - cell_len(head.plain))
        if agent.is_lead and cell_len(name) + 7 <= left:  # "(lead)" where there is room
            name += " (lead)"
        if cell_len(name) > left:
            name = cut(name, left)
        head.append(name, style=f"bold {color}" + (" underline" if self.selected else ""))
        return head

    def _fits_whole(self, badges: int, width: int) -> bool:
        """Whether the bar, key and whole name and ``badges`` cells fit ``width``."""
        return 3 + cell_len(shown(self.agent.name)) + badges <= width

    def _head(self, width: int) -> Text:
        status = self.agent.status
        short = not self._fits_whole(1 + cell_len(status), width)
        right = Text(no_wrap=True)
        right.append_text(badge(status, short=short))
        elapsed = self._elapsed()
        room = width - cell_len(right.plain) - 1
        if elapsed and self._fits_whole(cell_len(right.plain) + 2 + len(elapsed), width):
            room -= len(elapsed) + 1  # the time in the status too, with the whole name
        head = self._named(room)
        if elapsed and cell_len(head.plain) + cell_len(right.plain) + len(elapsed) + 2 <= width:
            right.append(f" {elapsed}", style="dim")
        gap = width - cell_len(head.plain) - cell_len(right.plain)
        head.append(" " * max(1, gap))
        head.append_text(right)
        head.truncate(width)
        return head

    def _line(self, text: str, style: str = "") -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("▌", style=rich_color(self.agent.color, "bold"))
        line.append("  ")
        line.append(flat(text), style=style)  # agent text: escapes shown, one line
        return line

    def _problem(self) -> str | None:
        if self.file_error:
            return f"⚠ {self.file_error}"
        if self.agent.error and self.agent.status in ("failed", "idle"):
            return f"✗ {self.agent.error}"  # failed, or idle after a failed turn
        return None

    def render(self) -> Text:
        return Text("\n", no_wrap=True).join(self._lines())

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the lines drawn last (made now if the size or selection changed); its
        strip as made last if it reads the same."""
        width = self.size.width
        if self.text_selection is not None:  # the mouse selects text: Textual's whole render
            return super().render_line(y)
        made_for = (self.size, self.selected)
        if self._drawn is None or self._drawn[0] != made_for:
            self._drawn = (made_for, self._lines())
        lines = self._drawn[1]
        if y >= len(lines) or width <= 0:  # (no width: Textual draws it as no strips at all)
            return Strip.blank(max(0, width), self.visual_style.rich_style)
        line, made_as = lines[y], (width, self.visual_style, self.app.theme)
        slot = (y, self.selected)  # selected and not: a key press selects and leaves it
        made = self._strips.get(slot)
        if made is not None and made[0] == made_as and _same(made[1], line):
            return made[2]
        style = self.visual_style
        strip = line_strip(self, line, width, style)  # Textual's own where it cannot say
        if strip is None:
            strip = Visual.to_strips(self, visualize(self, line), width, 1, style)[0]
        self._strips[slot] = (made_as, line, strip)
        return strip

    def _lines(self) -> list[Text]:
        width = max(10, self.size.width)
        agent = self.agent
        if self.size.height <= 1:
            return [self._compact(width)]
        task = agent.current_task or "no task"
        lines = [
            self._head(width),
            self._line(task, "" if agent.current_task else "dim italic"),
            self._line(agent.last_activity or "—", "italic" if agent.last_activity else "dim"),
        ]
        problem = self._problem()
        if problem:
            line = self._line(problem, "bold red")
            if cell_len(line.plain) > width:  # whole, over the activity line's row too
                rows = agent_text(flat(problem), style="bold red").wrap(CONSOLE, width - 1)
                del lines[2:]
                for row in list(rows)[:2]:
                    # (the bar as a span: a Text's own style string is parsed by Textual,
                    # which knows no Rich colour names)
                    lines.append(Text.assemble(("▌", rich_color(agent.color, "bold")), row))
            else:
                lines.append(line)
        else:
            tokens = agent.input_tokens + agent.output_tokens
            cost = agent_cost(agent)
            spent = f"{format_count(tokens)} tok" + (f" · {cost}" if cost else "")
            # The badges first (mode, machine, worktree): a narrow roster cuts the counters,
            # not them.
            counters = self._line("")
            mode = mode_label(agent.mode)
            if mode:
                counters.append(f"{mode} · ", style="bold")
            if agent.machine:
                counters.append(f"{machine_label(agent.machine)} · ", style="bold")
            if agent.worktree:
                counters.append(f"{worktree_label(agent.worktree)} · ")
            if cost:  # the cost before the token count: a narrow roster cuts the count
                spent = f"{cost} · {format_count(tokens)} tok"
            counters.append(f"{spent} · {agent.tool_calls} tools", style="dim")
            lines.append(counters)
        for line in lines:
            line.truncate(width, overflow="ellipsis")
        return lines[: max(1, self.size.height)]

    def _compact(self, width: int) -> Text:
        """One line: the name, the status (its short form if the name would not fit whole),
        the mode (whole, short, or not at all: never cut), then what fits of the cost and the
        current task, or a problem."""
        agent = self.agent
        mode = mode_label(agent.mode)
        short = not self._fits_whole(1 + len(agent.status), width)
        status = SHORT_STATUS.get(agent.status, agent.status) if short else agent.status
        badges = Text(no_wrap=True)
        badges.append(" ")
        badges.append_text(badge(agent.status, short=short))
        for words in (mode, SHORT_MODES.get(mode, "")) if mode else ():
            if self._fits_whole(1 + len(status) + 3 + len(words), width):
                badges.append(f" · {words}", style="italic")  # whole, or its short form
                break
        text = self._named(width - cell_len(badges.plain))
        text.append_text(badges)
        cost = f" {agent_cost(agent)}" if agent.cost_usd is not None else ""
        if cell_len(text.plain) + len(cost) <= width:  # whole or not at all
            text.append(cost, style="dim")
        problem = self._problem()
        tail, style = (problem, "bold red") if problem else (agent.current_task, "")
        room = width - cell_len(text.plain) - 1
        if tail and room >= 2:  # in the room left, never over a badge
            text.append(f" {cut(flat(tail), room)}", style=style)
        text.truncate(width, overflow="ellipsis")
        return text
