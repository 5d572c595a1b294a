"""Every key of the dashboard, written once: its bindings, what the help screen says of it, and
README's key table.

A :class:`Key` is one row of the help screen (``?``): the key(s) as a person types them, what
they do, and the Textual bindings that make them work (none for keys Textual or a widget binds
itself: tab, ctrl+p, the roster's up/down). The screens build their ``BINDINGS`` from these
(in footer order, which is not the help's order), the help screen lists :data:`SECTIONS`, and
README's key table is :func:`key_table_markdown` (``python -m app.dashboard.keys`` prints it; a
test compares it with README.md). A binding's tooltip is its row's text (the footer shows it
on hover).

Typing is a mode: text is written only in the compose box (``widgets.compose_box``), which
opens with ``i`` (``enter`` in an agent's view) and says so on its border; while it is open
every key is text. Outside it a key is a command or is ignored with a hint, and a
single-letter command is ignored for a moment after the view changed (``DeckView.on_key``).
The footer shows only the keys that work from where focus is (``DeckScreen.check_action``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual.binding import Binding


@dataclass(frozen=True)
class Key:
    """One row of the help: ``shown`` (the keys as written there), ``does``, ``bindings``."""

    shown: str
    does: str
    bindings: tuple[Binding, ...] = ()
    #: The steering lever the key pulls, when a team may not offer it (``--claude``: Claude
    #: Code runs its teammates): the help then says why instead, and the footer leaves it out.
    lever: str = ""

    def binding(self, id: str | None = None) -> Binding:
        """The row's one binding, or the one with ``id`` when the row documents several."""
        found = [b for b in self.bindings if id is None or b.id == id]
        if len(found) != 1:
            raise LookupError(f"{self.shown!r}: no single binding {id or ''}")
        return found[0]


def key(shown: str, does: str, *bindings: Binding, lever: str = "") -> Key:
    """A help row; its bindings carry ``does`` as their tooltip."""
    return Key(shown, does, tuple(replace(b, tooltip=does) for b in bindings), lever)


# ---------------------------------------------------------------------- typing

TYPING = key(
    "(box open)",
    "every key is text, a paste keeps every line; the box's border says typing — esc to leave",
)
SEND = key(
    "enter",
    "send to the lead (leader view) or to the agent shown; the box closes, the keys act again",
)
NEW_LINE = key("shift+enter / ctrl+j", "a new line in the text")
LEAVE_INPUT = key(
    "esc",
    "leave the box (the text stays for next time): the keys act again",
    Binding("escape", "leave_input", "Keys", id="leave-input"),
)
BACK_TO_INPUT = key(
    "i / n",
    "open the compose box to type (n: a new goal for the lead, after a run)",
    Binding("i", "focus_input", "Type", id="focus-input"),
    Binding("n", "focus_input", "New goal", show=False, id="new-goal"),
)
COMPOSE = key(
    "enter",
    "agent view: open the compose box to message the agent shown",
    Binding("enter", "focus_input('enter')", "Type", show=False, id="compose-enter"),
)
HELP_TYPING = key(
    "f1", "this help, while typing", Binding("f1", "help('typing')", "Help", id="help-typing")
)

# ---------------------------------------------------------------------- leader and agent views

