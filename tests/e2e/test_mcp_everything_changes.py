"""server-everything (npm) on the 2025 protocol tells its list changes as notifications (the 2026 one, which
tests/core/test_mcp_features.py drives, as a subscriptions/listen stream): its gzip-file-as-resource tool adds a
resource and sends notifications/resources/list_changed, and the resource is listed again, named by /mcp and
completed after '@'. And agentcli claims no sampling capability, so the server registers no tool that needs it."""

from __future__ import annotations

from agentcli.core.mcp.config import parse
from agentcli.ui.slash import mcp_report
from tests import waiting
from tests.e2e.test_mcp_everything import EVERYTHING, pytestmark  # noqa: F401  (skipped where Node is missing)
from tests.fakes.anthropic_server import text, tool_use

ADDED = "demo://resource/session/notes.gz"


async def test_a_resource_the_server_adds_is_listed_again_from_its_notification(make_session, server):
    server.script(
        tool_use(
            "mcp__everything__gzip-file-as-resource",
            {"name": "notes.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"},
        ),
        text("zipped"),
    )
    configs = parse({"mcpServers": {"everything": {"command": str(EVERYTHING)}}}, "test")
    session, _ = make_session(
        mcp_servers=configs, mcp_startup_timeout=60.0, permissions={"allow": ["mcp__everything__*"]}
    )
    try:
        await session.mcp.wait_started()
        everything = session.mcp.servers["everything"]
        assert everything.state == "ready" and ADDED not in [r.uri for r in everything.resources]
        # The server registers the tools that need a client capability once initialized (and says the list
        # changed): agentcli claims elicitation, not sampling, which it does not support.
        await waiting.until(
            lambda: "trigger-elicitation-request" in [t.name for t in everything.tools],
            "the tools needing elicitation listed",
        )
        assert "trigger-sampling-request" not in [t.name for t in everything.tools]
        await session.send("zip it")
        await waiting.until(
            lambda: ADDED in [r.uri for r in everything.resources],
            "the resource listed again",
            detail=lambda: str([r.uri for r in everything.resources]),
        )
        assert f"@everything:{ADDED}" in mcp_report(session.mcp)
        assert f"everything:{ADDED}" in [m.name for m in session.mention_choices()]
    finally:
        await session.aclose()
