"""`agentcli rewind SESSION --list` and `--to N [--files|--conversation|--both]`: /rewind from a shell."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .core.door import SavedSession
from .ui.escapes import visible
from .ui.rewind import restore_lines, rewind_list


def run_rewind(args: argparse.Namespace, root: Path) -> int:
    saved = SavedSession(root, args.session)
    for warning in saved.warnings:
        print(f"agentcli: warning: {visible(warning)}", file=sys.stderr)
    if args.to is None:
        for line in rewind_list(saved.prompts, saved.checkpoint_list()):
            print(visible(line))
        return 0
    saved.check_rewind(args.to)
    files = args.files or args.both or not args.conversation
    conversation = args.conversation or args.both or not args.files
    code = 0
    if files:
        restore = saved.restore_files(args.to, overwrite=args.overwrite)
        for line in restore_lines(restore, args.to):
            print(visible(line))
        code = 1 if restore.changed_by_hand else 0
    if conversation:
        saved.rewind_conversation(args.to)
        print(
            f"The conversation now ends before prompt {args.to}; 'agentcli --resume {saved.id}' carries on from there."
        )
    return code
