"""The key footer, rebuilt only when the keys it shows change.

Textual's ``Footer`` recomposes (a new widget per key, each styled anew) every time its screen
publishes that its bindings changed, which the views do after a focus move, a resize, a
request queued or answered: ten times while the dashboard starts, and again when a view
opens, most of them with the same keys. That was half the CPU of the dashboard's start and
of opening a view. :class:`KeyFooter` compares what it would show (each key with its
description, whether it is enabled, its tooltip; the palette key) with what it shows, and
recomposes only on a difference; ``compact`` is bound to the keys as before.

Its first keys are composed as soon as its screen has a focus, not after a refresh as later
changes are: Textual's footer composed them after the screen's first frame, so a view opened
with a blank bottom row for 2-4 frames (up to 0.8 s in tmux on a busy machine). A view that
sets its own focus disables auto-focus, so that the first keys are those of that focus (an
auto-focused roster first offered the keys of the panels, then the input's).
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """A ``Footer`` that recomposes only when the keys it shows change."""

    _shown: tuple[Any, ...] | None = None

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            if self._shown is None and screen.focused is not None:
                # Its first keys, once the view has its focus (before, they are not yet the
                # view's): at once, not after a frame drawn without them.
                self.call_next(self._recompose_if_changed)
            else:
                self.call_after_refresh(self._recompose_if_changed)

    def shows(self) -> tuple[Any, ...]:
        """What :meth:`compose` draws from: the screen's keys, and the footer's options."""
        keys = tuple(
            (key, binding, self.app.get_key_display(binding), enabled, tooltip)
            for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
        )
        return keys, self.show_command_palette, self.combine_groups

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached:
            return
        shown = self.shows()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
