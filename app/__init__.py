"""teamdeck: run a team of Claude agents and steer it from a terminal dashboard."""

__version__ = "0.1.0"
