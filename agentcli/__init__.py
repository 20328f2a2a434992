"""agentcli: a terminal coding agent with reviewable subagents."""

__version__ = "0.1.0"


class UsageError(Exception):
    """A bad command line; the message is one sentence. Here, in the package every module loads anyway, so the
    flag checks of cli.py and scripting.py share it without importing each other, and `agentcli --help` or a
    usage error loads no module more."""
