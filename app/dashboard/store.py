"""The dashboard's state, read from the files of one team (no Textual here).

``Store.load()`` reads the team's config, tasks and inboxes; ``Store.apply(events)`` re-reads
only what a batch of change events names: one task file per ``TaskChanged``, and per
``InboxChanged`` only the messages past the count already seen in that inbox. Both return a
:class:`StoreDelta` for the UI and run in a worker thread, one call at a time (the store is
not thread-safe; the UI only ever sees the deltas).

The feed is every inbox merged in time order. A broadcast lands in many inboxes as the same
``(sender, timestamp, text)``: it is one feed item with several recipients. Feed items keep
the raw text and are described (``app.display.format``) only when drawn.

The store owns the facts the files hold: current tasks, each teammate's last DM, and (one
tracker, ``file_requests.TeamRequests``, fed each message as it is read) the requests waiting
for an answer and what the files say of each teammate's status.

The values the views show (``FeedItem``, ``TeamFiles``) are defined in ``app.display.values``;
:meth:`StoreDelta.files` turns a delta into the app's ``TeamFiles``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.core import (
    ChangeEvent,
    CorruptFileError,
    Home,
    InboxChanged,
    Task,
    TaskChanged,
    TeamChanged,
    TeamConfig,
    TeamdeckError,
    TeamRemoved,
)
from app.core.answer_credits import AnswerCredits
from app.core.files import parse_with_retry
from app.core.mailbox import parse_raw_inbox
from app.core.paths import LEAD_NAME
from app.dashboard.store_delta import StoreDelta
from app.display.format import agent_name, one_line
from app.display.values import FeedItem
from app.runtime.by_files.requests import TeamRequests
from app.runtime.by_files.status import by_activity, last_activity, panel_statuses, status_times
from app.runtime.events import MessageSent

HIDDEN_STATUSES = frozenset({"deleted"})
#: Frames that open or close a request: never a teammate's last DM.
_TASK_REF = re.compile(r"#(\d+)\b")
_REQUEST_MARKS = re.compile(r'"type"\s*:\s*"(?:plan_approval_|permission_)')
OPEN_STATUSES = frozenset({"pending", "in_progress"})


def file_error(exc: Exception) -> str:
    """A one-line error naming the file (not its whole path)."""
    if isinstance(exc, CorruptFileError):
        return str(exc).replace(str(exc.path), exc.path.name)
    return str(exc) or type(exc).__name__


def pick_team(home: Home) -> str | None:
    """The team to show when none is named: the one with the newest activity (the first of
    the team picker's list), preferring one whose config can be read."""
    names = by_activity(home)
    for name in names:
        try:
            if home.teams.get(name) is not None:
                return name
        except (TeamdeckError, OSError):
            continue
    return names[0] if names else None  # only unreadable teams: show one with its error


# ============================================================================ the store


class Store:
    """Config, tasks and inboxes of one team; see the module docstring."""

    def __init__(self, home: Home, team: str | None = None, *, pick: bool = True) -> None:
        self.home = home
        self.team = team
        self.pick = pick  # with no team named, show the newest (else wait to be told)
        self._credits = AnswerCredits(home.root, home.is_claude)
        self.removed = False  # the team was deleted: its last state stays on screen
        self._clear()

    def _clear(self) -> None:
        self.config: TeamConfig | None = None
        self._config_error: str | None = None
        self._tasks: dict[str, Task] = {}
        self._task_errors: dict[str, str] = {}
        self._inbox_counts: dict[str, int] = {}
        # Per inbox, the last message read: a file consumed and written again between two
        # looks can be as long as before, so the count alone does not show it was rewritten.
        self._inbox_last: dict[str, tuple[object, object, object]] = {}
        self._inbox_errors: dict[str, str] = {}
        self._items: dict[tuple[str, str, str], FeedItem] = {}
        self._seq = 0
        self._last_dm: dict[str, tuple[str, str]] = {}  # sender -> (recipient, summary)
        #: requests, answers, shutdowns and idle notices seen so far (``file_requests``)
        self._requests = TeamRequests.of(self.home, self.team or "")
        self._reported: set[str] = set()
        self._summary: tuple[int, dict[str, str]] = (0, {})
        self._dir: Path | None = None  # the task directory, resolved once
        self._lost = False  # a batch failed: its messages are read again on the next one

    # ------------------------------------------------------------------ entry points

    def wants(self, event: ChangeEvent | MessageSent) -> bool:
        """Whether ``event`` concerns the team shown (any new team when none is shown yet)."""
        if isinstance(event, TeamChanged | TeamRemoved):
            return True  # the list of teams changed, if nothing else
        return event.team == self.team

    def load(self, team: str | None = None, *, switch: bool = False) -> StoreDelta:
        """Read everything. ``team`` (or ``switch=True``, even to ``None``) changes the team
        shown; with none, ``pick`` chooses the newest."""
        if team is not None or switch:
            self.team = team
        if self.team is None and self.pick:
            self.team = pick_team(self.home)
        self._clear()
        self.removed = False
        delta = StoreDelta(team=self.team, reset=True, feed_reset=True, config_changed=True)
        delta.teams = self.home.teams.names()
        if self.team is None:
            return self._finish(delta, tasks_changed=True)
        self._read_config(delta)
        self._read_all_tasks(delta)
        self._read_all_inboxes(delta)
        return self._finish(delta, tasks_changed=True)

    def apply(self, events: Iterable[ChangeEvent | MessageSent]) -> StoreDelta | None:
        """Re-read what ``events`` name; ``None`` if nothing the UI shows changed.

        A ``MessageSent`` (this process's runtime wrote a message) joins the feed as the file
        would: the same message read from its inbox later is recognised and not added twice.
        A team can be deleted before its last messages are read from the files (a lead at
        pace 0 deletes it a few ms after the teammates' shutdown answers land)."""
        relevant = [e for e in events if self.wants(e)]
        sent = [e for e in relevant if isinstance(e, MessageSent)]
        if sent:
            relevant = [e for e in relevant if not isinstance(e, MessageSent)]
            if self.team is not None and not relevant:
                delta = StoreDelta(team=self.team)
                self._add_sent(sent, delta)
                return self._finish(delta, tasks_changed=False) if delta.feed_added else None
        if not relevant:
            return None
        if self.team is None:  # a first team appeared?
            first = next((e.team for e in relevant if isinstance(e, TeamChanged)), None)
            if first is not None and self.pick:
                return self.load(first)
            return StoreDelta(team=None, teams=self.home.teams.names())
        verdict = [e for e in relevant if isinstance(e, TeamChanged | TeamRemoved)]
        verdict = [e for e in verdict if e.team == self.team]
        if verdict and isinstance(verdict[-1], TeamRemoved):
            # Keep showing the last state (the feed is the record of what happened), with the
            # last messages of the batch that are still on disk: a deletion takes the config
            # first or last, and the inboxes it has not reached yet are still readable.
            delta = StoreDelta(team=self.team, teams=self.home.teams.names())
            self._add_sent(sent, delta)
            for event in relevant:
                if isinstance(event, InboxChanged):
                    self._read_inbox(event.agent, delta, keep_errors=False)
            delta.feed_added.sort(key=lambda item: item.sort_key)
            self.removed = True
            return self._finish(delta, tasks_changed=False)
        if self.removed:
            if not verdict:
                return None  # stragglers of the deletion
            return self.load()  # created again: a new team under the old name
        delta = StoreDelta(team=self.team)
        self._add_sent(sent, delta)
        tasks_changed = reread = False
        try:
            if self._lost:  # the last batch failed: read every inbox again
                self._lost = False
                self._reread_inboxes(delta)
                reread = True
            for event in relevant:
                if isinstance(event, TeamChanged | TeamRemoved):
                    delta.teams = self.home.teams.names()
                    if event.team == self.team:
                        self._read_config(delta)
                elif isinstance(event, TaskChanged):
                    tasks_changed |= self._read_task(event.task_id, delta)
                elif isinstance(event, InboxChanged) and self._read_inbox(event.agent, delta):
                    self._reread_inboxes(delta)
                    reread = True
        except BaseException:
            # The delta is lost with the error: the messages it held were never shown, so
            # they are forgotten and the next change reads every inbox again.
            for item in delta.feed_added:
                self._items.pop((item.sender, item.timestamp, item.text), None)
            self._lost = True
            raise
        delta.feed_added.sort(key=lambda item: item.sort_key)
        changed = (
            reread
            or delta.config_changed
            or delta.teams is not None
            or tasks_changed
            or delta.feed_added
            or delta.feed_updated
            or self._errors_changed(delta)
        )
        if not changed:
            return None
        return self._finish(delta, tasks_changed=tasks_changed)

    # ------------------------------------------------------------------ config

    def _read_config(self, delta: StoreDelta) -> None:
        assert self.team is not None
        try:
            config = self.home.teams.get(self.team)
            self._config_error = None
        except (TeamdeckError, OSError) as exc:
            self._config_error = file_error(exc)
            config = self.config  # keep showing what we had
        if config is not None or self.config is not None:
            self.config = config
        delta.config_changed = True

    # ------------------------------------------------------------------ tasks

    def _read_all_tasks(self, delta: StoreDelta) -> None:
        """Every task file, parsed straight from bytes (``TaskList.scan`` is the slow path:
        it re-resolves the directory for each file)."""
        assert self.team is not None
        tasks = self.home.tasks(self.team)
        try:
            ids = tasks.ids_on_disk()
            directory = tasks.dir
        except (TeamdeckError, OSError) as exc:
            self._task_errors = {"*": file_error(exc)}
            return
        self._dir = directory
        for number in ids:
            task_id = str(number)
            try:
                task = parse_with_retry(directory / f"{task_id}.json", Task.model_validate_json)
            except (TeamdeckError, OSError) as exc:
                self._task_errors[task_id] = file_error(exc)
                continue
            if task is not None and not task.is_internal and task.status not in HIDDEN_STATUSES:
                self._tasks[task_id] = task
        delta.task_upserts = list(self._tasks.values())

    def _task_dir(self) -> Path:
        if self._dir is None:
            assert self.team is not None
            self._dir = self.home.tasks(self.team).dir
        return self._dir

    def _read_task(self, task_id: str, delta: StoreDelta) -> bool:
        assert self.team is not None
        if not task_id.isdigit():
            return False
        try:
            task = parse_with_retry(self._task_dir() / f"{task_id}.json", Task.model_validate_json)
        except (TeamdeckError, OSError) as exc:
            self._task_errors[task_id] = file_error(exc)
            return True
        had_error = self._task_errors.pop(task_id, None) is not None
        old = self._tasks.get(task_id)
        if task is None and not self._task_dir().is_dir():
            return had_error  # the whole list is going away (team deleted): keep the rows
        if task is None or task.is_internal or task.status in HIDDEN_STATUSES:
            if old is None:
                return had_error
            del self._tasks[task_id]
            delta.task_removals.append(task_id)
            return True
        self._tasks[task_id] = task
        delta.task_upserts.append(task)
        if task.status == "completed" and old is not None and old.status != "completed":
            delta.completed.append(task)
        return True

    # ------------------------------------------------------------------ inboxes

    def _read_all_inboxes(self, delta: StoreDelta) -> None:
        assert self.team is not None
        for agent in self.home.mailbox(self.team).agents():
            self._read_inbox(agent, delta)
        delta.feed_added.sort(key=lambda item: item.sort_key)

    def _read_inbox(self, agent: str, delta: StoreDelta, *, keep_errors: bool = True) -> bool:
        """Append the inbox's new messages to the feed. True if it shrank (rebuild needed).
        ``keep_errors=False``: a file that cannot be read is not reported (a team being
        deleted: its files go away while they are read)."""
        assert self.team is not None
        try:
            path = self.home.mailbox(self.team).path(agent)
            entries = parse_with_retry(path, parse_raw_inbox)
        except (TeamdeckError, OSError) as exc:
            if keep_errors:
                self._inbox_errors[agent] = file_error(exc)
            return False
        self._inbox_errors.pop(agent, None)
        if entries is None:  # gone (its team is being deleted): what it said stays in the feed
            return False
        self._requests.saw_inbox(agent)
        seen = self._inbox_counts.get(agent, 0)
        if len(entries) < seen or (
            seen and _identity(entries[seen - 1]) != self._inbox_last.get(agent)
        ):
            return True
        for entry in entries[seen:]:
            self._requests.note(agent, entry)
            self._add_message(agent, entry, delta)
        # Counted once they are in the feed: if adding one failed, the next change reads them
        # again (those already added are recognised and not added twice).
        self._inbox_counts[agent] = len(entries)
        if entries:
            self._inbox_last[agent] = _identity(entries[-1])
        return False

    def _add_sent(self, sent: list[MessageSent], delta: StoreDelta) -> None:
        """The runtime's messages to this team, as the inbox entries they wrote."""
        for m in sent:
            entry: dict[str, Any] = {"from": m.sender, "text": m.text, "timestamp": m.timestamp}
            entry |= {"summary": m.summary, "answeredBy": m.answered_by, "plainText": m.plain}
            self._add_message(m.recipient, entry, delta)
        delta.feed_added.sort(key=lambda item: item.sort_key)

    def _add_message(self, recipient: str, entry: dict[str, Any], delta: StoreDelta) -> None:
        # An answer the person gave comes from team-lead (the protocol's sender) and names
        # them in ``answeredBy`` (a Claude Code home: teamdeck's note): the feed credits them.
        assert self.team is not None
        by = self._credits.answered_by(self.team, recipient, entry)
        sender = by or entry.get("from") or "?"
        text = entry.get("text")
        timestamp = entry.get("timestamp") or ""
        summary = entry.get("summary")
        if not (type(sender) is str and type(text) is str and type(timestamp) is str):
            sender, timestamp = str(sender), str(timestamp)
            text = text if isinstance(text, str) else json.dumps(text)
        if summary is not None and type(summary) is not str:
            summary = None
        key = (sender, timestamp, text)
        item = self._items.get(key)
        if item is not None:  # the same broadcast, seen in another inbox
            if recipient not in item.recipients:
                item.add_recipient(recipient)
                if not delta.feed_reset:
                    delta.feed_updated.append(item)
            return
        self._seq += 1
        item = FeedItem(timestamp, self._seq, sender, (recipient,), text, summary)
        item.plain = entry.get("plainText") is True
        self._items[key] = item
        delta.feed_added.append(item)
        request = text[:1] == "{" and _REQUEST_MARKS.search(text)
        if summary and recipient != LEAD_NAME and not request:
            self._last_dm[sender] = (recipient, summary)

    def _done_with(self, summary: str) -> bool:
        """A DM about tasks that are all completed now ("Task #3 unblocked"): superseded,
        the panel no longer shows it."""
        named = _TASK_REF.findall(summary)
        return bool(named) and all(
            (task := self._tasks.get(n)) is not None and task.status == "completed" for n in named
        )

    def _reread_inboxes(self, delta: StoreDelta) -> None:
        """An inbox got shorter: someone removed messages from it (Claude Code's lead deletes
        what it has read, about a second after it lands). What the feed showed stays: the feed
        is the record of what happened, and the store read each message the moment the watcher
        saw it land. Every inbox is read again for the requests still waiting (a request whose
        message is gone is no longer pending in the files) and for anything new; messages
        already shown are recognised by ``(sender, timestamp, text)`` and not added twice."""
        self._inbox_counts.clear()
        self._inbox_last.clear()
        self._requests = TeamRequests.of(self.home, self.team or "")
        self._read_all_inboxes(delta)

    # ------------------------------------------------------------------ summaries

    def _errors_changed(self, delta: StoreDelta) -> bool:
        return bool(self._current_errors() ^ self._reported)

    def _current_errors(self) -> set[str]:
        errors = set(self._task_errors.values()) | set(self._inbox_errors.values())
        if self._config_error:
            errors.add(self._config_error)
        return errors

    def _finish(self, delta: StoreDelta, *, tasks_changed: bool) -> StoreDelta:
        delta.tasks_changed = tasks_changed
        delta.removed = self.removed
        delta.config = self.config
        delta.config_error = self._config_error
        if tasks_changed:
            open_count = 0
            current: dict[str, str] = {}
            for task in self._tasks.values():
                if task.status in OPEN_STATUSES:
                    open_count += 1
                if task.status == "in_progress" and task.owner:
                    current.setdefault(agent_name(task.owner), f"#{task.id} {task.subject}")
            self._summary = (open_count, current)
        delta.open_tasks, current_tasks = self._summary
        delta.current_tasks = dict(current_tasks)
        delta.task_errors = dict(self._task_errors)
        delta.inbox_errors = dict(self._inbox_errors)
        delta.last_dm = {
            sender: f"✉ {to}: {one_line(summary, 60)}"
            for sender, (to, summary) in self._last_dm.items()
            if not self._done_with(summary)
        }
        delta.pending = [r.approval for r in self._requests.pending]
        if self.pick and self.team and self.config is not None:  # a viewer: no runtime knows
            delta.statuses = panel_statuses(self.config, self._requests)
            delta.status_since = status_times(self.config, self._requests)
            delta.last_activity = last_activity(self.home, self.team)
        errors = self._current_errors()
        delta.new_errors = sorted(errors - self._reported)
        self._reported = errors
        return delta


def _identity(entry: dict[str, Any]) -> tuple[object, object, object]:
    """What tells one inbox message from another: its sender, time and text."""
    return entry.get("from"), entry.get("timestamp"), entry.get("text")
