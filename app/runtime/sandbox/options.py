"""The sandbox's command-line options, shared by ``teamdeck tui|demo|run|attach`` and a
teammate process (``teamdeck agent`` / ``python -m app.runtime.agent_main``), and how they
combine with the ``sandbox`` block of Claude Code's settings files."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from typing import Any

from app.runtime.sandbox.bwrap import SandboxConfig


def add_sandbox_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-sandbox",
        dest="sandbox",
        action="store_false",
        default=None,
        help="run agents' commands and hooks without the bubblewrap sandbox",
    )
    parser.add_argument(
        "--sandbox-host",
        metavar="HOST",
        action="append",
        default=[],
        help="let sandboxed commands use the network (bubblewrap cannot filter by host: any "
        "host turns the network on)",
    )
    parser.add_argument(
        "--allow-unix-socket",
        metavar="PATH",
        dest="unix_sockets",
        action="append",
        default=[],
        help="let sandboxed commands connect to this Unix socket (repeatable; '*' for every "
        "one). The socket filter cannot tell paths apart: see the README's Security model",
    )
    parser.add_argument(
        "--pass-env",
        metavar="NAME",
        action="append",
        default=[],
        help="pass this environment variable to commands and hooks (repeatable)",
    )


def sandbox_config(
    args: argparse.Namespace, settings: Mapping[str, Any] | None = None
) -> SandboxConfig:
    """The run's sandbox: the options win over the settings files' ``sandbox`` block
    (``{"enabled": bool, "network": {"allowedHosts": [...], "allowUnixSockets": [...],
    "allowAllUnixSockets": bool}, "passEnv": [...]}``)."""
    block = dict(settings or {})
    enabled = getattr(args, "sandbox", None)
    if enabled is None:
        enabled = block.get("enabled", True) is not False
    network = block.get("network")
    network = network if isinstance(network, dict) else {}
    hosts = _list(network.get("allowedHosts"))
    sockets = _list(network.get("allowUnixSockets"))
    if network.get("allowAllUnixSockets") is True:
        sockets.append("*")
    return SandboxConfig(
        enabled=bool(enabled),
        allowed_hosts=_strings([*hosts, *getattr(args, "sandbox_host", [])]),
        pass_env=_strings([*_list(block.get("passEnv")), *getattr(args, "pass_env", [])]),
        unix_sockets=_strings([*sockets, *(getattr(args, "unix_sockets", None) or [])]),
    )


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _strings(values: Iterable[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(v) for v in values if isinstance(v, str) and v))
