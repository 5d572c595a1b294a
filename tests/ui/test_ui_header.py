"""The header keeps one layout at a width (issue 30, M5): at 80 columns it flipped between two
layouts from frame to frame as a count or the cost grew by a digit, and a non-default
permission mode is shown at every width from 80 up."""

from __future__ import annotations

import re

from textual.app import App, ComposeResult

from widgets.status_bar import StatusBar

MODEL = "Claude · claude-sonnet-5-5 · sandbox"
TEAM = "summarize-python-files"

#: Counts and costs as a run goes (the header reserves a digit for teammates and approvals,
#: two for open tasks): a cost from nothing to dollars.
FRAMES = [
    dict(teammates=0, open_tasks=0, approvals=0, cost="$0"),
    dict(teammates=3, open_tasks=3, approvals=1, cost="$0.0123"),
    dict(teammates=3, open_tasks=12, approvals=2, cost="$0.4521"),
    dict(teammates=9, open_tasks=10, approvals=0, cost="$12.34"),
    dict(teammates=1, open_tasks=99, approvals=9, cost="$0"),
]


class HeaderApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusBar()


def layout(line: str) -> list[str]:
    """The parts a line shows, without their values: its words less the team's name, digits
    and plural endings."""
    words = re.findall(r"[a-z⏵⏸]+", line.replace(TEAM, "").lower())
    return [w.rstrip("s") for w in words if w not in TEAM]


async def test_the_header_keeps_one_layout_while_counts_and_cost_change() -> None:
    app = HeaderApp()
    async with app.run_test(size=(80, 3)) as pilot:
        bar = app.query_one(StatusBar)
        for width in range(80, 141, 4):
            await pilot.resize_terminal(width, 3)
            await pilot.pause()
            shapes = []
            for mode in ("", "acceptEdits", "plan"):
                for frame in FRAMES:
                    bar.show(team=TEAM, model=MODEL, mode=mode, **frame)  # type: ignore[arg-type]
                    line = bar.line.plain
                    assert len(line) <= width - 2, line
                    if mode:  # never dropped, whatever the width
                        assert ("⏵⏵ accept edits" if mode == "acceptEdits" else "⏸ plan mode") in (
                            line
                        ), line
                    shapes.append((mode, layout(line)))
            for mode in ("", "acceptEdits", "plan"):
                seen = {tuple(shape) for m, shape in shapes if m == mode}
                assert len(seen) == 1, f"{width} columns, mode {mode!r}: {seen}"
