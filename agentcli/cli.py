"""The command line: parse flags, load settings, and hand over to a front end."""

from __future__ import annotations

import argparse
import gc
import os
import re
import stat
import sys
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import UsageError, __version__

if TYPE_CHECKING:
    from .config import Settings
    from .core.door import SessionSurface
    from .trust import Outcome, Request
    from .ui.headless import HeadlessOutput

# Settings, permissions, the store (and through them asyncio and pathspec) are imported inside
# run(), where they are needed: `agentcli --help` and usage errors stay quick.

OUTPUT_FORMATS = ("text", "json", "stream-json", "events")


ARGUMENTS = {
    "session": "a session id (or a unique prefix of one)",
    "path": "a workspace's path",
    "id": "a subagent id such as sa-3",
}  # what a subcommand's missing argument is, in words


class Parser(argparse.ArgumentParser):
    """argparse's messages, said for a subcommand in its own words and pointing at its own help."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.removeprefix("agentcli").strip()  # "sessions show"; "" for agentcli itself
        if command:
            if choice := re.match(r"argument \w+: invalid choice: '(.*)' \(choose from (.*)\)$", message):
                listed = choice[2].replace("'", "")
                message = f"'{command} {choice[1]}' is not a subcommand; '{command}' takes {listed}"
            elif missing := re.match(r"the following arguments are required: (.*)$", message):
                names = missing[1].split(", ")
                message = f"'{command}' needs " + " and ".join(ARGUMENTS.get(name, name) for name in names)
                if "session" in names:
                    message += "; 'agentcli sessions list' shows them"
        raise UsageError(f"{message} (see {self.prog} --help)")


REVIEW_HELP = (
    "Review changes headless with parallel reviewers and print the checked findings (docs/review.md). "
    "TARGET: nothing (the uncommitted changes), a base branch (BASE...HEAD), A...B, A..B, or a diff "
    "file. --fail-on high|medium|low exits 1 when a verified finding that severe or worse stands (for "
    "CI); --output-format json gives the findings as data. The other options are -p's."
)


def build_parser(review: bool = False) -> argparse.ArgumentParser:
    """The main command line; ``review``: the same options, introduced as `agentcli review [TARGET]`'s."""
    from .core.vocabulary import MODES

    p = Parser(
        prog="agentcli review" if review else "agentcli",
        usage="agentcli review [TARGET] [options]"
        if review
        else "agentcli [options] [PROMPT]  (or: agentcli SUBCOMMAND …)",
        description=REVIEW_HELP
        if review
        else "A terminal coding agent with reviewable subagents. New to it? 'agentcli --demo' tries "
        "it in a sample repository against a scripted model: no key, no network.",
        epilog=None
        if review
        else "Subcommands: 'agentcli review [TARGET]' (headless, -p's flags), 'agentcli sessions list|show', 'agentcli rewind', 'agentcli agents', "
        "'agentcli trust list|revoke', 'agentcli worktrees list|diff|merge|discard', 'agentcli mcp list', "
        "'agentcli plugin install|list|enable|disable|uninstall|update|marketplace', "
        "'agentcli acp' (an ACP agent for editors). "
        "A subcommand's name as the first word runs it; 'agentcli -- sessions' sends it as a prompt.",
    )
    p.add_argument(
        "first_prompt",
        nargs="*",
        metavar="TARGET" if review else "PROMPT",
        help="what to review (see above)"
        if review
        else 'the first message, as in claude "…": the app (or --plain) starts with it sent',
    )
    p.add_argument("--version", action="version", version=f"agentcli {__version__}")
    p.add_argument(
        "-p",
        "--print",
        dest="prompt",
        nargs="?",
        const="-",
        metavar="PROMPT",
        help="run headless: answer PROMPT (or standard input) and exit",
    )
    p.add_argument("--plain", action="store_true", help="line mode instead of the full-screen app")
    p.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text", help="headless output format")
    p.add_argument("--model", help="model id (default: config, ANTHROPIC_MODEL, or a current Sonnet)")
    p.add_argument(
        "--permission-mode",
        choices=(*MODES, "dontAsk"),
        help="what runs without asking (dontAsk, headless: refuse what would ask, asking no one)",
    )
    p.add_argument("--max-turns", type=positive_int, help="turn cap for the main agent per message")
    p.add_argument("--subagent-max-turns", type=positive_int, help="turn cap for each subagent (default 30)")
    p.add_argument(
        "--thinking",
        type=thinking_flag,
        metavar="off|on|adaptive",
        help="extended thinking (default: adaptive where the model has it, else off)",
    )
    p.add_argument(
        "--max-thinking-tokens", type=positive_int, metavar="N", help="thinking budget; alone, it turns thinking on"
    )
    p.add_argument("-c", "--continue", dest="continue_", action="store_true", help="resume the latest session here")
    p.add_argument("-r", "--resume", metavar="SESSION", help="resume a session by id (or a unique prefix)")
    p.add_argument(
        "--trust-workspace",
        action="store_true",
        help="apply what this workspace's settings widen, for this run, without asking",
    )
    p.add_argument(
        "--mcp-config",
        action="append",
        metavar="FILE_OR_JSON",
        help="MCP servers to start, from a file or inline JSON in Claude Code's format (may repeat)",
    )
    p.add_argument(
        "--fail-on",
        choices=("high", "medium", "low"),
        help="agentcli review: exit 1 when a verified finding this severe or worse stands",
    )
    p.add_argument(
        "--plugin-dir",
        action="append",
        metavar="DIR",
        help="load the plugin in DIR for this session (may repeat; docs/plugins.md)",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="try agentcli in a sample repository against a scripted stand-in model: no key, no network",
    )
    from .scripting import add_script_flags

    add_script_flags(p)
    for action in p._actions if review else ():  # what a review does not take is not offered in its help
        if action.dest in ("prompt", "plain", "continue_", "resume"):
            action.help = argparse.SUPPRESS
    return p


