"""``teamdeck approvals`` / ``approve`` / ``reject``: answer a team's requests from a script.

Works on any home (``--home``, ``--claude``) through the files (see
``app.runtime.by_files.steering``): a request is pending while no response with its id exists in the
team's inboxes, and answering one that was answered meanwhile fails with one line (exit 1).

Requests a live Claude Code raised through teamdeck's hooks (``teamdeck claude setup``) are held
by the teamdeck listening for them (the ``--claude`` dashboard, ``teamdeck claude listen``):
they are listed and answered through its socket (``app.runtime.bridge.client``), ids ``cc-...``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli import format as fmt
from app.cli.home import resolve_team
from app.core.errors import NotFoundError
from app.core.paths import USER_NAME
from app.display.request_text import call_words, request_words, subject
from app.runtime.bridge import client as bridge

if TYPE_CHECKING:  # the requests and their answers load when a command runs, not for --help
    from app.core.home import Home
    from app.runtime.by_files.requests import FileRequest

Handler = Callable[["Home", argparse.Namespace], int]


def _teams(home: Home, args: argparse.Namespace) -> list[str]:
    from app.runtime.by_files.requests import team_names

    return [resolve_team(home, args.team)] if args.team else team_names(home)


def request_json(request: FileRequest) -> dict[str, Any]:
    frame = request.frame
    data: dict[str, Any] = {
        "team": request.team,
        "requestId": request.approval.request_id,
        "kind": request.approval.kind,
        "agent": request.requester,
        "title": request.approval.title,
        "timestamp": request.timestamp,
        "inbox": request.inbox,
    }
    if request.approval.kind == "plan":
        data["planContent"] = getattr(frame, "plan_content", "")
    else:
        data["toolName"] = getattr(frame, "tool_name", "")
        data["input"] = getattr(frame, "input", None)
    return data


def _age(request: FileRequest) -> str:
    seconds = max(0, int(time.time() - request.approval.created_at))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


def _held(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The requests a listening teamdeck holds for Claude Code's hooks (``[]``: none, or no
    teamdeck listening)."""
    try:
        held = bridge.pending_requests() or []
    except OSError as exc:
        print(f"teamdeck: warning: {fmt.clean(str(exc))}", file=sys.stderr)
        return []
    return [r for r in held if not args.team or r.get("team") == args.team]


def _held_row(request: dict[str, Any]) -> tuple[str, ...]:
    seconds = max(0, int(time.time() - float(request.get("timestamp") or time.time())))
    age = f"{seconds}s" if seconds < 60 else f"{seconds // 60}m"
    tool_input = request.get("input")
    if request.get("kind") == "permission" and isinstance(tool_input, dict) and subject(tool_input):
        what = call_words(str(request.get("toolName") or ""), tool_input, fmt.CELL_WIDTH)
    else:
        what = str(request.get("title") or "").split(": ", 1)[-1]
    team = str(request.get("team") or "")
    return (team, str(request.get("agent")), str(request.get("kind")), age, what)


def cmd_approvals(home: Home, args: argparse.Namespace) -> int:
    from app.runtime.by_files.requests import scan_team

    held = _held(args)
    pending: list[FileRequest] = []
    try:
        teams = _teams(home, args)
    except NotFoundError:
        if not held:
            raise
        teams = []  # a Claude Code session team with no files (yet): its held requests only
    for team in teams:
        found = scan_team(home, team)
        pending.extend(found.pending)
        for message in found.errors.values():
            print(f"teamdeck: warning: {fmt.clean(message)}", file=sys.stderr)
    if args.json:
        listed = [*held, *(request_json(r) for r in pending)]
        print(json.dumps(listed, indent=2, ensure_ascii=False))
        return 0
    if not pending and not held:
        print("no pending requests")
        return 0
    # The id is what a person types next: it is never cut (the table cuts long cells).
    ids = ["ID", *(fmt.clean(str(r.get("requestId"))) for r in held)]
    ids += [fmt.clean(r.approval.request_id) for r in pending]
    width = max(len(i) for i in ids)
    rows = [_held_row(r) for r in held]
    rows += [
        (r.team, r.requester, r.approval.kind, _age(r), request_words(r.approval, fmt.CELL_WIDTH))
        for r in pending
    ]
    lines = fmt.table(("TEAM", "AGENT", "KIND", "AGE", "WHAT"), rows).splitlines()
    # a Claude Code session's request: its session, team and folder, uncut, under its row
    origins = [None, *(r.get("origin") for r in held), *(None for _ in pending)]
    for rid, line, origin in zip(ids, lines, origins, strict=True):
        print(f"{rid.ljust(width)}  {line}")
        if origin:
            print(f"{' ' * width}  from {fmt.clean(str(origin))}")
    return 0


