"""The ``skill`` tool: it loads one skill's instructions when the model decides the skill applies (the
skills themselves, their catalog and their trust sources are in ``skills.py``, which the trust check reads
before any tool is loaded)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import ToolError
from ..policy.rules import Rule
from ..tools.base import Tool, ToolContext
from .skills import Skill, grants


class SkillTool(Tool):
    """``skill``: load one skill's instructions (Claude Code's ``Skill``)."""

    name = "skill"
    role = "skills"
    claude_name = "Skill"
    on_demand = False  # the skills the prompt lists
    description = (
        "Load a skill's instructions: the skills and what each is for are listed in the system "
        "prompt under 'Skills'. Call it when the task matches one, before doing the task."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "The skill's name, as listed."},
            "args": {"type": "string", "description": "Optional: what the skill is to work on."},
        },
        "required": ["skill"],
    }
    kind = "read"
    key_arg = "skill"

    def __init__(self, skills: dict[str, Skill], trusted: bool) -> None:
        self.skills = skills
        self.trusted = trusted
        self.granted: list[Rule] = []  # allowed-tools rules added for the current turn (Session.send drops them)

    def narrowed(self, names: Iterable[str]) -> SkillTool:
        """The same tool offering only ``names`` (a subagent type's ``skills``), sharing the grants."""
        tool = SkillTool({n: s for n, s in self.skills.items() if n in set(names)}, self.trusted)
        tool.granted = self.granted
        return tool

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        skill = self.skills.get(str(args["skill"]).strip().lstrip("/"))
        if skill is None:
            offered = ", ".join(sorted(self.skills)) or "none"
            raise ToolError(f"There is no skill named {args['skill']!r}; the skills are: {offered}.")
        for rule in grants(skill, self.trusted):
            if rule not in ctx.permissions.turn_rules:  # inside the workspace only (Permissions._rules)
                ctx.permissions.turn_rules.append(rule)
                self.granted.append(rule)
        return skill.instructions(str(args.get("args") or ""))
