"""``--worktrees`` for a runtime: each teammate in its own git worktree, made at spawn and
released when it leaves the team (or when the runtime stops), whichever runner runs it.

The runtime calls :meth:`TeamWorktrees.prepare` on every spawn (the teammate's spec gets the
worktree as its cwd, and the member's ``worktreePath`` in the config) and
:meth:`TeamWorktrees.release` when a teammate has left (shut down, failed, killed or lost). The
git work runs in a thread (:mod:`app.runtime.team.git_worktrees`). A released worktree is removed
when
nothing changed in it; a kept one (changes, commits, or a state that could not be read) stays
with its branch, the lead is told in its inbox, and :attr:`TeamWorktrees.kept` lists it for the
run's report. Every release is a :class:`~app.runtime.events.WorktreeReleased` event.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from app.core.errors import TeamdeckError
from app.core.models import InboxMessage
from app.core.paths import LEAD_NAME
from app.runtime.agent.channel import Sent
from app.runtime.events import WorktreeReleased
from app.runtime.team.git_worktrees import Release, Worktree, WorktreeManager

if TYPE_CHECKING:
    from pathlib import Path

    from app.core import Home
    from app.runtime.agent.session import Emit
    from app.runtime.runners.base import Runner, TeammateSpec

log = logging.getLogger(__name__)


class TeamWorktrees:
    """The worktrees of one runtime's teammates (does nothing unless ``enabled``)."""

    def __init__(
        self,
        home: Home,
        cwd: Path,
        *,
        enabled: bool,
        emit: Emit,
        on_sent: Callable[[Sent], None] | None = None,
    ) -> None:
        self.home = home
        self.cwd = cwd
        self.enabled = enabled
        self._emit = emit
        self._on_sent = on_sent
        self._managers: dict[str, WorktreeManager] = {}
        self._preparing = asyncio.Lock()
        self._trees: dict[tuple[str, str], Worktree] = {}
        self._releasing: set[asyncio.Task[Release]] = set()
        #: Every release so far, in order.
        self.released: list[tuple[str, Release]] = []

    @property
    def kept(self) -> list[tuple[str, Release]]:
        """(team, release) of the worktrees kept because something changed in them."""
        return [(team, r) for team, r in self.released if not r.removed]

    async def prepare(self, spec: TeammateSpec) -> TeammateSpec:
        """``spec`` working in a new worktree of its own (unchanged when not enabled).
        WorktreeError (one line) if git cannot make it."""
        if not self.enabled:
            return spec
        async with self._preparing:  # spawns of one response overlap: git, one at a time
            manager = self._managers.get(spec.team)
            if manager is None:
                manager = await asyncio.to_thread(WorktreeManager, self.cwd, spec.team)
                self._managers[spec.team] = manager
            tree = await asyncio.to_thread(manager.create_free, spec.name)
        self._trees[(spec.team, spec.name)] = tree
        return dataclasses.replace(spec, cwd=tree.path, worktree=tree.path)

    def release(self, team: str, name: str) -> None:
        """Teammate ``name`` left: release its worktree (in the background; see ``settle``)."""
        tree = self._trees.pop((team, name), None)
        if tree is None:
            return
        task = asyncio.ensure_future(self._release(team, tree))
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def settle(self) -> None:
        """Wait for the releases under way (a teammate that is just leaving included)."""
        for _ in range(3):
            await asyncio.sleep(0)  # let cancelled teammates reach their exit path
        while self._releasing:
            await asyncio.gather(*list(self._releasing), return_exceptions=True)

    async def close(self, runners: Mapping[str, Runner]) -> None:
        """The runtime stops: settle, then release the worktree of every teammate still listed
        but not a live process of its own (this process's teammates are stopped with it, even
        one that never got to run); a teammate process left running keeps its worktree."""
        await self.settle()
        for team, name in list(self._trees):
            runner = runners.get(name)
            if runner is None or runner.spec.team != team or runner.pid is None or runner.finished:
                self.release(team, name)
        await self.settle()

    async def _release(self, team: str, tree: Worktree) -> Release:
        result = await asyncio.to_thread(self._managers[team].release, tree)
        self.released.append((team, result))
        self._emit(
            WorktreeReleased(
                tree.name, str(tree.path), tree.branch, result.removed, result.summary, team
            )
        )
        if not result.removed:
            self._tell_lead(team, tree, result)
        return result

    def _tell_lead(self, team: str, tree: Worktree, result: Release) -> None:
        text = (
            f"{tree.name}'s worktree: {result.summary}. Review it, merge the branch "
            f"{tree.branch} or remove it (git worktree remove {tree.path}; "
            f"git branch -D {tree.branch})."
        )
        message = InboxMessage(sender=tree.name, text=text, summary=f"{tree.name}: worktree kept")
        try:
            self.home.mailbox(team).append(LEAD_NAME, message)
        except (TeamdeckError, OSError) as exc:  # e.g. the team was deleted meanwhile
            log.info("could not tell the lead about %s: %s", tree.path, exc)
            return
        if self._on_sent is not None:
            self._on_sent(Sent(team, LEAD_NAME, message))


def kept_report(kept: list[tuple[str, Release]]) -> str:
    """The kept worktrees as lines for a run's report ('' if none)."""
    if not kept:
        return ""
    lines = [f"- {r.worktree.name}: {r.summary}" for _, r in kept]
    return "Worktrees kept with changes (review and merge them):\n" + "\n".join(lines)
