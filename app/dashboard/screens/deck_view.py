"""What the leader and agent views share, apart from steering: access to the app, typing or
keys, the search, the selection, the header and the hooks the app calls with streams.

The steering keys (approve, reject, shut down, kill, ...) and the views' bindings are
``DeckScreen``'s (``app.dashboard.screens.deck``); ``LeaderScreen`` and ``AgentScreen`` derive
from it.
"""

from __future__ import annotations

import time
from typing import Any, TypeVar, cast

from textual import events, on
from textual._time import get_time as read_clock  # the clock of an event's ``time``
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input

from app.dashboard.event_relay import permission_limit
from app.dashboard.messages import FilterFeed, SelectAgent, ToggleBoard
from app.dashboard.screens import modes
from app.dashboard.screens.help import HelpScreen
from app.dashboard.screens.host import DeckHost
from app.dashboard.screens.row_paint import RowCompositor
from app.dashboard.screens.view_search import Searchable, ViewSearch
from app.dashboard.streams import HookLines, RunEnded, Streamed, TranscriptGrew
from app.display.values import FeedItem, HeaderInfo, teammates
from app.runtime.by_files.status import moment_text
from app.runtime.events import TextDelta, TranscriptEntry
from app.runtime.steering import Steering
from widgets.approvals import ApprovalsQueue
from widgets.compose_box import ComposeBox, alt_letter
from widgets.needs_you import NeedsYou
from widgets.roster import Roster
from widgets.status_bar import StatusBar

W = TypeVar("W", bound=Widget)


