"""The attack of a repository that is too big: a marketplace or plugin whose clone would fill the disk, where the user
said yes to a plugin, not to its size. Each is a real repository served over file:// and cloned by real git under a
cap of 2 MB (plugin_clone_max_mb): one whose objects are bigger (random, so incompressible: its pack reaches the
file size limit), one whose objects are small but whose files are not (zeros, which git packs into almost nothing and
checks out in full, each file under the limit: the measures stop it), and one whose pinned commit is. Each clone is stopped, said in one sentence with the source, the cap and the setting, and leaves
nothing behind; the marketplace an update could not replace stays as it was."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import io
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from agentcli.core.system import clones
from agentcli.plugin_cli import run_plugin
from tests import waiting
from tests.conftest import git
from tests.e2e.test_headless import agentcli

MB = 1024 * 1024


def plugins_home() -> Path:
    return Path.home() / ".claude" / "plugins"


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (folder / name).write_bytes(content)
        else:
            (folder / name).write_text(content)
    return folder


def commit(folder: Path, files: dict[str, str | bytes], message: str) -> str:
    """``files`` written and committed in the repository ``folder`` (made when new); the commit's id."""
    write(folder, files)
    if not (folder / ".git").exists():
        git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", message)
    return (folder / ".git" / "refs" / "heads" / "main").read_text().strip()


def random_blobs() -> dict[str, str | bytes]:
    return {f"data/blob{n}.bin": os.urandom(MB) for n in range(3)}  # 3 MB that no packing makes smaller


def zeros() -> dict[str, str | bytes]:
    return {f"data/zeros{n}.bin": bytes(MB) for n in range(16)}  # one blob of a few kB packed, 16 MB checked out


def listing(*entries: dict[str, object]) -> dict[str, str | bytes]:
    return {".claude-plugin/marketplace.json": json.dumps({"name": "team", "plugins": list(entries)})}


def helper() -> dict[str, str | bytes]:
    return {".claude-plugin/plugin.json": json.dumps({"name": "helper", "version": "1.0.0"}), "commands/hi.md": "Hi."}


@pytest.fixture(autouse=True)
def cap(isolated_home: Path) -> Path:
    """plugin_clone_max_mb = 2 in the user's own config file (returned, for a test that raises it)."""
    config = isolated_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("plugin_clone_max_mb = 2\n")
    return config