SELECT = key(
    "shift+up / shift+down",
    "select the previous / next agent",
    Binding("shift+down", "select(1)", "Next", key_display="⇧↓", id="select-next"),
    Binding("shift+up", "select(-1)", "Prev", key_display="⇧↑", id="select-prev"),
)
JUMP = key(
    "1-9 / 0",
    "select teammate 1-9 / the lead, and move the focus to the roster",
    *(Binding(str(n), f"jump({n})", f"Agent {n}", show=False, id=f"jump-{n}") for n in range(10)),
)
OPEN = key(
    "enter",
    "leader view: open what is selected where the focus is · roster: the agent's view ·"
    " approvals: review · board: the task's detail · feed: the message",
    Binding("enter", "open_selected", "Open", show=False, id="open-selected"),
)
BACK = key(
    "esc",
    "agent view: back to the leader view (after leaving the compose box)",
    Binding("escape", "back", "Leader view", id="back"),
)
NEEDS = key(
    "(needs you line)",
    "above the footer: the one request a / r / v answer (the selected teammate's oldest,"
    " else the oldest of all) and how long it has waited",
)
APPROVE = key(
    "a",
    "approve the request the needs-you line names, and no other (a permission: allow once)",
    Binding("a", "approve", "Approve", id="approve"),
)
REJECT = key(
    "r",
    "reject it: asks for plan feedback, a shutdown reason, or why a permission is denied",
    Binding("r", "reject", "Reject", id="reject"),
)
REVIEW = key(
    "v", "review that request in its dialog", Binding("v", "review", "Review", id="review")
)
WORK = key(
    "d",
    "the selected agent's work so far, as diffs; a / r / v answer its request from there",
    Binding("d", "work", "Diff", show=False, id="work"),
)
SHUTDOWN = key(
    "s",
    "ask the selected teammate to shut down (asks first: y/n; a second ask while the first"
    " waits for its answer is refused)",
    Binding("s", "shutdown", "Shutdown", id="shutdown"),
)
KILL = key(
    "K",
    "kill the selected teammate (asks first; not on a Claude Code team, which runs its own)",
    Binding("K", "kill", "Kill", id="kill"),
    lever="kill",
)
FILTER = key(
    "f",
    "feed: only the selected agent's messages / everything",
    Binding("f", "toggle_filter", "Filter", show=False, id="filter"),
)
SEARCH = key(
    "/",
    "search the feed (agent view: the transcript) as you type: text, sender or type",
    Binding("slash", "search", "Search", key_display="/", show=False, id="search"),
)
HITS = key(
    "n / N",
    "with a search: the next / previous matching line (enter leaves the box)",
    Binding("n", "hit(1)", "Next hit", show=False, id="next-hit"),
    Binding("N", "hit(-1)", "Prev hit", show=False, id="prev-hit"),
)
CLOSE_SEARCH = key(
    "esc",
    "close the search: everything shown again",
    Binding("escape", "close_search", "Close search", id="close-search"),
)
BOARD = key(
    "ctrl+t",
    "show / hide the task board",
    Binding("ctrl+t", "toggle_board", "Board", id="toggle-board"),
)
NEXT_PANEL = key("tab", "move to the next panel")
MODE = key(
    "shift+tab",
    "the lead's permission mode: default → acceptEdits → plan (→ bypassPermissions"
    " once allowed); shown in the header",
    Binding("shift+tab", "cycle_mode", "Mode", show=False, id="cycle-mode"),
)
MOVE = key("up / down", "roster: select · queue: select a request · board, feed: move")
PALETTE = key(
    "ctrl+p", "command palette: spawn, shut down, kill, views, filter, switch team, theme"
)
HELP = key("?", "this help", Binding("question_mark", "help", "Help", id="help"))
GUARD = key(
    "(any other key)",
    "ignored, with a hint; a single-letter key is also ignored for 0.3 s after the view opens"
    " or changes, a dialog closes or the compose box closes, and esc + a letter or digit"
    " pressed together count as esc",
)
QUIT = key("ctrl+q", "quit (with a live team: asks whether to shut it down)")
CTRL_C = key(
    "ctrl+c",
    "does not quit: says so (ctrl+q quits); in an input it also copies the selected text",
    Binding("ctrl+c", "ctrl_c", "Copy", show=False, priority=True, id="ctrl-c"),
)

#: The search's keys. A view that binds ``n`` or ``escape`` itself lists these in its own
#: ``BINDINGS`` too (a subclass's binding of a key replaces its base's): after what ``escape``
#: does in an input, before what ``n`` does without a search.
#: Only esc is in the (crowded) footer: ``/`` is on the help screen, and the open box says
#: what ``n``/``N`` do.
SEARCH_KEYS = (*SEARCH.bindings, *HITS.bindings, *CLOSE_SEARCH.bindings)

# ---------------------------------------------------------------------- dialogs

