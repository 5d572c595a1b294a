"""``teamdeck claude setup|listen`` and ``teamdeck hook EVENT``: the bridge to a live Claude Code.

``setup`` installs teamdeck's hook commands into Claude Code's settings (``--project``: this
project's ``.claude/settings.local.json``), ``--remove`` takes them out again (byte for byte
when the file is unchanged), ``--status`` says what is installed
(``app.runtime.bridge.install``). ``listen`` answers the hooks without the dashboard: it prints
each request and event as it arrives, and ``teamdeck approve ID`` / ``reject ID`` from another
terminal answer them. ``hook`` is the command the hooks run (``app.cli.hook``; the ``teamdeck``
script dispatches it before this parser is even loaded).
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.core.home import Home

Handler = Callable[["Home", argparse.Namespace], int]


def cmd_setup(home: Home, args: argparse.Namespace) -> int:
    from app.runtime.bridge import install, wire

    target = install.settings_target(project=args.project)
    own = wire.teamdeck_home()
    if args.status:
        for line in install.status(target, own):
            print(line)
        listening = _listening()
        print("a teamdeck is listening for the hooks" if listening else "no teamdeck is listening")
        return 0
    if args.remove:
        print(install.remove(target, own))
        return 0
    print(install.install(target, own))
    # The dashboard first: a hook with nobody listening lets Claude Code ask in its own terminal.
    print("next: `teamdeck --claude` (or `teamdeck claude listen`), then start Claude Code")
    return 0


def _listening() -> bool:
    from app.runtime.bridge import wire

    try:
        wire.connect(timeout=0.5).close()
    except OSError:
        return False
    return True


def _event_line(event: Any) -> str:
    data = event.data
    who = event.sender.agent
    what = data.get("tool_name") or data.get("notification_type") or data.get("source") or ""
    line = f"{event.event} {who}"
    if what:
        line += f" {what}"
    if event.request_id:
        tool_input = data.get("tool_input")
        detail = json.dumps(tool_input, ensure_ascii=False) if tool_input else ""
        line = f"request {event.request_id}: {who} {data.get('tool_name', '')} {detail}"
        line += f"  (teamdeck approve {event.request_id} | reject {event.request_id})"
    return line


def cmd_listen(home: Home, args: argparse.Namespace) -> int:
    """Serve the hooks until interrupted; one line per event (``--json``: the event)."""
    from app.display.agent_text import shown
    from app.runtime.bridge.server import Bridge, BridgeServer

    printed = threading.Lock()

    def show(event: Any) -> None:
        if args.json:
            text = json.dumps(
                {
                    "event": event.event,
                    "agent": event.sender.agent,
                    "team": event.sender.team,
                    "requestId": event.request_id,
                    "input": event.data,
                },
                ensure_ascii=False,
            )
        else:
            text = shown(_event_line(event))
        with printed:
            print(text, flush=True)

    server = BridgeServer(Bridge(on_event=show))
    server.start()
    print(f"listening for Claude Code's hooks on {server.path} (ctrl+c stops)", flush=True)
    try:
        threading.Event().wait()
    finally:
        server.stop()
    return 0


def cmd_rules(home: Home, args: argparse.Namespace) -> int:
    """The rules teamdeck keeps for pane teammates (``kept_rules``); ``--remove RULE``."""
    import time

    from app.runtime.bridge import kept_rules, wire

    path = kept_rules.rules_path(wire.socket_path().parent)
    if args.remove:
        if not kept_rules.remove(path, args.remove):
            raise ValueError(f"no rule {args.remove!r} is kept (see teamdeck claude rules)")
        print(f"removed rule {args.remove}")
        return 0
    kept = kept_rules.load(path)
    if args.json:
        print(json.dumps(kept, indent=2, ensure_ascii=False))
        return 0
    if not kept:
        print(f"no rules kept by teamdeck ({path})")
        return 0
    for entry in kept:
        added = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(entry.get("added") or 0)))
        print(f"{entry['rule']}  (added {added}; {entry.get('origin') or 'origin unknown'})")
    return 0


def cmd_hook(home: Home, args: argparse.Namespace) -> int:
    from app.cli.hook import main as hook_main

    return hook_main([args.event])


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``claude`` (setup, listen) and ``hook``; none of them only looks at a team home."""
    claude = command(commands, "claude", "steer a live Claude Code through its hooks")
    actions = claude.add_subparsers(dest="claude_command", metavar="ACTION", required=True)
    sub = command(
        actions, "setup", "install teamdeck's hooks into Claude Code's settings", cmd_setup
    )
    sub.add_argument(
        "--project",
        action="store_true",
        help="this project's .claude/settings.local.json (default: the user's settings.json)",
    )
    what = sub.add_mutually_exclusive_group()
    what.add_argument("--remove", action="store_true", help="take them out (byte for byte)")
    what.add_argument("--status", action="store_true", help="say what is installed")
    sub = command(actions, "listen", "answer Claude Code's hooks without the dashboard", cmd_listen)
    sub.add_argument("--json", action="store_true", help="one JSON object per event")
    sub = command(
        actions,
        "rules",
        "the rules teamdeck keeps for pane teammates (their hooks take none)",
        cmd_rules,
    )
    sub.add_argument("--remove", metavar="RULE", help="take this rule out")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = command(
        commands, "hook", "the command Claude Code's hooks run (stdin: the event)", cmd_hook
    )
    sub.add_argument("event", metavar="EVENT")
    return set()
