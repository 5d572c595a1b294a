"""How much of a teammate's event log a dashboard that left the team running had shown:
``teams/{team}/agents/{name}.seen`` (teamdeck's own; ``{"offset": BYTES}``).

A dashboard that quits leaving its teammate processes running writes, for each, how far it had
read the teammate's log (whole lines). ``teamdeck attach`` folds those lines into the
teammate's state again (status, transcript, running token counts) without re-emitting them as
runtime events: the dashboard that left showed them and recorded them in the run's archive, so
re-emitting them recorded the teammate's work before the attach a second time (the same
transcript, the same model calls counted twice; issue 30, M7). The lines written while no
dashboard was open are past the offset: they are emitted, once.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from app.core.files import atomic_write_json

log = logging.getLogger(__name__)


def seen_path(log_path: Path) -> Path:
    """The file beside ``log_path`` (``{name}.jsonl``) that says how much of it was shown."""
    return log_path.with_suffix(".seen")


def write_seen(log_path: Path, offset: int) -> None:
    """``offset`` bytes of ``log_path`` were shown; nothing is written when the team's folder
    is gone (a deleted team is never attached)."""
    try:
        atomic_write_json(seen_path(log_path), {"offset": offset}, make_dirs=False)
    except FileNotFoundError:
        pass  # the team was deleted meanwhile: nothing to attach to
    except OSError as exc:
        log.warning("cannot note how much of %s was shown: %s", log_path, exc)


def read_seen(log_path: Path) -> int:
    """The bytes of ``log_path`` an earlier dashboard showed (0: none, or no note)."""
    try:
        data = json.loads(seen_path(log_path).read_bytes())
    except FileNotFoundError:
        return 0
    except (OSError, ValueError) as exc:
        log.warning("cannot read how much of %s was shown: %s", log_path, exc)
        return 0
    offset = data.get("offset") if isinstance(data, dict) else None
    return offset if isinstance(offset, int) and not isinstance(offset, bool) and offset > 0 else 0
