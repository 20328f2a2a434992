"""@-mentions in the engine: the workspace's files as completion lists them, and what a mention attaches
when the prompt is sent, read as read_file reads (each defence tested by performing the attack)."""

from __future__ import annotations

import os
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

from agentcli.core.content import text_of
from agentcli.core.engine import mentions
from agentcli.core.engine.mentions import Names, WorkspaceFiles, expand, fuzzy, list_files, mentioned
from agentcli.core.events import Notice
from agentcli.core.system.workspace import Workspace
from tests.conftest import git
from tests.fakes.anthropic_server import text, tool_use
from tests.waiting import within


def png(width: int = 2, height: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def user_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def test_git_lists_tracked_and_untracked_files_but_not_ignored_ones(repo: Path):
    (repo / "notes.txt").write_text("new, not added\n")
    (repo / "build" / "more.py").write_text("ignored\n")
    files = list_files(repo)
    assert "src/app/auth.py" in files and "notes.txt" in files
    assert not any(f.startswith("build/") for f in files) and not any(f.startswith(".git/") for f in files)
    assert files == sorted(set(files)) and "" not in files  # git's two sorted runs (untracked, the index) merged


def test_a_file_the_index_holds_unmerged_is_listed_once(repo: Path):
    git(repo, "checkout", "-qb", "other")
    (repo / "README.md").write_text("# Theirs\n")
    git(repo, "commit", "-qam", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("# Ours\n")
    git(repo, "commit", "-qam", "ours")
    merged = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "merge", "other"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert merged.returncode == 1 and "CONFLICT" in merged.stdout, merged
    stages = subprocess.run(["git", "ls-files", "--stage", "README.md"], cwd=repo, capture_output=True, text=True)
    assert len(stages.stdout.splitlines()) == 3  # the index holds it three times: base, ours, theirs
    files = list_files(repo)
    assert files.count("README.md") == 1 and files == sorted(set(files))


def test_outside_git_rg_lists_the_files_gitignore_still_honoured(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.py").write_text("x\n")
    (tmp_path / "skip").mkdir()
    (tmp_path / "skip" / "two.py").write_text("x\n")
    (tmp_path / ".gitignore").write_text("skip/\n")
    files = list_files(tmp_path)
    assert "a/one.py" in files and "skip/two.py" not in files


def test_fuzzy_ranks_prefix_then_name_then_inside_then_characters_in_order():
    names = Names(
        ["docs/", "docs/auth.md", "src/app/auth.py", "src/oauth_flow.py", "tests/test_a_u_t_h.py", "authors.txt"]
    )
    assert fuzzy("auth", names, 10) == [
        "authors.txt",
        "docs/auth.md",
        "src/app/auth.py",
        "src/oauth_flow.py",
        "tests/test_a_u_t_h.py",
    ]
    assert fuzzy("sapa", names, 10) == ["src/app/auth.py"]  # s…a…p…a, in order
    assert fuzzy("AUTH.MD", names, 10) == ["docs/auth.md"]  # case does not matter
    assert fuzzy("zzz", names, 10) == [] and fuzzy("a", Names([]), 5) == []
    assert fuzzy("İx", Names(["İx.py", "b/İx"]), 5) == ["İx.py", "b/İx"]  # a name whose lower case is longer


def test_the_list_goes_stale_when_git_s_index_changes(repo: Path):
    files = WorkspaceFiles(repo).read()
    assert not files.stale()
    (repo / "added.py").write_text("x = 1\n")
    git(repo, "add", "added.py")
    assert files.stale()
    assert "added.py" in WorkspaceFiles(repo).read().files


def test_the_menu_matches_untracked_files_and_folders_as_well_as_tracked_ones(repo: Path):
    tracked_only = WorkspaceFiles(repo).read()  # nothing untracked: the index read while git walked is kept
    assert tracked_only.match("views") == ["src/app/views.py"] and "notes/" not in tracked_only.folders
    (repo / "notes").mkdir()
    (repo / "notes" / "views_plan.md").write_text("later\n")
    listed = WorkspaceFiles(repo).read()
    assert listed.match("views") == ["src/app/views.py", "notes/views_plan.md"]
    assert listed.match("note") == ["notes/", "notes/views_plan.md"] and "notes/" in listed.folders
    assert listed.files == sorted(listed.files)


def test_mentioned_names_skip_addresses_and_trailing_punctuation():
    assert mentioned("see @src/app/auth.py, then ask @explore. mail me@example.com @src/app/auth.py") == [
        "src/app/auth.py",
        "explore",
    ]


# ---------------------------------------------------------------- attaching, and its defences


def attach(root: Path, prompt: str, **kwargs: object) -> mentions.Expanded:
    return expand(prompt, Workspace.at(root), [], **kwargs)  # type: ignore[arg-type]


def test_a_mentioned_file_is_attached_whole_and_counts_as_read(repo: Path):
    workspace = Workspace.at(repo)
    found = expand("what does @src/app/auth.py do?", workspace, [])
    assert found.warnings == []
    (block,) = found.blocks
    assert block["text"].startswith(
        "The user attached src/app/auth.py with @src/app/auth.py (10 lines, numbered as read_file numbers them):"
    )
    assert "def handle_auth(user, password):" in block["text"]
    assert workspace.files.seen("main", (repo / "src/app/auth.py").resolve()) is not None  # edit without reading


def test_a_symlink_out_of_the_workspace_is_refused(repo: Path, tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    (repo / "innocent.txt").symlink_to(secret)
    (repo / "linkdir").symlink_to(tmp_path)
    found = attach(repo, "read @innocent.txt and @linkdir/secret.txt")
    assert found.blocks == []
    assert len(found.warnings) == 2 and all("leads outside the workspace" in w for w in found.warnings)
    assert "TOP SECRET" not in repr(found)


def test_a_fifo_is_refused_without_blocking(repo: Path):
    os.mkfifo(repo / "pipe.txt")  # nobody writes to it: opening it to read would wait forever
    found = attach(repo, "look at @pipe.txt")
    assert found.blocks == [] and "not a regular file" in found.warnings[0]


def test_a_huge_file_is_cut_and_says_so(repo: Path):
    (repo / "big.log").write_text("line of a log\n" * 100_000)  # 1.4 MB
    found = attach(repo, "@big.log")
    (block,) = found.blocks
    assert len(block["text"]) < mentions.FILE_CAP + 500
    assert "lines fit here (it has 1,400,000 bytes): read_file with offset=" in block["text"]


def test_all_mentions_of_one_message_share_a_cap(repo: Path, monkeypatch):
    monkeypatch.setattr(mentions, "TOTAL_CAP", 44)  # a's 25 and b's 5, each after read_file's 7-character number
    (repo / "a.txt").write_text("a" * 25)
    (repo / "b.txt").write_text("b" * 25)
    (repo / "c.txt").write_text("c" * 25)
    blocks = attach(repo, "@a.txt @b.txt @c.txt").blocks
    assert "a" * 25 in blocks[0]["text"] and "b" * 5 in blocks[1]["text"] and "b" * 6 not in blocks[1]["text"]
    assert "was not attached: this message's attachments are full" in blocks[2]["text"]


def test_a_binary_file_is_refused_and_an_image_goes_as_an_image(repo: Path):
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    (repo / "shot.png").write_bytes(png())
    found = attach(repo, "@blob.bin and @shot.png")
    assert "binary" in found.warnings[0]
    assert [b["type"] for b in found.blocks] == ["image", "text"] and found.blocks[1]["text"] == "[image: shot.png 2×3]"


def test_a_word_that_names_no_file_is_left_as_text(repo: Path):
    assert attach(repo, "ping @nobody about @decorators").blocks == []


# ---------------------------------------------------------------- through a session, to the stand-in


async def test_sending_attaches_the_file_agent_type_and_subagent_receipt(make_session, server, repo: Path):
    server.script(
        tool_use(
            "task", {"description": "Find auth", "prompt": "Find where auth is handled", "subagent_type": "explore"}
        ),
        tool_use("grep", {"pattern": "handle_auth"}),
        text("It is in src/app/auth.py:9."),
        text("Done."),
        text("Noted."),
    )
    session, recorder = make_session()
    await within(session.send("find auth"), "the first turn")
    await within(session.send("what did @sa-1 do? also ask @explore about @src/app/views.py"), "the second turn")
    sent = user_blocks(server.requests[-1])
    said = text_of(sent)
    assert sent[0]["text"].startswith("what did @sa-1 do?")
    assert "Receipt for sa-1" in said and "also called: grep ×1" in said.lower()
    assert "delegate this request" in said and 'subagent_type "explore"' in said
    assert "The user attached src/app/views.py with @src/app/views.py" in said and "def index():" in said
    assert not recorder.of(Notice, level="warning")


async def test_a_refused_mention_is_a_warning_and_the_message_still_goes(make_session, server, repo: Path, tmp_path):
    (tmp_path / "outside.txt").write_text("private\n")
    (repo / "x.txt").symlink_to(tmp_path / "outside.txt")
    server.script(text("Ok."))
    session, recorder = make_session()
    await within(session.send("summarize @x.txt"), "the turn")
    assert "private" not in text_of(user_blocks(server.requests[-1]))
    (warning,) = recorder.of(Notice, level="warning")
    assert warning.text.startswith("Not attached: @x.txt: it leads outside the workspace")


async def test_a_warning_names_the_path_as_it_was_typed(make_session, server, repo: Path, tmp_path):
    (tmp_path / "outside.txt").write_text("private\n")  # beside the repository: @../outside.txt names it
    (repo / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 8)  # a PNG whose header is damaged
    server.script(text("Ok."))
    session, recorder = make_session()
    await within(session.send("summarize @../outside.txt and @./shot.png"), "the turn")
    assert "private" not in text_of(user_blocks(server.requests[-1]))
    outside, damaged = (w.text for w in recorder.of(Notice, level="warning"))
    assert outside.startswith("Not attached: @../outside.txt: it leads outside the workspace (to ")
    assert outside.endswith(f"{tmp_path / 'outside.txt'}).") and ".." not in outside.replace("@../", "", 1)
    assert damaged.startswith("Not attached: @./shot.png: ") and damaged.endswith("damaged.")
    assert not damaged.endswith("..")


def test_the_session_offers_agent_types_and_subagents_for_completion(make_session):
    session, _ = make_session()
    choices = {(m.name, m.kind) for m in session.mention_choices()}
    assert ("explore", "agent") in choices and ("general-purpose", "agent") in choices


def test_listing_a_repository_whose_git_config_moves_its_work_tree_falls_back_to_rg(tmp_path: Path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "kept.py").write_text("x\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "config", "core.worktree", str(tmp_path)], cwd=root, check=True)
    assert list_files(root) == ["kept.py"]


async def test_a_read_deny_rule_holds_against_a_mention_and_a_named_image(make_session, server, repo: Path):
    (repo / ".env").write_text("API_TOKEN=hunter2\n")
    (repo / "secret.png").write_bytes(png())
    server.script(text("Ok."))
    session, recorder = make_session(permissions={"deny": ["Read(.env)", "read_file(*.png)"]})
    await within(session.send("what is in @.env and secret.png?"), "the turn")
    sent = user_blocks(server.requests[-1])
    assert "hunter2" not in text_of(sent) and not [b for b in sent if b.get("type") == "image"]
    warnings = {w.text for w in recorder.of(Notice, level="warning")}
    assert warnings == {
        "Not attached: @.env is denied by the rule `Read(.env)`.",
        "Not attached: secret.png is denied by the rule `read_file(*.png)`.",
    }
