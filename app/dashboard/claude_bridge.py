"""The dashboard's end of the hook bridge (``teamdeck --claude`` after ``teamdeck claude
setup``): it listens on the bridge's socket while it runs, so Claude Code's permission and plan
requests join its approvals queue (answered with its keys, or with ``teamdeck approve`` from
another terminal), and the hooks' lifecycle events reach it as they happen.

The listening itself is ``app.runtime.bridge.server`` (no Textual); this module turns its
callbacks, which come from the server's threads, into messages for the app.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import App
from textual.message import Message

from app.runtime.api import Approval
from app.runtime.bridge.server import Bridge, BridgeServer, HookEvent

#: Events worth a toast of their own (the others only update what is shown).
TOASTS = {
    "SessionStart": "a Claude Code session started",
    "SessionEnd": "a Claude Code session ended",
    "TeammateIdle": "{agent} is idle",
    "SubagentStop": "{agent} finished its turn",
}


class BridgeChanged(Message):
    """The requests the bridge holds changed."""


@dataclass
class BridgeEventArrived(Message):
    """A hook reported an event."""

    event: HookEvent


class BridgeLink:
    """A :class:`Bridge` served on the socket while the app runs."""

    def __init__(self, bridge: Bridge | None = None, server: BridgeServer | None = None) -> None:
        self.bridge = bridge or Bridge()
        self.server = server or BridgeServer(self.bridge)

    def start(self, app: App[None]) -> str | None:
        """Listen, telling ``app``; a warning line when it cannot (another teamdeck does)."""

        def changed() -> None:
            app.post_message(BridgeChanged())

        def arrived(event: HookEvent) -> None:
            app.post_message(BridgeEventArrived(event))

        self.bridge.on_change, self.bridge.on_event = changed, arrived
        try:
            self.server.start()
        except OSError as exc:
            return f"Claude Code's hooks are not answered here: {exc}"
        return None

    def stop(self) -> None:
        """Stop listening: a request still waiting gets no decision (Claude Code asks)."""
        self.bridge.on_change = self.bridge.on_event = None
        self.server.stop()

    def pending(self) -> tuple[Approval, ...]:
        return tuple(self.bridge.pending())


def toast_text(event: HookEvent) -> str | None:
    template = TOASTS.get(event.event)
    return template.format(agent=event.sender.agent) if template else None
