"""Settings files changed during a run: shown to the person, used only once they accept.

The run takes its hooks and permission rules when it starts
(:mod:`app.runtime.permissions.snapshot`). An agent may write a settings file meanwhile (a hook
in ``.claude/settings.json`` is a command teamdeck would run; an allow rule lets commands run
without asking), so :class:`SettingsWatch` looks at the files' ``stat`` every ``POLL_S``; when
one changed in what matters (hooks, rules), it says what:

- with a dashboard: a request in the approvals queue from the lead, tool ``Settings``, answered
  with the usual keys (a: use the new settings, r: keep the ones in use); only the person
  answers it, never the lead model;
- headless: one warning line, and nothing is applied (the next run reads the files).

Rules teamdeck itself added (an "always allow" answer) are no change. A change answered once
(or said once, headless) is not asked about again; a later change is. An accepted change
reaches every agent of the run, running teammates included (in-process or processes), at its
next tool call; a rejected one reaches none.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.core.paths import LEAD_NAME, project_of
from app.core.protocol import make_request_id
from app.runtime.api import Approval
from app.runtime.permissions import PermissionRules, snapshot
from app.runtime.permissions.settings import Settings, load_settings

if TYPE_CHECKING:
    from app.core import Home
    from app.core.authority import TeamKey
    from app.runtime.agent.permission_flow import LeadPermissions

log = logging.getLogger(__name__)

#: Seconds between two looks at the settings files.
POLL_S = 1.0
#: The tool name of the person's request.
TOOL = "Settings"


class WatchHost(Protocol):
    home: Home
    cwd: Path
    headless: bool
    team: str | None
    rules: PermissionRules
    lead_permissions: LeadPermissions
    processes: Any
    team_key: TeamKey | None


class SettingsWatch:
    def __init__(self, host: WatchHost) -> None:
        self.host = host
        self.project = project_of(host.cwd)
        self.accepted: Settings | None = None
        self._stats: tuple[Any, ...] = ()
        self._said: set[tuple[str, ...]] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Take the run's snapshot (now: the start of the run) and watch the files."""
        snapshot.forget(self.project)  # an earlier run's in this process is not this run's
        self.accepted = snapshot.take(self.project)
        self._stats = snapshot.file_stats(self.project)
        self._task = asyncio.ensure_future(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def keep_for(self, team: str) -> None:
        """A team of teammate processes: they use the run's snapshot (see ``snapshot``): the
        accepted hooks and the run's rules, which they follow while they run."""
        if self.accepted is None:
            self.accepted = snapshot.take(self.project)
        path = self.host.home.layout.agents_dir(team) / "settings.json"
        try:
            snapshot.write_snapshot(path, self.accepted, self.host.rules, self.host.team_key)
        except OSError as exc:
            log.warning("cannot keep the run's settings for its teammates in %s: %s", path, exc)

    def rules_changed(self) -> None:
        """The run's rules changed (an "always allow" answer): tell the teammate processes
        (in-process agents read the run's rules themselves)."""
        if self.host.processes is not None and self.host.team:
            self.keep_for(self.host.team)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(POLL_S)
            stats = snapshot.file_stats(self.project)
            if stats == self._stats:
                continue
            self._stats = stats
            try:
                await self.look()
            except Exception:  # a watch must never end the run: the log says why
                log.exception("looking at the settings files of %s failed", self.project)

    async def look(self) -> None:
        """The files changed: ask about (or say) what differs from the settings in use."""
        assert self.accepted is not None
        fresh = await asyncio.to_thread(load_settings, self.project)
        lines = snapshot.changes(self.accepted, fresh, known=self.host.rules)
        key = tuple(lines)
        if not lines or key in self._said:
            return
        self._said.add(key)
        files = ", ".join(str(p) for p in fresh.files) or "the settings files"
        if self.host.headless:
            log.warning(
                "teamdeck: warning: settings changed on disk during the run (%s): %s; not "
                "applied (the next run reads them)", files, "; ".join(lines),
            )  # fmt: skip
            return
        approval = Approval(
            request_id=make_request_id("permission", LEAD_NAME),
            kind="permission",
            agent=LEAD_NAME,
            title=f"{LEAD_NAME}: settings changed on disk: {'; '.join(lines)}",
            body="\n".join([f"Changed during the run: {files}", *lines,
                            "a: use them from now on · r: keep the settings in use"]),
            tool_name=TOOL,
            tool_input={"files": [str(p) for p in fresh.files], "changes": lines},
        )  # fmt: skip
        if await self.host.lead_permissions.ask_person(approval):
            self.apply(fresh)

    def apply(self, fresh: Settings) -> None:
        """The person accepted ``fresh``: every agent uses its hooks and rules from its next
        tool call (the lead and in-process teammates through the run's rules, teammate
        processes through the snapshot file); rules the run has besides (``--allow``, "always
        allow") stay."""
        old = self.accepted
        self.accepted = fresh
        snapshot.replace(self.project, fresh)
        self.host.rules.rebase(old.rules if old is not None else PermissionRules(), fresh.rules)
        self.rules_changed()
