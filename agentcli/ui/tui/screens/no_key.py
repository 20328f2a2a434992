"""Shown at start when no API key or base URL is set: how to set one. The app stays usable."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from ...slash import demo_command
from .dialog import Dialog


def how_to() -> Content:
    """How to get going, with the demo command as typed from where agentcli was started (``slash.demo_command``)."""
    return Content("\n").join(
        [
            Content.styled("No API key yet", "bold $error"),
            Content(""),
            Content(
                "agentcli talks to Claude through the Anthropic API and needs a key. Set one, then start "
                "agentcli again:"
            ),
            Content.styled("  export ANTHROPIC_API_KEY=sk-ant-...", "bold $secondary"),
            Content(""),
            Content("Or point it at a local Anthropic-compatible server (Ollama, vLLM, a proxy):"),
            Content.styled("  export ANTHROPIC_BASE_URL=http://localhost:11434", "bold $secondary"),
            Content(""),
            Content("Or try agentcli first, in a sample repository with a scripted model (no key, no network):"),
            Content.styled(f"  {demo_command()}", "bold $secondary"),
            Content(""),
            Content("Keys are made at https://console.anthropic.com/settings/keys"),
            Content(""),
            Content.assemble(
                Content.styled("esc", "bold"),
                " closes this and lets you look around · ",
                Content.styled("ctrl+q", "bold"),
                " quits",
            ),
        ]
    )


class NoKeyScreen(Dialog[None]):
    DEFAULT_CSS = """
    #no-key {
        width: 80;
        border: thick $error;
        scrollbar-size-vertical: 1;
    }
    """
    BINDINGS = [Binding("escape", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="no-key", classes="dialog"):  # scrolls rather than overflow a small terminal
            yield Static(how_to(), id="no-key-text")
