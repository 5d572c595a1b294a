"""The model client: the real Claude API when a key is set, the offline model otherwise.

Both are an `anthropic.AsyncAnthropic`; offline, its HTTP client routes every request to
`OfflineTransport` through `httpx2.MockTransport` (anthropic 2.x is built on httpx2, so respx
cannot intercept it). Callers therefore never branch on the mode: streaming, retries and error
types are the SDK's own in both cases.

The SDK is a second of CPU to import, so this module does not import it: `make_client` does,
and `make_client(deferred=True)` not even that (a `DeferredClient` builds the client at its
first use; `load_sdk()` imports the SDK in a thread beforehand). A process that never calls
the model (the CLI's commands, the dashboard until its first frame) never loads it.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from app.runtime.env_numbers import positive_from_env
from app.runtime.model.credentials import (
    API_KEY_ENV,
    AUTH_TOKEN_ENV,
    CredentialError,
    check_credential,
    credential,
    has_api_key,
    hold_credentials,
)
from app.runtime.model.names import resolve_model

if TYPE_CHECKING:
    import anthropic
    import httpx2

    from app.runtime.offline import ModelHandler

    #: The SDK's client, for annotations in modules that do not import the SDK.
    SDKClient = anthropic.AsyncAnthropic
    #: What a model call can raise (`model_errors()`, looked up lazily by `__getattr__`).
    MODEL_ERRORS: tuple[type[Exception], ...]

OFFLINE_HOST = "offline.teamdeck.invalid"
OFFLINE_BASE_URL = f"http://{OFFLINE_HOST}"
OFFLINE_DESCRIPTION = "offline model — set ANTHROPIC_API_KEY for Claude"

MAX_RETRIES = 2
"""SDK retries for 408/409/429/5xx and dropped connections before a request is sent back as
failed. Offline errors carry `retry-after-ms`, so the same retries cost ~1 ms in tests."""

SDK_MODULES = ("anthropic", "httpx2")


def model_errors() -> tuple[type[Exception], ...]:
    """What a model call can raise once the SDK gives up. Mid-stream, a dropped connection
    surfaces as the raw `httpx2.RemoteProtocolError`/`ReadError` (the SDK only wraps errors
    raised while *sending*, as `APIConnectionError`), so the agent loop must catch both
    families. (Also `MODEL_ERRORS`; an ``except model_errors()`` is evaluated only when
    something is raised, so it imports nothing on the way.)"""
    import anthropic
    import httpx2

    return (anthropic.APIError, httpx2.TransportError)


def __getattr__(name: str) -> Any:
    if name == "MODEL_ERRORS":
        return model_errors()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


async def load_sdk() -> None:
    """Import the SDK in a thread, so that building the first client does not stop the event
    loop for a second (the dashboard keeps drawing meanwhile)."""
    await asyncio.to_thread(lambda: [importlib.import_module(name) for name in SDK_MODULES])


READ_TIMEOUT_ENV = "TEAMDECK_READ_TIMEOUT"
READ_TIMEOUT = 300.0
"""Seconds without a byte before a response counts as stalled (then retried by the agent
loop). Models that think can stay quiet for a while before the first token; the API sends
`ping` events meanwhile, so a live stream stays well under this. The SDK's default is 600 s."""

DEFAULT_MAX_TOKENS = 32_000
"""Per response. Thinking tokens count against it, so 8192 was tight for models that think
before every answer; long tool inputs (a Write of a whole file) need room too."""


def read_timeout() -> float:
    return positive_from_env(READ_TIMEOUT_ENV, READ_TIMEOUT, float)


def api_timeout(read: float | None = None) -> httpx2.Timeout:
    import httpx2

    return httpx2.Timeout(read if read is not None else read_timeout(), connect=10.0)


