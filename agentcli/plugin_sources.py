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
command-running transports, at most ``plugin_clone_max_mb`` written by one clone (``clone_cap``); a folder named
by the entry must stay inside what holds it. Only a pinned ``sha`` needs the repository's history: every other
clone is shallow.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import paths
from .core.system import clones, git

GITHUB = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
REF = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]{0,199}")  # never an option, never ".."
SHA = re.compile(r"[0-9a-fA-F]{7,64}")
GIT_KINDS = ("github", "url", "git", "git-subdir")
MB = 1024 * 1024  # what plugin_clone_max_mb counts in


class PluginCommandError(Exception):
    """What a plugin command could not do, in one sentence."""


@contextmanager
def clone_cap(what: str, max_bytes: int) -> Iterator[None]:
    """Cloning ``what`` (its source named) under the cap: past it, the one sentence that says so and how to raise it."""
    try:
        yield
    except clones.OverCap:
        raise PluginCommandError(
            f"{what} takes more than {max_bytes / MB:g} MB, the most one clone may write, so git was stopped and "
            f"nothing of it was kept (the setting plugin_clone_max_mb in {paths.user_config_file()} raises the cap)"
        ) from None


def fetch_source(source: Any, location: Path, dest: Path, name: str, max_bytes: int) -> str:
    """Put the plugin's files into ``dest`` (which must not exist): copied from inside the marketplace at
    ``location``, or cloned (at most ``max_bytes``). Returns the commit they came from ("" when unknown)."""
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
    sha, ref = _pin(source, name)
    clone = dest if kind != "git-subdir" else dest.parent / f".{dest.name}-clone"
    try:
        with clone_cap(f"the plugin {name} from {url}", max_bytes):
            if sha:  # the pinned commit alone where the server can, checked out once, at the pin
                error = clones.clone_at(url, clone, sha.lower(), max_bytes)
            else:  # the ref's newest commit alone
                error = clones.clone(url, clone, max_bytes, shallow=True, branch=ref)
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


def _pin(source: dict[str, Any], name: str) -> tuple[str, str]:
    """The entry's ``sha``, else its ``ref`` (a sha wins; "" for what it does not name), checked before git gets it."""
    sha, ref = source.get("sha"), source.get("ref")
    if sha is not None:
        if not isinstance(sha, str) or not SHA.fullmatch(sha):
            raise PluginCommandError(f"the sha of {name} ({sha!r}) is not a commit id")
        return sha, ""
    if ref is not None and (not isinstance(ref, str) or not REF.fullmatch(ref) or ".." in ref):
        raise PluginCommandError(f"the ref of {name} ({ref!r}) is not a branch or tag name")
    return "", ref or ""


def _copy_inside(base: Path, relative: str, dest: Path, what: str, holder: str) -> None:
    """Copy the folder ``relative`` (which must stay inside ``base``) to ``dest``, links kept as links, no .git."""
    inside = base.resolve()
    folder = (inside / relative).resolve()
    if folder != inside and inside not in folder.parents:
        raise PluginCommandError(f"{what} leads outside {holder}")
    if not folder.is_dir():
        raise PluginCommandError(f"{what} is not a folder in {holder}")
    shutil.copytree(folder, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
