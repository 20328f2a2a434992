"""What the permissions read of a tool and of the call in hand, as the registry passes them down.

The tools sit above policy (``core/tools/``, whose ``Tool`` and ``ToolContext`` match these): policy judges a
call from the facts its tool declares (``core/tool_facts.py``) and never imports a tool.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..events import Preview, Sink
from ..storage.outputs import CallPlace
from ..system.workspace import Workspace


class JudgedTool(Protocol):
    """A tool as the permissions see it (``tools.base.Tool``)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...  # read, edit, exec or task: what each mode lets run freely
    @property
    def key_arg(self) -> str: ...
    @property
    def preview(self) -> Preview: ...  # how its call reads for people: what the approval shows
    @property
    def workspace_paths(self) -> bool: ...
    @property
    def input_schema(self) -> dict[str, Any]: ...
    @property
    def judged_by(self) -> str: ...
    @property
    def reads_saved_outputs(self) -> bool: ...

    async def check(self, args: dict[str, Any], ctx: Any) -> tuple[str, ...]: ...


class CallContext(CallPlace, Protocol):
    """The call in hand as the permissions see it (``tools.base.ToolContext``)."""

    @property
    def workspace(self) -> Workspace: ...
    @property
    def emit(self) -> Sink: ...
    @property
    def agent_id(self) -> str: ...
    @property
    def agent_description(self) -> str: ...
    @property
    def parent_tool_use_id(self) -> str | None: ...
