"""A panel's line is made into a strip by ``widgets.line_strips`` (issue 33: Textual's own took
~0.3 ms a line, and the lines a busy team's frames made were most of them): the strip must be
the one Textual makes, segment for segment and style for style, for every kind of line a panel
draws (the lead, each status, a mode, a machine, a worktree, a problem, the compact row), in a
dark and a light theme, selected and not; the lead's pane's rows likewise, as entries move
them; and what it cannot promise it leaves to Textual."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.strip import Strip
from textual.visual import Visual, visualize

from app.runtime.api import AgentSnapshot
from app.runtime.events import TranscriptEntry
from tests.ui.data import make_app, make_runtime
from tests.ui.helpers import ready
from widgets.line_strips import line_strip
from widgets.teammate_panel import TeammatePanel
from widgets.transcript_tail import TranscriptTail


def _textual(panel: TeammatePanel, line: Text, width: int) -> list[object]:
    style = panel.visual_style
    return list(Visual.to_strips(panel, visualize(panel, line), width, 1, style)[0])


def _variants(panel: TeammatePanel) -> list[AgentSnapshot]:
    """The panel's agent as it is, then with each badge and a problem."""
    agent = panel.agent
    return [
        agent,
        replace(agent, mode="bypassPermissions", machine="gpu-box", worktree="/w/alpha-x"),
        replace(agent, status="failed", error="model unavailable: overloaded " * 3),
        replace(agent, status="idle", error="short error", cost_usd=1.25),
        replace(agent, current_task="\x1b[31m#9 escapes\tand tabs shown inert", last_activity=""),
    ]


async def test_a_panel_line_strip_is_the_strip_textual_makes(tmp_path: Path) -> None:
    app = make_app(tmp_path, make_runtime())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause()
        compared = 0
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await pilot.pause()
            for panel in app.leader.query(TeammatePanel):
                original = panel.agent
                for agent in _variants(panel):
                    panel.agent = agent
                    for selected in (False, True):
                        panel.set_class(selected, "-selected")
                        await pilot.pause()
                        width = panel.size.width
                        for line in panel._lines():
                            made = line_strip(panel, line, width, panel.visual_style)
                            assert made is not None, line.plain
                            assert list(made) == _textual(panel, line, width), line.plain
                            assert made.cell_length == _textual_length(panel, line, width)
                            compared += 1
                panel.agent = original
        assert compared >= 2 * 4 * 5 * 2 * 3


def _textual_length(panel: TeammatePanel, line: Text, width: int) -> int:
    style = panel.visual_style
    return Visual.to_strips(panel, visualize(panel, line), width, 1, style)[0].cell_length


async def test_the_compact_row_too(tmp_path: Path) -> None:
    app = make_app(tmp_path, make_runtime())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause()
        panel = next(iter(app.leader.query(TeammatePanel)))
        for width in (12, 30, 58):
            line = panel._compact(width)
            made = line_strip(panel, line, width, panel.visual_style)
            assert made is not None and list(made) == _textual(panel, line, width)


async def test_what_it_cannot_promise_is_left_to_textual(tmp_path: Path) -> None:
    app = make_app(tmp_path, make_runtime())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause()
        panel = next(iter(app.leader.query(TeammatePanel)))
        style = panel.visual_style
        whole = Text.assemble("styled ", ("whole", "italic red"), style="bold")
        made = line_strip(panel, whole, 40, style)  # a whole text's style: a span under all
        assert made is not None and list(made) == _textual(panel, whole, 40)
        assert line_strip(panel, Text("wider than the room"), 5, style) is None
        linked = Text.assemble(("docs", "link https://example.invalid"))
        assert line_strip(panel, linked, 40, style) is None
        assert line_strip(panel, Text("two\nrows"), 40, style) is None
        assert line_strip(panel, Text("plain"), 40, style) is not None


class _Pane(App[None]):
    def compose(self) -> ComposeResult:
        yield TranscriptTail(id="tail")


def _entries() -> list[TranscriptEntry]:
    lead = "team-lead"
    call = {"tool": "Grep", "input": {"pattern": "def main"}, "tool_use_id": "t1"}
    failed = {"tool": "Bash", "input": {"command": "make"}, "tool_use_id": "t2"}
    return [
        TranscriptEntry(lead, "user", "Build the calculator", data={"source": "person"}),
        TranscriptEntry(lead, "assistant", "Looking at **the files** first: `app/*.py` " * 4),
        TranscriptEntry(lead, "tool_call", "Grep", data=call),
        TranscriptEntry(lead, "tool_result", "3 matches", data={"tool_use_id": "t1"}),
        TranscriptEntry(lead, "tool_call", "Bash", data=failed),
        TranscriptEntry(
            lead, "tool_result", "exit 2", data={"tool_use_id": "t2", "is_error": True}
        ),
        TranscriptEntry(lead, "notice", "engineer joined the team"),
        TranscriptEntry(lead, "error", "model unavailable \x1b[31m(overloaded)\x1b[0m " * 5),
        TranscriptEntry(lead, "assistant", "Done: every task is complete. " * 6),
        TranscriptEntry(lead, "notice", "The run ended.", data={"finished": True}),
    ]


async def test_the_lead_pane_rows_are_the_strips_textual_makes() -> None:
    """Each row as Textual's whole render of the joined rows draws it, offsets included, as
    entries arrive (every row moves), with a streamed line, in both themes."""
    app = _Pane()
    async with app.run_test(size=(70, 12)) as pilot:
        tail = app.query_one(TranscriptTail)
        compared = 0
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            for entry in _entries():
                tail.add_entry(entry)
                await pilot.pause()
                for streamed in ("", "streaming a reply… " * 3):
                    if streamed:
                        tail.add_text(streamed)
                        await pilot.pause()
                    tail.refresh()
                    width, height = tail.size
                    ours = [list(tail.render_line(y)) for y in range(height)]
                    assert tail._made is not None  # made here, not by Textual
                    theirs = Visual.to_strips(
                        tail, visualize(tail, tail.render()), width, height, tail.visual_style
                    )
                    blank = Strip.blank(width, tail.visual_style.rich_style)
                    theirs += [blank] * (height - len(theirs))
                    assert ours == [list(strip) for strip in theirs]
                    compared += 1
        assert compared == 2 * 2 * len(_entries())
