"""What one read of the team's files changed, for the UI (no Textual): :class:`StoreDelta`,
built by :class:`app.dashboard.store.Store`."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core import Task, TeamConfig
from app.display.values import FeedItem, TeamFiles
from app.runtime.api import Approval
from app.runtime.events import AgentStatus


@dataclass
class StoreDelta:
    """What changed since the previous delta. Maps (errors, summaries) are always complete."""

    team: str | None
    reset: bool = False  # everything below replaces what the UI had (first load, team switch)
    removed: bool = False  # the team was deleted (what was shown stays)
    feed_reset: bool = False  # the feed is replaced by ``feed_added`` (an inbox shrank)
    config: TeamConfig | None = None
    config_changed: bool = False
    config_error: str | None = None
    tasks_changed: bool = False
    task_upserts: list[Task] = field(default_factory=list)
    task_removals: list[str] = field(default_factory=list)
    completed: list[Task] = field(default_factory=list)  # tasks that just became completed
    open_tasks: int = 0
    current_tasks: dict[str, str] = field(default_factory=dict)  # owner -> "#3 subject"
    task_errors: dict[str, str] = field(default_factory=dict)  # task id -> error
    feed_added: list[FeedItem] = field(default_factory=list)
    feed_updated: list[FeedItem] = field(default_factory=list)
    inbox_errors: dict[str, str] = field(default_factory=dict)  # agent -> error
    last_dm: dict[str, str] = field(default_factory=dict)  # sender -> last DM summary
    pending: list[Approval] = field(default_factory=list)  # requests seen in the files
    teams: list[str] | None = None  # every team in the home, when that list may have changed
    new_errors: list[str] = field(default_factory=list)  # errors not reported before
    statuses: dict[str, AgentStatus] = field(default_factory=dict)  # teammate -> status (viewer)
    status_since: dict[str, float] = field(default_factory=dict)  # teammate -> since (viewer)
    last_activity: float | None = None  # newest mtime of the team's files (viewer)

    def files(self, previous: TeamFiles) -> TeamFiles:
        """The app's ``TeamFiles`` after this delta (``previous``: before it)."""
        keep_config = not (self.config_changed or self.reset)
        return TeamFiles(
            team=self.team or previous.team,
            removed=self.removed,
            config=previous.config if keep_config else self.config,
            config_error=self.config_error,
            inbox_errors=self.inbox_errors,
            task_errors=self.task_errors,
            open_tasks=self.open_tasks,
            current_tasks=self.current_tasks,
            last_dm=self.last_dm,
            teams=previous.teams if self.teams is None else tuple(self.teams),
            statuses=self.statuses,
            status_since=self.status_since,
            last_activity=self.last_activity,
        )
