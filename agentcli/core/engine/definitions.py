"""One loader for definition files (agent types, commands, skills) from the user's folders, the workspace's
and enabled plugins. It says, once for all three kinds: which folders a setting source lets in, where a file
may lead (frontmatter.confinement), how it is read (frontmatter.read_definition: no FIFO, no device, capped),
and the one sentence a skipped folder or file leaves in the warnings. Each kind says only where its files are
and how one is parsed; what a parsed definition then means (precedence, names) stays with the kind.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..system.workspace import display_path
from .frontmatter import confinement, read_definition
from .plugins import Plugin, expand_root

T = TypeVar("T")

ListFiles = Callable[[Path, tuple[Path, ...], str, list[str]], list[Path]]
"""The files of one folder: (folder, the bases its files may lead into, what those are called, warnings);
raises ValueError with the reason when the folder itself may not be walked."""


@dataclass(frozen=True)
class Definition:
    """One definition file, read: its text, where it is, how warnings name it, and whose it is."""

    text: str
    path: Path
    shown: str
    project: bool
    folder: Path | None = None  # the user's or workspace's folder it came from; None for a plugin's
    plugin: Plugin | None = None


def skip_reason(exc: Exception) -> str:
    """Why a definition file was skipped, as the end of a sentence."""
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8 text"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc)


def from_folders(
    folders: Iterable[tuple[Path, bool]],
    base: Path | None,
    *,
    kind: str,
    label: str,
    sources: Collection[str],
    list_files: ListFiles,
    parse: Callable[[Definition], T],
    warnings: list[str],
) -> Iterator[tuple[T, Definition]]:
    """Each definition of ``folders`` (each with whether it is the workspace's own), lowest precedence first,
    parsed; a folder whose setting source is not in ``sources`` is passed over. ``kind`` names a folder in a
    warning ("agent": "Skipped the agent folder ..."), ``label`` a file ("agent file": "Skipped agent file ...")."""
    for folder, project in folders:
        if ("project" if project else "user") not in sources:
            continue
        bases, where = confinement(base, project)
        try:
            files = list_files(folder, bases, where, warnings)
        except ValueError as exc:
            warnings.append(f"Skipped the {kind} folder {display_path(folder, base)}: {exc}.")
            continue
        for path in files:
            shown = display_path(path, base)
            parsed = _parsed(
                functools.partial(_read, path, shown, bases, where, project, folder),
                parse,
                f"{label} {shown}",
                warnings,
            )
            if parsed is not None:
                yield parsed


def from_plugins(
    plugins: Sequence[Plugin],
    files_of: Callable[[Plugin, list[str]], list[Path]],
    *,
    label: str,
    parse: Callable[[Definition], T],
    warnings: list[str],
    fill_root: bool = True,
) -> Iterator[tuple[T, Definition]]:
    """Each definition the enabled ``plugins`` bring, parsed; every file stays inside its plugin's folder.
    ``fill_root``: ``${CLAUDE_PLUGIN_ROOT}`` in the text becomes the plugin's folder, as Claude Code fills it."""
    for plugin in plugins:
        for path in files_of(plugin, warnings):
            shown = f"{path} ({plugin.where})"
            read = functools.partial(
                _read, path, shown, (plugin.root,), plugin.where, plugin.project, None, plugin, fill_root=fill_root
            )
            parsed = _parsed(read, parse, f"{label} {shown}", warnings)
            if parsed is not None:
                yield parsed


def _read(
    path: Path,
    shown: str,
    bases: tuple[Path, ...],
    where: str,
    project: bool,
    folder: Path | None,
    plugin: Plugin | None = None,
    *,
    fill_root: bool = False,
) -> Definition:
    text = read_definition(path, bases, where)
    if plugin is not None and fill_root:
        text = expand_root(text, plugin.root)
    return Definition(text, path, shown, project, folder, plugin)


def _parsed(
    read: Callable[[], Definition], parse: Callable[[Definition], T], named: str, warnings: list[str]
) -> tuple[T, Definition] | None:
    """The file read and parsed, or None with "Skipped <named>: <reason>." in ``warnings``."""
    try:
        definition = read()
        return parse(definition), definition
    except (OSError, ValueError) as exc:  # ValueError: a refused or undecodable file, or the kind's own parse error
        warnings.append(f"Skipped {named}: {skip_reason(exc)}.")
        return None


__all__ = ["Definition", "ListFiles", "from_folders", "from_plugins", "skip_reason"]
