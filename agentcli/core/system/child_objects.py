"""Where a worktree child's git keeps the objects it adds: a folder of its own, never the main repository's.

The sandbox keeps the main repository's objects read-only for an isolated child (``protected_paths.
git_writable``): with them writable, a child could unlink the object of a file the user committed and put
other content under its name, which the user's ``git checkout`` then wrote. Its commands' git writes new
objects to ``CHILD_OBJECTS`` in its worktree's own git folder (writable for it) and reads the main ones as
an alternate; agentcli copies them into the main repository through git (``git.absorb_child_objects``)
after each of its commands and when it saves the child's work. Nothing of the main repository names that folder, so the user's own git
never depends on it.
"""

from __future__ import annotations

from pathlib import Path

from .git import CHILD_OBJECTS, Repository, UnsafeRepository, absorb_child_objects
from .protected_paths import linked_git_dirs


def child_git_env(root: Path, branch: str) -> dict[str, str]:
    """The environment for an isolated child's (``branch``) commands in its worktree ``root``: git's object
    folder its own, the main repository's an alternate. {} for any other workspace. Blocking: a mkdir."""
    if not branch:
        return {}
    gitdir, common = linked_git_dirs(root)
    if gitdir is None or common is None:
        return {}
    store = gitdir / CHILD_OBJECTS
    try:
        store.mkdir(exist_ok=True)
    except OSError:
        return {}  # its git then writes to the main objects, which the sandbox keeps read-only: commits fail
    return {"GIT_OBJECT_DIRECTORY": str(store), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(common / "objects")}


def absorb(root: Path, branch: str) -> str:
    """After an isolated child's (``branch``) command, whose processes have all ended: copy the objects it
    added into the main repository, so the branch its commits moved names objects the user's git has (a
    ``git gc`` or ``fsck`` outside finds none missing). A sentence when git fails, else "". Blocking."""
    gitdir, _ = linked_git_dirs(root) if branch else (None, None)
    if gitdir is None:
        return ""
    try:
        absorb_child_objects(Repository(root, gitdir, root))
    except UnsafeRepository as exc:
        return str(exc)
    return ""
