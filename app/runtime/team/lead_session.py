"""The lead's own session: who the lead is, the tools and prompt of its permission mode, and
who answers the permission asks of its own tool calls.

The lead is ``team-lead`` in the team's files and runs in the dashboard's (or the headless
runner's) process. Its tools and system prompt follow its permission mode (delegate mode keeps
only the coordination tools, and its prompt names the team); bypassPermissions is refused unless
the person allowed it for the run. Its own tool calls are asked of the person through the
approvals queue, never of the lead model itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.core import Home
from app.core.paths import LEAD_NAME
from app.runtime.agent.permission_flow import LeadPermissions
from app.runtime.agent.prompts import lead_prompt
from app.runtime.agent.session import AgentSession
from app.runtime.api import Decider
from app.runtime.permissions import PermissionMode, PermissionRules, parse_mode, tools_for_mode
from app.runtime.sandbox import SandboxConfig
from app.runtime.team.crew import BYPASS, BypassNotAllowedError
from app.runtime.tools import lead_tools
from app.runtime.tools.base import AgentIdentity, TeamServices, Tool

if TYPE_CHECKING:
    import anthropic

    from app.runtime.events import RuntimeEvent


class LeadHost(Protocol):
    """What the lead's session takes from the runtime that runs it (``team.runtime``)."""

    home: Home
    cwd: Path
    model: str
    client: anthropic.AsyncAnthropic
    rules: PermissionRules
    decider: Decider
    headless: bool
    allow_bypass: bool
    permission_timeout: float
    lead_permissions: LeadPermissions
    sandbox: SandboxConfig | None

    def _emit(self, event: RuntimeEvent) -> None: ...

    async def gate(self, session: AgentSession) -> None: ...


def new_lead_session(host: LeadHost, mode: str, services: TeamServices) -> AgentSession:
    """The lead's session, in permission mode ``mode``, with no team yet."""
    identity = AgentIdentity(
        name=LEAD_NAME,
        team=None,
        color="blue",
        model=host.model,
        cwd=host.cwd,
        is_lead=True,
        agent_type=LEAD_NAME,
    )

    async def ask(
        session: AgentSession, tool: Tool, tool_input: dict[str, Any], tool_use_id: str
    ) -> tuple[bool, str]:
        if host.decider == "lead" or host.headless:
            return False, "no one can approve the lead's own tool calls here; add an allow rule"
        return await host.lead_permissions.ask(
            session, tool, tool_input, tool_use_id, host.permission_timeout
        )

    session = AgentSession(
        identity,
        home=host.home,
        client=host.client,
        model=host.model,
        system_prompt=prompt_for(host, mode, None),
        tools=tools_for_mode(lead_tools(), parse_mode(mode)),
        emit=host._emit,
        mode=mode,
        rules=host.rules,
        services=services,
        ask_permission=ask,
    )
    session.gate = host.gate
    session.sandbox = host.sandbox
    return session


def set_lead_mode(host: LeadHost, session: AgentSession, mode: str, team: str | None) -> None:
    """Put the lead in ``mode``: its tools and prompt follow. ValueError for an unknown mode,
    or for bypassPermissions when the person has not allowed it."""
    checked = allowed_mode(mode, host.allow_bypass)
    session.tools = tools_for_mode(lead_tools(), checked)
    session.system_prompt = prompt_for(host, checked, team)
    session.set_mode(checked)


def allowed_mode(mode: str, allow_bypass: bool) -> PermissionMode:
    """``mode`` checked: ValueError if unknown, BypassNotAllowedError for bypassPermissions
    when the person has not allowed it for the run."""
    checked = parse_mode(mode)
    if checked == BYPASS and not allow_bypass:
        raise BypassNotAllowedError(
            "bypassPermissions is not allowed for this run (start teamdeck with "
            "--dangerously-skip-permissions, or confirm it in the dashboard)"
        )
    return checked


def prompt_for(host: LeadHost, mode: str, team: str | None) -> str:
    """The lead's system prompt in ``mode`` (the delegate prompt names the team)."""
    return lead_prompt(
        host.cwd,
        decider=host.decider,
        headless=host.headless,
        delegate_team=(team or "your team") if mode == "delegate" else None,
        tasks_path=host.home.layout.tasks_dir,
    )
