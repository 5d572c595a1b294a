"""What every ``teamdeck`` command prints besides its own text: JSON, warnings, and a failure as
one line on stderr (``teamdeck: error: ...``).

Below every command module (like ``app.cli.home``), so none of them imports the entry point.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from app.cli import format as fmt
from app.core.errors import TeamdeckError, clip
from app.core.files import escape_surrogates

PROG = "teamdeck"


def emit_json(data: Any) -> None:
    print(escape_surrogates(json.dumps(data, indent=2, ensure_ascii=False)))


#: An error line longer than this is cut (with "…"): the places that echo an input cut it
#: already; this keeps any other from printing a 5,000-character line.
MAX_ERROR_LINE = 600


def error_line(message: str) -> None:
    print(f"{PROG}: error: {clip(fmt.clean(message), MAX_ERROR_LINE)}", file=sys.stderr)


def warning_line(message: str) -> None:
    """A problem that does not stop the command (e.g. one unreadable file in a listing)."""
    print(f"{PROG}: warning: {clip(fmt.clean(message), MAX_ERROR_LINE)}", file=sys.stderr)


def os_error_message(exc: OSError) -> str:
    text = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is not None:
        text += f": {exc.filename}"
    if exc.filename2 is not None:
        text += f" -> {exc.filename2}"
    return text


def describe(exc: Exception) -> str:
    """A failure as one line of text (an OSError as "strerror: filename")."""
    if isinstance(exc, OSError) and not isinstance(exc, TeamdeckError):
        return os_error_message(exc)
    return " ".join(str(exc).split()) or type(exc).__name__
