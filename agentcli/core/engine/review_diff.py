"""What a review looks at: the target named (uncommitted changes, a branch against its base, a commit range,
a diff file) made into one unified diff, and the lines each hunk of it shows on the new side.

Git runs through the hardened runner; a target is resolved to commit ids with ``rev-parse --verify
--end-of-options`` before ``git diff`` sees it, so no target is ever read as an option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..system.git import Repository, find_repository, run_git

MAX_DIFF_CHARS = 200_000  # every reviewer reads the whole diff in its brief: past this, review a narrower range
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
DIFF_OPTIONS = ("--no-color", "--no-ext-diff", "--no-textconv", "-M")


class ReviewTargetError(ValueError):
    """The target names nothing to review; the message says why, in one sentence."""


@dataclass(frozen=True)
class ReviewDiff:
    """The diff under review: what it is (``described``), its text, and per file the new side's line ranges
    its hunks show (a finding outside them is about code the diff did not touch)."""

    described: str
    text: str
    hunks: dict[str, tuple[tuple[int, int], ...]]

    def shows(self, path: str, first: int, last: int) -> bool:
        """Whether lines ``first``-``last`` of ``path`` fall within one of the diff's hunks."""
        return any(a <= first and last <= b for a, b in self.hunks.get(path, ()))


def diff_path(line: str) -> str:
    """The path of a ``+++ b/path`` line: git's C-style quotes undone, the ``b/`` taken off; "" for /dev/null."""
    name = line[4:].rstrip("\n").split("\t")[0]
    if name.startswith('"') and name.endswith('"') and len(name) > 1:
        name = (
            name[1:-1]
            .encode("latin-1", "backslashreplace")
            .decode("unicode_escape")
            .encode("latin-1", "replace")
            .decode("utf-8", "replace")
        )
    if name == "/dev/null":
        return ""
    return name[2:] if name.startswith(("b/", "a/")) else name


def parse_hunks(text: str) -> dict[str, tuple[tuple[int, int], ...]]:
    """Per file of a unified diff, the new side's line ranges its hunks show (a deleted file has none)."""
    hunks: dict[str, list[tuple[int, int]]] = {}
    path = ""
    for line in text.splitlines():
        if line.startswith("+++ "):
            path = diff_path(line)
        elif path and (match := HUNK.match(line)):
            start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
            hunks.setdefault(path, []).append((start, start + max(count, 1) - 1))
    return {p: tuple(ranges) for p, ranges in hunks.items()}


def load_diff(root: Path, target: str) -> ReviewDiff:
    """The diff ``target`` names: "" for staged and unstaged changes against HEAD; ``A...B`` (a branch against
    its base), ``A..B`` (a commit range), a lone ``BASE`` (``BASE...HEAD``), or a diff file's path. The end of a
    range must be what is checked out, since the reviewers read the files of the workspace. Blocking."""
    target = target.strip()
    file = (root / target) if target else None
    if file is not None and file.is_file():
        if not target.startswith(("./", "/")) and _revision(root, target):
            raise ReviewTargetError(
                f"'{target}' names both a file of the workspace and a revision: write "
                f"./{target} to review the file, or name the revision by its commit id."
            )
        real = file.resolve()
        if not Path(target).is_absolute() and real != root.resolve() and root.resolve() not in real.parents:
            raise ReviewTargetError(
                f"{target} leads outside the workspace (to {real}); name that file itself to review it."
            )
        return _diff_file(file, target)
    if target.startswith("-"):
        raise ReviewTargetError(f"'{target}' is not a revision, a range or a file to review.")
    repo = find_repository(root)
    if repo is None:
        raise ReviewTargetError("This is not a git repository: give a diff file to review instead.")
    head = _commit(repo, "HEAD", "this repository has no commit yet")
    args: tuple[str, ...]
    if not target:
        described, args = "the uncommitted changes (staged and unstaged, against HEAD)", ("HEAD",)
    else:
        dots = "..." if "..." in target else ".." if ".." in target else ""
        base, end = target.split(dots, 1) if dots else (target, "")
        if not base:
            raise ReviewTargetError(f"'{target}' names no base to compare with.")
        nor_file = "" if dots else ", nor a diff file"  # a lone target may have meant a file that is not there
        base_id = _commit(repo, base, f"'{base}' is not a commit of this repository{nor_file}")
        end_id = _commit(repo, end or "HEAD", f"'{end}' is not a commit of this repository")
        if end_id != head:
            raise ReviewTargetError(
                f"'{end}' is not checked out, and the reviewers read the files of the workspace: "
                f"check it out first (git switch), then review {base}{dots or '...'}HEAD."
            )
        described = f"{base}{dots or '...'}{end or 'HEAD'}"
        args = (f"{base_id}...{end_id}",) if dots != ".." else (base_id, end_id)
    code, out, err = run_git(repo, "diff", *DIFF_OPTIONS, *args, "--")
    if code != 0:
        raise ReviewTargetError(f"git diff failed: {err.strip().splitlines()[-1] if err.strip() else code}.")
    return _checked(described, out)


def _revision(root: Path, target: str) -> bool:
    """Whether ``target`` (a lone revision or a range) names a commit of the repository here: a planted file
    named ``main`` must not be reviewed in place of the branch the user meant."""
    repo = find_repository(root)
    base = target.split("..", 1)[0]
    if repo is None or not base or base.startswith("-"):
        return False
    code, _, _ = run_git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{base}^{{commit}}")
    return code == 0


def _commit(repo: Repository, rev: str, missing: str) -> str:
    code, out, _ = run_git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    if code != 0 or not out.strip():
        raise ReviewTargetError(missing[0].upper() + missing[1:] + ".")
    return out.strip()


def _diff_file(file: Path, target: str) -> ReviewDiff:
    try:
        with file.open("rb") as f:  # at most this much: a file's size may lie (/proc's say 0)
            data = f.read(4 * MAX_DIFF_CHARS + 1)
        if len(data) > 4 * MAX_DIFF_CHARS:
            raise ReviewTargetError(f"{target} is too large to review (over {MAX_DIFF_CHARS:,} characters).")
        text = data.decode("utf-8", errors="replace")
    except OSError as exc:
        raise ReviewTargetError(f"{target} cannot be read: {exc.strerror or exc}.") from None
    if not parse_hunks(text):
        raise ReviewTargetError(f"{target} holds no unified diff (no '+++' file with a '@@' hunk).")
    return _checked(f"the diff in {target}", text)


def _checked(described: str, text: str) -> ReviewDiff:
    if not text.strip():
        raise ReviewTargetError(f"There is nothing to review in {described}.")
    if len(text) > MAX_DIFF_CHARS:
        raise ReviewTargetError(
            f"The diff of {described} is {len(text):,} characters, over the review's "
            f"{MAX_DIFF_CHARS:,}: review a narrower range."
        )
    return ReviewDiff(described, text, parse_hunks(text))
