"""Permission options of ``teamdeck tui|demo|run``: modes, rules and the settings files.

    --permission-mode MODE            the lead's mode (default, acceptEdits, plan,
                                      bypassPermissions, dontAsk, delegate)
    --teammate-permission-mode MODE   the teammates' mode (default: the lead's, except that
                                      plan and delegate leave teammates in default)
    --allow RULE / --deny RULE        extra rules (``Bash(git:*)``, ``Read(./src/**)``), on top
                                      of ``permissions.allow/deny`` in the settings files
    --dangerously-skip-permissions    bypassPermissions for the lead (and its teammates);
                                      required for bypassPermissions headless
    --teammate-mode MODE              how teammates run: in-process, process, tmux (default:
                                      the settings' ``teammateMode``, else in-process)
    --permission-timeout SECONDS      how long a permission request waits for an answer before
                                      it is denied (default 300; 0: no limit)

Without ``--permission-mode`` the lead starts in the settings' ``permissions.defaultMode``, else
``default``. In the dashboard, bypassPermissions without ``--dangerously-skip-permissions`` is
only entered after the person confirms it (``runtime_options`` returns the runtime in default
mode and ``ModeOptions.confirm_bypass`` set); headless it is a one-line error. With
``permissions.disableBypassPermissionsMode: "disable"`` in a settings file, asking for
bypassPermissions is a one-line error everywhere (a settings ``defaultMode`` of bypassPermissions
falls back to ``default`` with a warning), and it is never offered afterwards.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.runtime.permissions import PERMISSION_MODES, PermissionRules, Rule
from app.runtime.permissions.settings import load_settings
from app.runtime.sandbox import SandboxConfig
from app.runtime.sandbox.options import add_sandbox_options, sandbox_config

#: ``app.runtime.runners.modes.BACKENDS``, the teammate modes (for ``--help``, which does not
#: load the runners; a test keeps the two equal).
BACKENDS: tuple[str, ...] = ("in-process", "process", "tmux")
BYPASS = "bypassPermissions"
#: Modes a teammate does not inherit from the lead (lead-only or needing the lead's approval).
_NOT_INHERITED = frozenset({"plan", "delegate"})


class ModeError(ValueError):
    """Options that cannot be honoured (one line)."""


def _rule(text: str) -> str:
    try:
        return str(Rule.parse(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: Seconds a permission request waits for an answer before it is denied ("timed out").
DEFAULT_PERMISSION_TIMEOUT = 300.0


def _seconds(text: str) -> float:
    """``--permission-timeout``: a number of seconds, 0 or more (0: no limit)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):  # also NaN
        raise argparse.ArgumentTypeError(f"expected seconds, 0 or more (0: no limit), not {text!r}")
    return value


def add_mode_options(parser: argparse.ArgumentParser) -> None:
    """Add the permission options to a ``tui``/``demo``/``run`` parser."""
    group = parser.add_argument_group("permissions")
    add_sandbox_options(group)  # type: ignore[arg-type]
    group.add_argument(
        "--permission-mode",
        metavar="MODE",
        choices=PERMISSION_MODES,
        help="the lead's permission mode: " + ", ".join(PERMISSION_MODES),
    )
    group.add_argument(
        "--teammate-permission-mode",
        metavar="MODE",
        choices=[m for m in PERMISSION_MODES if m != "delegate"],
        help="the teammates' permission mode (default: the lead's)",
    )
    group.add_argument(
        "--allow",
        metavar="RULE",
        action="append",
        type=_rule,
        default=[],
        help="allow a tool without asking, e.g. 'Bash(git:*)' (repeatable)",
    )
    group.add_argument(
        "--deny",
        metavar="RULE",
        action="append",
        type=_rule,
        default=[],
        help="always deny a tool, e.g. 'Read(./.env)' (repeatable)",
    )
    group.add_argument(
        "--dangerously-skip-permissions",
        action="store_true",
        help="run every tool without asking (bypassPermissions)",
    )
    group.add_argument(
        "--permission-timeout",
        metavar="SECONDS",
        type=_seconds,
        default=DEFAULT_PERMISSION_TIMEOUT,
        help="how long a permission request waits for your answer before it is denied "
        "(default 300; 0: wait however long)",
    )
    parser.add_argument(
        "--teammate-mode",
        metavar="MODE",
        choices=BACKENDS,
        help="how teammates run: in-process (default, or the settings' teammateMode), process "
        "(an OS process each; the team can outlive the dashboard) or tmux (a tmux window each, "
        "in session teamdeck-<team>)",
    )


