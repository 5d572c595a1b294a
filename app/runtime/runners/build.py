"""Building one teammate (session, channel, loop) from its spec: the same in every mode.

The in-process runner builds it on the dashboard's event loop; ``teamdeck agent`` builds it
in a process of its own. Only where the session's events go differs (``emit``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from app.runtime.agent.channel import TeamChannel
from app.runtime.agent.prompts import teammate_prompt
from app.runtime.agent.session import AgentSession, Emit
from app.runtime.agent.teammate import Teammate
from app.runtime.permissions import PermissionRules, RulesFeed
from app.runtime.runners.base import TeammateSpec
from app.runtime.tools import teammate_tools
from app.runtime.tools.base import AgentIdentity

if TYPE_CHECKING:
    import anthropic

    from app.core import Home
    from app.core.authority import TeamKey
    from app.runtime.agent.channel import Sent
    from app.runtime.sandbox import SandboxConfig


def build_teammate(
    spec: TeammateSpec,
    *,
    home: Home,
    client: anthropic.AsyncAnthropic,
    emit: Emit,
    rules: PermissionRules,
    backend: str,
    permission_timeout: float = 300.0,
    on_sent: Callable[[Sent], None] | None = None,
    on_exit: Callable[[Teammate], None] | None = None,
    on_request_dropped: Callable[[str, str], None] | None = None,
    gate: Callable[[AgentSession], Awaitable[None]] | None = None,
    sandbox: SandboxConfig | None = None,
    rules_feed: RulesFeed | None = None,
    key: TeamKey | None = None,
    bypass_allowed: Callable[[], bool] = lambda: False,
) -> Teammate:
    """A teammate ready to ``run()``; ``rules`` are copied, and follow the run's through
    ``rules_feed`` (what the person accepts reaches it at its next tool call)."""
    identity = AgentIdentity(
        name=spec.name,
        team=spec.team,
        color=spec.color,
        model=spec.model,
        cwd=spec.cwd,
        is_lead=False,
        agent_type=spec.agent_type,
        plan_mode_required=spec.plan_mode,
    )
    session = AgentSession(
        identity,
        home=home,
        client=client,
        model=spec.model,
        system_prompt=teammate_prompt(
            name=spec.name,
            team=spec.team,
            cwd=spec.cwd,
            config_path=home.layout.config_path(spec.team),
            tasks_path=home.layout.task_dir(spec.team),
            plan_mode=spec.plan_mode,
        ),
        tools=teammate_tools(),
        emit=emit,
        mode=spec.mode,
        rules=PermissionRules(allow=list(rules.allow), ask=list(rules.ask), deny=list(rules.deny)),
    )
    session.gate = gate
    session.sandbox = sandbox
    session.rules_feed = rules_feed
    channel = TeamChannel(
        home, spec.team, spec.name, spec.color, backend=backend, on_sent=on_sent, key=key
    )
    return Teammate(
        session,
        channel,
        spec.prompt,
        permission_timeout=permission_timeout,
        on_exit=on_exit,
        on_request_dropped=on_request_dropped,
        bypass_allowed=bypass_allowed,
    )
