"""A panel Textual forgot (refreshed whole: out of view its agent changed, the clock moved)
makes again only the lines that read differently when it is drawn (issue 33: the roster's page
scroll made every line of six panels again, most of that key press's frame). Counted, never
timed: a line made is one ``line_strip`` made, or Textual's ``Visual.to_strips``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.visual import Visual

from tests.ui.data import make_app, make_runtime
from tests.ui.helpers import ready
from widgets import teammate_panel
from widgets.teammate_panel import TeammatePanel


async def test_a_panel_drawn_whole_again_makes_only_the_lines_that_changed(
    tmp_path: Path,
) -> None:
    runtime = make_runtime()
    app = make_app(tmp_path, runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause()
        panel = next(p for p in app.leader.query(TeammatePanel) if p.agent.name == "researcher")
        made: list[Any] = []
        real, real_line = Visual.to_strips, teammate_panel.line_strip

        def counting(widget: Any, *args: Any, **kwargs: Any) -> Any:
            if widget is panel:
                made.append(args[0])
            return real(widget, *args, **kwargs)

        def counting_line(widget: Any, *args: Any) -> Any:
            made_here = real_line(widget, *args)
            if widget is panel and made_here is not None:
                made.append(args[0])
            return made_here

        Visual.to_strips = staticmethod(counting)  # type: ignore[assignment]
        teammate_panel.line_strip = counting_line  # type: ignore[assignment]
        try:
            panel.stale()  # Textual forgets its lines, as out of view
            await pilot.pause()
            assert made == []  # every line reads the same: none made again
            lines_before = [s.text for s in (panel.render_line(y) for y in range(4))]
            agent = replace(panel.agent, last_activity="calling Grep")
            panel.set_agent(agent, panel.key, None, in_view=False)
            await pilot.pause()
            assert len(made) == 1  # the activity line only
            lines_after = [s.text for s in (panel.render_line(y) for y in range(4))]
            assert lines_after[2] != lines_before[2] and "calling Grep" in lines_after[2]
            assert [lines_after[y] for y in (0, 1, 3)] == [lines_before[y] for y in (0, 1, 3)]
            made.clear()
            panel.add_class("-selected")  # another style: made again
            panel.refresh()
            await pilot.pause()
            assert len(made) == 4
            made.clear()
            panel.remove_class("-selected")  # left: as it was drawn before
            panel.refresh()
            await pilot.pause()
            assert made == []
        finally:
            Visual.to_strips = real  # type: ignore[method-assign]
            teammate_panel.line_strip = real_line