@dataclass
class ModeOptions:
    """What the options resolve to: keyword arguments for ``TeamRuntime`` plus what the
    dashboard must still do."""

    lead_mode: str = "default"
    teammate_mode: str = "default"
    rules: PermissionRules = field(default_factory=PermissionRules)
    #: The person asked for bypassPermissions in the dashboard without the flag: confirm it
    #: first (the runtime starts in ``lead_mode`` until then).
    confirm_bypass: bool = False
    #: The modes to switch to once the person confirms bypassPermissions.
    requested_lead_mode: str = "default"
    requested_teammate_mode: str = "default"
    #: bypassPermissions may be entered (flag given, or confirmed): shift+tab offers it.
    bypass_allowed: bool = False
    #: How teammates run (``--teammate-mode``, else the settings' ``teammateMode``).
    teammate_backend: str = "in-process"
    #: A settings file turned bypassPermissions off: it is never offered, not even confirmed.
    bypass_disabled: bool = False
    #: Where agents' commands and hooks run (``--no-sandbox``, ``--pass-env``, settings).
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    #: Seconds a permission request waits for an answer (``--permission-timeout``; 0: no limit).
    permission_timeout: float = DEFAULT_PERMISSION_TIMEOUT
    warnings: list[str] = field(default_factory=list)

    def runtime_kwargs(self) -> dict[str, Any]:
        return {
            "lead_mode": self.lead_mode,
            "teammate_mode": self.teammate_mode,
            "rules": self.rules,
            "teammate_backend": self.teammate_backend,
            "allow_bypass": self.bypass_allowed,
            "sandbox": self.sandbox,
            "permission_timeout": self.permission_timeout,
        }


def resolve_modes(
    args: argparse.Namespace, cwd: Path, *, headless: bool, use_settings: bool = True
) -> ModeOptions:
    """Settings files + flags -> modes and rules. ModeError for bypassPermissions headless
    without ``--dangerously-skip-permissions``."""
    settings = load_settings(cwd) if use_settings else None
    options = ModeOptions(warnings=list(settings.warnings) if settings else [])
    skip = bool(getattr(args, "dangerously_skip_permissions", False))
    lead = getattr(args, "permission_mode", None)
    teammate = getattr(args, "teammate_permission_mode", None)
    disabled_by = settings.bypass_disabled_by if settings else None
    if disabled_by is not None:
        options.bypass_disabled = True
        if skip or BYPASS in (lead, teammate):
            raise ModeError(
                "bypassPermissions is disabled by permissions.disableBypassPermissionsMode "
                f"in {disabled_by}"
            )
    if lead is None:
        lead = BYPASS if skip else (settings.default_mode if settings else None) or "default"
        if lead == BYPASS and disabled_by is not None:
            options.warnings.append(
                f"permissions.defaultMode bypassPermissions is disabled by {disabled_by}; "
                "starting in default mode"
            )
            lead = "default"
    if teammate is None:
        teammate = "default" if lead in _NOT_INHERITED else lead
    wants_bypass = BYPASS in (lead, teammate)
    if wants_bypass and not skip:
        if headless:
            raise ModeError(
                "bypassPermissions runs every tool without asking; headless it needs "
                "--dangerously-skip-permissions"
            )
        options.confirm_bypass = True
        options.requested_lead_mode, options.requested_teammate_mode = lead, teammate
        lead = "default" if lead == BYPASS else lead
        teammate = "default" if teammate == BYPASS else teammate
    options.bypass_allowed = skip
    options.lead_mode, options.teammate_mode = lead, teammate
    rules = settings.rules if settings else PermissionRules()
    for text in getattr(args, "allow", None) or ():
        rules.add_allow(text)
    for text in getattr(args, "deny", None) or ():
        rules.add_deny(text)
    options.rules = rules
    options.teammate_backend = (
        getattr(args, "teammate_mode", None)
        or (settings.teammate_mode if settings else None)
        or "in-process"
    )
    options.permission_timeout = getattr(args, "permission_timeout", DEFAULT_PERMISSION_TIMEOUT)
    options.sandbox, warning = resolve_sandbox(args, settings.sandbox if settings else None)
    if warning:
        options.warnings.append(warning)
    return options


def resolve_sandbox(
    args: argparse.Namespace, block: dict[str, Any] | None
) -> tuple[SandboxConfig, str | None]:
    """The run's sandbox from the options and the settings' ``sandbox`` block, and the one
    warning line when it is wanted but bubblewrap cannot run here (commands and hooks then
    refuse to run: fail closed)."""
    config = sandbox_config(args, block)
    return config, config.refusal()


def print_warnings(options: ModeOptions) -> None:
    for line in options.warnings:
        print(f"teamdeck: warning: {line}", file=sys.stderr)


def options_for(
    args: argparse.Namespace, *, headless: bool, use_settings: bool = True
) -> ModeOptions:
    """``resolve_modes`` for the current directory, warnings printed to stderr."""
    options = resolve_modes(args, Path.cwd(), headless=headless, use_settings=use_settings)
    print_warnings(options)
    return options
