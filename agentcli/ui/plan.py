"""An agent's plan (``todo_write``) as every front end shows it: the steps and one line for each."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.events import PlanUpdated
from .escapes import visible

# How each status reads at the start of a step's line.
MARKS = {"pending": "☐", "in_progress": "▶", "completed": "☑"}


@dataclass(frozen=True)
class PlanStep:
    """One step of the main agent's plan (todo_write): its text and how far it is."""

    content: str
    status: str  # pending | in_progress | completed
    active_form: str = ""  # the step as it is being done: 'Running the tests'

    @property
    def line(self) -> str:
        """'▶ Running the tests': the step's mark, and its active form while it is in progress."""
        words = self.active_form if self.status == "in_progress" and self.active_form else self.content
        return f"{MARKS.get(self.status, '?')} {words}"


def plan_steps(event: PlanUpdated) -> list[PlanStep]:
    """The steps of a plan event, made safe to print (the model wrote them)."""
    return [
        PlanStep(
            visible(str(item.get("content", ""))),
            str(item.get("status", "")),
            visible(str(item.get("active_form", ""))),
        )
        for item in event.items
        if isinstance(item, dict)
    ]


def plan_title(steps: list[PlanStep]) -> str:
    """'Plan · 2/5 done'."""
    done = sum(step.status == "completed" for step in steps)
    return f"Plan · {done}/{len(steps)} done"
