"""Line mode (`agentcli --plain`): a prompt-toolkit REPL on the engine's events."""

from .app import PlainApp, run_plain

__all__ = ["PlainApp", "run_plain"]
