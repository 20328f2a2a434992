"""Fixtures the TUI tests share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentcli.ui.tui.app import AgentApp, make_app


@pytest.fixture
def tui(make_session: Callable[..., Any]) -> Callable[..., AgentApp]:
    """An app on a fresh session of the ``repo`` fixture, talking to the stand-in server."""

    def build(*, interactive: bool = True, testing: bool = True, **settings: Any) -> AgentApp:
        session, _ = make_session(interactive=interactive, **settings)
        app = make_app(session.settings, session.workspace.root, session=session, testing=testing)
        # A toast lasts the whole test, as it does on an idle machine: under load the app's next step after a
        # notify can come more than Textual's 5 s later, and an expired toast is gone from app._notifications.
        app.NOTIFICATION_TIMEOUT = 3600  # type: ignore[misc]  # this app only, not the class
        return app

    return build
