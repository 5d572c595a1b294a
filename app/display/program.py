"""The command that runs this teamdeck, as the person can type it again: ``teamdeck`` when
that is the one on PATH, else the path it was started by (``.venv/bin/teamdeck`` after ``make
run``, where ``teamdeck`` is not on PATH). The exit lines and the quit dialog name commands to
type (resume a team, look at a demo's home); one said ``.venv/bin/teamdeck`` where the next
line and the dialog said ``teamdeck`` (issue 30, low: exit lines with the exact command)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def program_name() -> str:
    """``teamdeck``, or the path this process was started by when that is not on PATH."""
    argv0 = Path(sys.argv[0])
    on_path = shutil.which("teamdeck")
    if argv0.name == "teamdeck" and (on_path is None or Path(on_path).resolve() != argv0.resolve()):
        return str(argv0)
    return "teamdeck"
