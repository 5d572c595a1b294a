"""JSON text as Claude Code writes it (``JSON.stringify(data, null, 2)``), and the array
layout the inbox writers splice and edit in place without encoding the whole array again.
Re-exported by :mod:`app.core.files`, the file layer that writes it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any


def dumps(data: Any) -> str:
    """JSON as Claude Code writes it: ``JSON.stringify(data, null, 2)``."""
    return json.dumps(data, indent=2, ensure_ascii=False)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of JSON text. A lone surrogate (legal in a JSON string, e.g. ``"\\ud800"``,
    which ``json.loads`` keeps as is) is written escaped, like ``JSON.stringify`` does, instead
    of failing: it can only occur inside a string literal of text made by ``json.dumps``."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_surrogates(text).encode("utf-8")


def escape_surrogates(text: str) -> str:
    """``text`` with every lone surrogate written as its ``\\uXXXX`` escape (in JSON text: the
    same string; in a line for the terminal: printable, where the raw one cannot be encoded)."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_encode = json.JSONEncoder(ensure_ascii=False).encode
_encode_str: Callable[[str], str] = json.encoder.encode_basestring


def _scalar(value: Any) -> str:
    """A scalar as ``_encode`` writes it, without its dispatch for strings and bools (an
    inbox message is a dozen strings and a bool: most of encoding one)."""
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    return _encode_str(value) if kind is str else _encode(value)


_FLAT = frozenset({str, bool, int, float, type(None)})
_c_encoder = getattr(json.encoder, "c_make_encoder", None)
#: A flat object's members, each on a line of its own four spaces in, as one call of the C
#: encoder: separators are only ever written between the object's own members (a string's
#: newlines are escaped), and its scalars are written as ``_scalar`` writes them.
_flat: Callable[[dict[str, Any], int], Sequence[str]] | None = (
    _c_encoder(None, None, _encode_str, None, ": ", ",\n    ", False, False, True)
    if _c_encoder is not None
    else None
)


def _dump_entry(entry: Any) -> str:
    """One array element as it appears inside ``JSON.stringify(array, null, 2)``."""
    if (
        _flat is not None
        and type(entry) is dict
        and entry
        and {*map(type, entry.values())} <= _FLAT
        and {*map(type, entry)} == {str}
    ):  # an inbox message: flat
        return "  {\n    " + "".join(_flat(entry, 0))[1:-1] + "\n  }"
    if isinstance(entry, dict) and entry:
        lines = []
        for key, value in entry.items():
            if isinstance(value, dict | list) and value:
                text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n    ")
            else:
                text = _scalar(value)
            lines.append(f"    {_encode_str(str(key))}: {text}")
        return "  {\n" + ",\n".join(lines) + "\n  }"
    return "  " + json.dumps(entry, indent=2, ensure_ascii=False).replace("\n", "\n  ")


def dumps_array(entries: Sequence[Any]) -> str:
    """``dumps(entries)`` for a list, several times faster for flat objects (inbox messages):
    only nested containers go through the pure-Python indenting encoder."""
    if not entries:
        return "[]"
    return "[\n" + ",\n".join(_dump_entry(e) for e in entries) + "\n]"


_WS = frozenset(b" \t\r\n")


def array_head_end(raw: bytes | memoryview) -> int:
    """Where the head of the JSON array text ``raw`` ends: the index just past its last element
    (or just past ``[`` if it is empty), i.e. before the closing bracket and whitespace.
    ValueError if ``raw`` does not end with ``]``. Scans only the tail: no copy of ``raw``."""
    end = len(raw)
    while end and raw[end - 1] in _WS:
        end -= 1
    if not end or raw[end - 1] != 0x5D:  # "]"
        raise ValueError("not a JSON array")
    end -= 1
    while end and raw[end - 1] in _WS:
        end -= 1
    return end


def encode_entry(entry: Any) -> bytes:
    """One array element as the bytes it has inside ``JSON.stringify(array, null, 2)``."""
    return encode_text(_dump_entry(entry))


def splice_parts(raw: bytes, piece: bytes) -> list[bytes | memoryview]:
    """The chunks of ``raw`` (a valid JSON array) with the encoded element ``piece`` appended,
    sharing ``raw``'s memory instead of copying it (see ``atomic_write_bytes``)."""
    cut = array_head_end(raw)
    if raw[cut - 1] == 0x5B:  # "[": the array is empty (nothing else can precede its "]")
        return [memoryview(raw)[:cut], b"\n", piece, b"\n]"]
    return [memoryview(raw)[:cut], b",\n", piece, b"\n]"]
