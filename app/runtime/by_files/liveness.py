"""Whether a Claude Code process is still there (Linux ``/proc``; elsewhere: unknown).

2.1.332's team config names the lead's process: ``leadProcess {pid, pidSpace, claimedAt,
procStart}``, where ``procStart`` is field 22 of ``/proc/<pid>/stat`` (the start time in clock
ticks since boot) and ``pidSpace`` ``"<host>#pid:[<inode>]"`` names the pid namespace. A pid
reused by another program starts at another time: it does not count as the lead. When the
pid namespace is another (a container) nothing can be told: ``None``.
"""

from __future__ import annotations

import os
from typing import Any


def proc_start(pid: int) -> str | None:
    """Field 22 of ``/proc/<pid>/stat``; ``None`` when the process is gone (or no ``/proc``)."""
    try:
        raw = open(f"/proc/{pid}/stat", "rb").read().decode(errors="replace")  # noqa: SIM115
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces
    fields = raw.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def _pid_space() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def process_alive(pid: int, started: str | None = None) -> bool | None:
    """Whether ``pid`` (started at ``started``, when given) runs; ``None``: cannot tell."""
    if not os.path.isdir("/proc/self"):
        return None
    now = proc_start(pid)
    if now is None:
        return False
    return started is None or now == started


def lead_alive(extra: dict[str, Any]) -> bool | None:
    """Whether the config's ``leadProcess`` (``extra``: the config's unknown fields) runs;
    ``None`` when the config does not say, or says it of another pid namespace."""
    lead = extra.get("leadProcess")
    if not isinstance(lead, dict) or not isinstance(lead.get("pid"), int):
        return None
    space = lead.get("pidSpace")
    ours = _pid_space()
    if isinstance(space, str) and ours is not None and not space.endswith(ours):
        return None
    started = lead.get("procStart")
    return process_alive(lead["pid"], str(started) if started is not None else None)
