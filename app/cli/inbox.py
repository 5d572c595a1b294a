"""``teamdeck send`` and ``teamdeck inbox``: a message into a member's inbox, and an agent's
inbox read, marked read or cleared.

Registered in ``app.cli.main`` by ``register_send`` and ``register_inbox`` (two, so that
``--help`` keeps listing the commands in their order: send, ..., inbox).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli import format as fmt
from app.cli.home import resolve_inbox_agent, resolve_team
from app.cli.output import emit_json
from app.core.paths import USER_NAME, check_raw_name

if TYPE_CHECKING:
    from app.core.home import Home

Handler = Callable[["Home", argparse.Namespace], int]


def cmd_send(home: Home, args: argparse.Namespace) -> int:
    team = resolve_team(home, args.team)
    check_raw_name(args.to, "recipient")
    text = sys.stdin.read().rstrip("\n") if args.text == "-" else args.text
    if not text.strip():
        raise ValueError("message text must not be empty")
    sender = args.sender.strip()
    check_raw_name(sender, "sender")
    config = home.teams.get(team)
    member = config.member(sender) if config else None
    fields: dict[str, Any] = {"from": member.name if member else sender, "text": text}
    if args.summary is not None:
        fields["summary"] = args.summary
    if member is not None and member.color:
        fields["color"] = member.color
    from app.core.models import InboxMessage

    message = InboxMessage.model_validate(fields)
    delivered = home.mailbox(team).send(args.to, message)
    print(f"sent to {delivered} (team {team})")
    return 0


def cmd_inbox(home: Home, args: argparse.Namespace) -> int:
    box = home.mailbox(resolve_team(home, args.team))
    agent = resolve_inbox_agent(box, args.agent)
    if args.clear:  # the seeds' clearMailbox
        if args.unread or args.mark_read:
            args.parser.error("--clear cannot be combined with --unread or --mark-read")
        cleared = box.clear(agent)
        print(f"cleared the inbox of {agent}" if cleared else f"{agent} has no inbox")
        return 0
    shown = list(enumerate(box.read(agent)))
    if args.unread:
        shown = [(i, m) for i, m in shown if not m.read]
    if args.json:
        emit_json([fmt.message_json(i, m) for i, m in shown])
    elif shown:
        for index, message in shown:
            print(fmt.message_line(index, message, agent))
    else:
        print("no unread messages" if args.unread else "no messages")
    if args.mark_read:
        flipped = box.mark_read(agent, [i for i, m in shown if not m.read])
        if not args.json:
            print(f"marked {flipped} message(s) read")
    return 0


def register_send(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``send`` to the ``teamdeck`` parser."""
    send = command(commands, "send", "send a message to a member's inbox", cmd_send)
    send.add_argument("--team", metavar="T", required=True)
    send.add_argument("--to", metavar="NAME", required=True, help="a member, team-lead or user")
    send.add_argument(
        "--from", dest="sender", metavar="NAME", default=USER_NAME, help="default: user"
    )
    send.add_argument("--summary", metavar="S")
    send.add_argument("text", metavar="TEXT", help="the message ('-' reads stdin)")
    return set()


def register_inbox(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``inbox`` to the ``teamdeck`` parser; returns the read-only handlers."""
    inbox = command(commands, "inbox", "read an agent's inbox", cmd_inbox)
    inbox.add_argument("--team", metavar="T", required=True)
    inbox.add_argument("--agent", metavar="NAME", required=True)
    inbox.add_argument("--unread", action="store_true", help="only unread messages")
    inbox.add_argument("--mark-read", action="store_true", help="mark the shown messages read")
    inbox.add_argument("--clear", action="store_true", help="delete every message (clearMailbox)")
    inbox.add_argument("--json", action="store_true", help="print JSON")
    return {cmd_inbox}
