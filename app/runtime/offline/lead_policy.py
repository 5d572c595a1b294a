"""The offline lead: turns a goal into a team, tasks, teammates, and sees it through.

Setup (one step per model call, each waiting for the previous results): a Glob of the files the
goal is about (``offline.survey``: none, and it makes no team but says so) -> TeamCreate -> three
TaskCreate -> TaskUpdate (the report task is blocked by the other two) -> three Task spawns (the
writer in plan mode; the researcher also counts lines when the goal asks for it, a shell command
that needs a permission) -> TaskUpdate owners. Then it reacts to mail: answers plan and permission
requests when they are its to decide, checks the task list after each report, nudges the owner
of a task that became unblocked, asks everyone to shut down once all tasks are completed, calls
TeamDelete when all have left, and gives the person a final report. On a resumed team it carries
on with the open work (``offline.resume``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from app.runtime.offline.goal_words import (
    COUNT_LINES,
    ROLES,
    counts_lines,
    file_pattern_for,
    team_name_for,
)
from app.runtime.offline.history import Call, History
from app.runtime.offline.plans import Block, ModelRequest, ResponsePlan, reply, text, tool_use
from app.runtime.offline.resume import resume_spawns, resumed_at
from app.runtime.offline.roll_call import compacted, known_teammates
from app.runtime.offline.sizing import assign_owners, create_tasks, spawn_workers, team_size
from app.runtime.offline.survey import found_nothing, nothing_to_do, survey

#: ``named(tool)``: this episode's calls of one tool.
Named = Callable[[str], list[Call]]
#: A teammate that rejects its shutdown is asked again this many times in all, then reported.
MAX_SHUTDOWN_ASKS = 3


class LeadPolicy:
    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.history = History.of(request)
        self.decides_requests = "are yours to decide" in request.system_text

    # ------------------------------------------------------------------ scope

    def _scope(self) -> tuple[int, str]:
        """(start index, goal) of the current team's story: the person's latest prompt that
        came before the current TeamCreate -- or after the last team was deleted."""
        h = self.history
        prompts = [m for m in h.incoming if m.sender is None]
        if not prompts:
            return 0, ""
        creates = [c for c in h.calls if c.name == "TeamCreate" and c.ok]
        # An episode ends when its team is deleted, or when the first look found nothing to
        # work on (no team was made): the person's next prompt is a new goal.
        ends = [c for c in h.calls if c.name == "TeamDelete" and _success(c)]
        ends += [c for c in h.calls if c.name == "Glob" and found_nothing(c)]
        last_create = creates[-1].index if creates else None
        last_delete = max(c.index for c in ends) if ends else None
        if last_create is not None and (last_delete is None or last_delete < last_create):
            before = [p for p in prompts if p.index <= last_create]
            start = before[-1] if before else prompts[0]
            return start.index, start.text
        after = [p for p in prompts if last_delete is None or p.index > last_delete]
        start = after[0] if after else prompts[-1]
        return start.index, start.text

    def _leads_team_already(self) -> bool:
        """No TeamCreate of ours, yet teammates write to us: the runtime (a script, a
        benchmark) made the team, so react to the mail instead of creating one."""
        h = self.history
        return not any(c.name == "TeamCreate" for c in h.calls) and (
            any(m.sender is not None for m in h.incoming) or resumed_at(h) is not None
        )

    # ------------------------------------------------------------------ decide

    def decide(self) -> ResponsePlan:
        start, goal = self._scope()
        h = self.history
        calls = [c for c in h.calls if c.index >= start]

        def named(name: str) -> list[Call]:
            return [c for c in calls if c.name == name]

        deleted = [c for c in named("TeamDelete") if _success(c)]
        if deleted:
            if any(i > deleted[-1].index for i, _ in h.assistant_texts):
                return reply(text("The team has finished and was cleaned up."))
            return reply(text(self._final_report(start)))
        created = [c for c in named("TeamCreate") if c.ok or _already_leading(c)]
        if not created and self._leads_team_already():
            return self._react(start, named)
        if not created:
            pattern = file_pattern_for(goal)
            looked = named("Glob")
            if looked and found_nothing(looked[-1]):
                return reply(text(nothing_to_do(goal, pattern)))
            if not looked and team_size(goal) is None and "Glob" in self.request.tools:
                return survey(pattern)
            return reply(
                text(f"I'll set up a team for: {goal}"),
                tool_use("TeamCreate", {"team_name": team_name_for(goal), "description": goal}),
            )
        setup = self._setup_step(goal, named)
        if setup is not None:
            return setup
        return self._react(start, named)

    def _setup_step(self, goal: str, named: Named) -> ResponsePlan | None:
        if team_size(goal) is not None:
            return self._sized_setup_step(goal, named)
        creates = named("TaskCreate")
        if not creates:
            return reply(
                *(
                    tool_use(
                        "TaskCreate",
                        {
                            "subject": role.subject,
                            "description": f"{role.subject} for the goal: {goal}",
                            "activeForm": role.subject.replace("Inventory", "Inventorying"),
                        },
                    )
                    for role in ROLES
                )
            )
        ids = [_task_id(c) for c in creates[: len(ROLES)]]
        if not named("TaskUpdate"):
            return reply(
                tool_use("TaskUpdate", {"taskId": ids[2], "addBlockedBy": [ids[0], ids[1]]})
            )
        spawns = named("Task")
        if not spawns:
            pattern = file_pattern_for(goal)
            return reply(
                text("Spawning the team."),
                *(
                    tool_use(
                        "Task",
                        {
                            "description": role.subject,
                            "name": role.name,
                            "subagent_type": role.name,
                            "prompt": (
                                f"You are the {role.name}. Your task is #{ids[i]}: "
                                f"{role.subject} (action: {role.action}, files: {pattern}). "
                                + (
                                    f"{COUNT_LINES} "
                                    if role.action == "inventory" and counts_lines(goal)
                                    else ""
                                )
                                + f"Goal: {goal}"
                            ),
                            **({"mode": "plan"} if role.plan_mode else {}),
                        },
                    )
                    for i, role in enumerate(ROLES)
                ),
            )
        names = [_spawned_name(c) for c in spawns if c.ok]
        owners = [c for c in named("TaskUpdate") if "owner" in c.input]
        if not owners:
            return reply(
                *(
                    tool_use("TaskUpdate", {"taskId": ids[i], "owner": name})
                    for i, name in enumerate(names)
                    if i < len(ids)
                )
            )
        if calls_after(owners[-1], self.history) == [] and not self._mail_since(spawns):
            return reply(text(f"The team is working: {', '.join(names)}."))
        return None

    def _mail_since(self, spawns: list[Call]) -> bool:
        """Mail came since the spawns: the team reported (or asked) while it was being set up.
        Read from the spawns, not the owner assignments: mail delivered with the spawns'
        results (a fast team's reports, a plan request) came before the assignments, and
        counting only what came after them left that mail unanswered for good."""
        return bool(self.history.incoming_since(spawns[-1].index + 1))

    def _sized_setup_step(self, goal: str, named: Named) -> ResponsePlan | None:
        """The setup of a team whose size the goal says (``offline.sizing``)."""
        size = team_size(goal)
        assert size is not None
        pattern = file_pattern_for(goal)
        creates = named("TaskCreate")
        if not creates:
            return create_tasks(size, goal, pattern)
        ids = [_task_id(c) for c in creates if c.ok][: size.teammates]
        spawns = named("Task")
        if not spawns:
            return spawn_workers(size, ids, goal, pattern)
        names = [_spawned_name(c) for c in spawns if c.ok]
        owners = [c for c in named("TaskUpdate") if "owner" in c.input]
        if not owners:
            return assign_owners(ids, names)
        if calls_after(owners[-1], self.history) == [] and not self._mail_since(spawns):
            return reply(text(f"The team of {len(names)} is working."))
        return None

    def _react(self, start: int, named: Named) -> ResponsePlan:
        h = self.history
        spawned = [_spawned_name(c) for c in named("Task") if c.ok]
        if compacted(h):
            lists = [c for c in named("TaskList") if c.ok]
            known = known_teammates(h, start, lists[-1] if lists else None)
            spawned += [n for n in known if n not in spawned]
        gone = self._gone(start)
        present = [n for n in spawned if n not in gone]
        # 1. requests that are ours to answer
        if self.decides_requests:
            answers = self._answers(start, named)
            if answers:
                return reply(*answers)
        # 2. everyone has left after being asked: clean up
        asks = Counter(
            str(c.input.get("recipient"))
            for c in named("SendMessage")
            if c.input.get("type") == "shutdown_request"
        )
        asked = set(asks)
        if spawned and not present and (asked or compacted(h)):
            return reply(text("Everyone has shut down; cleaning up."), tool_use("TeamDelete", {}))
        # 3. after a TaskList: decide
        last = h.last_calls()
        tasklist = next((c for c in last if c.name == "TaskList" and c.ok), None)
        if tasklist is not None and h.incoming_since(tasklist.index + 1):
            tasklist = None  # mail arrived since: look again
        if tasklist is not None:
            tasks = (tasklist.result_json() or {}).get("tasks", [])
            if tasks and all(t.get("status") == "completed" for t in tasks):
                # A rejected shutdown is asked again (up to MAX_SHUTDOWN_ASKS), then reported.
                refusals = self._refusals(start)
                to_ask = [
                    n
                    for n in present
                    if asks[n] == 0 or (len(refusals.get(n, [])) >= asks[n] < MAX_SHUTDOWN_ASKS)
                ]
                refused = [n for n in present if len(refusals.get(n, [])) >= MAX_SHUTDOWN_ASKS]
                if not to_ask and refused and len(refused) == len(present):
                    why = "; ".join(f"{n}: {refusals[n][-1]}" for n in refused)
                    return reply(
                        text(
                            f"{', '.join(refused)} refused to shut down after "
                            f"{MAX_SHUTDOWN_ASKS} requests ({why}). The team stays up; end "
                            "them from the dashboard (K) if they should stop."
                        )
                    )
                if not to_ask and not present and resumed_at(h) is not None:
                    return reply(
                        text("All tasks are completed; cleaning up."), tool_use("TeamDelete", {})
                    )
                if to_ask:
                    return reply(
                        text("All tasks are completed; asking the team to shut down."),
                        *(
                            tool_use(
                                "SendMessage",
                                {
                                    "type": "shutdown_request",
                                    "recipient": n,
                                    "content": "All tasks are completed. Thank you!",
                                },
                            )
                            for n in to_ask
                        ),
                    )
                return reply(text("Waiting for the teammates to approve their shutdown."))
            spawns = resume_spawns(h, tasks)  # a resumed team: its open work, carried on
            if spawns:
                return reply(text("Carrying on with the open tasks."), *spawns)
            nudged = {
                m
                for c in named("SendMessage")
                for m in re.findall(r"Task #(\d+) is unblocked", str(c.input.get("content", "")))
            }
            nudges = [
                t
                for t in tasks
                if t.get("status") != "completed"
                and t.get("owner") in present
                and not t.get("blockedBy")
                and t.get("id") in self._blocked_ids(named)
                and t.get("id") not in nudged
            ]
            if nudges:
                return reply(
                    *(
                        tool_use(
                            "SendMessage",
                            {
                                "type": "message",
                                "recipient": t["owner"],
                                "content": f"Task #{t['id']} is unblocked now: go ahead with it.",
                                "summary": f"Task #{t['id']} unblocked",
                            },
                        )
                        for t in nudges
                    )
                )
            done = sum(1 for t in tasks if t.get("status") == "completed")
            return reply(text(f"Progress: {done}/{len(tasks)} tasks completed."))
        return reply(tool_use("TaskList", {}))

    def _answers(self, start: int, named: Named) -> list[Block]:
        answered = {c.input.get("request_id") for c in named("SendMessage")}
        out: list[Block] = []
        for message, frame in self.history.frames(start):
            kind = frame.get("type")
            if kind == "plan_approval_request" and frame.get("requestId") not in answered:
                out.append(
                    tool_use(
                        "SendMessage",
                        {
                            "type": "plan_approval_response",
                            "request_id": frame["requestId"],
                            "approve": True,
                            "recipient": frame.get("from") or message.sender,
                        },
                    )
                )
                answered.add(frame.get("requestId"))
            elif kind == "permission_request" and frame.get("request_id") not in answered:
                tool = str(frame.get("tool_name", ""))
                allow = tool in ("Read", "Glob", "Grep", "Bash", "Write", "Edit")
                out.append(
                    tool_use(
                        "SendMessage",
                        {
                            "type": "permission_response",
                            "request_id": frame["request_id"],
                            "approve": allow,
                            "recipient": message.sender or "",
                            **({} if allow else {"content": f"{tool} is not needed for this goal"}),
                        },
                    )
                )
                answered.add(frame.get("request_id"))
        return out

    def _refusals(self, start: int) -> dict[str, list[str]]:
        """Who rejected a shutdown request, with each reason given."""
        refusals: dict[str, list[str]] = {}
        for message in self.history.incoming_since(start):
            frame = message.frame()
            if frame and frame.get("type") == "shutdown_rejected":
                name = str(frame.get("from") or message.sender)
                refusals.setdefault(name, []).append(str(frame.get("reason") or "no reason"))
        return refusals

    def _gone(self, start: int) -> set[str]:
        gone: set[str] = set()
        for message in self.history.incoming_since(start):
            frame = message.frame()
            if frame and frame.get("type") == "shutdown_approved":
                gone.add(str(frame.get("from") or message.sender))
            elif message.sender and (
                "was terminated" in message.text
                or f'Teammate "{message.sender}" failed' in message.text
            ):
                gone.add(message.sender)
        return gone

    def _blocked_ids(self, named: Named) -> set[str]:
        return {
            str(c.input.get("taskId")) for c in named("TaskUpdate") if c.input.get("addBlockedBy")
        }

    def _final_report(self, start: int) -> str:
        lines = ["Final report:"]
        for message in self.history.incoming_since(start):
            if message.sender and message.frame() is None and message.sender != "team-lead":
                if "was terminated" in message.text or "has shut down" in message.text:
                    continue
                lines.append(f"- {message.sender}: {message.text.strip()}")
        if len(lines) == 1:
            lines.append("- (no reports were received)")
        lines.append("\nThe team has been shut down and deleted.")
        return "\n".join(lines)


def calls_after(call: Call, history: History) -> list[Call]:
    return [c for c in history.calls if c.index > call.index]


def _already_leading(call: Call) -> bool:
    return bool(call.is_error and call.result and "Already leading team" in call.result)


def _success(call: Call) -> bool:
    data = call.result_json()
    return bool(call.ok and isinstance(data, dict) and data.get("success"))


def _task_id(call: Call) -> str:
    data = call.result_json() or {}
    task = data.get("task") or {}
    return str(task.get("id", "?"))


def _spawned_name(call: Call) -> str:
    data = call.result_json() or {}
    return str(data.get("name") or call.input.get("name"))
