"""`agentcli rewind SESSION --list` and `--to N [--files|--conversation|--both]`: /rewind from a shell."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .core.storage.checkpoints import Checkpoints
from .core.events import Rewound
from .core.engine.history import history_before, user_prompts
from .core.storage.store import SessionError, SessionStore, find_session, in_use, read_records
from .ui.escapes import visible
from .ui.rewind import restore_lines, rewind_list


def run_rewind(args: argparse.Namespace, root: Path) -> int:
    path = find_session(root, args.session)
    records, warnings = read_records(path)
    for warning in warnings:
        print(f"agentcli: warning: {visible(warning)}", file=sys.stderr)
    prompts = user_prompts(records)
    checkpoints = Checkpoints(root, path.parent / path.stem / "checkpoints")
    if args.to is None:
        for line in rewind_list(prompts, checkpoints.list()):
            print(visible(line))
        return 0
    if not 1 <= args.to <= len(prompts):
        raise SessionError(f"There is no prompt {args.to} to rewind to; session {path.stem} has {len(prompts)}.")
    if in_use(path):
        raise SessionError(f"Session {path.stem} is open in another agentcli; rewind it there with /rewind.")
    files = args.files or args.both or not args.conversation
    conversation = args.conversation or args.both or not args.files
    code = 0
    if files:
        restore = checkpoints.restore(args.to, overwrite=args.overwrite)
        for line in restore_lines(restore, args.to):
            print(visible(line))
        code = 1 if restore.changed_by_hand else 0
    if conversation:
        store = SessionStore(path.parent, path.stem)
        if not store.lock():
            raise SessionError(f"Session {path.stem} is open in another agentcli; rewind it there with /rewind.")
        try:
            store.write(Rewound(to_prompt=args.to, prompt=prompts[args.to - 1].text,
                                messages=history_before(records, args.to)))
        finally:
            store.close()
        print(f"The conversation now ends before prompt {args.to}; 'agentcli --resume {path.stem}' carries on from there.")
    return code
