"""A prompt that names an image: both front ends show where it was attached."""

from __future__ import annotations

from tests.core.test_images import png
from tests.fakes.anthropic_server import text
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode fixture)
from tests.ui.test_tui_support import SIZE, answer, shown


async def test_the_app_shows_the_image_marker_under_the_prompt(server, tui, repo):
    (repo / "shot.png").write_bytes(png(5, 3))
    server.script(text("A red box."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "what is in shot.png")
        assert "[image: shot.png 5×3]" in shown(app.conversation)
    server.assert_no_rejections()


async def test_line_mode_shows_the_image_marker(plain, server, repo):  # noqa: F811
    (repo / "shot.png").write_bytes(png(5, 3))
    server.script(text("A red box."))
    ui = plain()
    await ui.submit("what is in shot.png")
    assert "[image: shot.png 5×3]" in ui.text
    server.assert_no_rejections()
