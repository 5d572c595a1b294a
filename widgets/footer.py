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

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from textual.app import App
from textual.binding import ActiveBinding, Binding
from textual.screen import Screen
from textual.widgets import Footer

#: The cells ``^p palette`` takes at the footer's right edge.
PALETTE_CELLS = 14


def fit_keys(
    app: App[Any],
    found: dict[str, ActiveBinding],
    rank: Callable[[Binding], int],
    *,
    compact: bool = False,
    palette: bool = True,
) -> dict[str, ActiveBinding]:
    """Hide the keys that do not fit the footer's width, those ``rank`` puts last first: a
    footer drops whole keys (they still work), never a word of one (``- Slowe▏`` was cut at
    the right edge). ``compact``: one space between keys; ``palette``: ``^p palette`` at the
    right takes its room."""
    width = app.size.width
    if not width:
        return found
    shown = [(k, a) for k, a in found.items() if a.binding.show]
    shown.sort(key=lambda item: rank(item[1].binding))
    room = width - (PALETTE_CELLS if palette else 0)
    for key, active in shown:
        binding = active.binding
        label = len(app.get_key_display(binding)) + 1 + len(binding.description)
        cost = label + (1 if compact else 3)
        if cost <= room:
            room -= cost
        else:
            found[key] = active._replace(binding=replace(binding, show=False))
    return found


def palette_fits(app: App[Any], found: dict[str, ActiveBinding]) -> bool:
    """Whether ``^p palette`` fits beside the compact footer's shown keys: at 80 columns it was
    hidden even where two keys left the row empty (issue 30, M5: ``^p`` disappeared)."""
    used = sum(
        len(app.get_key_display(a.binding)) + 2 + len(a.binding.description)
        for a in found.values()
        if a.binding.show
    )
    return app.size.width - used >= PALETTE_CELLS


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
