"""Pydantic models of Claude Code's team files.

Python attributes are snake_case; JSON keys are the seeds' camelCase (``InboxMessage.sender`` is
``"from"``). Unknown fields are kept (``extra="allow"``) and only the fields a file had, or that
teamdeck set, are written back (``exclude_unset``), so reading and rewriting a Claude Code file
never drops or invents a field. ``None`` in an optional field is written as "absent", like
JavaScript's ``undefined`` under ``JSON.stringify``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic.alias_generators import to_camel

TaskStatus = Literal["pending", "in_progress", "completed", "deleted"]
TASK_STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed", "deleted")


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)


def now_iso() -> str:
    """ISO-8601 with milliseconds and ``Z``, as JavaScript's ``Date.toISOString()``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class FileModel(BaseModel):
    """Base for on-disk records: camelCase aliases, unknown fields preserved."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        validate_assignment=False,
    )
    #: Per class (read through ``cls.__dict__``, so a subclass computes its own).
    _optional_cache: ClassVar[frozenset[str] | None] = None

    def to_json_dict(self) -> dict[str, Any]:
        """The dict to write: set fields and unknown ones, optional ``None`` fields dropped."""
        data = self.model_dump(by_alias=True, exclude_unset=True, mode="json")
        optional = self._optional_aliases()
        return {k: v for k, v in data.items() if not (v is None and k in optional)}

    @classmethod
    def _optional_aliases(cls) -> frozenset[str]:
        cached = cls.__dict__.get("_optional_cache")
        if cached is None:
            cached = frozenset(
                (f.alias or name) for name, f in cls.model_fields.items() if not f.is_required()
            )
            cls._optional_cache = cached
        return cached

    def extra_fields(self) -> dict[str, Any]:
        return dict(self.__pydantic_extra__ or {})


class OrderedFileModel(FileModel):
    """A record read from a dict remembers the dict's key order and writes its keys back in
    that order (new keys last), so rewriting a Claude Code file changes only what changed."""

    _key_order: tuple[str, ...] | None = PrivateAttr(default=None)
    #: Per class, like ``_optional_cache``.
    _alias_cache: ClassVar[dict[str, str] | None] = None

    @model_validator(mode="wrap")
    @classmethod
    def _remember_key_order(cls, data: Any, handler: Any) -> Any:
        model = handler(data)
        if isinstance(data, dict) and isinstance(model, OrderedFileModel):
            aliases = cls._aliases()
            model._key_order = tuple(aliases.get(str(k), str(k)) for k in data)
        return model

    @classmethod
    def _aliases(cls) -> dict[str, str]:
        """Field name -> JSON key (keyword construction uses the names)."""
        cached = cls.__dict__.get("_alias_cache")
        if cached is None:
            cached = {name: f.alias or name for name, f in cls.model_fields.items()}
            cls._alias_cache = cached
        return cached

    def __eq__(self, other: object) -> bool:
        """Pydantic's equality (fields and extra fields), ignoring the remembered key order."""
        if not isinstance(other, BaseModel):
            return NotImplemented
        return (
            type(self) is type(other)
            and self.__dict__ == other.__dict__
            and self.__pydantic_extra__ == other.__pydantic_extra__
        )

    __hash__ = None  # type: ignore[assignment]

    def to_json_dict(self) -> dict[str, Any]:
        data = super().to_json_dict()
        order = self._key_order
        if not order:
            return data
        ordered = {k: data[k] for k in order if k in data}
        if len(ordered) != len(data):
            ordered.update((k, v) for k, v in data.items() if k not in ordered)
        return ordered


class TeamMember(OrderedFileModel):
    agent_id: str
    name: str
    agent_type: str | None = None
    model: str | None = None
    prompt: str | None = None
    color: str | None = None
    plan_mode_required: bool | None = None
    joined_at: int = 0
    tmux_pane_id: str | None = None
    cwd: str | None = None
    subscriptions: list[Any] | None = None
    backend_type: str | None = None
    worktree_path: str | None = None
    mode: str | None = None
    is_active: bool | None = None


class TeamConfig(OrderedFileModel):
    name: str
    description: str | None = None
    created_at: int = 0
    lead_agent_id: str = ""
    lead_session_id: str = ""
    members: list[TeamMember] = Field(default_factory=list)
    hidden_pane_ids: list[str] | None = None

    def member(self, name: str) -> TeamMember | None:
        """Find a member by name, case-insensitively (names are unique that way)."""
        low = name.lower()
        return next((m for m in self.members if m.name.lower() == low), None)

    @property
    def teammates(self) -> list[TeamMember]:
        """Members other than the lead."""
        return [
            m for m in self.members if m.agent_id != self.lead_agent_id and m.name != "team-lead"
        ]

    def to_json_dict(self) -> dict[str, Any]:
        data = super().to_json_dict()
        data["members"] = [m.to_json_dict() for m in self.members]
        return data


class Task(OrderedFileModel):
    id: str
    subject: str = ""
    description: str = ""
    active_form: str | None = None
    status: str = "pending"
    owner: str | None = None
    blocks: list[str] = Field(default_factory=list)
    blocked_by: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] | None = None

    @property
    def is_internal(self) -> bool:
        return bool(self.metadata and self.metadata.get("_internal"))

    @property
    def is_resolved(self) -> bool:
        return self.status in ("completed", "deleted")


class InboxMessage(FileModel):
    sender: str = Field(default="", alias="from")
    text: str = ""
    summary: str | None = None
    timestamp: str = Field(default_factory=now_iso)
    color: str | None = None
    read: bool = False
    #: teamdeck's own teams only: who answered the request whose response frame this message
    #: carries when that is not its sender -- ``user``, the person (the dashboard's keys,
    #: ``teamdeck approve``), while the frame comes from ``team-lead`` as the protocol wants.
    #: Written only then, as an extra key (readers keep unknown keys); never in a Claude Code
    #: home, whose files keep Claude Code's shapes exactly.
    answered_by: str | None = None
    #: teamdeck's own teams only: an agent's message (SendMessage ``message``/``broadcast``)
    #: whose text reads like a protocol frame. It is text: delivered, shown and recorded as
    #: such, never worded as the frame it imitates (``app.core.frame_text.frame_of``). Written
    #: only then (``plainText``), as an extra key.
    plain_text: bool | None = None

    _REQUIRED_KEYS: ClassVar[tuple[str, ...]] = ("from", "text", "timestamp", "read")

    def to_json_dict(self) -> dict[str, Any]:
        data = super().to_json_dict()
        if all(k in data for k in self._REQUIRED_KEYS):
            return data
        # A message built in Python that relied on defaults: write the seeds' key order.
        full = {
            "from": self.sender,
            "text": self.text,
            "summary": self.summary,
            "timestamp": self.timestamp,
            "color": self.color,
            "read": self.read,
        }
        ordered = {k: v for k, v in full.items() if k in data or k in self._REQUIRED_KEYS}
        ordered.update({k: v for k, v in data.items() if k not in ordered})
        return ordered
