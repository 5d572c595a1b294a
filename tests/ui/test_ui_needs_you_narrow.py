"""The needs-you line at 60 columns drops whole keys, never a word of one: the pass at 60x20
found "▶ researcher: Bash waiting 1:11 — a allow once · r deny ·" (issue 30, the newcomer
pass; the footer had been fixed the same way for M5)."""

from __future__ import annotations

import pytest

from app.dashboard.app import TeamDeckApp
from tests.ui.helpers import ready, wait_for
from widgets.needs_you import NeedsYou


@pytest.mark.parametrize("width", [60, 80, 120])
async def test_the_needs_you_line_keeps_whole_keys(deck: TeamDeckApp, width: int) -> None:
    async with deck.run_test(size=(width, 24 if width < 120 else 40)) as pilot:
        await ready(pilot)
        line = deck.screen.query_one(NeedsYou)
        await wait_for(pilot, lambda: line.has_class("-waiting"))
        await pilot.pause(1.2)  # a tick shows it again at this width
        text = line.render_line(0).text.rstrip()
        assert "— a " in text, text  # the key that answers it, always
        assert not text.endswith(("·", "…")), text
        assert text.endswith(("review", "deny", "reject", "approve", "once", "more)")), text
