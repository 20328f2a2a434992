"""Errors shared across core's rooms: what a tool, a policy check or the store raises for the model to read."""

from __future__ import annotations


class ToolError(Exception):
    """A failure the model should read: one clear sentence, returned with is_error."""
