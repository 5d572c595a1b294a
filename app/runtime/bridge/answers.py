"""What a hook prints to answer Claude Code: exactly the JSON 2.1.332 accepts (observed, see
``docs/claude-code-2.1.332.md``, "PermissionRequest stdout that Claude Code accepts").

- ``PermissionRequest`` (the lead's own calls, in-process teammates'):
  ``{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {...}}}`` with
  ``{"behavior": "allow", "updatedInput": <the input>}``, plus ``updatedPermissions``
  (``addRules``) for "always", or ``{"behavior": "deny", "message": <the person's words>}``.
- ``PreToolUse`` (pane teammates, whose PermissionRequest hook never fires; and every
  teammate's ``ExitPlanMode``): ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "allow"|"deny", "permissionDecisionReason": ...}}``, with
  ``updatedInput`` for a command the person edited. An approved plan
  prints nothing: the lead then approves it as it always does (a deny is the only plan answer
  the teammate's hook can give that the lead does not override).
- Nothing at all (``""``): no decision, Claude Code asks by itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

DENIED = "Denied in teamdeck."
PLAN_REJECTED = "The person rejected this plan in teamdeck."
#: Where an "always allow" rule goes: the user's settings (the destination observed to work).
RULE_DESTINATION = "userSettings"

_RULE = re.compile(r"^([A-Za-z0-9_.:-]+)(?:\((.*)\))?$", re.DOTALL)


def rule_value(rule: str) -> dict[str, str]:
    """``"Bash(touch:*)"`` -> ``{"toolName": "Bash", "ruleContent": "touch:*"}``."""
    match = _RULE.match(rule.strip())
    if not match:
        return {"toolName": rule.strip()}
    name, content = match.group(1), match.group(2)
    return {"toolName": name, "ruleContent": content} if content else {"toolName": name}


def _dump(output: dict[str, Any]) -> str:
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)


def permission_request(
    *,
    allow: bool,
    tool_input: dict[str, Any] | None = None,
    rule: str | None = None,
    message: str | None = None,
) -> str:
    """The answer to a ``PermissionRequest`` hook (``rule``: "always allow" adds it)."""
    decision: dict[str, Any]
    if allow:
        decision = {"behavior": "allow", "updatedInput": tool_input or {}}
        if rule:
            decision["updatedPermissions"] = [
                {
                    "type": "addRules",
                    "rules": [rule_value(rule)],
                    "behavior": "allow",
                    "destination": RULE_DESTINATION,
                }
            ]
    else:
        decision = {"behavior": "deny", "message": (message or "").strip() or DENIED}
    return _dump({"hookEventName": "PermissionRequest", "decision": decision})


def pre_tool_use(
    *,
    allow: bool,
    plan: bool = False,
    message: str | None = None,
    rule: str | None = None,
    updated_input: dict[str, Any] | None = None,
) -> str:
    """The answer to a held ``PreToolUse`` hook (``plan``: the call is ``ExitPlanMode``;
    ``rule``: allowed by a rule teamdeck keeps for the person; ``updated_input``: the input as
    the person edited it, which is what runs)."""
    if allow:
        if plan:
            return ""  # the lead approves the plan by itself once it is sent
        reason = "teamdeck: allowed by the person"
        if rule:
            reason = f"teamdeck: allowed by the person's rule {rule}"
        output: dict[str, Any] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": reason,
        }
        if updated_input is not None:
            output["updatedInput"] = updated_input
        return _dump(output)
    words = (message or "").strip() or (PLAN_REJECTED if plan else DENIED)
    prefix = "teamdeck: the person rejected this plan: " if plan else "teamdeck: "
    return _dump(
        {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": prefix + words,
        }
    )
