"""The footer of keys (agentcli/ui/tui/widgets/footer.py) is rebuilt when a key's state changes, and only then."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets._footer import FooterKey

from agentcli.ui.tui.widgets.footer import Footer
from tests.waiting import until


class KeysApp(App[None]):
    BINDINGS = [Binding("escape", "interrupt", "Interrupt"), Binding("ctrl+t", "panel", "Panel")]
    busy = False

    def compose(self) -> ComposeResult:
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action == "interrupt" and not self.busy else True  # dimmed while idle, as agentcli's


def interrupt_key(app: App[None]) -> FooterKey | None:
    return next((k for k in app.query(FooterKey) if k.action == "interrupt"), None)


async def test_the_footer_keeps_its_keys_until_one_changes_state() -> None:
    app = KeysApp()
    async with app.run_test() as pilot:
        app.refresh_bindings()
        idle = await until(lambda: interrupt_key(app), "the footer's keys", step=pilot.pause)
        assert idle is not None and idle.has_class("-disabled")
        for _ in range(
            3
        ):  # refreshes that change nothing the footer shows: Textual's footer rebuilt its keys each time
            app.refresh_bindings()
            await pilot.pause()
        assert interrupt_key(app) is idle
        app.busy = True
        app.refresh_bindings()
        busy = await until(
            lambda: (key := interrupt_key(app)) is not None and not key.has_class("-disabled") and key,
            "esc to interrupt, once busy",
            step=pilot.pause,
        )
        assert busy is not idle
