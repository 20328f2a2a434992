"""The agent loop and what drives it: subagents, compaction, history replay, agent types, prompts, commands."""
