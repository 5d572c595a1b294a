"""How long the idle lead waits before a turn that only mail starts.

A teammate can send the lead thousands of messages; woken at each one, the lead makes a model
call per message (or per handful). The lead's reads already take every unread message at once,
so spacing out the turns that mail alone starts bounds the calls: the first mail after a quiet
spell is read at once; each further mail-only turn that follows the previous one closely
(its mail came within :data:`BURST` seconds of the end) waits twice as long as the one before, from
:data:`FIRST` up to :data:`MOST` seconds, and reads everything that came meanwhile. A
sustained flood of any length costs about ``log2(MOST / FIRST)`` calls plus one per
:data:`MOST` seconds; ordinary traffic with pauses is read as it comes.

Nothing waits behind the hold that must not: the person's prompt and a request the lead acts
on (``hurry``) end it at once. The hold only delays the read; the wake-up that mail sets stays
set through it, so mail that came during the hold or during a turn is read by the next one.
"""

from __future__ import annotations

import asyncio
import time

from app.runtime.agent.wakeup import Wakeup

#: The first hold of a burst (seconds) ...
FIRST = 0.25
#: ... doubled at each mail-only turn of the burst, up to this.
MOST = 8.0
#: A mail-only turn that starts within this many seconds of the previous one's end continues
#: the burst; later, the burst is over and the next mail is read at once.
BURST = 2.0


class MailHold:
    def __init__(self) -> None:
        self._hurry = Wakeup()
        #: Mail-only turns in a row, each close to the one before.
        self.streak = 0
        #: When the last turn ended (``time.monotonic``), and whether mail alone started it.
        self._ended = -BURST
        self._by_mail = False
        self._started_by_mail = False
        #: The hold waited before the last read (the burst's window grows with it).
        self._held = 0.0

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._hurry.bind(loop)

    def hurry(self) -> None:
        """End the hold now (safe from any thread)."""
        self._hurry.set()

    def seconds(self) -> float:
        """The hold before the next read: 0 unless the last turn was mail's and ended moments
        ago."""
        if not self._by_mail or self.streak == 0:
            return 0.0
        if time.monotonic() - self._ended >= BURST:
            return 0.0
        return min(MOST, FIRST * 2.0 ** (self.streak - 1))

    async def wait(self) -> None:
        """Wait out the hold (at once if hurried; a hurry is used up by this read)."""
        hold = self.seconds()
        if hold > 0:
            await self._hurry.wait(hold)
        self._hurry.clear()
        self._held = hold

    def turn_started(self, *, by_mail: bool) -> None:
        """A turn starts (``by_mail``: mail alone started it, no prompt of the person's)."""
        close = self._by_mail and time.monotonic() - self._ended < BURST + self._held
        self.streak = self.streak + 1 if by_mail and close else int(by_mail)
        self._started_by_mail = by_mail

    def turn_ended(self) -> None:
        self._ended = time.monotonic()
        self._by_mail = self._started_by_mail
