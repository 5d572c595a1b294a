"""The offline model: a Messages-API server behind `httpx2.MockTransport`.

`make_client()` (in `app.runtime.model.client`) wires `OfflineTransport` into a real
`AsyncAnthropic`, so
the SDK path is the same with or without a key. A `ModelHandler` decides the replies: policies
(`app.runtime.offline.policies`), `ScriptedModel` in tests, `EchoModel` as a fallback.
"""

from __future__ import annotations

from .cache import InputUsage, PromptCache, estimate_input_tokens, estimate_tokens
from .pace import (
    DEFAULT_PACE,
    PACE_ENV,
    REALISTIC,
    TPS_ENV,
    TTFT_ENV,
    Pace,
    export_pace,
    pace_from_env,
    parse_pace,
)
from .plans import (
    Block,
    CutStream,
    ErrorPlan,
    ModelHandler,
    ModelRequest,
    Reply,
    ResponsePlan,
    StopReason,
    TextBlock,
    ToolResult,
    ToolUseBlock,
    cut_stream,
    error,
    new_id,
    overloaded,
    rate_limited,
    reply,
    text,
    tool_use,
)
from .scripted import EchoModel, ScriptedModel, ScriptStep
from .transport import OfflineTransport

__all__ = [
    "DEFAULT_PACE",
    "PACE_ENV",
    "REALISTIC",
    "TPS_ENV",
    "TTFT_ENV",
    "Block",
    "CutStream",
    "EchoModel",
    "ErrorPlan",
    "InputUsage",
    "ModelHandler",
    "ModelRequest",
    "OfflineTransport",
    "Pace",
    "PromptCache",
    "Reply",
    "ResponsePlan",
    "ScriptStep",
    "ScriptedModel",
    "StopReason",
    "TextBlock",
    "ToolResult",
    "ToolUseBlock",
    "cut_stream",
    "error",
    "export_pace",
    "estimate_input_tokens",
    "estimate_tokens",
    "new_id",
    "overloaded",
    "pace_from_env",
    "parse_pace",
    "rate_limited",
    "reply",
    "text",
    "tool_use",
]
