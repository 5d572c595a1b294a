"""What the conformance server checks on every request, from the Messages API reference.

Written from the public reference (request body, content blocks, tool use, prompt caching,
extended thinking), not from teamdeck's offline model: each function returns the problems it
finds as short sentences; the server answers any of them with a 400 `invalid_request_error`,
as the API does, and the test fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MAX_CACHE_BREAKPOINTS = 4
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
JSON_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})


def check_headers(headers: Mapping[str, str], key: str) -> list[str]:
    """Authentication (`x-api-key`, or a bearer token) and the required version header."""
    problems = []
    if not headers.get("anthropic-version"):
        problems.append("anthropic-version header missing")
    api_key = headers.get("x-api-key")
    bearer = headers.get("authorization", "")
    if api_key is None and not bearer.startswith("Bearer "):
        problems.append("no x-api-key or Authorization: Bearer header")
    if "json" not in headers.get("content-type", ""):
        problems.append("content-type is not application/json")
    return problems


def authenticated(headers: Mapping[str, str], key: str) -> bool:
    return headers.get("x-api-key") == key or headers.get("authorization") == f"Bearer {key}"


def check_body(body: Any, sent_thinking: Mapping[str, list[dict[str, Any]]]) -> list[str]:
    """Every rule the reference states for a streamed Messages request."""
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model: required string")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        problems.append("max_tokens: required integer >= 1")
    if body.get("stream") is not True:
        problems.append("stream: expected true (teamdeck always streams)")
    problems += check_system(body.get("system"))
    problems += check_tools(body.get("tools"))
    problems += check_messages(body.get("messages"), sent_thinking)
    breakpoints = count_cache_control(body)
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        problems.append(
            f"{breakpoints} cache_control breakpoints; at most {MAX_CACHE_BREAKPOINTS} allowed"
        )
    metadata = body.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, dict) or not isinstance(metadata.get("user_id", ""), str)
    ):
        problems.append("metadata.user_id must be a string")
    return problems


def check_system(system: Any) -> list[str]:
    if system is None or isinstance(system, str):
        return []
    if not isinstance(system, list):
        return ["system: string or list of text blocks"]
    return [
        f"system.{i}: must be a non-empty text block"
        for i, block in enumerate(system)
        if not isinstance(block, dict) or block.get("type") != "text" or not block.get("text")
    ]


def check_tools(tools: Any) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        return ["tools: must be a list"]
    problems: list[str] = []
    names: set[str] = set()
    for index, tool in enumerate(tools):
        where = f"tools.{index}"
        if not isinstance(tool, dict):
            problems.append(f"{where}: not an object")
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            problems.append(f"{where}.name: must match {TOOL_NAME.pattern}")
        elif name in names:
            problems.append(f"{where}.name: duplicate tool name {name}")
        else:
            names.add(name)
        if "description" in tool and not isinstance(tool["description"], str):
            problems.append(f"{where}.description: must be a string")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            problems.append(f"{where}.input_schema: must be a JSON Schema with type 'object'")
        else:
            problems += [f"{where}.input_schema{p}" for p in check_schema(schema)]
    return problems


def check_schema(schema: Any, path: str = "") -> list[str]:
    """A structural JSON Schema check (types, properties, required, items, enum)."""
    if not isinstance(schema, dict):
        return [f"{path}: a schema must be an object"]
    problems: list[str] = []
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    for k in kinds:
        if k not in JSON_TYPES:
            problems.append(f"{path}.type: unknown type {k!r}")
    properties = schema.get("properties")
    if properties is not None:
        if not isinstance(properties, dict):
            problems.append(f"{path}.properties: must be an object")
        else:
            for name, sub in properties.items():
                problems += check_schema(sub, f"{path}.properties.{name}")
    required = schema.get("required")
    if required is not None:
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            problems.append(f"{path}.required: must be a list of strings")
        elif isinstance(properties, dict):
            missing = [r for r in required if r not in properties]
            if missing:
                problems.append(f"{path}.required: not in properties: {missing}")
    if "items" in schema:
        problems += check_schema(schema["items"], f"{path}.items")
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        problems.append(f"{path}.enum: must be a non-empty list")
    additional = schema.get("additionalProperties")
    if additional is not None and not isinstance(additional, bool | dict):
        problems.append(f"{path}.additionalProperties: must be a boolean or a schema")
    return problems


def count_cache_control(body: Mapping[str, Any]) -> int:
    count = 0
    for part in ("system", "tools"):
        value = body.get(part)
        if isinstance(value, list):
            count += sum(1 for b in value if isinstance(b, dict) and "cache_control" in b)
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(1 for b in content if isinstance(b, dict) and "cache_control" in b)
    return count


def check_messages(messages: Any, sent_thinking: Mapping[str, list[dict[str, Any]]]) -> list[str]:
    """Roles alternate from `user`; content blocks well formed (no empty text); every
    `tool_use` answered, first thing, in the next user message; thinking blocks intact."""
    if not isinstance(messages, list) or not messages:
        return ["messages: at least one message is required"]
    problems: list[str] = []
    previous_role = None
    for index, message in enumerate(messages):
        where = f"messages.{index}"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            problems.append(f"{where}.role: must be 'user' or 'assistant'")
            continue
        role = message["role"]
        if index == 0 and role != "user":
            problems.append(f"{where}: the first message must use the user role")
        if role == previous_role:
            problems.append(f"{where}: roles must alternate (two {role} messages in a row)")
        previous_role = role
        problems += _check_content(message.get("content"), role, where)
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        if message.get("role") == "assistant":
            problems += _check_tool_pairing(messages, index)
            problems += _check_thinking(message["content"], sent_thinking, f"messages.{index}")
    return problems


def _check_content(content: Any, role: str, where: str) -> list[str]:
    if isinstance(content, str):
        return [] if content.strip() else [f"{where}.content: text must be non-empty"]
    if not isinstance(content, list) or not content:
        return [f"{where}.content: must be a non-empty string or list of blocks"]
    problems: list[str] = []
    allowed = (
        {"text", "image", "document", "tool_result"}
        if role == "user"
        else {"text", "tool_use", "thinking", "redacted_thinking"}
    )
    for i, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in allowed:
            problems.append(f"{where}.content.{i}: block type {kind!r} not allowed for {role}")
            continue
        if kind == "text" and (not isinstance(block.get("text"), str) or not block["text"].strip()):
            problems.append(f"{where}.content.{i}: text content blocks must be non-empty")
        if kind == "tool_use" and not (
            isinstance(block.get("id"), str) and isinstance(block.get("input"), dict)
        ):
            problems.append(f"{where}.content.{i}: tool_use needs an id and an object input")
        if kind == "thinking" and "cache_control" in block:
            problems.append(f"{where}.content.{i}: thinking blocks cannot carry cache_control")
    return problems


def _check_tool_pairing(messages: list[Any], index: int) -> list[str]:
    ids = [b.get("id") for b in messages[index]["content"] if b.get("type") == "tool_use"]
    if not ids:
        return []
    where = f"messages.{index}"
    if index + 1 >= len(messages):
        return [f"{where}: tool_use ids without tool_result (last message): {ids}"]
    following = messages[index + 1]
    content = following.get("content") if isinstance(following, dict) else None
    blocks = content if isinstance(content, list) else []
    results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
    problems = []
    missing = [i for i in ids if i not in results]
    if missing:
        problems.append(f"{where}: tool_use ids without tool_result immediately after: {missing}")
    extra = [r for r in results if r not in ids]
    if extra:
        problems.append(f"messages.{index + 1}: tool_result for unknown tool_use ids: {extra}")
    leading = [b.get("type") for b in blocks[: len(results)]]
    if any(kind != "tool_result" for kind in leading):
        problems.append(f"messages.{index + 1}: tool_result blocks must come first")
    return problems


def _check_thinking(
    content: list[Any], sent_thinking: Mapping[str, list[dict[str, Any]]], where: str
) -> list[str]:
    """A thinking block must come back exactly as sent, and the thinking that preceded a
    tool call must stay in front of it (the reference requires it while tools are used)."""
    problems: list[str] = []
    sent = {(b["thinking"], b["signature"]) for blocks in sent_thinking.values() for b in blocks}
    for i, block in enumerate(content):
        if block.get("type") == "thinking":
            key = (block.get("thinking"), block.get("signature"))
            if key not in sent:
                problems.append(f"{where}.content.{i}: thinking block modified or unknown")
    for block in content:
        if block.get("type") != "tool_use":
            continue
        expected = sent_thinking.get(block.get("id", ""), [])
        present = [
            {"thinking": b.get("thinking"), "signature": b.get("signature")}
            for b in content
            if b.get("type") == "thinking"
        ]
        for thinking in expected:
            if thinking not in present:
                problems.append(f"{where}: the thinking block sent with a tool_use was dropped")
    return problems
