"""/skills in line mode and the TUI, and /<skill-name> offered beside the commands."""

from __future__ import annotations

from agentcli import paths
from agentcli.ui import slash
from agentcli.ui.tui.widgets.entries import NoticeEntry
from tests.core.test_skills import PDF_SKILL, skill
from tests.ui.test_plain import plain  # noqa: F401  (the fixture)
from tests.ui.test_tui_support import SIZE, answer, shown, until


async def test_line_mode_lists_the_skills_and_says_how_to_add_one_when_there_are_none(plain):  # noqa: F811
    empty = plain()
    assert "No skills: a skill is a folder with a SKILL.md" in await empty.submit("/skills")
    await empty.quit()
    skill(paths.config_home() / "skills", "pdf-report", PDF_SKILL)
    ui = plain()
    listed = await ui.submit("/skills")
    assert "/pdf-report  Turns a PDF into a short report." in listed and "SKILL.md]" in listed
    await ui.quit()


async def test_the_tui_lists_the_skills_and_completes_slash_name(server, tui):
    skill(paths.config_home() / "skills", "pdf-report", PDF_SKILL)
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "/skills")
        await until(pilot, lambda: "/pdf-report" in shown(app.conversation), "the skills report")
        assert app.conversation.query(NoticeEntry)
        offered = slash.complete("/pdf", custom=slash.custom_commands(app.session.commands))
        assert "pdf-report" in [c.name for c in offered]
