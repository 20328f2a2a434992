"""What /rewind shows, in every front end and `agentcli rewind`: the numbered prompts with the files
changed after each, and what a restore did."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.door import Checkpoint, Prompt, Restore
from .format import flat
from .transcript_text import clip, local_time

if TYPE_CHECKING:
    from ..core.door import SessionSurface

WHAT = ("both", "files", "conversation")


def rewind_list(prompts: list[Prompt], points: list[Checkpoint]) -> list[str]:
    """Each prompt, numbered, with the files changed after it and what rewind cannot restore."""
    if not prompts:
        return ["This session has no prompts yet."]
    by_prompt = {p.prompt: p for p in points}
    lines = []
    for prompt in prompts:
        lines.append(f"{prompt.number:>3}  {local_time(prompt.ts):<16}  {clip(flat(prompt.text), 90)}")
        point = by_prompt.get(prompt.number)
        if point is not None and point.files:
            lines.append(f"     changed: {', '.join(point.files)}")
        for note in point.notes if point is not None else []:
            lines.append(f"     note: {note}")
    return lines


def restore_lines(
    restore: Restore, number: int, overwrite_hint: str = "pass --overwrite", announced: bool = False
) -> list[str]:
    """What a restore did; ``announced``: the session's own Notice said which files it restored."""
    lines = []
    if restore.restored:
        if not announced:
            lines.append(f"Restored to before prompt {number}: {', '.join(restore.restored)}")
    elif not restore.changed_by_hand:
        lines.append(f"The files are already as they were before prompt {number}.")
    if restore.changed_by_hand:
        lines.append(
            f"Left alone, changed by hand since the agent wrote them: {', '.join(restore.changed_by_hand)} "
            f"({overwrite_hint} to put them back anyway)."
        )
    if restore.not_kept:
        lines.append(
            f"Cannot restore (too large to keep, or changed by bash with no copy): {', '.join(restore.not_kept)}"
        )
    return lines


def parse_rewind(arg: str) -> tuple[int, str, bool] | str:
    """'/rewind 3 files overwrite' → (3, "files", True); a sentence when the words make no sense."""
    words = arg.split()
    if not words or not words[0].isdigit():
        return "Give the number of a prompt from the list: /rewind N [files|conversation|both]."
    what = next((w for w in words[1:] if w in WHAT), "both")
    unknown = [w for w in words[1:] if w not in (*WHAT, "overwrite")]
    if unknown:
        return f"/rewind does not know {unknown[0]!r}; it takes N, then files, conversation or both."
    return int(words[0]), what, "overwrite" in words[1:]


def rewind_session(session: SessionSurface, number: int, what: str, overwrite: bool = False) -> list[str]:
    """Rewind ``session`` and say what its events do not (files left alone or not kept); raises SessionError
    for a prompt that does not exist. The events say the rest, once: a Notice names the files restored,
    and Rewound where the conversation now ends."""
    restore = session.rewind(
        number, conversation=what in ("both", "conversation"), files=what in ("both", "files"), overwrite=overwrite
    )
    if what == "conversation":
        return []
    return restore_lines(restore, number, f"/rewind {number} files overwrite", announced=True)
