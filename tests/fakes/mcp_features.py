"""A real MCP server for the tests of MCP beyond tools, written with the ``mcp`` SDK:

    python -m tests.fakes.mcp_features [--noise]

- ``grow`` adds the tool ``extra`` and ``shrink`` removes it, each telling the client (tools list changed);
- ``ask`` asks the user a question (elicitation) and says what came back;
- ``slow`` reports progress twice before it answers;
- ``roots`` says which folders the client gave as roots;
- ``a.b`` and ``a_b`` are two tools whose cleaned names collide;
- the prompt ``review`` (arguments ``file``, required, and ``focus``), and the resource ``notes://today``;
- its instructions mention INSTRUCTIONS-MARK.

``--noise`` writes a line that is not JSON-RPC to standard output as it starts.
"""

# No `from __future__ import annotations`: the MCP SDK reads each tool's annotations (ctx: Context), which are
# imported inside build(), where a string could not be resolved.
import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

INSTRUCTIONS = "Use the features server's tools for INSTRUCTIONS-MARK work. " + "padding " * 600


def build() -> "MCPServer":
    from mcp.server.mcpserver import Context, MCPServer
    from mcp_types import (
        ElicitRequest,
        ElicitRequestFormParams,
        ElicitResult,
        ErrorData,
        InputRequiredResult,
        ListRootsRequest,
        ListRootsResult,
    )
    from pydantic import BaseModel

    server = MCPServer("features", instructions=INSTRUCTIONS)

    async def changed(ctx: Context) -> None:
        await ctx.notify_tools_changed()  # the 2026 protocol's subscriptions/listen stream
        try:
            await ctx.session.send_tool_list_changed()  # earlier protocols' notification
        except Exception:  # noqa: BLE001 - not defined at this protocol version
            pass

    @server.tool(description="Add the tool extra.")
    async def grow(ctx: Context) -> str:
        def extra(text: str) -> str:
            """Say extra."""
            return f"extra: {text}"

        server.add_tool(extra)
        await changed(ctx)
        return "grown"

    @server.tool(description="Remove the tool extra.")
    async def shrink(ctx: Context) -> str:
        server.remove_tool("extra")
        await changed(ctx)
        return "shrunk"

    class Answer(BaseModel):
        name: str
        count: int = 1

    # On the 2026 protocol a server asks the client through an InputRequiredResult, and the client calls again
    # with the answers; the client's elicitation and roots callbacks answer both ways alike.
    @server.tool(description="Ask the user for a name.")
    async def ask(ctx: Context) -> Any:
        answers = ctx.input_responses or {}
        if "name" not in answers:
            schema = Answer.model_json_schema()
            return InputRequiredResult(
                input_requests={
                    "name": ElicitRequest(
                        params=ElicitRequestFormParams(
                            message="What name should the report use?", requested_schema=schema
                        )
                    )
                }
            )
        got = answers["name"]
        if isinstance(got, ErrorData) or getattr(got, "code", None) is not None:
            return f"refused: {getattr(got, 'message', None)}"
        assert isinstance(got, ElicitResult), got
        content = got.content or {}
        return f"{got.action}: {content.get('name')} x{content.get('count')}" if got.action == "accept" else got.action

    @server.tool(description="Work in steps, reporting progress.")
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "first half")
        await ctx.report_progress(2, 2, "second half")
        return "done slowly"

    @server.tool(description="List the client's roots.")
    async def roots(ctx: Context) -> Any:
        answers = ctx.input_responses or {}
        if "roots" not in answers:
            return InputRequiredResult(input_requests={"roots": ListRootsRequest()})
        listed = answers["roots"]
        assert isinstance(listed, ListRootsResult), listed
        return "\n".join(str(root.uri) for root in listed.roots)

    @server.tool(name="a.b", description="The dotted one.")
    def dotted() -> str:
        return "dotted"

    @server.tool(name="a_b", description="The underscored one.")
    def underscored() -> str:
        return "underscored"

    @server.prompt(description="Review a file.")
    def review(file: str, focus: str = "everything") -> str:
        return f"Please review {file}, looking at {focus}."

    @server.resource("notes://today", name="today", description="Today's notes.", mime_type="text/plain")
    def today() -> str:
        return "NOTES-MARK: ship the release"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise", action="store_true")
    args = parser.parse_args()
    server = build()
    if args.noise:
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    server.run()


if __name__ == "__main__":
    main()
