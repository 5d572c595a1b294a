"""Where the API credentials live: the environment at start-up, then only this process's memory.

Kept free of the SDK so the CLI can call `hold_credentials()` first thing without paying for
importing it.
"""

from __future__ import annotations

import os

API_KEY_ENV = "ANTHROPIC_API_KEY"
AUTH_TOKEN_ENV = "ANTHROPIC_AUTH_TOKEN"
CREDENTIAL_ENVS = (API_KEY_ENV, AUTH_TOKEN_ENV)

_held: dict[str, str] = {}
"""Credentials moved out of the environment by `hold_credentials()` (process-wide)."""


def credential(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None:
        value = _held.get(name)
    return value if value is not None and value.strip() else None


def has_api_key() -> bool:
    """Whether the real API will be used: an API key, or a bearer token (which the SDK accepts)."""
    return any(credential(name) for name in CREDENTIAL_ENVS)


def held_credentials() -> dict[str, str]:
    """The credentials this process would use, by variable name (to hand to a teammate
    process through ``runners.handoff``, never through its environment)."""
    return {name: value for name in CREDENTIAL_ENVS if (value := credential(name))}


def hold(values: dict[str, str]) -> None:
    """Keep credentials received from the runtime (``teamdeck agent``) in memory only."""
    for name in CREDENTIAL_ENVS:
        if values.get(name):
            _held[name] = values[name]
    if _held:
        refuse_same_user_readers()


def hold_credentials() -> None:
    """Move the API credentials out of the process environment, into this module.

    Child processes (Bash commands) must not read the key, not even from the parent's
    ``/proc/<pid>/environ``, which shows the environment block the process was started with:
    removing the variable from ``os.environ`` does not change that block, so its bytes are
    overwritten too (Linux). Called once by the CLI before any client is built; clients built
    afterwards get the key from here.
    """
    for name in CREDENTIAL_ENVS:
        value = os.environ.get(name)
        if value is None:
            continue
        _held[name] = value
        scrub_initial_environ(name)
        os.environ.pop(name, None)
    if _held:
        refuse_same_user_readers()


def scrub_initial_environ(name: str) -> bool:
    """Overwrite ``NAME=value`` in the C environment's strings (the value becomes NUL bytes);
    True if an entry was found. Only where libc exposes ``environ`` (Linux, macOS)."""
    import ctypes  # only when a credential is set: every command calls hold_credentials()
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        environ = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
    except (OSError, ValueError, AttributeError):
        return False
    prefix = name.encode() + b"="
    found = False
    index = 0
    while environ[index]:
        address = environ[index]
        entry = ctypes.string_at(address)
        if entry.startswith(prefix) and len(entry) > len(prefix):
            ctypes.memset(address + len(prefix), 0, len(entry) - len(prefix))
            found = True
        index += 1
    return found


PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def refuse_same_user_readers() -> bool:
    """Mark this process not dumpable (Linux ``prctl(PR_SET_DUMPABLE, 0)``): another process
    of the same user can then no longer read its ``/proc/<pid>/environ`` or ``/proc/<pid>/mem``
    (both are checked like a ptrace attach), nor get a core dump holding the key. Children
    forked without exec inherit it. Costs: no core dumps, and debuggers such as ``gdb`` or
    ``py-spy`` need root to attach. True if the flag was set."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


class CredentialError(ValueError):
    """A credential the API would reject for its shape (e.g. a pasted trailing newline)."""


def check_credential(name: str, value: str) -> None:
    if any(c.isspace() or ord(c) < 32 for c in value):
        raise CredentialError(
            f"{name} contains whitespace (a trailing newline from a pasted or `cat`-ed key?): "
            "remove it and try again"
        )
