"""The offline teammate: does real read-only work on its task with the workspace tools.

For a task it marks it in progress, (in plan mode: surveys, submits a plan with ExitPlanMode and
stops until approved), checks it is not blocked, then does its action in the working directory:

* ``inventory``   -- Glob the files and report how many there are and which (and, when the
  lead asks for it, count their lines with ``wc -l``: a shell command, so a permission request
  unless a rule allows it; a denial is reported, not retried);
* ``definitions`` -- Grep top-level ``def``/``class`` lines and report where they are;
* ``summarize``   -- Read the first lines of each file and report its docstring / first line;

then marks the task completed and reports to team-lead with SendMessage (a refused completion,
e.g. by a TaskCompleted hook, is tried again, then reported as still open). It answers shutdown
requests by approving them, and acknowledges anything else.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePath
from typing import Any

from app.runtime.offline.goal_words import COUNT_LINES
from app.runtime.offline.history import Call, History, Incoming
from app.runtime.offline.plans import ModelRequest, ResponsePlan, reply, text, tool_use

READ_FILES = 6
LINE_COUNT_FILES = 12  # files ``wc -l`` counts when the lead asks for line counts
#: Times a refused completion (a blocking TaskCompleted hook) is tried before reporting it.
COMPLETION_TRIES = 3


class TeammatePolicy:
    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.history = History.of(request)
        system = request.system_text
        self.name = _search(r"- Name: (\S+)", system) or "teammate"
        self.cwd = _search(r"Working directory: (.+)", system) or "."
        self.plan_mode = "You are in plan mode" in system

    def decide(self) -> ResponsePlan:
        h = self.history
        prompt = self._latest_prompt()
        if prompt is None:
            return reply(text("Ready."))
        frame = prompt.frame()
        if frame and frame.get("type") == "shutdown_request":
            return self._shutdown(prompt, frame)
        task_id = self._task_id()
        if task_id is None:
            return reply(text(f"Noted: {prompt.text[:120]}"))
        episode = [c for c in h.calls if c.index > prompt.index]
        if "Your plan was rejected" in prompt.text:
            return self._plan_step(task_id, episode, revise=prompt.text)
        return self._work_step(task_id, episode)

    # ------------------------------------------------------------------ prompt / task

    def _latest_prompt(self) -> Incoming | None:
        return self.history.incoming[-1] if self.history.incoming else None

    def _task_id(self) -> str | None:
        for message in reversed(self.history.incoming):
            found = re.search(r"[Tt]ask(?: is)? #(\d+)", message.text)
            if found:
                return found.group(1)
        return None

    def _action(self) -> tuple[str, str]:
        for message in reversed(self.history.incoming):
            found = re.search(r"action: (\w+), files: ([^)\s]+)", message.text)
            if found:
                return found.group(1), found.group(2)
        claimed = next(
            (m.text for m in reversed(self.history.incoming) if "#" in m.text), ""
        ).lower()
        if "definition" in claimed:
            return "definitions", "**/*.py"
        if "summar" in claimed:
            return "summarize", "**/*.py"
        return "inventory", "**/*"

    def _counts_lines(self) -> bool:
        return any(COUNT_LINES in m.text for m in self.history.incoming)

    # ------------------------------------------------------------------ steps

    def _shutdown(self, prompt: Incoming, frame: dict[str, object]) -> ResponsePlan:
        request_id = str(frame.get("requestId", ""))
        answered = [
            c
            for c in self.history.calls_named("SendMessage", prompt.index)
            if c.input.get("request_id") == request_id
        ]
        if answered:
            return reply(text("Shutting down."))
        return reply(
            text("My work is done; approving the shutdown."),
            tool_use(
                "SendMessage",
                {"type": "shutdown_response", "request_id": request_id, "approve": True},
            ),
        )

    def _started(self, task_id: str) -> bool:
        return any(
            c.input.get("taskId") == task_id and c.input.get("status") == "in_progress" and c.ok
            for c in self.history.calls_named("TaskUpdate")
        )

    def _plan_approved(self) -> bool:
        return any("Your plan was approved" in m.text for m in self.history.incoming)

    def _work_step(self, task_id: str, episode: list[Call]) -> ResponsePlan:
        if not self._started(task_id):
            tries = [
                c
                for c in episode
                if c.name == "TaskUpdate" and c.input.get("taskId") == task_id and not c.ok
            ]
            if tries:  # owned by someone else, resolved, gone: asking again changes nothing
                why = (tries[-1].result or "the claim failed").strip()
                return reply(text(f"I cannot take task #{task_id}: {why}"))
            return reply(
                text(f"Starting task #{task_id}."),
                tool_use(
                    "TaskUpdate", {"taskId": task_id, "status": "in_progress", "owner": self.name}
                ),
            )
        if self.plan_mode and not self._plan_approved():
            return self._plan_step(task_id, episode)
        done = [
            c
            for c in self.history.calls_named("TaskUpdate")
            if c.input.get("taskId") == task_id and c.input.get("status") == "completed" and c.ok
        ]
        if done:
            reported = [
                c
                for c in self.history.calls_named("SendMessage", done[-1].index)
                if c.input.get("recipient") == "team-lead"
            ]
            if reported:
                return reply(text(f"Task #{task_id} is done and reported."))
            return self._do_action(task_id, episode)
        checks = [c for c in episode if c.name == "TaskList"]
        if not checks:
            return reply(tool_use("TaskList", {}))
        tasks = (checks[-1].result_json() or {}).get("tasks", [])
        mine: dict[str, Any] = next((t for t in tasks if str(t.get("id")) == task_id), {})
        blockers = [b for b in mine.get("blockedBy", []) if b]
        if blockers:
            listing = ", ".join(f"#{b}" for b in blockers)
            return reply(text(f"Task #{task_id} is blocked by {listing}; waiting for them."))
        return self._do_action(task_id, episode)

    def _plan_step(
        self, task_id: str, episode: list[Call], revise: str | None = None
    ) -> ResponsePlan:
        action, pattern = self._action()
        # A plan submitted since the last rejection is still waiting: a message that arrives
        # meanwhile (e.g. "task unblocked") must not make us submit another one.
        rejected = [m.index for m in self.history.incoming if "Your plan was rejected" in m.text]
        since = rejected[-1] if rejected else 0
        if any(c.ok for c in self.history.calls_named("ExitPlanMode", since)):
            return reply(text("Plan submitted; waiting for the lead's approval."))
        globbed = [c for c in episode if c.name == "Glob"]
        if not globbed:
            return reply(tool_use("Glob", {"pattern": pattern}))
        files = _paths(globbed[-1], self.cwd)
        if not files:
            read = "1. Look for matching files (none found)."
        elif len(files) <= READ_FILES:
            read = (
                f"1. Read the first lines of the {len(files)} matching files ({', '.join(files)})."
            )
        else:
            read = (
                f"1. Read the first lines of {READ_FILES} of the {len(files)} matching files "
                f"({', '.join(files[:READ_FILES])})."
            )
        steps = [
            read,
            "2. Take each file's docstring or first comment as its purpose.",
            f"3. Mark task #{task_id} completed and send the summary to team-lead.",
        ]
        if revise:
            steps.append(f"4. Address the feedback: {_feedback(revise)}")
        plan = f"## Plan for task #{task_id} ({action})\n\n" + "\n".join(steps)
        return reply(tool_use("ExitPlanMode", {"plan": plan}))

    def _do_action(self, task_id: str, episode: list[Call]) -> ResponsePlan:
        action, pattern = self._action()
        globbed = [c for c in episode if c.name == "Glob"]
        if not globbed:
            return reply(tool_use("Glob", {"pattern": pattern}))
        files = _paths(globbed[-1], self.cwd)
        findings: str
        if action == "definitions":
            greps = [c for c in episode if c.name == "Grep"]
            if not greps:
                return reply(
                    tool_use(
                        "Grep",
                        {
                            "pattern": r"^(async def|def|class) \w+",
                            "glob": PurePath(pattern).name,
                            "output_mode": "count",
                            **_search_root(pattern),
                        },
                    )
                )
            findings = _definitions(greps[-1], self.cwd)
        elif action == "summarize":
            reads = [c for c in episode if c.name == "Read"]
            if not reads and files:
                return reply(
                    *(tool_use("Read", {"file_path": f, "limit": 12}) for f in files[:READ_FILES])
                )
            findings = _summaries(reads, self.cwd, len(files))
        else:
            findings = _inventory(files)
            if files and self._counts_lines():
                counted = [c for c in episode if c.name == "Bash"]
                if not counted:
                    listed = " ".join(shlex.quote(f) for f in files[:LINE_COUNT_FILES])
                    return reply(
                        text("Counting the lines."),
                        tool_use(
                            "Bash",
                            {"command": f"wc -l {listed}", "description": "Count lines"},
                        ),
                    )
                findings += " " + _line_count(counted[-1], min(len(files), LINE_COUNT_FILES))
        said = self._plan_feedback()
        if said:  # the person's word on the plan: the summary says how it was taken
            findings += f" The plan's feedback was taken into account: {said}"
        completed = [
            c for c in episode if c.name == "TaskUpdate" and c.input.get("status") == "completed"
        ]
        finish = tool_use("TaskUpdate", {"taskId": task_id, "status": "completed"})
        if not completed:
            return reply(finish)
        if not completed[-1].ok:  # refused (e.g. a TaskCompleted hook): retry, then report
            return self._completion_refused(task_id, completed, finish)
        return reply(
            text(f"Done with task #{task_id}."),
            tool_use(
                "SendMessage",
                {
                    "type": "message",
                    "recipient": "team-lead",
                    "content": findings,
                    "summary": f"Task #{task_id} done",
                },
            ),
        )

    def _plan_feedback(self) -> str:
        """The feedback of the last rejection of this teammate's plan ("" if none)."""
        rejected = [m.text for m in self.history.incoming if "Your plan was rejected" in m.text]
        return _feedback(rejected[-1]) if rejected else ""

    def _completion_refused(self, task_id: str, tries: list[Call], finish: Any) -> ResponsePlan:
        why = " ".join((tries[-1].result or "refused").split())[:300]
        if len(tries) < COMPLETION_TRIES:
            return reply(text(f"Addressed the feedback ({why}); completing again."), finish)
        told = [
            c
            for c in self.history.calls_named("SendMessage", tries[-1].index)
            if c.input.get("recipient") == "team-lead"
        ]
        if told:
            return reply(text(f"Task #{task_id} stays open: {why}"))
        return reply(
            text(f"I could not complete task #{task_id}."),
            tool_use(
                "SendMessage",
                {
                    "type": "message",
                    "recipient": "team-lead",
                    "content": f"Task #{task_id} stays open: {why}",
                    "summary": f"Task #{task_id} still open",
                },
            ),
        )


