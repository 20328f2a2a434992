"""Where a marketplace entry's plugin comes from (its ``source``), fetched into a folder, as Claude Code's
marketplaces name them:

- ``"./plugins/helper"``: a folder inside the marketplace, copied;
- ``{"source": "github", "repo": "owner/name"}``, ``{"source": "url", "url": "https://…/x.git"}`` (``"git"``
  is an older name of ``url``): a repository of its own, cloned;
- ``{"source": "git-subdir", "url": "https://…/mono.git" or "owner/name", "path": "plugins/helper"}``: one
  folder of a repository (a monorepo's), cloned and that folder copied;
- each git kind may pin ``"ref"`` (a branch or tag) and ``"sha"`` (a commit, which wins).

Kinds agentcli does not fetch (``npm``, ``pip``, ``archive``, ``command``, …) are refused with one sentence.
Everything goes through the hardened git runner (``core/system/git.py``): no hooks, no submodules, no
command-running transports; a folder named by the entry must stay inside what holds it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from .core.system import git

GITHUB = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
REF = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]{0,199}")  # never an option, never ".."
SHA = re.compile(r"[0-9a-fA-F]{7,64}")
GIT_KINDS = ("github", "url", "git", "git-subdir")


class PluginCommandError(Exception):
    """What a plugin command could not do, in one sentence."""


def fetch_source(source: Any, location: Path, dest: Path, name: str) -> str:
    """Put the plugin's files into ``dest`` (which must not exist): copied from inside the marketplace at
    ``location``, or cloned. Returns the commit they came from ("" when unknown)."""
    if isinstance(source, str):
        _copy_inside(location, source, dest, f"the source of {name} ({source})", "its marketplace")
        return git.head_commit(location)
    kind = source.get("source") if isinstance(source, dict) else None
    if not isinstance(source, dict) or kind not in GIT_KINDS:
        raise PluginCommandError(
            f"agentcli cannot install {name}: its source {json.dumps(source)[:200]} is of a kind "
            "it does not fetch (a folder in the marketplace, github, url, git-subdir)"
        )
    where = str(source.get("repo") if kind == "github" else source.get("url", ""))
    url = _url(where, name, shorthand=kind in ("github", "git-subdir"))
    clone = dest if kind != "git-subdir" else dest.parent / f".{dest.name}-clone"
    try:
        error = git.clone(url, clone) or _pin(clone, source, name)
        if error:
            raise PluginCommandError(f"cannot clone {name} from {url}: {error}")
        sha = git.head_commit(clone)
        if kind == "git-subdir":
            path = source.get("path")
            if not isinstance(path, str) or not path.strip():
                raise PluginCommandError(f'the git-subdir source of {name} names no "path" inside {url}')
            _copy_inside(clone, path, dest, f"the path {path!r} of {name}", url)
    finally:
        if clone != dest:
            shutil.rmtree(clone, ignore_errors=True)
    shutil.rmtree(dest / ".git", ignore_errors=True)
    return sha


def _url(where: str, name: str, *, shorthand: bool) -> str:
    if shorthand and GITHUB.fullmatch(where) and not where.startswith("."):
        return f"https://github.com/{where}.git"
    if not where or where.startswith("-"):
        raise PluginCommandError(f"the source of {name} names no repository")
    return where


def _pin(clone: Path, source: dict[str, Any], name: str) -> str:
    """Check out the entry's ``sha`` or ``ref``, when it names one: "" when done, else why not."""
    sha, ref = source.get("sha"), source.get("ref")
    if sha is not None:
        if not isinstance(sha, str) or not SHA.fullmatch(sha):
            raise PluginCommandError(f"the sha of {name} ({sha!r}) is not a commit id")
        return git.check_out(clone, sha)
    if ref is not None:
        if not isinstance(ref, str) or not REF.fullmatch(ref) or ".." in ref:
            raise PluginCommandError(f"the ref of {name} ({ref!r}) is not a branch or tag name")
        return git.check_out(clone, f"refs/remotes/origin/{ref}", f"refs/tags/{ref}")
    return ""


def _copy_inside(base: Path, relative: str, dest: Path, what: str, holder: str) -> None:
    """Copy the folder ``relative`` (which must stay inside ``base``) to ``dest``, links kept as links, no .git."""
    inside = base.resolve()
    folder = (inside / relative).resolve()
    if folder != inside and inside not in folder.parents:
        raise PluginCommandError(f"{what} leads outside {holder}")
    if not folder.is_dir():
        raise PluginCommandError(f"{what} is not a folder in {holder}")
    shutil.copytree(folder, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
