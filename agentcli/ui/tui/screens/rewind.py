"""/rewind (or esc esc on an empty input): pick a prompt, then what to restore to just before it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from ....core.door import Checkpoint, Prompt
from ...escapes import visible
from ...format import flat
from ...transcript_text import clip
from .dialog import Dialog

Choice = tuple[int, str]  # prompt number, and "conversation", "files" or "both"


def prompt_option(prompt: Prompt, point: Checkpoint | None) -> Option:
    text = Content.assemble(Content.styled(f"{prompt.number:>3}  ", "bold"), visible(clip(flat(prompt.text), 70)))
    if point is not None and point.files:
        text += Content.styled(f"\n     changed: {clip(', '.join(point.files), 66)}", "$text-muted")
    for note in point.notes if point is not None else []:
        text += Content.styled(f"\n     {clip(note, 70)}", "$warning")
    return Option(text, id=str(prompt.number))


class RewindScreen(Dialog[Choice | None]):
    """Resolves to the chosen prompt and action, or None (esc)."""

    DEFAULT_CSS = """
    #rewind {
        border: thick $accent;
    }

    #rewind-prompts {
        height: auto;
        max-height: 20;
        margin: 1 0 0 0;
    }

    #rewind-why {
        margin: 1 0 0 0;
        color: $text-muted;
    }

    #rewind-buttons {
        height: auto;
        margin: 1 0 0 0;
    }

    #rewind-buttons Button {
        margin: 0 2 0 0;
    }
    """
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Cancel", show=False),
        Binding("c", "choose('conversation')", show=False),
        Binding("f", "choose('files')", show=False),
        Binding("b", "choose('both')", show=False),
    ]

    def __init__(self, prompts: list[Prompt], points: list[Checkpoint]) -> None:
        super().__init__()
        self.prompts = prompts
        self.points = {p.prompt: p for p in points}

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind", classes="dialog"):
            yield Static(Content.styled("Rewind to just before a prompt", "bold"), id="rewind-title")
            yield OptionList(
                *[prompt_option(p, self.points.get(p.number)) for p in reversed(self.prompts)], id="rewind-prompts"
            )
            yield Static(
                "Restore what the agents changed since then: the conversation, the files, or both. "
                "Files you edited by hand since are left alone and listed.",
                id="rewind-why",
            )
            with Horizontal(id="rewind-buttons"):
                yield Button("Both (b)", id="both", variant="warning")
                yield Button("Files (f)", id="files")
                yield Button("Conversation (c)", id="conversation")
                yield Button("Cancel (esc)", id="cancel", variant="primary")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(None)
        else:
            self.action_choose(str(event.button.id))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#both", Button).focus()

    def action_choose(self, what: str) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return
        option = options.get_option_at_index(options.highlighted)
        self.dismiss((int(option.id or 0), what))
