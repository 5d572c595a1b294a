"""The environment a sandboxed command or hook gets: an allowlist, not a denylist.

A denylist misses the secrets nobody listed (``AWS_SECRET_ACCESS_KEY``, ``GITHUB_TOKEN``,
``OPENAI_API_KEY``, a company's own); an allowlist passes what a shell needs and Claude Code's
own variables, plus the names the person passes on purpose (``--pass-env NAME`` or the
``sandbox.passEnv`` setting).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: Passed as they are: what a shell and the usual tools need to behave.
BASE_ENV: frozenset[str] = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "TMPDIR",
        "TZ",
        "PWD",
        "EDITOR",
        "PAGER",
        "NO_COLOR",
        "CLAUDE_PROJECT_DIR",
    }
)
#: Prefixes passed too: locale settings and Claude Code's own variables (team, agent names).
BASE_PREFIXES: tuple[str, ...] = ("LC_", "CLAUDE_CODE_")
#: Never passed, even when asked for: the model credentials are the key handoff's alone.
NEVER: frozenset[str] = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}
)


def sandbox_env(base: Mapping[str, str], passed: Iterable[str] = ()) -> dict[str, str]:
    """``base`` cut down to the allowlist plus the ``passed`` names (credentials never)."""
    extra = {name for name in passed if name}
    env: dict[str, str] = {}
    for key, value in base.items():
        if key in NEVER or key.upper().startswith("ANTHROPIC_"):
            continue
        if key in BASE_ENV or key in extra or key.startswith(BASE_PREFIXES):
            env[key] = value
    return env
