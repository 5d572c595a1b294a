"""The ``teamdeck`` command (placeholder until the CLI lands in this session)."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    print("teamdeck")
    return 0
