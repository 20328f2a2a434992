"""Shown at start when no API key or base URL is set: how to set one. The app stays usable."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Markdown

HOW_TO = """\
## No API key yet

agentcli talks to Claude through the Anthropic API and needs a key. Set one, then start agentcli again:

```sh
export ANTHROPIC_API_KEY=sk-ant-...
agentcli
```

Or point it at a local Anthropic-compatible server (Ollama, vLLM, a proxy):

```sh
export ANTHROPIC_BASE_URL=http://localhost:11434
```

Keys are made at <https://console.anthropic.com/settings/keys>.

**esc** closes this and lets you look around · **ctrl+q** quits
"""


class NoKeyScreen(ModalScreen[None]):
    CSS_PATH = "no_key.tcss"
    BINDINGS = [Binding("escape", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="no-key"):
            yield Markdown(HOW_TO)
