"""How fast the offline model streams: a fixed pause per chunk, or a realistic pace.

A pace is given as a spec, in ``$TEAMDECK_OFFLINE_PACE``, ``teamdeck --offline-pace SPEC`` or
the benchmarks' ``--pace``:

* ``SECONDS`` -- a pause before every streamed chunk (default 0.02: the dashboard visibly
  fills; 0 in tests and the throughput benchmarks);
* ``realistic`` -- 0.8 s to the first token, then 80 output tokens per second, about what a
  real model does, so waiting on the model dominates as it does with the API;
* ``TTFT,TPS`` -- the same with other figures, e.g. ``0.5,120``.

``$TEAMDECK_OFFLINE_TTFT`` and ``$TEAMDECK_OFFLINE_TPS`` set the two figures separately (and
win over the spec's). The pace is read from the environment on every request, so a process
started with it (a ``teamdeck agent`` teammate) inherits it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .cache import estimate_tokens

log = logging.getLogger(__name__)

PACE_ENV = "TEAMDECK_OFFLINE_PACE"
TTFT_ENV = "TEAMDECK_OFFLINE_TTFT"
TPS_ENV = "TEAMDECK_OFFLINE_TPS"
DEFAULT_PACE = 0.02
"""Seconds between streamed deltas: slow enough to watch the dashboard fill, fast enough to demo."""
REALISTIC_TTFT = 0.8
REALISTIC_TPS = 80.0
PACE_HELP = (
    "SECONDS per streamed chunk (default 0.02), 'realistic' (0.8 s to the first token, then "
    "80 tokens/s) or TTFT,TPS (e.g. 0.5,120)"
)


@dataclass(frozen=True)
class Pace:
    """How fast the offline model streams.

    Either ``per_delta`` seconds before every delta (the default, for watching), or a realistic
    pace: ``ttft`` seconds before the first delta (time to first token) and then ``tps`` output
    tokens per second (each delta waits for its estimated tokens), e.g. 0.8 s and 80 tok/s.
    """

    per_delta: float = DEFAULT_PACE
    ttft: float = 0.0
    tps: float | None = None

    def before(self, index: int, data: Mapping[str, Any]) -> float:
        """Seconds to wait before the ``index``-th content delta carrying ``data``."""
        wait = self.ttft if index == 0 else 0.0
        if self.tps is None:
            return wait + self.per_delta
        delta = data.get("delta", {})
        piece = delta.get("text") or delta.get("partial_json") or delta.get("thinking") or ""
        return wait + estimate_tokens(len(piece)) / self.tps if piece else wait

    @property
    def paced(self) -> bool:
        """Whether any delta after the first waits (a pace of 0 s per chunk, with or without a
        time to first token, streams the rest at once)."""
        return self.tps is not None or self.per_delta > 0

    def describe(self) -> str:
        """One line for reports: ``0 s per chunk``, ``0.8 s to first token, 80 tok/s``."""
        if self.tps is None:
            head = f"{self.ttft:g} s to first token, " if self.ttft else ""
            return f"{head}{self.per_delta:g} s per chunk"
        return f"{self.ttft:g} s to first token, {self.tps:g} tok/s"


REALISTIC = Pace(per_delta=0.0, ttft=REALISTIC_TTFT, tps=REALISTIC_TPS)


def parse_pace(spec: str) -> Pace:
    """A pace from its spec (see the module docstring); ValueError (one line) if invalid."""
    text = spec.strip().lower()
    if text == "realistic":
        return REALISTIC
    try:
        if "," in text:
            ttft_text, tps_text = text.split(",", 1)
            ttft, tps = float(ttft_text), float(tps_text)
            if ttft < 0 or tps <= 0 or ttft != ttft or tps != tps:
                raise ValueError
            return Pace(per_delta=0.0, ttft=ttft, tps=tps)
        seconds = float(text)
    except ValueError:
        raise ValueError(f"invalid offline pace {spec!r}: use {PACE_HELP}") from None
    if not seconds >= 0:
        raise ValueError(f"invalid offline pace {spec!r}: seconds must be >= 0")
    return Pace(per_delta=seconds)


def _positive_env(name: str) -> float | None:
    """A positive float from the environment; unset, invalid or <= 0 -> None."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        log.warning("ignoring %s=%r: not a number", name, raw)
        return None
    return value if value > 0 else None


def pace_from_env() -> Pace:
    """The pace the environment asks for: ``$TEAMDECK_OFFLINE_PACE`` (an invalid spec is
    ignored with a warning), then ``$TEAMDECK_OFFLINE_TTFT`` / ``_TPS`` on top."""
    raw = os.environ.get(PACE_ENV, "").strip()
    pace = Pace()
    if raw:
        try:
            pace = parse_pace(raw)
        except ValueError as exc:
            log.warning("ignoring %s: %s", PACE_ENV, exc)
    ttft, tps = _positive_env(TTFT_ENV), _positive_env(TPS_ENV)
    return Pace(
        per_delta=pace.per_delta,
        ttft=ttft if ttft is not None else pace.ttft,
        tps=tps if tps is not None else pace.tps,
    )


def export_pace(spec: str) -> Pace:
    """Make ``spec`` this process's pace (and its children's): sets ``$TEAMDECK_OFFLINE_PACE``
    and clears the separate TTFT/TPS variables, which would otherwise override it."""
    pace = parse_pace(spec)
    os.environ[PACE_ENV] = spec.strip()
    os.environ.pop(TTFT_ENV, None)
    os.environ.pop(TPS_ENV, None)
    return pace
