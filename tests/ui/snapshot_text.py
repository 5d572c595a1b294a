"""A snapshot's text, row by row, so a mismatch in CI says *what* differs.

pytest-textual-snapshot writes its diff to an HTML report that a CI log does not show; the
assertion only says ``False``. :func:`explain` turns the expected and the actual SVG into the
terminal's text and returns a unified diff of the rows (or says that only styles differ).
"""

from __future__ import annotations

import difflib
import html
import re

_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>')
_CELL_WIDTH = 12.2  # Textual's SVG export: x of a cell = column * 12.2


def rows(svg: str) -> list[str]:
    """The terminal's rows in ``svg`` (Textual's screenshot format), as plain text."""
    by_y: dict[float, list[tuple[float, str]]] = {}
    for match in _TEXT.finditer(svg):
        x, y, text = float(match[1]), float(match[2]), html.unescape(match[3])
        by_y.setdefault(y, []).append((x, text))
    lines = []
    for y in sorted(by_y):
        line = ""
        for x, text in sorted(by_y[y]):
            line = line.ljust(round(x / _CELL_WIDTH)) + text
        lines.append(line.replace("\xa0", " ").rstrip())
    return lines


def explain(expected_svg: str, actual_svg: str) -> str:
    """What differs between two screenshots, for an assertion message."""
    diff = list(
        difflib.unified_diff(
            rows(expected_svg), rows(actual_svg), "expected", "actual", lineterm="", n=1
        )
    )
    if not diff:
        return "the snapshot's text is the same; only its styles (colours, attributes) differ"
    return "the snapshot differs:\n" + "\n".join(diff)
