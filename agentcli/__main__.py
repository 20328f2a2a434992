"""The `agentcli` command and `python -m agentcli`."""

from __future__ import annotations

import errno
import gc
import sys

# Writes that fail for want of room or a working device: one sentence, not a traceback.
UNWRITABLE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def main() -> None:
    try:
        start()
    except OSError as exc:
        if exc.errno not in UNWRITABLE:
            raise
        from .leaving import cannot_write, discard_unwritten

        discard_unwritten(sys.stdout)
        try:
            print(cannot_write(exc.filename or "standard output", exc), file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass
        sys.exit(1)


def start() -> None:
    if sys.argv[1:] == ["--version"]:  # starts nothing and reads no key: no restart, no imports
        from . import __version__

        sys.stdout.write(f"agentcli {__version__}\n")
        return
    gc.disable()  # startup makes no garbage worth a pass; cli.run turns collection back on (see there)
    from .core.system.lazy_dataclasses import defer_dataclass_methods

    defer_dataclass_methods()  # before the first dataclass: each compiles its methods when first called
    from .core.system.secret_env import start_without_secrets, undumpable

    start_without_secrets()  # first: a restart (where the wipe cannot be done) then costs one bare start
    undumpable()  # then no other process of the user can read this one's memory, where the key now is
    from .cli import main as run_cli

    run_cli()


if __name__ == "__main__":
    main()
