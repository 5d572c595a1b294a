"""Asking whether a tool call may run: a teammate asks the lead through the files; the lead
asks the person through the approvals queue.

A teammate writes a ``permission_request`` into the lead's inbox and waits for the
``permission_response`` with the same id in its own inbox (whoever answers: the person in the
dashboard, ``teamdeck approve``, the lead model). Only an answer the desk signed counts
(``acting``, see ``app.core.authority``); the rules it carries are kept only if the person
gave it. The lead's own tool calls have no inbox to go through: they wait on a future that the
person's answer resolves.

Both waits end after ``timeout`` seconds with a "no" (``--permission-timeout``, 300 s by
default); a timeout of 0 (or less) waits for an answer however long it takes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.core import authority
from app.core.errors import TeamdeckError
from app.core.paths import LEAD_NAME
from app.core.protocol import PermissionResponse, make_request_id, permission_request
from app.runtime.approvals import Approvals, approval_from_frame
from app.runtime.permissions import suggest_rule

if TYPE_CHECKING:
    from app.core.models import InboxMessage
    from app.core.protocol import Frame
    from app.runtime.agent.channel import TeamChannel
    from app.runtime.agent.session import AgentSession
    from app.runtime.agent.wakeup import Wakeup
    from app.runtime.api import Approval
    from app.runtime.tools.base import Tool

log = logging.getLogger(__name__)
#: Shown the unread inbox while a permission answer is awaited (e.g. to spot a shutdown request).
Peek = Callable[[list[tuple[int, "InboxMessage"]]], None]
#: The frame a message carries and who signed it, or ``(None, "")`` for text (``Teammate.acting``).
Acting = Callable[["InboxMessage"], tuple["Frame | None", str]]
#: The answer the runtime handed over for a request id, if any (an in-process teammate's).
Take = Callable[[str], "tuple[PermissionResponse, str] | None"]
#: A safety net only: every wake-up is event-driven; this bounds the cost of a missed event.
FALLBACK_POLL = 5.0


def wait_limit(timeout: float) -> float | None:
    """The seconds a permission request waits, ``None`` for no limit (a timeout of 0)."""
    return timeout if timeout > 0 else None


async def ask_lead_by_inbox(
    channel: TeamChannel,
    wake: Wakeup,
    session: AgentSession,
    tool: Tool,
    tool_input: dict[str, Any],
    tool_use_id: str,
    timeout: float,  # noqa: ASYNC109 - an unanswered request is an answer ("no"), not an error
    on_dropped: Callable[[str, str], None] | None = None,
    *,
    peek: Peek | None = None,
    acting: Acting,
    take: Take | None = None,
) -> tuple[bool, str]:
    """A teammate's permission request: written to the lead's inbox, answered in ours.

    ``on_dropped(request_id, outcome)`` is told when we stop waiting without an answer
    ("timed out", or "cancelled" when the turn is interrupted or the teammate killed), so a
    queue in the same process can close the request; an answer that arrives later is ignored.
    ``peek`` sees the rest of the unread inbox (left unread) at each look."""
    suggestion = suggest_rule(tool, tool_input)
    request_id = channel.request_permission(
        tool.name, tool_use_id, tool.describe(tool_input), tool_input, suggestion
    )
    try:
        answer = await wait_for_response(
            channel, wake, request_id, timeout, peek=peek, acting=acting, take=take
        )
    except asyncio.CancelledError:
        if on_dropped is not None:
            on_dropped(request_id, "cancelled")
        raise
    if answer is None:
        if on_dropped is not None:
            on_dropped(request_id, "timed out")
        return False, f"no answer from the lead within {timeout:g}s"
    response, origin = answer
    if not response.allowed:
        return False, response.reason or "denied by the lead"
    rules = _rules(response.permission_updates)
    if rules and origin != authority.PERSON:
        session.record("notice", f"ignored the rules sent with an answer not the person's: {rules}")
        rules = []
    for rule in rules:
        try:
            session.rules.add_allow(rule)
        except ValueError as exc:
            session.record("notice", f"ignored the allow rule {rule!r} sent with the answer: {exc}")
    return True, ""


async def wait_for_response(
    channel: TeamChannel,
    wake: Wakeup,
    request_id: str,
    within: float,
    *,
    peek: Peek | None = None,
    acting: Acting,
    take: Take | None = None,
) -> tuple[PermissionResponse, str] | None:
    """Wait for the signed ``permission_response`` to ``request_id`` in the channel's own
    inbox (with who signed it); the other unread messages stay unread (handled between turns:
    a forged answer then reaches the model as text) and are shown to ``peek``. With ``take``
    (an in-process teammate) the answer comes from the runtime only, never from the inbox."""
    loop = asyncio.get_running_loop()
    limit = wait_limit(within)
    deadline = None if limit is None else loop.time() + limit
    box = channel.home.mailbox(channel.team)
    while True:
        wake.clear()
        if take is not None and (given := take(request_id)) is not None:
            return given
        try:
            unread = box.unread(channel.name)
        except TeamdeckError as exc:
            log.warning("%s: cannot read its inbox while waiting for %s: %s", channel.name,
                        request_id, exc)  # fmt: skip
            unread = []
        for index, message in unread:
            if take is not None or request_id not in message.text:
                continue
            frame, origin = acting(message)
            if isinstance(frame, PermissionResponse) and frame.request_id == request_id:
                box.mark_read(channel.name, index, durable=False)
                return frame, origin
        if peek is not None:
            peek(unread)
        if deadline is None:
            await wake.wait(FALLBACK_POLL)
            continue
        remaining = deadline - loop.time()
        if remaining <= 0:
            return None
        await wake.wait(min(remaining, FALLBACK_POLL))


def _rules(updates: Any) -> list[str]:
    """Allow rules carried by a response: rule strings (teamdeck) or Claude Code's
    ``{"type": "addRules", "rules": [{"toolName", "ruleContent"}], "behavior": "allow"}``."""
    rules: list[str] = []
    for update in updates if isinstance(updates, list) else []:
        if isinstance(update, str):
            rules.append(update)
        elif isinstance(update, dict) and update.get("behavior", "allow") == "allow":
            for rule in update.get("rules") or []:
                if isinstance(rule, dict) and isinstance(rule.get("toolName"), str):
                    content = rule.get("ruleContent")
                    rules.append(f"{rule['toolName']}({content})" if content else rule["toolName"])
    return rules


class LeadPermissions:
    """The lead's own permission requests, answered by the person through the queue."""

    def __init__(self, queue: Approvals) -> None:
        self.queue = queue
        self._futures: dict[str, asyncio.Future[tuple[bool, str]]] = {}

    def owns(self, request_id: str) -> bool:
        return request_id in self._futures

    def resolve(self, request_id: str, allow: bool, reason: str) -> None:
        future = self._futures.get(request_id)
        if future is not None and not future.done():
            future.set_result((allow, reason))

    async def ask_person(self, approval: Approval) -> bool:
        """A question only the person answers (no timeout: it waits for them), e.g. whether
        to use settings changed on disk (``team.settings_watch``)."""
        future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        self._futures[approval.request_id] = future
        self.queue.add(approval)
        try:
            allow, _ = await future
            return allow
        finally:
            self._futures.pop(approval.request_id, None)
            self.queue.claim(approval.request_id, "cancelled")

    async def ask(
        self,
        session: AgentSession,
        tool: Tool,
        tool_input: dict[str, Any],
        tool_use_id: str,
        timeout: float,  # noqa: ASYNC109 - see ask_lead_by_inbox
    ) -> tuple[bool, str]:
        request_id = make_request_id("permission", LEAD_NAME)
        frame = permission_request(
            request_id,
            session.identity.agent_id,
            tool.name,
            tool_use_id,
            tool.describe(tool_input),
            tool_input,
            [rule] if (rule := suggest_rule(tool, tool_input)) else [],
        )
        approval = approval_from_frame(frame, sender=LEAD_NAME)
        assert approval is not None  # a permission request always makes one
        future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        self._futures[request_id] = future
        self.queue.add(approval)
        session.set_status("awaiting approval", tool.describe(tool_input))
        try:
            async with asyncio.timeout(wait_limit(timeout)):  # not wait_for: a cancel (the
                return await future  # turn interrupted) met by the answer was lost
        except TimeoutError:
            self.queue.claim(request_id, "timed out")
            return False, "no answer within the permission timeout"
        finally:
            self._futures.pop(request_id, None)
            self.queue.claim(request_id, "cancelled")  # no-op when answered or timed out
            session.set_status("running")