def make_client(
    *,
    handler: ModelHandler | None = None,
    api_key: str | None = None,
    max_retries: int = MAX_RETRIES,
    pace: float | None = None,
    ttft: float | None = None,
    tps: float | None = None,
    timeout: float | None = None,
    deferred: bool = False,
) -> anthropic.AsyncAnthropic:
    """The client every agent uses.

    Args:
        handler: Force the offline model with this brain (tests pass a `ScriptedModel`). Without
            it, an explicit `api_key`, `$ANTHROPIC_API_KEY` or `$ANTHROPIC_AUTH_TOKEN` selects
            the real API (at `$ANTHROPIC_BASE_URL` if set), and otherwise the offline model runs
            the installed policies.
        api_key: Use the real API with this key. The key is handed to the SDK and never logged.
        max_retries: SDK retry budget, in both modes.
        pace: Offline seconds per streamed delta; `None` reads `$TEAMDECK_OFFLINE_PACE`.
        ttft: Offline time to first token in seconds (realistic pace); `None` reads
            `$TEAMDECK_OFFLINE_TTFT`.
        tps: Offline output tokens per second (realistic pace; replaces `pace`); `None` reads
            `$TEAMDECK_OFFLINE_TPS`.
        timeout: Real API read timeout in seconds; `None` reads `$TEAMDECK_READ_TIMEOUT`
            (default `READ_TIMEOUT`).
        deferred: Return a `DeferredClient`, which imports the SDK and builds this client at
            its first use (it knows whether it is offline before that).
    """
    if deferred:
        offline = handler is not None or not (api_key or has_api_key())
        options: dict[str, Any] = {
            "handler": handler,
            "api_key": api_key,
            "max_retries": max_retries,
        }
        options.update(pace=pace, ttft=ttft, tps=tps, timeout=timeout)
        deferred_client = DeferredClient(lambda: make_client(**options), offline=offline)
        return cast("anthropic.AsyncAnthropic", deferred_client)
    import anthropic
    import httpx2

    from app.runtime.model.parsed_classes import hold_parsed_classes
    from app.runtime.offline import OfflineTransport

    hold_parsed_classes()
    if handler is None:
        key = api_key or credential(API_KEY_ENV)
        token = None if key else credential(AUTH_TOKEN_ENV)
        if key or token:
            try:
                check_credential(API_KEY_ENV if key else AUTH_TOKEN_ENV, key or token or "")
            except CredentialError as exc:
                return _failing_client(str(exc), max_retries)
            return anthropic.AsyncAnthropic(
                api_key=key,
                auth_token=token,
                max_retries=max_retries,
                timeout=api_timeout(timeout),
            )
        handler = default_offline_handler()
    transport = OfflineTransport(handler, pace=pace, ttft=ttft, tps=tps)
    return anthropic.AsyncAnthropic(
        api_key="offline",  # explicit, so the SDK consults no env vars or profiles
        base_url=OFFLINE_BASE_URL,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(transport)),
        max_retries=max_retries,
    )


def _failing_client(message: str, max_retries: int) -> anthropic.AsyncAnthropic:
    """A client whose every request fails with ``message`` as a 401, not retried: a malformed
    key must read as what it is, not as the SDK's "Connection error." (httpx refuses the
    header) after a round of retries. The dashboard and headless show it like any API error."""
    import anthropic
    import httpx2

    def refuse(request: httpx2.Request) -> httpx2.Response:
        body = {"type": "error", "error": {"type": "authentication_error", "message": message}}
        return httpx2.Response(401, json=body, headers={"x-should-retry": "false"})

    return anthropic.AsyncAnthropic(
        api_key="invalid",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)),
        max_retries=max_retries,
    )


def default_offline_handler() -> ModelHandler:
    """The offline brain: the scripted lead and teammate policies (imported only when the
    offline model is used)."""
    from app.runtime.offline.policies import make_offline_model

    return make_offline_model()


def is_offline(client: anthropic.AsyncAnthropic) -> bool:
    if isinstance(client, DeferredClient):
        return client.offline  # without building it
    return client.base_url.host == OFFLINE_HOST


class DeferredClient:
    """Stands for an `anthropic.AsyncAnthropic` that is built (SDK imported) at its first use:
    any attribute read is the built client's. `is_offline` answers without building it."""

    def __init__(self, build: Callable[[], anthropic.AsyncAnthropic], *, offline: bool) -> None:
        self.offline = offline
        self._build: Callable[[], anthropic.AsyncAnthropic] | None = build
        self._client: anthropic.AsyncAnthropic | None = None

    @property
    def built(self) -> bool:
        return self._client is not None

    def resolve(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            assert self._build is not None
            self._client, self._build = self._build(), None
        return self._client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.resolve(), name)


def describe_model(client: anthropic.AsyncAnthropic | None = None, model: str | None = None) -> str:
    """One line for the UI header: which model answers.

    Without a client, the mode `make_client()` would pick is described.
    """
    offline = is_offline(client) if client is not None else not has_api_key()
    if offline:
        return OFFLINE_DESCRIPTION
    return f"Claude · {resolve_model(model)}"


__all__ = [
    "API_KEY_ENV",
    "AUTH_TOKEN_ENV",
    "MODEL_ERRORS",
    "CredentialError",
    "DeferredClient",
    "check_credential",
    "has_api_key",
    "hold_credentials",
    "load_sdk",
    "make_client",
    "model_errors",
]
