"""The envelope of a new inbox message, and the chunks of an inbox with it appended.

Newer Claude Code versions put envelope fields on inbox messages; a message teamdeck appends
to such an inbox wears the same envelope as its newest message (:func:`envelope_like`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from app.core.files import encode_entry, splice_parts
from app.core.inbox_cache import decode_array

#: Envelope fields newer Claude Code versions put on inbox messages (seeds' README: "Inbox
#: messages may carry extra fields in newer versions (msgV, msg_id, type)").
ENVELOPE_KEYS = ("msgV", "msg_id", "type")


def envelope_like(template: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` in the shape of ``template``, the newest message of an inbox that carries
    ``msgV``/``msg_id``/``type``: the same envelope keys in the same key order, with ``msgV``
    copied (the version the inbox's writer speaks), a fresh ``msg_id`` (a UUID string, as
    observed in such inboxes) and ``type`` ``"message"`` (the value observed on inbox
    messages; the protocol frame itself stays in ``text``). Keys the template lacks follow."""
    values = dict(entry)
    if "msgV" in template:
        values["msgV"] = template["msgV"]
    if "msg_id" in template:
        values["msg_id"] = str(uuid.uuid4())
    if "type" in template:
        values["type"] = "message"
    shaped = {k: values.pop(k) for k in template if k in values}
    shaped.update(values)
    return shaped


#: Each envelope key's text, after a byte of it that is rare in inboxes: ``memchr`` for the
#: byte is an order of magnitude faster than a search for the key.
_ENVELOPE_PROBES = ((b"V", b'"msgV"'), (b"_", b'"msg_id"'))


def _envelope_template(raw: bytes) -> dict[str, Any] | None:
    """The newest message carrying an envelope key, if any (a cheap byte scan first: inboxes
    without them -- the seeds' era -- never pay for a parse)."""
    if not any(rare in raw and key in raw for rare, key in _ENVELOPE_PROBES):
        return None
    try:
        entries = decode_array(raw)
    except ValueError:
        return None
    for entry in reversed(entries):
        if any(k in entry for k in ENVELOPE_KEYS[:2]):
            template: dict[str, Any] = entry
            return template
    return None


def spliced(
    raw: bytes | None, entry: dict[str, Any], more: Sequence[dict[str, Any]] = ()
) -> list[bytes | memoryview]:
    """The chunks of the inbox ``raw`` (``None``: none yet) with ``entry`` (then ``more``)
    appended, in the envelope of its newest message if it has one. ValueError if ``raw`` is
    not an array."""
    template = _envelope_template(raw) if raw is not None else None
    piece = b",\n".join(
        encode_entry(envelope_like(template, e) if template else e) for e in (entry, *more)
    )
    if raw is None:
        return [b"[\n", piece, b"\n]"]
    return splice_parts(raw, piece)