def build_subcommand_parser() -> argparse.ArgumentParser:
    p = Parser(prog="agentcli")
    sub = p.add_subparsers(dest="command", required=True)
    sessions = sub.add_parser("sessions", help="list or show saved sessions")
    sessions_sub = sessions.add_subparsers(dest="action", required=True)
    ls = sessions_sub.add_parser("list", help="sessions of this workspace, newest first")
    ls.add_argument("--all", action="store_true", help="every workspace")
    ls.add_argument("--json", action="store_true", help="raw records")
    show = sessions_sub.add_parser("show", help="a session's main transcript, or one subagent's")
    show.add_argument("session")
    show.add_argument("--agent", metavar="SUBAGENT_ID", help="a subagent id such as sa-1")
    show.add_argument("--json", action="store_true", help="raw records")
    export = sessions_sub.add_parser(
        "export",
        help="a session as Markdown or JSON, subagents and receipts included, "
        "secrets redacted: to attach to a pull request",
    )
    export.add_argument("session")
    export.add_argument("--format", choices=("markdown", "json"), default="markdown")
    export.add_argument("-o", "--output", metavar="FILE", help="write it to FILE (default: standard output)")
    rewind = sub.add_parser("rewind", help="list a session's checkpoints, or go back to before a prompt")
    rewind.add_argument("session")
    what = rewind.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="the prompts and the files changed after each (default)")
    what.add_argument("--to", type=positive_int, metavar="N", help="go back to just before prompt N")
    how = rewind.add_mutually_exclusive_group()
    how.add_argument("--files", action="store_true", help="restore the files only")
    how.add_argument("--conversation", action="store_true", help="restore the conversation only")
    how.add_argument("--both", action="store_true", help="restore both (the default)")
    rewind.add_argument(
        "--overwrite", action="store_true", help="also put back files changed by hand since the agent wrote them"
    )
    sub.add_parser("agents", help="list the agent types available here")
    trees = sub.add_parser("worktrees", help="isolated subagents' worktrees: list, diff, merge or discard one")
    trees_sub = trees.add_subparsers(dest="action", required=True)
    trees_sub.add_parser("list", help="every subagent worktree of this repository and what it changed")
    for action, text in (
        ("diff", "show what it changed"),
        ("merge", "apply it to your working tree"),
        ("discard", "remove it and its branch"),
    ):
        trees_sub.add_parser(action, help=text).add_argument("id", help="a subagent id such as sa-3")
    trust = sub.add_parser("trust", help="the remembered workspace trust answers")
    trust_sub = trust.add_subparsers(dest="action", required=True)
    trust_sub.add_parser("list", help="every remembered answer and what the files asked for")
    trust_sub.add_parser("revoke", help="forget the answer for a workspace").add_argument("path")
    mcp = sub.add_parser("mcp", help="the MCP servers configured here")
    mcp_sub = mcp.add_subparsers(dest="action", required=True)
    mcp_list = mcp_sub.add_parser("list", help="start each server, and show its state and tools")
    mcp_list.add_argument("--mcp-config", action="append", metavar="FILE_OR_JSON", help="more servers")
    mcp_list.add_argument("--trust-workspace", action="store_true", help="start this workspace's servers too")
    return p


