"""The lead's inbox under a team's appends: this process's threads share one write.

Each test holds the first write on disk until the other threads have handed in their appends,
so the batching is certain, not timing-dependent."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import app.core.inbox_append as inbox_append
from app.core import Home, InboxChanged, InboxMessage
from app.core.errors import TeamdeckError
from app.core.paths import LEAD_NAME

TEAM = "crew"
WRITERS = 8


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    home.teams.create(TEAM)
    return home


def _held_first_write(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[int]]:
    """The first inbox write waits for ``release``; returns it and, per write, the messages
    the file holds after it (one by one, eight appends would be 1, 2, ... 8)."""
    release = threading.Event()
    sizes: list[int] = []
    real: Callable[..., Any] = inbox_append.atomic_write_bytes

    def write(path: Any, parts: Any, *args: Any, **kwargs: Any) -> Any:
        sizes.append(b"".join(bytes(p) for p in parts).count(b'"from"'))
        if len(sizes) == 1:
            assert release.wait(30)
        return real(path, parts, *args, **kwargs)

    monkeypatch.setattr(inbox_append, "atomic_write_bytes", write)
    return release, sizes


def _queued(count: int) -> None:
    """Wait until ``count`` appends are queued behind the held write."""
    for _ in range(3000):
        with inbox_append._appends._lock:
            if sum(len(q) for q in inbox_append._appends._queued.values()) >= count:
                return
        threading.Event().wait(0.01)
    raise AssertionError(f"{count} appends never queued")


def test_appends_from_many_threads_share_a_write_and_lose_nothing(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    release, sizes = _held_first_write(monkeypatch)
    box = home.mailbox(TEAM)
    events: list[Any] = []
    home.subscribe(events.append)

    def send(k: int) -> None:
        box.append(LEAD_NAME, InboxMessage(sender=f"w{k}", text=f"idle {k}"))

    first = threading.Thread(target=send, args=(0,))
    first.start()
    while not sizes:  # the first write is under way (and held)
        threading.Event().wait(0.01)
    others = [threading.Thread(target=send, args=(k,)) for k in range(1, WRITERS)]
    for thread in others:
        thread.start()
    _queued(WRITERS - 1)
    release.set()
    for thread in (first, *others):
        thread.join(30)
    texts = sorted(m.text for m in box.read(LEAD_NAME))
    assert texts == sorted(f"idle {k}" for k in range(WRITERS))
    # the first alone, then the seven that waited for it in one write (one lock, one rewrite)
    assert sizes == [1, WRITERS]
    changed = [e for e in events if isinstance(e, InboxChanged) and e.agent == LEAD_NAME]
    assert len(changed) == 2


def test_a_guarded_append_is_written_alone_and_its_refusal_is_its_own(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = home.mailbox(TEAM)
    box.append(LEAD_NAME, InboxMessage(sender="w0", text="first"))
    answered: list[str] = []

    def once() -> None:  # "answer at most once": sees every append written before it
        if any(m.text == "answer" for m in box.read(LEAD_NAME)):
            raise TeamdeckError("already answered")
        answered.append("yes")

    box.append(LEAD_NAME, InboxMessage(sender="w1", text="answer"), guard=once)
    with pytest.raises(TeamdeckError, match="already answered"):
        box.append(LEAD_NAME, InboxMessage(sender="w2", text="answer"), guard=once)
    box.append(LEAD_NAME, InboxMessage(sender="w3", text="after"))
    assert [m.text for m in box.read(LEAD_NAME)] == ["first", "answer", "after"]
    assert answered == ["yes"]


def test_a_failed_write_is_every_waiting_caller_s_error(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    release, sizes = _held_first_write(monkeypatch)
    box = home.mailbox(TEAM)
    held: Callable[..., Any] = inbox_append.atomic_write_bytes

    def failing(path: Any, parts: Any, *args: Any, **kwargs: Any) -> Any:
        if len(sizes) >= 1 and release.is_set():  # the batch after the held write
            sizes.append(-1)
            raise OSError("disk full")
        return held(path, parts, *args, **kwargs)

    monkeypatch.setattr(inbox_append, "atomic_write_bytes", failing)
    errors: list[str] = []

    def send(k: int) -> None:
        try:
            box.append(LEAD_NAME, InboxMessage(sender=f"w{k}", text=f"m{k}"))
        except OSError as exc:
            errors.append(f"{k}: {exc}")

    first = threading.Thread(target=send, args=(0,))
    first.start()
    while not sizes:
        threading.Event().wait(0.01)
    others = [threading.Thread(target=send, args=(k,)) for k in (1, 2, 3)]
    for thread in others:
        thread.start()
    _queued(3)
    release.set()
    for thread in (first, *others):
        thread.join(30)
    assert sorted(errors) == ["1: disk full", "2: disk full", "3: disk full"]
    assert [m.text for m in box.read(LEAD_NAME)] == ["m0"]  # nothing of the failed batch
