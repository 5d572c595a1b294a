"""A file's diff, coloured: unified below ``SIDE_BY_SIDE`` columns of terminal, old and new
side by side from there; a new file as its content; a file git does not show (binary, large)
as its one line. The widget is given ``FileDiff`` values (``app.runtime.review.diffs``); it
never reads a file or runs git.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from app.runtime.review.diffs import FileDiff

#: From this many columns of terminal a diff is shown side by side.
SIDE_BY_SIDE = 120
_OLD = "red"
_NEW = "green"
_OLD_BG = "on #3b1219"
_NEW_BG = "on #12361f"

Row = tuple[int | None, str, int | None, str, str]  # old no, old text, new no, new text, kind


def hunk_rows(text: str) -> Iterator[Row]:
    """Side-by-side rows of a unified diff: context on both sides, a run of removed lines
    paired with the added lines that follow it, ``@@`` headers as kind ``"hunk"``."""
    old_no = new_no = 0
    removed: list[tuple[int, str]] = []
    added: list[tuple[int, str]] = []

    def pending() -> Iterator[Row]:
        for i in range(max(len(removed), len(added))):
            o = removed[i] if i < len(removed) else (None, "")
            n = added[i] if i < len(added) else (None, "")
            yield (o[0], o[1], n[0], n[1], "change")
        removed.clear()
        added.clear()

    for line in text.splitlines():
        if line.startswith("@@"):
            yield from pending()
            old_no, new_no = _starts(line)
            yield (None, line, None, "", "hunk")
        elif line.startswith("-"):
            if added:
                yield from pending()
            removed.append((old_no, line[1:]))
            old_no += 1
        elif line.startswith("+"):
            added.append((new_no, line[1:]))
            new_no += 1
        elif line.startswith("\\"):
            continue  # "\ No newline at end of file"
        else:
            yield from pending()
            yield (old_no, line[1:], new_no, line[1:], "same")
            old_no += 1
            new_no += 1
    yield from pending()


def _starts(header: str) -> tuple[int, int]:
    try:
        old, new = header.split(" ")[1:3]
        return int(old[1:].split(",")[0]), int(new[1:].split(",")[0])
    except (ValueError, IndexError):
        return 0, 0


def unified(diff: FileDiff) -> Text:
    out = Text(no_wrap=False)
    for line in diff.text.splitlines():
        style = (
            "bold cyan" if line.startswith("@@")
            else _NEW if line.startswith("+")
            else _OLD if line.startswith("-")
            else "dim" if line.startswith("\\")
            else ""
        )  # fmt: skip
        out.append(line + "\n", style=style)
    out.rstrip()
    return out


def side_by_side(diff: FileDiff) -> Table:
    table = Table.grid(expand=True, padding=(0, 1))
    table.add_column(justify="right", style="dim", no_wrap=True)
    table.add_column(ratio=1, overflow="fold")
    table.add_column(justify="right", style="dim", no_wrap=True)
    table.add_column(ratio=1, overflow="fold")
    for old_no, old, new_no, new, kind in hunk_rows(diff.text):
        if kind == "hunk":
            table.add_row("", Text(old, style="bold cyan"), "", "")
            continue
        changed = kind == "change"
        table.add_row(
            "" if old_no is None else str(old_no),
            Text(old, style=f"{_OLD} {_OLD_BG}" if changed and old_no is not None else ""),
            "" if new_no is None else str(new_no),
            Text(new, style=f"{_NEW} {_NEW_BG}" if changed and new_no is not None else ""),
        )
    return table


def new_content(diff: FileDiff) -> Syntax:
    code = "\n".join(line[1:] for line in diff.text.splitlines() if line.startswith("+"))
    lexer = Syntax.guess_lexer(diff.path, code)
    return Syntax(code, lexer, line_numbers=True, word_wrap=True, theme="ansi_dark")


def title(diff: FileDiff) -> Text:
    """``path  new file · +12 -0`` (or its one-line note)."""
    line = Text(diff.path, style="bold")
    if diff.note:
        return line.append(f"  {diff.note}", style="yellow")
    kind = "new file · " if diff.new else "deleted · " if diff.deleted else ""
    line.append(f"  {kind}", style="dim")
    line.append(f"+{diff.added}", style=_NEW).append(" ").append(f"-{diff.removed}", style=_OLD)
    return line


def render_diff(diff: FileDiff, width: int) -> RenderableType:
    """``diff`` as shown at a terminal ``width`` columns wide."""
    if diff.note or not diff.text:
        return title(diff)
    if diff.new:
        body: RenderableType = new_content(diff)
    elif width >= SIDE_BY_SIDE:
        body = side_by_side(diff)
    else:
        body = unified(diff)
    return Group(title(diff), body)


class DiffView(Widget):
    """One file's diff (see the module docstring); put it in a scrolling container."""

    DEFAULT_CSS = """
    DiffView {
        height: auto;
    }
    """

    def __init__(self, diff: FileDiff | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._diff = diff

    @property
    def diff(self) -> FileDiff | None:
        return self._diff

    def show(self, diff: FileDiff | None) -> None:
        """Show ``diff`` instead (``None``: nothing)."""
        self._diff = diff
        self.refresh(layout=True)

    def render(self) -> RenderableType:
        if self._diff is None:
            return Text("")
        return render_diff(self._diff, self.app.size.width)
