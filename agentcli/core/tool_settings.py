"""``ToolSettings``: the settings tools read, the tools' part of ``core/settings.py``'s ``EngineSettings``.

A tool reads them from ``ToolContext.settings``, typed, as config.py built them; it never parses a setting back
out of text. This module imports nothing, so config.py builds the value without loading the tools.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolSettings:
    """What tools read of the settings (config.py declares each, with its default, and builds this)."""

    search_timeout: float  # seconds before grep or glob stops and returns what it found
    web_fetch_timeout: float  # seconds one web_fetch call may take, the page's conversion included
    web_fetch_private: str  # addresses web_fetch may reach besides public ones: none, loopback, all
    output_copy_max_mb: float  # cap of one full copy of a long output (storage/outputs.py)
    output_session_max_mb: float  # cap of all of a session's full-output copies
    keep_secret_env: bool  # bash (and every command the session starts) sees *KEY*/*TOKEN*/*SECRET* variables
    trusted: bool  # the workspace is trusted: git run through bash may use what its config names
