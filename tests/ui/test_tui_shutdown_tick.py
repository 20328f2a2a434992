from __future__ import annotations

from tests.fakes.anthropic_server import text


async def test_the_clock_tick_after_the_app_closed_does_nothing(server, tui):
    server.script(text("Hi."))
    app = tui()
    async with app.run_test():
        pass
    assert not app.screen_stack
    await app.tick()  # the timer can fire once more while the app shuts down