def plugin(*args: str, cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_plugin([*args], cwd, out, err)
    return code, out.getvalue(), err.getvalue()


def files_under(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*")) if folder.exists() else []


def git_left_running(tmp_path: Path) -> list[str]:
    """git processes still at work on this test's folders (none may outlive a stopped clone)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE or "git" not in proc.name():
                continue
            where = " ".join([*proc.cmdline(), proc.cwd()])
        except psutil.Error:
            continue
        if str(tmp_path) in where or str(Path.home()) in where:
            found.append(where)
    return found


def test_a_marketplace_bigger_than_the_cap_is_stopped_and_leaves_nothing(tmp_path, repo, cap):
    upstream = tmp_path / "market"
    commit(upstream, {**listing(), **random_blobs()}, "A marketplace with 3 MB of data")
    proc = agentcli("plugin", "marketplace", "add", f"file://{upstream}", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"agentcli: the marketplace file://{upstream} takes more than 2 MB, the most one clone may write, so git "
        f"was stopped and nothing of it was kept (the setting plugin_clone_max_mb in {cap} raises the cap)."
    ]
    assert files_under(plugins_home() / "marketplaces") == []
    assert not (plugins_home() / "known_marketplaces.json").exists()
    assert git_left_running(tmp_path) == []

    cap.write_text("plugin_clone_max_mb = 16\n")  # as the sentence says
    proc = agentcli("plugin", "marketplace", "add", f"file://{upstream}", cwd=repo)
    assert proc.returncode == 0 and "Added the marketplace team" in proc.stdout, proc.stderr


@pytest.mark.parametrize("attack", ["objects", "files", "pinned files"])
def test_a_plugin_bigger_than_the_cap_is_stopped_and_leaves_nothing(tmp_path, repo, attack):
    upstream = tmp_path / "helper"
    source: dict[str, object] = {"source": "url", "url": f"file://{upstream}"}
    if attack == "pinned files":  # the pinned commit has them, the newest one not: its checkout must be watched too
        source["sha"] = commit(upstream, {**helper(), **zeros()}, "1.0.0 with its data")
        shutil.rmtree(upstream / "data")
        commit(upstream, {}, "Without the data")
    else:
        commit(upstream, {**helper(), **(random_blobs() if attack == "objects" else zeros())}, "1.0.0 with its data")
    write(tmp_path / "market", listing({"name": "helper", "source": source}))
    assert plugin("marketplace", "add", str(tmp_path / "market"), cwd=repo)[0] == 0

    code, out, err = plugin("install", "helper@team", cwd=repo)
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"agentcli: the plugin helper from file://{upstream} takes more than 2 MB, the most one clone may write, so "
        "git was stopped and nothing of it was kept (the setting plugin_clone_max_mb in "
        f"{os.environ['AGENTCLI_HOME']}/config/config.toml raises the cap)."
    ]
    assert files_under(plugins_home() / "cache") == []
    assert not (plugins_home() / "installed_plugins.json").exists()
    assert not (Path.home() / ".claude" / "settings.json").exists()  # nothing enabled
    assert git_left_running(tmp_path) == []


def test_an_update_bigger_than_the_cap_leaves_the_marketplace_as_it_was(tmp_path, repo):
    upstream = tmp_path / "market"
    first = commit(upstream, listing(), "An empty marketplace")
    assert plugin("marketplace", "add", f"file://{upstream}", cwd=repo)[0] == 0
    location = plugins_home() / "marketplaces" / "team"
    assert (location / ".git" / "shallow").read_text().strip() == first  # its newest commit alone was cloned
    before = {path: path.read_bytes() for path in files_under(location) if path.is_file()}
    known = (plugins_home() / "known_marketplaces.json").read_text()

    commit(upstream, random_blobs(), "3 MB more")
    code, out, err = plugin("marketplace", "update", "team", cwd=repo)
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert f"the marketplace team from file://{upstream} takes more than 2 MB" in err and "plugin_clone_max_mb" in err
    assert {path: path.read_bytes() for path in files_under(location) if path.is_file()} == before
    assert sorted(p.name for p in (plugins_home() / "marketplaces").iterdir()) == ["team"]  # no clone left beside
    assert (plugins_home() / "known_marketplaces.json").read_text() == known
    assert git_left_running(tmp_path) == []


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def dumb_http(upstream: Path, served: Path) -> Iterator[str]:
    """The repository ``upstream`` served as plain files over HTTP (git's "dumb" HTTP, as a static web server
    serves one): its URL, while inside."""
    git(upstream.parent, "clone", "-q", "--bare", str(upstream), str(served / f"{upstream.name}.git"))
    git(served / f"{upstream.name}.git", "update-server-info")
    handler = lambda *a, **k: QuietHandler(*a, directory=str(served), **k)  # noqa: E731
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as site:
        threading.Thread(target=site.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{site.server_port}/{upstream.name}.git"
        finally:
            site.shutdown()


def test_a_server_that_cannot_clone_shallow_is_cloned_whole(tmp_path, repo):
    """Git's dumb HTTP (plain files, as a static web server serves a repository) has no shallow clone: the whole
    history is cloned, under the same cap, as before clones were shallow."""
    upstream = tmp_path / "market"
    commit(upstream, listing(), "An empty marketplace")
    with dumb_http(upstream, tmp_path / "served") as url:
        code, out, err = plugin("marketplace", "add", url, cwd=repo)
    assert code == 0 and "Added the marketplace team" in out, err


def test_a_pinned_plugin_is_fetched_without_the_history_before_its_commit(tmp_path, repo):
    """The pinned commit alone: a history that is bigger than the cap (3 MB of random data, removed since) does not
    count, where a whole clone, which a pin needed before, went past the cap and installed nothing."""
    upstream = tmp_path / "helper"
    commit(upstream, random_blobs(), "Data, later removed")
    shutil.rmtree(upstream / "data")
    git(upstream, "add", "-A")
    pinned = commit(upstream, helper(), "1.0.0 without the data")
    commit(upstream, {"commands/later.md": "Not at the pin."}, "After the pin")
    source = {"source": "url", "url": f"file://{upstream}", "sha": pinned}
    write(tmp_path / "market", listing({"name": "helper", "source": source}))
    assert plugin("marketplace", "add", str(tmp_path / "market"), cwd=repo)[0] == 0

    code, out, err = plugin("install", "helper@team", cwd=repo)
    assert code == 0 and "Installed helper@team 1.0.0" in out, err
    installed = plugins_home() / "cache" / "team" / "helper" / "1.0.0"
    assert (installed / "commands" / "hi.md").is_file() and not (installed / "commands" / "later.md").exists()
    record = json.loads((plugins_home() / "installed_plugins.json").read_text())["plugins"]["helper@team"][0]
    assert record["gitCommitSha"] == pinned


def test_a_pinned_plugin_on_a_server_that_cannot_fetch_one_commit_is_cloned_whole(tmp_path, repo, cap):
    """Git's dumb HTTP cannot fetch one commit by its id: the plugin is cloned whole and checked out at the pin."""
    cap.write_text("plugin_clone_max_mb = 16\n")
    upstream = tmp_path / "helper"
    pinned = commit(upstream, helper(), "1.0.0")
    commit(upstream, {"commands/later.md": "Not at the pin."}, "After the pin")
    with dumb_http(upstream, tmp_path / "served") as url:
        write(tmp_path / "market", listing({"name": "helper", "source": {"source": "url", "url": url, "sha": pinned}}))
        assert plugin("marketplace", "add", str(tmp_path / "market"), cwd=repo)[0] == 0
        code, out, err = plugin("install", "helper@team", cwd=repo)
    assert code == 0 and "Installed helper@team 1.0.0" in out, err
    installed = plugins_home() / "cache" / "team" / "helper" / "1.0.0"
    assert (installed / "commands" / "hi.md").is_file() and not (installed / "commands" / "later.md").exists()


def test_fetching_one_commit_starts_no_git_gc_that_nothing_watches(tmp_path):
    """The attack: a commit of many small objects whose ids share their first two digits. Fetched, they stay loose
    (fewer than fetch.unpackLimit), and git, which guesses the loose objects from one folder of them, would start
    `git gc --auto` in a session of its own: out of the watch, the cap, esc and the exit hook."""
    upstream = tmp_path / "crowded"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "config", "gc.auto", "0")  # the test's own commit would start one there
    files: dict[str, str | bytes] = {}
    n = 0
    while len(files) < 40:  # blobs whose ids all start with "17"
        n += 1
        body = f"{n}\n".encode()
        if hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest().startswith("17"):
            files[f"f{n}.txt"] = body
    pinned = commit(upstream, {**helper(), **files}, "Crowded")
    dest = tmp_path / "fetched"
    assert clones.clone_at(f"file://{upstream}", dest, pinned, 16 * MB) == ""
    waiting.wait_until(lambda: not git_left_running(tmp_path), "every git of the fetch ended")
    assert not (dest / ".git" / "gc.log").exists(), "a git gc ran (it logs that the loose objects are unreachable)"
