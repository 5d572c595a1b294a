"""Teammate runners: how a teammate's loop is run (one interface, one module per mode)."""

from app.runtime.runners.base import Runner, TeammateSpec

__all__ = ["Runner", "TeammateSpec"]
