"""The roster: one ``TeammatePanel`` per agent (the lead first), with the selection."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message

from app.runtime.api import AgentSnapshot
from widgets.teammate_panel import TeammatePanel


def _page_to(top: int, height: int, scrolled: int, view: int) -> int | None:
    """The scroll offset that shows rows ``top``..``top + height`` a page at a time (``None``:
    they are in view): at the view's top if they are below it, at its bottom if above."""
    if top < scrolled:
        return top + height - view if height <= view else top
    if top + height > scrolled + view:
        return top
    return None


def jump_key(index: int, agent: AgentSnapshot) -> str:
    """The digit that jumps to this agent: 0 for the lead, 1-9 for the first teammates."""
    if agent.is_lead:
        return "0"
    return str(index) if 1 <= index <= 9 else ""


class Roster(VerticalScroll, can_focus=True):
    """Panels keyed by agent name; diffed on update, never recomposed."""

    BINDINGS = [
        Binding("enter", "open", "Open", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("down", "move(1)", "Next", show=False),
    ]
    """
    | Key(s) | Description |
    | :- | :- |
    | enter | Open the selected agent's view. |
    | up/down | Select the previous/next agent. |
    """

    DEFAULT_CSS = """
    Roster { height: 1fr; scrollbar-size-vertical: 1; }
    """

    @dataclass
    class Selected(Message):
        """The person moved the selection to ``name``."""

        name: str

    @dataclass
    class Opened(Message):
        """The person asked for ``name``'s view."""

        name: str

    def __init__(self, *, clock: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self._panels: dict[str, TeammatePanel] = {}
        self._order: list[str] = []
        self.selected: str | None = None

    def set_agents(
        self, agents: list[AgentSnapshot], errors: dict[str, str], selected: str | None
    ) -> None:
        """Show ``agents`` in order, with file errors by agent name, and the selection."""
        names = [a.name for a in agents]
        for name in [n for n in self._order if n not in names]:
            self._panels.pop(name).remove()
        in_view = self._in_view()
        teammate_index = 0
        for position, agent in enumerate(agents):
            if not agent.is_lead:
                teammate_index += 1
            key = jump_key(teammate_index, agent)
            panel = self._panels.get(agent.name)
            if panel is None:
                panel = TeammatePanel(
                    agent, key=key, file_error=errors.get(agent.name), clock=self.clock
                )
                self._panels[agent.name] = panel
                existing = [self._panels[n] for n in names[position + 1 :] if n in self._order]
                self.mount(panel, before=existing[0] if existing else None)
            else:
                panel.set_agent(agent, key, errors.get(agent.name), in_view=panel in in_view)
        self._order = names
        self.select(selected)

    def select(self, name: str | None) -> None:
        previous, self.selected = self.selected, name
        if previous != name and previous in self._panels:
            self._panels[previous].remove_class("-selected")
            self._panels[previous].refresh()
        panel = self._panels.get(name) if name is not None else None
        if panel is not None and not panel.has_class("-selected"):
            panel.add_class("-selected")
            panel.refresh()
            self._bring_into_view(panel)

    def _bring_into_view(self, panel: TeammatePanel) -> None:
        """Scroll ``panel`` into view, in the frame that shows it selected, a page at a time:
        a panel below the view comes in at its top, one above at its bottom, so the next
        presses in the same direction select panels already in view. Scrolling one panel
        per press (Textual's nearest edge) made every key press past the view's edge a
        scroll, which arranges the visible screen again and repaints the whole roster: most
        key frames while 8 teammates worked (bench/live.py's ``keypress`` row).

        Its place is the panels' heights above it, not Textual's answer: asking Textual where
        a widget out of view is (``scroll_to_widget``) arranges the whole screen again and
        drops what it knew of the visible part, so the scroll that follows repaints every line
        of the screen (~15 ms of a key press while a team works, bench/live.py)."""
        shown = set(self._panels.values())  # not one being removed
        top = 0
        columns = self.columns
        for position, other in enumerate(c for c in self.children if c in shown):
            if not other.outer_size:  # just mounted: once it has a place
                self.call_after_refresh(self.scroll_to_widget, panel, animate=False)
                return
            if other is panel:
                break
            if position % columns == columns - 1:  # the end of a row (a strip's: two panels)
                top += other.outer_size.height
        else:
            return
        y = _page_to(top, panel.outer_size.height, self.scroll_offset.y, self._view_height)
        if y is not None:
            self.scroll_to(y=min(max(0, y), self.max_scroll_y), animate=False, immediate=True)

    @property
    def _view_height(self) -> int:
        return max(1, self.scrollable_content_region.height)

    def tick(self) -> None:
        """Redraw elapsed times (the lines that show them) on the panels in view; the others
        are made afresh when they come into view (``TeammatePanel.stale``). With fifty
        teammates most panels are out of view, and each redraw builds its lines again.

        Panels further than a page from the view also let go of the strips they kept
        (``TeammatePanel.forget``): a page scroll brings in the page next to the view, whose
        strips are kept, and a hundred teammates' kept strips were ~40 KB a panel, 3-4 MB of
        the dashboard's memory growing with the team (bench/live.py ``--sizes``)."""
        in_view = self._in_view()
        near = self._in_view(margin=self._view_height)
        for panel in self._panels.values():
            if panel in in_view:
                panel.redraw()
            elif panel in near:
                panel.stale()
            else:
                panel.forget()

    def _in_view(self, margin: int = 0) -> set[TeammatePanel]:
        """The panels in view (and those not laid out yet), from the panels' heights;
        ``margin``: and those within that many rows above or below it."""
        top = self.scroll_offset.y - margin
        bottom = self.scroll_offset.y + self._view_height + margin
        shown = set(self._panels.values())
        found: set[TeammatePanel] = set()
        y = 0
        columns = self.columns
        panels = [p for p in self.children if p in shown and isinstance(p, TeammatePanel)]
        for position, panel in enumerate(panels):
            height = panel.outer_size.height
            if not height or (y < bottom and y + height > top):
                found.add(panel)
            if position % columns == columns - 1:  # the end of a row (a strip's: two panels)
                y += height
        return found

    @property
    def columns(self) -> int:
        """Panels side by side: 1 in a column, the grid's in a strip (the leader view's
        ``-strip`` style)."""
        if self.styles.layout is None or self.styles.layout.name != "grid":
            return 1
        return max(1, self.styles.grid_size_columns or 1)

    def neighbour(self, step: int) -> str | None:
        """The name ``step`` places away from the selection (wrapping)."""
        if not self._order:
            return None
        if self.selected not in self._order:
            return self._order[0]
        index = self._order.index(self.selected)
        return self._order[(index + step) % len(self._order)]

    def action_move(self, step: int) -> None:
        name = self.neighbour(step)
        if name is not None:
            self.post_message(self.Selected(name))

    def action_open(self) -> None:
        if self.selected is not None:
            self.post_message(self.Opened(self.selected))

    def on_teammate_panel_clicked(self, event: TeammatePanel.Clicked) -> None:
        event.stop()
        self.post_message(self.Selected(event.name))
