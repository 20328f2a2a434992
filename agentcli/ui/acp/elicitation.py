"""An MCP server's question (elicitation) asked in the editor, through ACP's ``elicitation/create``.

The SDK agentcli is built on (0.12.1) has it and marks the client's ``elicitation`` capability UNSTABLE; the
newest official schema (the npm SDK 2.4.0) has it in its stable schema. A client that offers form mode
(``clientCapabilities.elicitation.form``) gets a server's form as a form, scoped to the session; one that offers
URL mode gets a URL question as one. Any other question, and every question for a client that offers neither,
is refused as before, with one sentence to the server. The answer goes back as the client gave it: a
server's own schema checks it, as for an answer typed in the TUI.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from typing import Any

from acp import schema as s

from ...core.events import ElicitationRequested

PROPERTY = {
    "string": s.ElicitationStringPropertySchema,
    "number": s.ElicitationNumberPropertySchema,
    "integer": s.ElicitationIntegerPropertySchema,
    "boolean": s.ElicitationBooleanPropertySchema,
}


def offered(capabilities: s.ClientCapabilities | None) -> tuple[bool, bool]:
    """Whether the client takes form questions, and URL questions."""
    offer = capabilities.elicitation if capabilities is not None else None
    return (offer is not None and offer.form is not None, offer is not None and offer.url is not None)


def form(fields: tuple[tuple[str, str, str, bool, tuple[str, ...]], ...]) -> s.ElicitationSchema:
    """The event's fields (name, type, title, required, choices) as ACP's flat form schema."""
    properties: dict[str, Any] = {}
    for name, kind, title, _required, choices in fields:
        extra: dict[str, Any] = {"enum": list(choices)} if choices and kind == "string" else {}
        properties[name] = PROPERTY.get(kind, s.ElicitationStringPropertySchema)(
            type=kind if kind in PROPERTY else "string", title=title or None, **extra
        )
    return s.ElicitationSchema(
        type="object", properties=properties, required=[name for name, _, _, required, _ in fields if required] or None
    )


async def ask(
    conn: Any, session_id: str, event: ElicitationRequested, capabilities: s.ClientCapabilities | None
) -> None:
    """Ask the client ``event``'s question and resolve its future: the answer's fields, "decline" or "cancel"."""
    future = event.future
    if future is None or future.done():
        return
    forms, urls = offered(capabilities)
    answer: dict[str, Any] | str = "decline"
    if urls if event.url else forms:
        try:
            mode: Any = (
                s.ElicitationUrlSessionMode.model_validate(
                    {"sessionId": session_id, "elicitationId": uuid.uuid4().hex, "url": event.url}
                )
                if event.url
                else (s.ElicitationFormSessionMode(session_id=session_id, requested_schema=form(event.fields)))
            )
            response = await conn.create_elicitation(message=f"{event.server} asks: {event.message}", mode=mode)
            answer = (
                (response.content or {})
                if response.action == "accept"
                else ("cancel" if response.action == "cancel" else "decline")
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the client failed to answer: a cancel, said on stderr
            print(f"agentcli: the server's question failed ({type(exc).__name__}: {exc}); cancelled.", file=sys.stderr)
            answer = "cancel"
    if not future.done():
        future.set_result(answer)
