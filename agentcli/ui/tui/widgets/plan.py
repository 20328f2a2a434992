"""The main agent's plan (``todo_write``), a collapsible block above the prompt; hidden while there is none."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Collapsible, Static

from ...plan import PlanStep, plan_title

PLAN_STYLES = {"completed": "$text-muted strike", "in_progress": "bold $accent", "pending": ""}


def plan_content(steps: list[PlanStep]) -> Content:
    """One line per step, the current one bold and the finished ones struck through."""
    return Content("\n").join(Content.styled(step.line, PLAN_STYLES.get(step.status, "")) for step in steps)


class PlanBlock(Collapsible):
    DEFAULT_CSS = """
    PlanBlock {
        margin: 0 1; padding: 0; border-top: none; background: $primary 6%; border-left: thick $accent 50%;
        Contents { padding: 0 1 0 2; }
        &.-empty { display: none; }
    }
    """

    def __init__(self) -> None:
        self._steps = Static("", id="plan-steps")
        self._drawn = False  # its title and steps are composed once there is a plan to show
        super().__init__(self._steps, title="Plan", collapsed=False, id="plan", classes="-empty")

    def compose(self) -> ComposeResult:
        """Nothing while no plan was ever shown: few sessions make one, and the collapsible's title and contents
        (three widgets and their CSS) were part of every first screen, hidden."""
        if self._drawn:
            yield from super().compose()

    def show(self, steps: list[PlanStep]) -> None:
        """Draw ``steps`` (an empty list hides the block)."""
        if steps and not self._drawn:
            self._drawn = True
            self.refresh(recompose=True)
        self.set_class(not steps, "-empty")
        self.title = plan_title(steps)
        self._steps.update(plan_content(steps))
