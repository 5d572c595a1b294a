"""The lead's pane drops Markdown's marks from the model's text, and only those: a glob the
lead names (``app/core/**/*.py``) was shown as ``app/core//*.py`` (issue 30's newcomer pass)."""

from __future__ import annotations

from app.runtime.events import TranscriptEntry
from widgets.transcript_tail import TranscriptTail


def shown(text: str) -> str:
    tail = TranscriptTail()
    tail.add_entry(TranscriptEntry("team-lead", "assistant", text))
    [line] = tail.lines
    return line


def test_a_glob_is_shown_as_written() -> None:
    assert shown("Looking at the files first: app/core/**/*.py") == (
        "Looking at the files first: app/core/**/*.py"
    )


def test_bold_code_and_heading_marks_are_dropped() -> None:
    assert shown("## Report\n**Done**: all **3** tasks in `calc.py`") == (
        "Report Done: all 3 tasks in calc.py"
    )