def _answer_held(args: argparse.Namespace, approve: bool) -> int | None:
    """Answer a request a listening teamdeck holds; ``None`` when it holds no such request."""
    held = {str(r.get("requestId")): r for r in _held(args)}
    if args.id not in held:
        if str(args.id).startswith("cc-"):  # a bridge id no longer held: the bridge says why
            try:
                ok, message = bridge.answer(args.id, allow=approve)
            except OSError:
                return None
            if not ok:
                raise ValueError(message)
            print(message)  # it was held again meanwhile (listed after the look above)
            return 0
        return None
    always = bool(getattr(args, "always", False))
    request = held[args.id]
    if always and request.get("kind") != "permission":
        raise ValueError(f"--always is for permission requests; {args.id} is a plan (nothing sent)")
    rule = getattr(args, "rule", None)
    if rule is not None and not always:
        raise ValueError("--rule goes with --always (the rule it adds): nothing sent")
    tool_input = None
    command = getattr(args, "edited_command", None)
    if command is not None:
        given = request.get("input")
        if request.get("toolName") != "Bash" or not isinstance(given, dict):
            raise ValueError(
                f"--command is for a Bash request; {args.id} is not one (nothing sent)"
            )
        if not command.strip():
            raise ValueError("--command is empty: nothing sent")
        tool_input = {**given, "command": command}
    ok, message = bridge.answer(
        args.id,
        allow=approve,
        always=always,
        feedback=args.feedback,
        rule=rule,
        tool_input=tool_input,
    )
    if not ok:
        raise ValueError(message)
    print(message)
    return 0


def _answer(home: Home, args: argparse.Namespace, approve: bool) -> int:
    from app.core.models import InboxMessage, now_iso
    from app.core.protocol import PermissionRequest
    from app.runtime.by_files.requests import find_request
    from app.runtime.by_files.steering import (
        AlreadyAnsweredError,
        answer_request,
        permission_response_text,
        plan_response_text,
    )

    held = _answer_held(args, approve)
    if held is not None:
        return held
    for option, dest in (("rule", "rule"), ("command", "edited_command")):
        if getattr(args, dest, None) is not None:
            raise ValueError(
                f"--{option} is for a request teamdeck holds for Claude Code's hooks (ids cc-...); "
                f"{args.id} is not one (nothing sent)"
            )
    team = _teams(home, args)[0] if args.team else None
    request = find_request(home, args.id, team)
    kind = request.approval.kind
    feedback = args.feedback
    if getattr(args, "always", False) and kind != "permission":
        raise ValueError(
            f"--always is for permission requests; {args.id} is a {kind} request (nothing sent)"
        )

    def text_for(r: FileRequest) -> str:
        if not isinstance(r.frame, PermissionRequest):
            return plan_response_text(r.approval.request_id, approve, feedback)
        always = bool(getattr(args, "always", False))
        return permission_response_text(
            r.frame, r.approval, allow=approve, always=always, feedback=feedback
        )

    try:
        answer_request(home, request.team, args.id, text_for)
    except AlreadyAnsweredError:
        raise AlreadyAnsweredError(f"request {args.id} was already answered") from None
    if approve and feedback and feedback.strip():
        # An approval carries no feedback in Claude Code's shape: it follows as a message.
        note = InboxMessage(sender=USER_NAME, text=feedback.strip(), timestamp=now_iso())
        home.mailbox(request.team).append(request.requester, note)
    verb = {("plan", True): "approved", ("plan", False): "rejected"}.get(
        (kind, approve), "allowed" if approve else "denied"
    )
    if approve and getattr(args, "always", False):
        verb = "always allowed"
    print(f"{verb} {request.requester}'s {kind} request {args.id} (team {request.team})")
    return 0


def cmd_approve(home: Home, args: argparse.Namespace) -> int:
    return _answer(home, args, True)


def cmd_reject(home: Home, args: argparse.Namespace) -> int:
    return _answer(home, args, False)


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add the three commands to the ``teamdeck`` parser; returns the read-only handlers."""
    sub = command(commands, "approvals", "list pending plan and permission requests", cmd_approvals)
    sub.add_argument("--team", metavar="T", help="only this team (default: every team)")
    sub.add_argument("--json", action="store_true", help="print JSON")
    for name, handler, help_text in (
        ("approve", cmd_approve, "approve a plan or allow a permission request"),
        ("reject", cmd_reject, "reject a plan or deny a permission request"),
    ):
        sub = command(commands, name, help_text, handler)
        sub.add_argument("id", metavar="ID", help="the request id (see teamdeck approvals)")
        sub.add_argument("--team", metavar="T", help="the team (default: search every team)")
        sub.add_argument("--feedback", metavar="F", help="a word for the teammate")
        if name == "approve":
            sub.add_argument(
                "--always", action="store_true", help="permission: also allow its rule from now on"
            )
            sub.add_argument(
                "--rule",
                metavar="R",
                help="with --always: the rule to add (a Claude Code request's choices: "
                "teamdeck approvals --json, ruleChoices)",
            )
            sub.add_argument(
                "--command",
                dest="edited_command",  # not ``command``: the top parser's name for the subcommand
                metavar="C",
                help="a Claude Code Bash request: run this command instead (the edited command)",
            )
    return {cmd_approvals}