PLAN_APPROVE = key("a", "approve", Binding("a", "approve", "Approve", id="plan-approve"))
PLAN_REJECT = key(
    "r",
    "reject (asks for feedback / a reason)",
    Binding("r", "reject", "Reject", id="plan-reject"),
)
PLAN_CLOSE = key(
    "esc", "close without answering", Binding("escape", "close", "Close", id="plan-close")
)
ALLOW_ONCE = key(
    "y / a",
    "allow once (a: as outside the dialog)",
    Binding("y", "answer('allow')", "Allow once", id="permission-allow"),
    Binding("a", "answer('allow')", "Allow once", show=False, id="permission-approve"),
)
ALLOW_ALWAYS = key(
    "A",
    "always allow (adds the rule shown)",
    Binding("A", "answer('always')", "Always allow", id="permission-always"),
)
RULE_CHOICE = key(
    "c",
    "choose the rule A adds: this exact command, its prefix, a file's directory (Claude Code's)",
    Binding("c", "next_rule", "Rule", id="permission-rule"),
)
EDIT_COMMAND = key(
    "e",
    "edit the command first: the edited command is what runs (a Claude Code request's)",
    Binding("e", "edit_command", "Edit", id="permission-edit"),
)
DENY = key(
    "n / r",
    "deny: asks why first (optional; the teammate reads it as yours)",
    Binding("n", "answer('deny')", "Deny", id="permission-deny"),
    Binding("r", "answer('deny')", "Deny", show=False, id="permission-reject"),
)
PERMISSION_CLOSE = key(
    "esc",
    "close without answering",
    Binding("escape", "answer('')", "Close", id="permission-close"),
)
WORK_FILES = key(
    "] / [",
    "the next / previous file",
    Binding("right_square_bracket", "file(1)", "Next file", key_display="]", id="work-next"),
    Binding("left_square_bracket", "file(-1)", "Prev file", key_display="[", id="work-prev"),
)
WORK_ANSWER = key(
    "a / r / v",
    "approve / reject / review the agent's pending request",
    Binding("a", "answer('approve')", "Approve", id="work-approve"),
    Binding("r", "answer('reject')", "Reject", id="work-reject"),
    Binding("v", "answer('review')", "Review", id="work-review"),
)
WORK_CLOSE = key("esc", "close", Binding("escape", "answer('')", "Close", id="work-close"))
MESSAGE_CLOSE = key(
    "esc / q / enter", "close", Binding("escape,q,enter", "close", "Close", id="message-close")
)
QUIT_SHUTDOWN = key(
    "y / enter",
    "shut the team down (asks each teammate, then deletes the team)",
    Binding("y,enter", "choose('shutdown')", "Shut down", id="quit-shutdown"),
)
QUIT_LEAVE = key(
    "l",
    "leave it on disk (listed at the next start; a demo keeps its home and says where)",
    Binding("l", "choose('leave')", "Leave it", id="quit-leave"),
)
QUIT_CANCEL = key(
    "n / esc", "cancel", Binding("n,escape", "choose('')", "Cancel", id="quit-cancel")
)
LEFT_DELETE = key("d", "delete them", Binding("d", "choose(True)", "Delete them", id="left-delete"))
LEFT_KEEP = key(
    "k / enter / esc",
    "keep them (ctrl+p: switch team)",
    Binding("escape,k", "choose(False)", "Keep", id="left-keep"),
)
SPAWN_MODE = key("up / down, enter", "its permission mode (the team's is highlighted)")
CONFIRM = key("y / enter", "confirm", Binding("y,enter", "confirm", "Yes", id="confirm-yes"))
CANCEL = key("n / esc", "cancel", Binding("n,escape", "cancel", "Cancel", id="confirm-no"))

#: The help screen: (section title, its rows), in the order shown.
SECTIONS: tuple[tuple[str, tuple[Key, ...]], ...] = (
    ("Typing", (BACK_TO_INPUT, COMPOSE, TYPING, SEND, NEW_LINE, LEAVE_INPUT, HELP_TYPING)),
    (
        "Leader and agent views",
        (
            SELECT,
            JUMP,
            OPEN,
            BACK,
            NEEDS,
            APPROVE,
            REJECT,
            REVIEW,
            SHUTDOWN,
            KILL,
            WORK,
            FILTER,
            SEARCH,
            HITS,
            CLOSE_SEARCH,
            BOARD,
            NEXT_PANEL,
            MODE,
            MOVE,
            PALETTE,
            HELP,
            QUIT,
            CTRL_C,
            GUARD,
        ),
    ),
    ("Plan or shutdown review", (PLAN_APPROVE, PLAN_REJECT, PLAN_CLOSE)),
    (
        "Permission request",
        (ALLOW_ONCE, ALLOW_ALWAYS, RULE_CHOICE, EDIT_COMMAND, DENY, PERMISSION_CLOSE),
    ),
    ("Work so far (d)", (WORK_FILES, WORK_ANSWER, WORK_CLOSE)),
    ("Message", (MESSAGE_CLOSE,)),
    ("Quitting with a live team", (QUIT_SHUTDOWN, QUIT_LEAVE, QUIT_CANCEL)),
    ("Teams left on disk (at start)", (LEFT_DELETE, LEFT_KEEP)),
    ("Spawning a teammate (ctrl+p)", (SPAWN_MODE,)),
    ("Dialogs", (CONFIRM, CANCEL)),
)

#: The sections README's key table lists (the dialogs say their keys themselves).
README_SECTIONS = ("Typing", "Leader and agent views", "Permission request")


def key_table_markdown() -> str:
    """README's key table: the rows of :data:`README_SECTIONS`, a section's title before its
    rows (the first section's is the table's header)."""
    lines = ["| key | action |", "|---|---|"]
    for title, rows in SECTIONS:
        if title not in README_SECTIONS:
            continue
        if len(lines) > 2:
            lines.append(f"| **{title}** | |")
        lines += [f"| {row.shown} | {row.does} |" for row in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(key_table_markdown(), end="")