class DeckView(Screen[None]):
    """The base of ``DeckScreen``: see the module docstring."""

    #: Actions of keys a person could type: off (and not in the footer) while typing.
    LETTER_ACTIONS = frozenset(
        {
            "approve",
            "reject",
            "review",
            "shutdown",
            "kill",
            "toggle_filter",
            "jump",
            "focus_input",
            "search",
            "hit",
        }
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._compositor = RowCompositor()  # repaints only the rows that changed (row_paint)
        self._fit_breakpoints()

    def _fit_breakpoints(self) -> None:
        """The app's breakpoint classes (``-narrow``, ``-short``) for the terminal's size, set
        before the view's first layout. Textual sets them on the screen's first resize, after
        its first frame: at 80x24 a view opened drawn in the wide layout (blank rows where the
        footer goes), then the narrow one, and an anchored transcript 2 rows past its end."""
        app = self.app
        width, height = app.size
        if not (app.is_running and width and height):
            return  # the size is not known yet: Textual's resize sets them
        for size, breakpoints in (
            (width, app.HORIZONTAL_BREAKPOINTS or []),
            (height, app.VERTICAL_BREAKPOINTS or []),
        ):
            fits = [name for at, name in sorted(breakpoints, reverse=True) if size >= at][:1]
            for _, name in breakpoints:
                self.set_class(name in fits, name)

    # ------------------------------------------------------------------ access

    @property
    def host(self) -> DeckHost:
        return cast(DeckHost, self.app)

    @property
    def steering(self) -> Steering:
        return self.host.steering

    def view_widgets(self, kind: type[W]) -> list[W]:
        """The view's widgets of ``kind``, found once the view is mounted (a view composes
        them once and keeps them). A query walks every node of the view: with a hundred
        teammates' panels in the roster that took ~10 ms, and the needs-you line and the
        clock's tick asked several times a second and on every key press."""
        found: dict[type[Widget], list[Widget]] = self.__dict__.setdefault("_view_widgets", {})
        widgets = found.get(kind)
        if widgets is None or not all(w.is_attached for w in widgets):
            widgets = list(self.query(kind))
            if self.is_mounted:
                found[kind] = widgets
        return cast("list[W]", widgets)

    # ------------------------------------------------------------------ typing or keys

    _asked: str | None = None

    @property
    def selection(self) -> str | None:
        """The selected agent, counting a selection asked for that the app has not taken
        yet: keys typed fast ("3a") act on what the person just selected."""
        return self._asked if self._asked is not None else self.host.selected

    def select(self, name: str) -> None:
        """Ask the app to select ``name``."""
        self._asked = name
        self.post_message(SelectAgent(name))

    def selection_shown(self) -> None:
        """The app's selection changed (the views call this from their watchers)."""
        self._asked = None

    @property
    def search(self) -> ViewSearch:
        """The view's search (``/``)."""
        found: ViewSearch | None = getattr(self, "_search", None)
        if found is None:
            found = self._search = ViewSearch(self, self.search_target, self.focus_keys)
        return found

    def search_target(self) -> Searchable | None:
        """The widget ``/`` searches (the leader view's feed, the agent view's transcript)."""
        return None

    @property
    def typing(self) -> bool:
        """The compose box (or the search box) has focus: keys are text, not commands. A box
        that has just closed (esc, its ``Left`` not handled yet) takes no text."""
        focused = self.focused
        return isinstance(focused, Input) or (isinstance(focused, ComposeBox) and focused.is_open)

    def input_widget(self) -> ComposeBox | None:
        """The view's compose box (``None`` when it has none or it is disabled)."""
        found = self.view_widgets(ComposeBox)
        widget = found[0] if found else None
        return widget if widget is not None and not widget.disabled else None

    # ------------------------------------------------------------------ the key guard

    #: Seconds a single-letter command is ignored after the view opened or changed or a
    #: dialog over it closed, and after a letter that is no command here (the person was
    #: typing into no box): a key meant for the old screen, or a word, never acts.
    KEY_GUARD = 0.3
    _guard_until = 0.0
    _changed_at = 0.0  # when the guard last started, on the clock of a key's ``time``
    _hinted_at = 0.0

    def guard_keys(self) -> None:
        """The view changed: single-letter commands wait ``KEY_GUARD`` seconds, and one read
        before the change (``_read_before_the_change``) is ignored however late it comes."""
        self._guard_until = time.monotonic() + self.KEY_GUARD
        self._changed_at = read_clock()

    def _read_before_the_change(self, event: events.Key) -> bool:
        """The key was read from the terminal before the view changed: typed for the view
        before (``esc 3 a enter`` then a sentence, all read at once). A busy dashboard takes
        such keys in turn, and by the time it came to them the 0.3 s had passed (a loaded
        machine: 0.75 s between two keys of one read), so the guard's clock alone let the
        sentence's letters act."""
        return event.time < self._changed_at

    def _hint(self, text: str) -> None:
        """One hint at a time: a word typed into no box gives one toast, not one a letter."""
        now = time.monotonic()
        if now - self._hinted_at > 2.0:
            self.notify(text, title="Key ignored", severity="warning", timeout=3)
        self._hinted_at = now

    async def on_key(self, event: events.Key) -> None:
        """What no box takes: ``alt+letter`` (esc and a letter pressed together) is esc, the
        letter ignored; a single-letter command right after the view changed is ignored; a
        letter that is no command here is ignored. Each with a hint, never silently."""
        if self.typing:
            return
        focused = self.focused
        if isinstance(focused, ComposeBox):  # it has just closed: typing has just ended
            self.guard_keys()
        letter = alt_letter(event.key)
        if letter is not None:
            event.stop()
            event.prevent_default()
            escape = self.active_bindings.get("escape")
            if escape is not None and escape.enabled:  # what esc alone does here
                await self.app.run_action(escape.binding.action, escape.node)
            self.guard_keys()
            self._hint(f"{letter} came with esc, read as one key: press {letter} again")
            return
        key = event.key
        if not (len(key) == 1 and key.isalnum()):
            return
        now = time.monotonic()
        if now < self._guard_until or self._read_before_the_change(event):
            event.stop()
            event.prevent_default()
            self.guard_keys()
            self._hint(f"{key} ignored: the view had just changed; press it again")
            return
        if key not in self.active_bindings:
            event.stop()
            event.prevent_default()
            self.guard_keys()
            what = "i to type a message" if self.input_widget() is not None else "no typing here"
            self._hint(f"{key} is no key here: {what} · ? lists the keys")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "help":
            return (parameters == ("typing",)) == self.typing
        if action == "leave_input":
            return self.typing and not self.search.focused
        if action == "focus_input":
            return not self.typing and self.input_widget() is not None
        if action == "close_search":
            return self.search.is_open
        if action == "hit" and not self.search.active:
            return False
        if action == "search" and self.search_target() is None:
            return False
        if action in self.LETTER_ACTIONS:
            return not self.typing
        return True

    # ------------------------------------------------------------------ search (``/``)

    def action_search(self) -> None:
        self.search.open()

    def action_hit(self, step: int) -> None:
        self.search.hit(step)

    def action_close_search(self) -> None:
        self.search.close()

    @on(Input.Changed, "#search")
    def _search_typed(self, event: Input.Changed) -> None:
        event.stop()
        self.search.typed(event.value)

    @on(Input.Submitted, "#search")
    def _search_done(self, event: Input.Submitted) -> None:
        event.stop()
        self.search.submitted()

    def on_screen_suspend(self) -> None:
        self._show_footer(False)

    def on_screen_resume(self) -> None:
        self._show_footer(True)
        self.guard_keys()  # a dialog (or another view) closed: its keys must not act here
        self.host.release_toasts()  # a dialog closed: what happened meanwhile

    def _show_footer(self, shown: bool) -> None:
        """The view's keys are not offered while a dialog, the help or the palette is over
        it: they would not act there (a dialog's footer shows its own keys), nor the request
        they would answer (the needs-you line)."""
        for footer in self.query(Footer):
            footer.visible = shown
        for line in self.view_widgets(NeedsYou):
            line.visible = shown

    def on_descendant_focus(self) -> None:
        self.focus_moved()

    def on_descendant_blur(self) -> None:
        self.focus_moved()

    def focus_moved(self) -> None:
        """Focus moved inside the view: the footer shows what works from there."""
        self.refresh_bindings()

    def action_ctrl_c(self) -> None:
        """ctrl+c never quits (a shell habit must not end a team): say what does, and copy
        the selected text of an input as ctrl+c does there."""
        focused = self.focused
        if isinstance(focused, (Input, ComposeBox)) and focused.selected_text:
            focused.action_copy()
        self.notify("ctrl+c does not quit: press ctrl+q to quit", title="Quit?")

    def action_focus_input(self, _how: str = "") -> None:
        """Open the compose box: from now on every key is text, until esc or enter."""
        widget = self.input_widget()
        if widget is not None:
            widget.open()

    def action_leave_input(self) -> None:
        """Leave the input: single-letter keys work again."""
        self.close_compose()

    def close_compose(self) -> None:
        """Close the compose box (its text is kept) and give the focus back to the keys.
        Typing ended (esc, or the text was sent): the letters typed right after it were
        meant as text, never as commands, so the key guard starts."""
        for box in self.view_widgets(ComposeBox):
            box.close()
        self.guard_keys()
        if self.typing or isinstance(self.focused, ComposeBox) or self.focused is None:
            self.focus_keys()

    @on(ComposeBox.Left)
    def _left_compose(self, event: ComposeBox.Left) -> None:
        event.stop()
        self.close_compose()  # the box closed itself; the focus comes back to the keys
        self.refresh_bindings()
        if event.dropped:
            self.guard_keys()
            self._hint(f"{event.dropped} came with esc, read as one key: press it again")

    def focus_keys(self) -> None:
        """Focus the view's main panel (where single-letter keys act)."""
        self.query_one(Roster).focus()

    # ------------------------------------------------------------------ streams

    @on(events.Mount)
    def _follow_streams(self) -> None:
        self.guard_keys()  # the view just opened: a key meant for the last one waits
        self.host.streamed.subscribe(self, self._streamed, immediate=True)

    @on(events.Unmount)
    def _stop_following(self) -> None:
        self.host.streamed.unsubscribe(self)

    def _streamed(self, item: Streamed) -> None:
        """One item of the app's stream, to the hook below that takes it."""
        match item:
            case TextDelta(agent=agent, text=text):
                self.on_text(agent, text)
            case TranscriptEntry():
                self.on_entry(item)
            case HookLines(items=items):
                self.on_hooks(items)
            case RunEnded(reason=reason, ok=ok):
                self.run_finished(reason, ok)
            case TranscriptGrew(agent=agent):
                self.transcript_grew(agent)

    # ------------------------------------------------------------------ hooks for subclasses

    def on_text(self, agent: str, text: str) -> None:
        """Streamed text of ``agent`` (already batched)."""

    def on_entry(self, entry: TranscriptEntry) -> None:
        """A whole transcript entry."""

    def run_finished(self, reason: str, ok: bool) -> None:
        """The run ended (the team is done): show it where the lead's report is."""

    def on_hooks(self, items: list[tuple[str | None, FeedItem]]) -> None:
        """Team hooks that blocked or warned, as feed lines (with their team)."""

    def transcript_grew(self, agent: str) -> None:
        """``agent``'s transcript, read from its session file, changed (a viewer)."""

    def show_header(self, header: HeaderInfo) -> None:
        """Redraw the header line (watches ``host.header``)."""
        stale_text = "" if header.stale_since is None else moment_text(header.stale_since)
        self.query_one(StatusBar).show(
            team=header.team,
            model=header.model,
            teammates=header.teammates,
            open_tasks=header.open_tasks,
            approvals=header.approvals,
            read_only=header.read_only,
            demo=header.demo,
            error=header.error,
            mode=header.mode,
            cost=header.cost,
            stale="" if header.stale_since is None else f"stale since {stale_text}",
        )

    def tick(self) -> None:
        """Once a second: redraw elapsed times (and permission requests' time left)."""
        for roster in self.view_widgets(Roster):
            roster.tick()
        limit = permission_limit(self.app)
        for queue in self.view_widgets(ApprovalsQueue):
            queue.tick(self.host.clock(), limit)

    def action_cycle_mode(self) -> None:
        modes.cycle_lead_mode(self)

    # ------------------------------------------------------------------ selection

    def action_select(self, step: int) -> None:
        names = [a.name for a in self.host.agents]
        if not names:
            return
        selected = self.selection
        index = names.index(selected) if selected in names else -step
        self.select(names[(index + step) % len(names)])

    def action_jump(self, number: int) -> None:
        agents = self.host.agents
        if number == 0:
            target = next((a for a in agents if a.is_lead), None)
        else:
            others = teammates(agents)
            target = others[number - 1] if number <= len(others) else None
        if target is None:
            self.notify(f"No agent {number}.", severity="warning")
            return
        self.select(target.name)
        self.query_one(Roster).focus()  # one selection: enter now opens what 3 selected

    def action_toggle_filter(self) -> None:
        host = self.host
        self.post_message(FilterFeed(None if host.feed_filter else self.selection))

    def action_toggle_board(self) -> None:
        self.post_message(ToggleBoard())

    def action_help(self, _: str = "") -> None:
        self.app.push_screen(HelpScreen())
