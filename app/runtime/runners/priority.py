"""The scheduling class of a teammate process (light: imported before anything heavy)."""

from __future__ import annotations

import contextlib
import os

#: How much nicer than the dashboard a teammate process runs. At nice +10 the kernel's fair
#: scheduler weighs a teammate at about a tenth of the dashboard (110 against 1024), so with
#: 50 busy teammates on 2 cores the dashboard still gets what it asks for instead of 1/51 of a
#: core: the person's keys and screen never queue behind the team's turns.
TEAMMATE_NICE = 10
#: This process was made nicer already: a teammate forked from the (already nice) fork server
#: inherits this module with the flag set, and is not lowered a second time.
_lowered = False
#: Linux's autogroup of the calling process's session (``sched_autogroup_enabled``).
AUTOGROUP = "/proc/self/autogroup"


def batch_priority(*, session: bool = True) -> None:
    """Run this process as batch work: ``TEAMMATE_NICE`` nicer than the process that started
    it, and (Linux) ``SCHED_BATCH``; nothing elsewhere.

    A teammate process is throughput work: the dashboard and the person's terminal win every
    wake-up against it, and teammates that wake each other with file events do not preempt
    one another (measured in bench/live.py's ``process0`` row: fewer context switches).
    ``session``: lower the session's autogroup too (``session_priority``); the fork server's
    session is its whole team's, left at the dashboard's weight."""
    global _lowered
    if not _lowered:
        _lowered = True
        with contextlib.suppress(OSError):
            os.nice(TEAMMATE_NICE)
    policy = getattr(os, "SCHED_BATCH", None)
    if policy is not None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, policy, os.sched_param(0))
    if session:
        session_priority()


def session_priority() -> None:
    """Lower the session's autogroup too, when this process leads a session of its own.

    With autogroups on (most desktop kernels, and this project's machines), the fair scheduler
    first shares the CPU between sessions, each weighed by its autogroup's nice, and only then
    between the processes of one session by their own nice. A teammate process exec'd on its
    own (``start_new_session``: no fork server) is a session of its own, so its process nice
    alone weighs nothing against the dashboard: 25 such teammates were 25 sessions at the
    dashboard's weight, and the dashboard got 1/26 of a busy CPU. Teammates forked by the fork
    server share its session instead (one weight for the team, as much as the dashboard's), and
    do not lead it. Only a session leader does it: a teammate a person starts by hand in their
    shell leaves that shell's session as it is."""
    if os.getsid(0) != os.getpid():
        return
    with contextlib.suppress(OSError), open(AUTOGROUP, "w", encoding="ascii") as group:
        group.write(str(TEAMMATE_NICE))