# ---------------------------------------------------------------------------- findings


def _feedback(rejection: str) -> str:
    """The feedback line of a rejected plan's message."""
    return rejection.split("Feedback:", 1)[-1].split("\n", 1)[0].strip()


def _paths(call: Call, cwd: str) -> list[str]:
    lines = (call.result or "").splitlines()
    paths = [line.strip() for line in lines if line.strip().startswith("/")]
    return sorted(_relative(p, cwd) for p in paths)


def _relative(path: str, cwd: str) -> str:
    prefix = cwd.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def _inventory(files: list[str]) -> str:
    if not files:
        return "No matching files were found in the working directory."
    folders = sorted({str(PurePath(f).parent) for f in files})
    shown = ", ".join(files[:12]) + (f" and {len(files) - 12} more" if len(files) > 12 else "")
    return f"Found {len(files)} files in {len(folders)} folder(s): {shown}."


def _line_count(call: Call, counted: int) -> str:
    """The sentence a ``wc -l`` adds to the inventory (or why there are no counts: the
    person may have denied the command)."""
    if not call.ok:
        reason = (call.result or "no answer").strip().splitlines()[0][:160]
        return f"Lines not counted: {reason}."
    numbers = [
        (int(m.group(1)), m.group(2).strip())
        for m in re.finditer(r"^\s*(\d+)\s+(\S.*)$", call.result or "", re.M)
    ]
    total = next((n for n, name in numbers if name == "total"), None)
    if total is None:
        total = sum(n for n, _ in numbers)
    return f"{total} lines in the {counted} file(s) counted."


