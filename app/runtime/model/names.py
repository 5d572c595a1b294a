"""Model names: the aliases a person types and the id they resolve to (no SDK import, so
choosing a model costs nothing to a process that never calls one)."""

from __future__ import annotations

import os

MODEL_ENV = "TEAMDECK_MODEL"
DEFAULT_MODEL = "sonnet"

MODEL_ALIASES: dict[str, str] = {
    "sonnet": "claude-sonnet-5-5",
    "opus": "claude-opus-5-5",
    "haiku": "claude-haiku-5-5",
}
"""Short names accepted wherever a model is chosen (newest of each family in the installed SDK;
`claude-sonnet-4-5` is already on the SDK's deprecation list and would warn on every call)."""


def resolve_model(name: str | None = None) -> str:
    """A model id from an alias or a full id; `None`/'' means `$TEAMDECK_MODEL`, else sonnet."""
    chosen = (name or "").strip() or os.environ.get(MODEL_ENV, "").strip() or DEFAULT_MODEL
    return MODEL_ALIASES.get(chosen.lower(), chosen)
