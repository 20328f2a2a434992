"""A run of retries of one agent's model call, as the view model folds it (``ui/view.py``): what a working line
or a subagent's entry says while it goes on, and what stays once it is over."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.events import (
    ApprovalRequested,
    ApprovalsWaiting,
    ElicitationRequested,
    Event,
    ReplyStarted,
    Retrying,
    SubagentCancelling,
    SubagentSteered,
    SubagentWrappingUp,
)


@dataclass(frozen=True)
class Retry:
    """A run of retries of one agent's model call: from its first ``Retrying`` to the next event of the
    agent's own loop (the call got through, or the turn ended), the latest error and wait, and the tries."""

    error: str
    delay: float
    attempt: int
    retries: int
    count: int = 1

    @property
    def word(self) -> str:
        """The run in two words, for a subagent's entry: ``retrying 3/8``."""
        return f"retrying {self.attempt}/{self.retries}"

    @property
    def outcome(self) -> str:
        """What stays once the run is over: the error and how many tries it took."""
        return f"{self.error} Retried {self.count} time{'' if self.count == 1 else 's'}."

    @staticmethod
    def fold(run: Retry | None, event: Event) -> Retry | None:
        """The agent's run of retries after its ``event``: begun or counted on by a ``Retrying``, over (None) with
        any other event of its loop; what the user or the inbox says of the agent meanwhile leaves it as it is."""
        if isinstance(event, Retrying):
            return Retry(event.error, event.delay, event.attempt, event.retries, run.count + 1 if run else 1)
        return run if isinstance(event, ASIDES) else None


# Events about an agent that do not come from its loop, and a reply that has only begun (it may break off again):
# they neither end a run of retries nor continue it.
ASIDES = (
    SubagentCancelling,
    SubagentSteered,
    SubagentWrappingUp,
    ApprovalsWaiting,
    ApprovalRequested,
    ElicitationRequested,
    ReplyStarted,
)
