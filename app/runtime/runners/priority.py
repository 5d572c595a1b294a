"""The scheduling class of a teammate process (light: imported before anything heavy)."""

from __future__ import annotations

import contextlib
import os

#: How much nicer than the dashboard a teammate process runs. At nice +10 the kernel's fair
#: scheduler weighs a teammate at about a tenth of the dashboard (110 against 1024), so with
#: 50 busy teammates on 2 cores the dashboard still gets what it asks for instead of 1/51 of a
#: core: the person's keys and screen never queue behind the team's turns.
TEAMMATE_NICE = 10
#: The autogroup nice of the fork server's session, the whole team's: the kernel weighs it
#: against the dashboard's session first (335 against 1024 at +5). At 0 (the dashboard's
#: weight) the team took about a third of the dashboard's core whenever both wanted it: 25
#: process teammates held the dashboard's loop lag p99 at 75-86 ms (key p95 29-54); at +5,
#: 40-45 ms (key p95 11-26), tasks/s ~10% lower (bench/live.py --sizes 25, alternated). Not
#: +10: then the team starved behind any other busy session of the machine (8 teammates: 0.55
#: tasks/s against 1.51).
TEAM_SESSION_NICE = 5
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
    session is its whole team's, lowered less (``TEAM_SESSION_NICE``)."""
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


def session_priority(nice: int = TEAMMATE_NICE) -> None:
    """Lower the session's autogroup too, when this process leads a session of its own.

    With autogroups on (most desktop kernels, and this project's machines), the fair scheduler
    first shares the CPU between sessions, each weighed by its autogroup's nice, and only then
    between the processes of one session by their own nice. A teammate process exec'd on its
    own (``start_new_session``: no fork server) is a session of its own, so its process nice
    alone weighs nothing against the dashboard: 25 such teammates were 25 sessions at the
    dashboard's weight, and the dashboard got 1/26 of a busy CPU. Teammates forked by the fork
    server share its session instead (one weight for the team: ``TEAM_SESSION_NICE``, which the
    fork server, its leader, sets), and do not lead it. Only a session leader does it: a
    teammate a person starts by hand in their shell leaves that shell's session as it is."""
    if os.getsid(0) != os.getpid():
        return
    with contextlib.suppress(OSError), open(AUTOGROUP, "w", encoding="ascii") as group:
        group.write(str(nice))