def _definitions(call: Call, cwd: str) -> str:
    counts: list[tuple[int, str]] = []
    for line in (call.result or "").splitlines():
        match = re.match(r"(/.+):(\d+)$", line.strip())
        if match:
            counts.append((int(match.group(2)), _relative(match.group(1), cwd)))
    if not counts:
        return "No top-level definitions were found."
    counts.sort(key=lambda item: (-item[0], item[1]))
    total = sum(n for n, _ in counts)
    top = ", ".join(f"{path} ({n})" for n, path in counts[:8])
    return f"{total} definitions in {len(counts)} files; most in: {top}."


def _summaries(reads: list[Call], cwd: str, total: int) -> str:
    if not reads:
        return "No files to summarize."
    lines = []
    for call in reads:
        path = _relative(str(call.input.get("file_path", "?")), cwd)
        lines.append(f"- `{path}`: {_purpose(call.result or '')}")
    more = f" ({total - len(reads)} more not read)" if total > len(reads) else ""
    return f"What the files do{more}:\n" + "\n".join(lines)


def _purpose(numbered: str) -> str:
    content = []
    for line in numbered.splitlines():
        parts = line.split("\t", 1)
        content.append(parts[1] if len(parts) == 2 else line)
    body = "\n".join(content)
    doc = re.search(r'^\s*(?:[rub]*)("""|\'\'\')\s*(.+?)\s*(?:\1|$)', body, re.S | re.M)
    if doc:
        return doc.group(2).strip().splitlines()[0][:120]
    for line in content:
        stripped = line.strip().lstrip("#").strip()
        if stripped and not stripped.startswith(("!", "-*-", "from ", "import ")):
            return stripped[:120]
    return "(empty or no description)"


def _search_root(pattern: str) -> dict[str, str]:
    """Grep's ``path`` for a Glob pattern under a folder (``app/core/**/*.py``): that folder."""
    folder = pattern.split("**", 1)[0].rstrip("/") if "**" in pattern else ""
    return {"path": folder} if folder else {}


def _search(pattern: str, haystack: str) -> str | None:
    found = re.search(pattern, haystack)
    return found.group(1).strip() if found else None