def first_prompt(args: argparse.Namespace) -> None:
    """`agentcli "question"`: the first message (``args.first_prompt``, or None); with -p, the prompt."""
    words = args.first_prompt
    if len(words) > 1:
        raise UsageError(f'put the prompt in quotes, as one argument: agentcli "{" ".join(words)}"')
    args.first_prompt = words[0] if words else None
    if args.first_prompt is not None and args.prompt is not None:
        if args.prompt != "-":
            raise UsageError("give the prompt once: agentcli -p PROMPT, or agentcli PROMPT")
        args.prompt, args.first_prompt = args.first_prompt, None  # `agentcli "question" -p`, as claude takes it
    if args.first_prompt is not None and args.input_format == "stream-json":
        raise UsageError("--input-format stream-json reads the prompts from standard input; leave out PROMPT")


def review_target(args: argparse.Namespace, review: bool) -> None:
    """`agentcli review [TARGET]` runs headless on TARGET (``args.review``; None for any other run)."""
    args.review = None
    if not review:
        if args.fail_on:
            raise UsageError("--fail-on goes with 'agentcli review'")
        return
    if args.prompt is not None or args.input_format == "stream-json":
        raise UsageError("agentcli review takes a TARGET to review, not a prompt")
    if len(args.first_prompt) > 1:
        raise UsageError("agentcli review takes one TARGET: a base branch, A...B, A..B or a diff file")
    args.review = args.first_prompt[0] if args.first_prompt else ""
    args.first_prompt, args.prompt = [], "/review"


