"""The lead's hold before a turn that only mail starts (``app.runtime.agent.mail_hold``):
read at once after a quiet spell, doubling while mail keeps coming, and cut short by what the
lead must act on. The flood itself: tests/security/test_lead_flood.py."""

from __future__ import annotations

import asyncio

import pytest

from app.runtime.agent import mail_hold
from app.runtime.agent.mail_hold import FIRST, MOST, MailHold
from tests.runtime.conftest import until


def _mail_turn(hold: MailHold) -> None:
    hold.turn_started(by_mail=True)
    hold.turn_ended()


def test_mail_after_a_quiet_spell_is_read_at_once_then_held_longer_each_turn() -> None:
    hold = MailHold()
    assert hold.seconds() == 0  # the first mail: at once
    holds = []
    for _ in range(8):
        _mail_turn(hold)
        holds.append(hold.seconds())
    assert holds == [FIRST, 2 * FIRST, 4 * FIRST, 8 * FIRST, 16 * FIRST, MOST, MOST, MOST]


def test_the_persons_turn_ends_the_burst() -> None:
    hold = MailHold()
    for _ in range(4):
        _mail_turn(hold)
    hold.turn_started(by_mail=False)
    hold.turn_ended()
    assert hold.seconds() == 0


async def test_a_hurry_ends_the_hold_and_one_given_before_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mail_hold, "FIRST", 3600.0)  # an hour: only a hurry ends it
    monkeypatch.setattr(mail_hold, "MOST", 3600.0)
    hold = MailHold()
    hold.bind(asyncio.get_running_loop())
    _mail_turn(hold)
    assert hold.seconds() == 3600.0
    waiting = asyncio.ensure_future(hold.wait())
    await asyncio.sleep(0)
    assert not waiting.done()
    hold.hurry()  # e.g. a request the lead decides was queued
    await until(waiting.done, "the hold cut short")
    _mail_turn(hold)
    hold.hurry()  # given during the turn: the next hold does not wait
    await until(asyncio.ensure_future(hold.wait()).done, "the next hold, hurried already")
