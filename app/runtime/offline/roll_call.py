"""Who is on the lead's team when its conversation no longer says: after a compaction.

The client drops a long conversation's oldest turns and leaves a note in their place
(``agent.compaction``), naming the teammates those turns spawned. A long run (100 teammates,
300 tasks) dropped the offline lead's spawns: with every task done it asked nobody to shut down
and the run never ended. The team is then what the note, the board and the mail name."""

from __future__ import annotations

import re

from app.runtime.offline.history import Call, History

#: The words of the note the client puts in place of dropped turns (``agent.compaction``), read
#: here as a model reads them.
DROPPED = "earlier messages of this conversation were dropped"
_NAMED = re.compile(r"Teammates spawned in them: ([^\]]*)\.\]")


def compacted(history: History) -> bool:
    """Whether older turns were dropped (the note opens the conversation)."""
    return any(DROPPED in m.text for m in history.incoming[:3])


def known_teammates(history: History, start: int, tasklist: Call | None) -> list[str]:
    """The teammates the note names, the owners in ``tasklist`` (the latest ``TaskList``)
    and the senders of teammate mail since ``start``, in that order, each once."""
    names: list[str] = []
    for message in history.incoming[:3]:
        found = _NAMED.search(message.text) if DROPPED in message.text else None
        if found:
            names += [n for n in found[1].split(", ") if n and n not in names]
    tasks = (tasklist.result_json() or {}).get("tasks", []) if tasklist is not None else []
    for task in tasks:
        owner = task.get("owner") if isinstance(task, dict) else None
        if isinstance(owner, str) and owner and owner not in names:
            names.append(owner)
    for message in history.incoming_since(start):
        sender = message.sender
        if sender and sender not in ("team-lead", "user") and sender not in names:
            names.append(sender)
    return names