def thinking_flag(text: str) -> str:
    from .core.model.catalogue import thinking_mode

    try:
        return thinking_mode(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> None:
    if argv is None:  # the real command line: nothing agentcli starts may find a key in its environment
        from .core.system.secret_env import start_without_secrets

        start_without_secrets()
    try:
        code = run(list(sys.argv[1:] if argv is None else argv), leave_when_done=argv is None)
    except UsageError as exc:
        print(f"agentcli: {exc}", file=sys.stderr)
        code = 2
        stream_usage_error(str(exc), sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:
        print("agentcli: interrupted.", file=sys.stderr)
        code = 130
    except Exception as exc:
        known = user_error_code(exc)
        if known is None:
            raise
        code = known
        print(f"agentcli: {exc}", file=sys.stderr)
    if argv is None and sdk_import is not None:  # a run that failed early: no teardown racing the import
        from .leaving import leave

        leave(code)
    sys.exit(code)


def stream_usage_error(message: str, argv: Sequence[str]) -> None:
    """For a program reading stream-json (the Agent SDK), the usage error as an error result line too:
    it shows the result's ``errors``, and would show only an exit code otherwise."""
    words = list(argv)
    if not any(
        a == "--output-format=stream-json" or a == "stream-json" and i and words[i - 1] == "--output-format"
        for i, a in enumerate(words)
    ):
        return
    import json

    line = json.dumps(
        {
            "type": "result",
            "subtype": "error_during_execution",
            "is_error": True,
            "duration_ms": 0,
            "duration_api_ms": 0,
            "num_turns": 0,
            "session_id": "",
            "result": "",
            "errors": [message],
            "terminal_reason": "error",
        }
    )
    try:
        print(line, flush=True)
    except OSError:  # standard output cannot take it (a closed pipe, a full disk): stderr has said why already
        from .leaving import discard_unwritten

        discard_unwritten(sys.stdout)


def user_error_code(exc: Exception) -> int | None:
    """The exit code for an error a user can cause (bad settings 2, a session or key helper 1), else None."""
    from .config import ConfigError
    from .core.model.key_helper import KeyHelperError
    from .core.storage.store import SessionError

    if isinstance(exc, ConfigError):
        return 2
    if isinstance(exc, (SessionError, KeyHelperError)):
        return 1
    return None


def run(argv: list[str], leave_when_done: bool = False) -> int:
    root = Path.cwd()
    if argv and argv[0] == "acp":
        return run_acp(argv[1:])
    if argv and argv[0] == "plugin":
        from .plugin_cli import run_plugin

        return run_plugin(argv[1:], root)
    if argv and argv[0] in ("sessions", "agents", "trust", "rewind", "worktrees", "mcp"):
        if argv in (["sessions"], ["trust"], ["worktrees"], ["mcp"]):
            argv = [argv[0], "list"]
        gc.enable()  # __main__ turned it off for the startup imports
        args = build_subcommand_parser().parse_args(argv)
        from . import commands

        return commands.run(args, root)
    review = argv[:1] == ["review"]  # `agentcli review [TARGET]`: -p's flags, a review instead of a prompt
    args = build_parser(review).parse_args(argv[1:] if review else argv)
    review_target(args, review)
    first_prompt(args)
    from .scripting import check_script_flags, script_settings

    check_script_flags(args)  # sets args.headless: -p, or prompts as JSON lines on standard input
    if args.headless:
        start_sdk_import()
    from .config import load_settings
    from .core.model.key_helper import load_helper_key
    from .core.storage.store import resume_target

    if args.resume is not None and not args.resume.strip():
        raise UsageError("--resume needs a session id; 'agentcli sessions list' shows them")
    if args.continue_ and args.resume:
        raise UsageError("use either --continue or --resume, not both")
    args.resume = resume_target(root, args.resume, args.continue_)  # fail early, before any front end starts
    if not args.headless and not args.plain and not terminal():
        print(
            "agentcli: the full-screen app needs a terminal, but standard input or output is not one; "
            "use -p PROMPT to run headless, or --plain to read prompts line by line.",
            file=sys.stderr,
        )
        return 1
    if args.demo:
        from .demo import run_demo

        return run_demo(args, argv, run)
    if not args.headless and not args.plain:  # no collector passes over the TUI's startup objects: they
        gc.disable()  # are frozen once the SDK is imported (ui/tui/work.py warm_up_import)
    elif args.plain or sdk_import is None:  # __main__ turned it off for the imports; -p: its SDK thread, when done
        gc.enable()
    trust = settle_trust(args, root)
    settings = load_settings(
        root,
        {
            "model": args.model,
            "permission_mode": args.permission_mode,
            "max_turns": args.max_turns,
            "subagent_max_turns": args.subagent_max_turns,
            # A budget given alone turns thinking on with it, as Claude Code takes --max-thinking-tokens (the
            # Agent SDK's thinking={"type": "enabled", "budget_tokens": N} arrives as that flag alone).
            "thinking": args.thinking or ("on" if args.max_thinking_tokens else None),
            "max_thinking_tokens": args.max_thinking_tokens,
        },
        trusted=trust.trusted,
        mcp_config=args.mcp_config or (),
        extra=script_settings(args),
        sources=args.setting_sources,
        plugin_dirs=args.plugin_dir or (),
    )
    if args.strict_mcp_config:  # only the servers the flags name
        from .core.mcp.config import from_flag

        named = {name for value in args.mcp_config or () for name in from_flag(value)}
        settings.mcp_servers = {name: server for name, server in settings.mcp_servers.items() if name in named}
    if trust.notice and args.headless:
        print(f"agentcli: {trust.notice}", file=sys.stderr)
    elif trust.notice:
        settings.notices.append(trust.notice)
    if settings.api_key_helper:
        load_helper_key(settings.api_key_helper)
    if args.headless:
        code = run_headless(args, settings, root, leaving=leave_when_done)
        if leave_when_done:  # a run that never started its loop
            from .leaving import leave

            leave(code)
        return code
    from .ui.typeahead import typed_ahead_kept

    with typed_ahead_kept():
        if args.plain:
            from .ui.plain import run_plain

            return run_plain(settings, root, resume=args.resume, continue_=args.continue_, prompt=args.first_prompt)
        from .ui.tui.app import run_tui

        return run_tui(settings, root, resume=args.resume, continue_=args.continue_, prompt=args.first_prompt)


def run_acp(argv: list[str]) -> int:
    """`agentcli acp`: an ACP agent on stdio; each session's settings are loaded for the client's cwd."""
    from .core.vocabulary import MODES

    p = Parser(
        prog="agentcli acp",
        description="An Agent Client Protocol agent on standard input and output, for editors (docs/acp.md).",
    )
    p.add_argument("--model", help="model id (default: config, ANTHROPIC_MODEL, or a current Sonnet)")
    p.add_argument("--permission-mode", choices=MODES, help="each session's first mode")
    args = p.parse_args(argv)
    gc.enable()  # __main__ turned it off for the startup imports
    from .config import load_settings
    from .core.model.key_helper import load_helper_key
    from .ui.acp import run_acp as serve

    def settings_for(workspace: Path, trusted: bool, mcp_config: list[str]) -> Settings:
        settings = load_settings(
            workspace,
            {"model": args.model, "permission_mode": args.permission_mode},
            trusted=trusted,
            mcp_config=mcp_config,
        )
        if settings.api_key_helper:
            load_helper_key(settings.api_key_helper)
        return settings

    return serve(settings_for, mode=args.permission_mode)


# What the first request needs (httpx2 sends it, with a TLS context: core/model/early_request.py); once it has gone out (the main
# thread prepares it alone: a thread's import beside would halve its pace), the view model, which -p reads a
# prompt's facts from once its first model call is done (imported then, it would hold up the answer: the main
# thread waits for the GIL at each file the import opens, while the SDK imports beside); then the SDK, which
# every later request goes through (core.llm.import_sdk).
SDK_MODULES = ("httpx2", "httpcore2", "anyio._backends._asyncio")
AFTER_FIRST_REQUEST = ("agentcli.ui.view",)
sdk_import: threading.Thread | None = None


def start_sdk_import() -> None:
    """Headless: import the SDK while the settings, the session and the system prompt are prepared
    and the first request goes out (it does not wait for the SDK: ``core/model/early_request.py``)."""
    global sdk_import
    from .core.model.early_request import env_mirrored, tls_context
    from .core.model.llm import start_sdk_import as start
    from .core.model.sdk_import import request_going_out

    if not env_mirrored():  # the first request is the SDK's own (a proxy, custom headers): no waiting for it
        request_going_out()
    sdk_import = start(*SDK_MODULES, tls_context, after_first_request=AFTER_FIRST_REQUEST) or sdk_import


def sdk_imported() -> None:
    """Wait for the SDK import started by ``start_sdk_import`` (if any), held for no request any more;
    garbage collection is back on."""
    if sdk_import is not None:
        from .core.model.sdk_import import request_going_out

        request_going_out()
        sdk_import.join()


def terminal() -> bool:
    """Whether standard input and output are both a terminal, as the full-screen app needs."""
    try:
        return sys.stdin is not None and sys.stdout is not None and sys.stdin.isatty() and sys.stdout.isatty()
    except (OSError, ValueError):  # closed
        return False


def settle_trust(args: argparse.Namespace, root: Path) -> Outcome:
    """Whether the workspace's own settings may widen permissions: the front end asks the first time."""
    from .trust import settle

    if args.headless:
        return settle(root, flag=args.trust_workspace, headless=True)
    if args.plain:
        from .ui.plain.trust import ask_in_line_mode as ask
    else:
        ask = ask_in_tui
    return settle(root, flag=args.trust_workspace, ask=ask)


def ask_in_tui(request: Request) -> bool | None:
    """The TUI's trust question, whose screen loads only when a workspace asks (most never do)."""
    from .ui.tui.screens.trust import ask_in_tui as ask

    return ask(request)


def piped_input() -> str | None:
    """What a pipe or a redirected file holds on standard input; None for a terminal or /dev/null."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode if sys.stdin is not None else 0
    except (OSError, ValueError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    return sys.stdin.read()


def run_headless(args: argparse.Namespace, settings: Settings, root: Path, leaving: bool = False) -> int:
    """A headless run; ``leaving``: the process ends with it, from inside its event loop (``leaving_after``)."""
    import asyncio

    from .leaving import leaving_after
    from .ui.headless import run_headless as run_prompt
    from .ui.headless import whole_characters

    def run_loop(main: Coroutine[Any, Any, int]) -> int:
        return asyncio.run(leaving_after(main) if leaving else main)

    if args.input_format == "stream-json":
        from .ui.stream_input import run_stream_input

        opened = open_headless(args, settings, root)
        return run_loop(run_stream_input(*opened, replay=args.replay_user_messages)) if opened else 2
    if args.review is not None:
        from .ui.review_headless import run_review

        opened = open_headless(args, settings, root)
        return run_loop(run_review(opened[0], args.review, opened[1], args.fail_on)) if opened else 2
    piped = piped_input()
    prompt = args.prompt
    if prompt == "-":
        if piped is None:
            raise UsageError("-p needs a prompt, as an argument or on standard input")
        prompt = piped
    elif piped and piped.strip():  # `git diff | agentcli -p "review this"`: the input comes with the prompt
        prompt = f"{prompt}\n\n{piped}"
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    opened = open_headless(args, settings, root)
    return run_loop(run_prompt(opened[0], whole_characters(prompt), opened[1])) if opened else 2


def open_headless(
    args: argparse.Namespace, settings: Settings, root: Path
) -> tuple[SessionSurface, HeadlessOutput] | None:
    """The session and output of a headless run (-p, or prompts as JSON lines); None, said, without a key."""
    from .core.door import open_session
    from .core.model.llm import MissingCredentials, resolve_credentials
    from .scripting import flag_settings, prepare_session, session_options
    from .ui.headless import make_headless_output

    try:
        resolve_credentials()
    except MissingCredentials as exc:
        print(f"agentcli: {exc}", file=sys.stderr)
        return None
    workspace = session_options(args, root, settings.model).workspace
    flag_settings(args, settings)
    output = make_headless_output(
        args.output_format, partial_messages=args.include_partial_messages, budget=settings.max_budget_usd or None
    )
    session = open_session(
        settings.engine(),
        workspace,
        output,
        interactive=False,
        resume=args.resume,
        continue_=args.continue_,
        session_id=args.session_id,
        fork_session=args.fork_session,
    )
    prepare_session(session, args, output)
    return session, output
