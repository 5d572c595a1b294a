"""Opening an agent's view (issue 19, item 13): every frame drawn, from the first, shows the
view at its end and filled -- tool calls drawn with their input and result, never as blank
rows that fill in later -- and it stays there while the older entries load above it. The same
when the view switches to another agent (shift+down)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.agent import AgentScreen
from app.runtime.events import TranscriptEntry
from tests.ui.data import make_app, make_runtime
from tests.ui.helpers import screen_text, wait_for
from widgets.transcript import Transcript

GROUPS = 80  # 320 entries: more than a view keeps (200), more than it mounts first (40)


@pytest.fixture(autouse=True)
def _hold_until_mounted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The frames are held until a view's newest entries are mounted, 2 s at most, then drawn
    as they mount (``Transcript.HOLD_LIMIT``): a machine at load 20 took longer (a full run drew
    a tool call's rows blank). These tests check the hold, not its limit."""
    monkeypatch.setattr(Transcript, "HOLD_LIMIT", 60.0)


def long_transcript(agent: str, groups: int = GROUPS) -> list[TranscriptEntry]:
    """Prompts, Markdown answers and tool calls with their results, then a last word."""
    entries: list[TranscriptEntry] = []
    for i in range(groups):
        entries.append(TranscriptEntry(agent, "user", f"prompt number {i}", {}))
        text = f"## Step {i}\n\nSome **markdown** for step {i}:\n\n- one\n- two"
        entries.append(TranscriptEntry(agent, "assistant", text, {}))
        call = {"tool": "Bash", "tool_use_id": f"t{i}", "input": {"command": f"ls {agent}-{i}"}}
        entries.append(TranscriptEntry(agent, "tool_call", "Bash", call))
        result = {"tool_use_id": f"t{i}"}
        entries.append(TranscriptEntry(agent, "tool_result", f"a{i}.py\nlast-{agent}", result))
    entries.append(TranscriptEntry(agent, "assistant", f"THE LAST WORD of {agent}", {}))
    return entries


def the_end_of(agent: str) -> list[str]:
    """What the view's end shows, drawn: the last call's title, input and result, the last
    word."""
    last = GROUPS - 1
    return [
        f"⚙ Bash  ls {agent}-{last}  ✓",
        f'"command": "ls {agent}-{last}"',
        f"last-{agent}",
        f"THE LAST WORD of {agent}",
    ]


def record_frames(deck: TeamDeckApp) -> list[str]:
    """Every frame the app draws while an agent view is on screen, as text (not those held
    back by a ``batch_update``: the terminal never sees them)."""
    frames: list[str] = []
    display = deck._display

    def recording(screen: Any, update: Any) -> None:
        if isinstance(screen, AgentScreen) and not deck._batch_count:
            frames.append(screen_text(deck))
        display(screen, update)

    deck._display = recording  # type: ignore[method-assign]
    return frames


def app_recording(
    tmp_path: Path, agent: str, entries: list[TranscriptEntry]
) -> tuple[TeamDeckApp, list[str]]:
    """An app whose ``agent`` has ``entries``, and the frames it will draw in an agent view."""
    runtime = make_runtime()
    runtime.transcripts[agent] = entries
    deck = make_app(tmp_path, runtime)
    return deck, record_frames(deck)


async def open_view(pilot: Any, deck: TeamDeckApp, agent: str) -> Transcript:
    """Open ``agent``'s view from the leader view as a person does (esc, its number, enter)."""
    await wait_for(pilot, lambda: deck.loaded)
    await pilot.press("escape", "1" if agent == "researcher" else "0", "enter")
    await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
    return deck.screen.query_one(Transcript)


def missing(frame: str, agent: str) -> list[str]:
    return [shown for shown in the_end_of(agent) if shown not in frame]


def transcript_rows(frame: str) -> list[str]:
    """The rows of the transcript's box (right of the roster), without its scrollbar."""
    rows = [line for line in frame.splitlines() if "││" in line or "┃│" in line]
    return [line[max(line.find("││"), line.find("┃│")) + 2 : -2] for line in rows]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
