"""A saved session, not open: what `agentcli rewind` reads of one and does to it from a shell (/rewind does the
same to an open one through ``Session.rewind``). Front ends take it from ``door.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .engine.history import Prompt, history_before, user_prompts
from .events import Rewound
from .storage.checkpoints import Checkpoint, Checkpoints, Restore
from .storage.store import SessionError, SessionStore, find_session, in_use, read_records

BUSY = "Session {id} is open in another agentcli; rewind it there with /rewind."


class SavedSession:
    """Session ``ident`` (an id or a unique prefix) of the workspace ``root``, as its file holds it now.
    Raises SessionError with one sentence when there is none."""

    def __init__(self, root: Path, ident: str) -> None:
        self.path = find_session(root, ident)
        self.id = self.path.stem
        self.records: list[dict[str, Any]]
        self.records, self.warnings = read_records(self.path)  # warnings: the lines skipped, each in one sentence
        self.prompts: list[Prompt] = user_prompts(self.records)
        self._checkpoints = Checkpoints(root, self.path.parent / self.id / "checkpoints")

    def checkpoint_list(self) -> list[Checkpoint]:
        return self._checkpoints.list()

    def check_rewind(self, number: int) -> None:
        """SessionError with one sentence unless prompt ``number`` exists and no other agentcli has the session."""
        if not 1 <= number <= len(self.prompts):
            raise SessionError(f"There is no prompt {number} to rewind to; session {self.id} has {len(self.prompts)}.")
        if in_use(self.path):
            raise SessionError(BUSY.format(id=self.id))

    def restore_files(self, number: int, *, overwrite: bool) -> Restore:
        """The files as they were before prompt ``number`` (those changed by hand since are listed, unless
        ``overwrite``)."""
        return self._checkpoints.restore(number, overwrite=overwrite)

    def rewind_conversation(self, number: int) -> None:
        """End the stored conversation before prompt ``number``: a resume carries on from there."""
        store = SessionStore(self.path.parent, self.id)
        if not store.lock():
            raise SessionError(BUSY.format(id=self.id))
        try:
            store.write(
                Rewound(
                    to_prompt=number,
                    prompt=self.prompts[number - 1].text,
                    messages=history_before(self.records, number),
                )
            )
        finally:
            store.close()
