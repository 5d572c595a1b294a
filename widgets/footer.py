"""The key footer, rebuilt only when the keys it shows change.

Textual's ``Footer`` recomposes (a new widget per key, each styled anew) every time its screen
publishes that its bindings changed, which the views do after a focus move, a resize, a
request queued or answered: ten times while the dashboard starts, and again when a view
opens, most of them with the same keys. That was half the CPU of the dashboard's start and
of opening a view. :class:`KeyFooter` compares what it would show (each key with its
description, whether it is enabled, its tooltip; the palette key) with what it shows, and
recomposes only on a difference; ``compact`` is bound to the keys as before.

Textual's footer is empty until its screen first publishes its keys (once the screen is
mounted and focused), and its keys are laid out a frame or more after that: a view opened
with a blank bottom row for several frames (0.6-0.8 s in tmux on a busy machine). A
:class:`KeyFooter` holds the app's frames from the moment it is built -- in its screen's
``compose``, before the screen's first frame -- until its keys are laid out (or it goes, or
``HOLD_LIMIT`` seconds pass), and again while it recomposes: every frame shows its keys.
"""

from __future__ import annotations

import contextlib
from contextlib import ExitStack
from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """A ``Footer`` that recomposes only when the keys it shows change."""

    _shown: tuple[Any, ...] | None = None
    #: The longest the app's frames are held for the first keys (see the module docstring).
    HOLD_LIMIT = 2.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._hold = ExitStack()
        with contextlib.suppress(RuntimeError):  # built outside an app: no frames to hold
            app = self.app  # (NoActiveAppError)
            self._hold.enter_context(app.batch_update())
            app.set_timer(self.HOLD_LIMIT, self._release_hold)

    def on_unmount(self) -> None:
        self._release_hold()

    def _release_hold(self) -> None:
        self._hold.close()  # a second close does nothing

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            self._release_hold()  # no keys drawn while the terminal is not focused
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    def shows(self) -> tuple[Any, ...]:
        """What :meth:`compose` draws from: the screen's keys, and the footer's options."""
        keys = tuple(
            (key, binding, self.app.get_key_display(binding), enabled, tooltip)
            for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
        )
        return keys, self.show_command_palette, self.combine_groups

    async def _recompose_if_changed(self) -> None:
        """Recompose if the keys changed, with the app's frames held until the new keys are
        laid out: Textual removes the old keys, mounts the new ones and lays them out over
        several turns, and a frame drawn meanwhile showed the row blank."""
        if not self.is_attached:
            return
        shown = self.shows()
        try:
            if shown != self._shown:
                self._shown = shown
                self._hold.enter_context(self.app.batch_update())
                await self.recompose()
        finally:
            self.call_after_refresh(self._release_hold)