@pytest.mark.parametrize("agent", ["researcher", "team-lead"])
async def test_every_frame_of_an_opening_view_shows_its_end_drawn(
    tmp_path: Path, agent: str, size: tuple[int, int]
) -> None:
    deck, frames = app_recording(tmp_path, agent, long_transcript(agent))
    async with deck.run_test(size=size) as pilot:
        transcript = await open_view(pilot, deck, agent)
        await wait_for(pilot, lambda: len(transcript.children) > 100)  # the older ones too (150)
        await pilot.pause(0.3)
        assert frames, "no frame drawn"
        for number, frame in enumerate(frames):
            assert not missing(frame, agent), f"frame {number} of {len(frames)}:\n{frame}"
            # the view's keys from the first frame: the bottom row was blank for 2-4 frames,
            # then the roster's keys showed before the input's
            keys = frame.rstrip("\n").splitlines()[-1].split()
            assert keys == frames[-1].rstrip("\n").splitlines()[-1].split(), (
                f"frame {number} of {len(frames)}: other keys than the view's:\n{frame}"
            )
            assert "Help" in keys, f"frame {number} of {len(frames)}: no keys:\n{frame}"
        assert transcript.scroll_y >= transcript.max_scroll_y - 1


def short_transcript(agent: str, groups: int = 6) -> list[TranscriptEntry]:
    """Fewer entries than a view mounts first, each line short, but taller than the view:
    each tool call is short enough to be drawn open, its input and result in full."""
    entries: list[TranscriptEntry] = []
    for i in range(groups):
        entries.append(TranscriptEntry(agent, "user", f"prompt number {i}", {}))
        entries.append(TranscriptEntry(agent, "assistant", f"Step {i}.", {}))
        tool_input = {"taskId": str(i), "status": "completed", "owner": agent}
        call = {"tool": "TaskUpdate", "tool_use_id": f"t{i}", "input": tool_input}
        entries.append(TranscriptEntry(agent, "tool_call", "TaskUpdate", call))
        result = {"tool_use_id": f"t{i}"}
        entries.append(TranscriptEntry(agent, "tool_result", f"updated #{i}\nlast-{agent}", result))
    entries.append(TranscriptEntry(agent, "assistant", f"THE LAST WORD of {agent}", {}))
    return entries


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
@pytest.mark.parametrize("agent", ["researcher", "team-lead"])
async def test_a_short_transcript_with_open_tool_calls_opens_at_its_end(
    tmp_path: Path, agent: str, size: tuple[int, int]
) -> None:
    """Few entries, but open tool calls make them taller than the view: the first frame is
    already at the end (it showed the start, then jumped to the end a frame later)."""
    deck, frames = app_recording(tmp_path, agent, short_transcript(agent))
    async with deck.run_test(size=size) as pilot:
        transcript = await open_view(pilot, deck, agent)
        await pilot.pause(0.3)
        assert transcript.max_scroll_y > 0, "the transcript fits the view: nothing tested"
        assert frames, "no frame drawn"
        end = ['"owner": "' + agent + '"', f"last-{agent}", f"THE LAST WORD of {agent}"]
        for number, frame in enumerate(frames):
            gone = [shown for shown in end if shown not in frame]
            assert not gone, f"frame {number} of {len(frames)}:\n{frame}"
            # nothing moves: at 80x24 the first layout was the wide one, 2 rows past the end
            moved = transcript_rows(frame) != transcript_rows(frames[-1])
            assert not moved, f"frame {number} of {len(frames)}:\n{frame}\nlast:\n{frames[-1]}"
        assert transcript.scroll_y >= transcript.max_scroll_y - 1


async def test_switching_the_view_to_another_agent_draws_its_end_at_once(
    tmp_path: Path,
) -> None:
    runtime = make_runtime()
    runtime.transcripts["researcher"] = long_transcript("researcher")
    runtime.transcripts["engineer"] = long_transcript("engineer")
    deck = make_app(tmp_path, runtime)
    frames = record_frames(deck)
    async with deck.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: deck.loaded)
        await pilot.press("escape", "1", "enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        transcript = deck.screen.query_one(Transcript)
        await wait_for(pilot, lambda: len(transcript.children) > 100)
        transcript.focus()
        frames.clear()
        await pilot.press("shift+down")
        await wait_for(pilot, lambda: "THE LAST WORD of engineer" in screen_text(deck))
        await pilot.pause(0.3)
        switched = [frame for frame in frames if " engineer · " in frame.splitlines()[1]]
        assert switched, "the view never showed the engineer"
        for number, frame in enumerate(switched):
            assert not missing(frame, "engineer"), f"frame {number}:\n{frame}"
