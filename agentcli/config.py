"""Settings: defaults < user TOML < project files < environment < command-line flags.

The project files (``.agentcli/settings.toml``, and the permission rules and ``defaultMode`` of
Claude Code's ``.claude/settings.json`` and ``.claude/settings.local.json``) come with the
repository, so whoever wrote the repository wrote them. What they say that only narrows
permissions or is neutral applies always. What could widen them (``WIDENING``) applies only once
the user trusted the workspace (``agentcli/trust.py``); ``project_settings_sources`` tells the
trust check what that is.

Each setting is declared once, as a field of ``Settings`` made by ``setting``: its default, what it
does, and which layers may set it (whether it widens, and what the trust prompt then says; whether
only the user's own file and the environment may). ``NEUTRAL``, ``WIDENING`` and the other sets are
views of those declarations.

Claude Code's setting sources (``--setting-sources``, the Agent SDK's ``setting_sources``) name which of
these files load: ``user`` the user's config.toml, ``project`` the repository's ``.agentcli/settings.toml``
and ``.claude/settings.json``, ``local`` the user's own file for this workspace and
``.claude/settings.local.json`` (``SOURCE_OF``). Trust still decides what a project file may widen.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import paths
from .config_values import AGENT_TYPE_SETTINGS as AGENT_TYPE_SETTINGS
from .config_values import ConfigError as ConfigError
from .config_values import checked
from .core.model.catalogue import DEFAULT_MODEL, TASK_MODELS, resolve_model, thinking_mode
from .core.policy.hooks import PLUGIN_ROOT_MARK, WORKSPACE_MARK
from .core.policy.hooks import describe as describe_hooks
from .core.settings import EngineSettings, ToolSettings
from .core.system import secret_env
from .core.vocabulary import MODES, SANDBOX_MODES
from .settings_files import SETTING_SOURCES as SETTING_SOURCES
from .settings_files import from_claude_settings as from_claude_settings
from .settings_files import project_files, read_toml

MODES_ABOVE_DEFAULT = {
    "acceptEdits": "file edits run without asking",
    "bypassPermissions": "every tool call runs without asking",
}


WEB_FETCH_PRIVATE = ("none", "loopback", "all")  # core/tools/web.py reads it from the tools' env
TOOL_SEARCH = ("auto", "api", "agentcli", "off")  # the routes to tools on demand (core/tools/on_demand.py)
NOTIFICATIONS = ("auto", "osc9", "osc777", "bell", "off")  # how the terminal is told the user is needed (ui/notify.py)


def setting(
    default: Any,
    help: str,
    *,
    widens: bool | str,
    user_only: bool = False,
    may_be_zero: bool = False,
    fraction: bool = False,
) -> Any:
    """One setting's declaration, as a field of Settings: its default (a list or dict is copied for each
    Settings), what it does, and which layers may set it. ``widens``: False, a project file may always
    set it (limits, models, looks); otherwise only once the user trusted the workspace, and a text says
    what it lets happen, as the trust prompt shows it. ``user_only``: it starts a process, so a
    workspace's own files can never set it. A number must be positive unless ``may_be_zero``; a
    ``fraction`` is at most 1."""
    meta = {"help": help, "widens": widens, "user_only": user_only, "may_be_zero": may_be_zero, "fraction": fraction}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


def state(default: Any, help: str) -> Any:
    """A field of Settings that no settings file sets: what loading found."""
    return field(default_factory=lambda: type(default)(default), metadata={"help": help})


@dataclass
class Settings:
    """What the user's config, the workspace's settings and the command line set, before the engine reads its part."""

    model: str = setting(DEFAULT_MODEL, "the main agent's model", widens=False)
    max_tokens: int = setting(16_000, "the most tokens one model reply may have", widens=False)
    permission_mode: str = setting(
        "default", "default, acceptEdits, plan or bypassPermissions", widens=True
    )  # above default: describe_widening says what it allows
    max_turns: int = setting(200, "model calls of the main agent per user message", widens=False)
    subagent_max_turns: int = setting(30, "model calls of a subagent", widens=False)
    subagent_timeout: float = setting(900.0, "seconds a subagent may run", widens=False)
    max_parallel_subagents: int = setting(3, "subagents running at once", widens=False)
    max_budget_usd: float = setting(
        0.0,
        "the session's cost budget in USD, children included: near it running "
        "subagents wrap up and none starts (0: none); --max-budget-usd too",
        widens="subagents may go on until the session has spent this much",
        may_be_zero=True,
    )
    subagent_stall_seconds: float = setting(
        60.0, "no stream data or tool progress this long: its panel entry says so", widens=False
    )
    api_retries: int = setting(
        8, "retries of overloaded, failing or broken model calls", widens=False, may_be_zero=True
    )
    stall_timeout: float = setting(60.0, "seconds without stream data before a call counts as dead", widens=False)
    first_reply_timeout: float = setting(
        10.0, "seconds a server that has not answered yet gets to begin its reply", widens=False
    )
    thinking: str = setting(
        "auto", "extended thinking: off, on, adaptive; auto: adaptive where the model has it", widens=False
    )
    max_thinking_tokens: int = setting(0, 'the budget of thinking "on"; 0: 10,000', widens=False, may_be_zero=True)
    tool_search: str = setting(
        "auto",
        "tools on demand (core/tools/on_demand.py): auto, api (the API's own tool "
        "search), agentcli (agentcli's tool_search), off (every tool in every request)",
        widens=False,
    )
    web_search: str = setting(
        "auto",
        "the API's own web search (core/tools/web_search.py): true, false, or auto (at Anthropic's API only)",
        widens="the model may search the web from the API's servers, unasked",
    )
    compact_threshold: float = setting(0.85, "compact the context when it is this full", widens=False, fraction=True)
    keep_secret_env: bool = setting(
        False,
        "pass *KEY*/*TOKEN*/*SECRET* variables to bash",
        widens="bash and every command see your API keys, tokens and secrets",
    )
    sandbox: str = setting(
        "auto",
        "the OS sandbox under bash (core/system/sandbox.py): auto (where bwrap is installed), on, off",
        widens="bash and the workspace's hooks and servers run without the OS sandbox: they can "
        "write anywhere you can, read your secrets and use the network",
    )  # only "off" widens
    sandbox_network: bool = setting(
        False, "commands in the sandbox may use the network", widens="commands in the OS sandbox may use the network"
    )
    sandbox_allowed_hosts: list[str] = setting(
        [],
        'without the network: hosts commands in the sandbox may reach through its proxy ("pypi.org", "*.npmjs.org")',
        widens="commands in the OS sandbox may connect to these hosts",
    )
    web_fetch_private: str = setting(
        "none", "addresses web_fetch may reach besides public ones: none, loopback, all", widens=True
    )  # describe_widening says which
    web_fetch_timeout: float = setting(
        30.0, "seconds one web_fetch call may take, the page's conversion to text included", widens=False
    )
    search_timeout: float = setting(60.0, "seconds before grep or glob stops and returns what it found", widens=False)
    # Raising the output and checkpoint caps lets a session fill more disk.
    output_copy_max_mb: float = setting(64.0, "cap of one full copy of a long tool output", widens=True)
    output_session_max_mb: float = setting(512.0, "cap of all full-output copies of a session", widens=True)
    checkpoint_file_max_mb: float = setting(
        16.0, "a file bigger than this is not kept for /rewind (noted instead)", widens=True
    )
    checkpoint_session_max_mb: float = setting(512.0, "cap of all checkpoint contents of a session", widens=True)
    plugin_clone_max_mb: float = setting(
        256.0,
        "the most one clone of a plugin or marketplace may write (its objects and files); past it git is stopped",
        widens="a plugin or marketplace being cloned may fill this much of your disk",
    )
    theme: str = setting("agentcli", "the TUI's colours", widens=False)
    notifications: str = setting(
        "auto",
        "a terminal notification when an approval waits, a background subagent "
        "finishes or a turn ends (ui/notify.py): auto, osc9, osc777, bell, off; auto is off "
        "in tmux unless its allow-passthrough is on",
        widens=False,
    )
    steer_on_enter: bool = setting(
        False,
        "enter while the agent works sends the message into its running turn "
        "(read after the next tool call); ctrl+s then queues it instead",
        widens=False,
    )
    api_key_helper: str = setting(
        "", "a command printing the API key, run once at startup", widens=True, user_only=True
    )
    mcp_startup_timeout: float = setting(
        10.0, "seconds an MCP server may take to start (-p waits this long for them)", widens=False
    )
    mcp_tool_timeout: float = setting(600.0, "seconds an MCP tool call may take before it counts as hung", widens=False)
    task_models: list[str] = setting(
        list(TASK_MODELS),
        "the models the main agent may choose for one subagent (the task "
        "tool's model): aliases (haiku, sonnet, opus) or model ids; [] for none",
        widens=False,
    )
    lsp: dict[str, Any] = setting(
        {},
        "language servers beside those found on PATH, by name (core/lsp/specs.py): "
        '{"ruby": {"command": ["solargraph", "stdio"], "languages": ["ruby"], "patterns": '
        '["*.rb"], "initialization_options": {}}}; {"pylsp": false} turns one off',
        widens="the workspace's own language servers start (in the OS sandbox)",
    )
    lsp_discover: bool = setting(
        True,
        "language servers found on PATH (pylsp, pyright, gopls, …) serve the lsp tool and check edits",
        widens="the language servers on your PATH start on this workspace (in the OS sandbox)",
    )  # only true widens (split_widening)
    lsp_timeout: float = setting(30.0, "seconds a language server may take to start or to answer", widens=False)
    agents: dict[str, dict[str, Any]] = setting(
        {}, 'per agent type overrides, e.g. {"explore": {"model": "claude-haiku-4-5"}}', widens=False
    )
    permissions: dict[str, list[str]] = setting(
        {}, 'permission rules, e.g. {"allow": ["bash(npm test *)"], "deny": [...]}', widens=True
    )  # only allow rules widen
    hooks: dict[str, list[Any]] = setting(
        {},
        'hooks in Claude Code\'s format: {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": …}]}]}',
        widens=True,
    )  # describe_hooks says which
    status_line: dict[str, Any] = setting(
        {},
        'the line under the prompt, in Claude Code\'s format: {"type": "command", '
        '"command": "~/bin/status.sh", "padding": 0} (ui/status_line.py)',
        widens=True,
    )  # describe_widening names the command
    mcp_servers: dict[str, Any] = state(
        {}, "MCP servers that may start, by name (core/mcp/config.py: .mcp.json, the user's mcp.json, --mcp-config)"
    )
    plugins: list[Any] = state(
        [],
        "the plugins this run loads (agentcli/plugins.py: Claude Code's enabledPlugins, "
        "--plugin-dir), whose hooks and MCP servers load_settings adds to those above",
    )
    plugin_lsp: list[Any] = state([], "the plugins' language servers (core/lsp/specs.py), beside the lsp setting's")
    trusted: bool = field(
        default=False, metadata={"help": "the workspace's own widening files apply (load_settings sets it)"}
    )
    setting_sources: list[str] = state(
        list(SETTING_SOURCES),
        "the setting sources that load (--setting-sources): "
        "their settings files, and user or project command, agent and skill files",
    )
    sources: list[str] = state([], "files that were read")
    notices: list[str] = state([], "warnings a front end shows once the session opens")
    # What a headless run's flags set (scripting.flag_settings), which no settings file sets:
    fallback_model: str = state("", "--fallback-model: the model to go on with when the model is overloaded or gone")
    effort: str = state("", "--effort: the API's effort level ('': the model's own)")
    partial_messages: bool = state(False, "--include-partial-messages: each API stream event is handed on")
    host_answers_approvals: bool = state(
        False, "--permission-prompt-tool stdio: the program on stdin answers approvals"
    )
    system_prompt: str = state(
        "", "--system-prompt: the main agent's system prompt instead of agentcli's ('': agentcli's)"
    )
    append_system_prompt: str = state("", "--append-system-prompt: added to the main agent's system prompt")
    only_tools: list[str] | None = field(
        default=None, metadata={"help": "--tools: the only tools the agents are offered (None: every tool)"}
    )

    def merge(self, values: dict[str, Any], source: str) -> None:
        known = {f.name: f for f in dataclasses.fields(self) if f.name not in NOT_SETTINGS}
        for key, value in values.items():
            key = key.replace("-", "_")
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                raise ConfigError(
                    f"{source}: unknown setting '{key}'" + (f"; did you mean '{close[0]}'?" if close else ".")
                )
            value = checked(key, value, getattr(self, key), source, known[key].metadata)
            setattr(self, key, value)
        if self.sandbox not in SANDBOX_MODES:
            raise ConfigError(f"{source}: sandbox must be one of {', '.join(SANDBOX_MODES)}, not {self.sandbox!r}.")
        if self.notifications not in NOTIFICATIONS:
            raise ConfigError(
                f"{source}: notifications must be one of {', '.join(NOTIFICATIONS)}, not {self.notifications!r}."
            )
        if self.tool_search not in TOOL_SEARCH:
            raise ConfigError(
                f"{source}: tool_search must be one of {', '.join(TOOL_SEARCH)}, not {self.tool_search!r}."
            )
        if self.web_fetch_private not in WEB_FETCH_PRIVATE:
            raise ConfigError(
                f"{source}: web_fetch_private must be one of {', '.join(WEB_FETCH_PRIVATE)}, "
                f"not {self.web_fetch_private!r}."
            )
        if self.permission_mode not in MODES:
            raise ConfigError(
                f"{source}: permission mode must be one of {', '.join(MODES)}, not {self.permission_mode!r}."
            )
        try:
            self.thinking = thinking_mode(self.thinking)
        except ValueError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        self.sources.append(source)

    def engine(self) -> EngineSettings:
        """What the engine reads of these settings, as the one typed value a session opens with."""
        return EngineSettings(
            model=self.model,
            max_tokens=self.max_tokens,
            api_retries=self.api_retries,
            stall_timeout=self.stall_timeout,
            first_reply_timeout=self.first_reply_timeout,
            thinking=self.thinking,
            max_thinking_tokens=self.max_thinking_tokens,
            tool_search=self.tool_search,
            web_search=self.web_search,
            max_turns=self.max_turns,
            compact_threshold=self.compact_threshold,
            subagent_max_turns=self.subagent_max_turns,
            subagent_timeout=self.subagent_timeout,
            max_parallel_subagents=self.max_parallel_subagents,
            max_budget_usd=self.max_budget_usd,
            task_models=tuple(self.task_models),
            agents=self.agents,
            permission_mode=self.permission_mode,
            permissions=self.permissions,
            hooks=self.hooks,
            status_line=self.status_line,
            sandbox=self.sandbox,
            sandbox_network=self.sandbox_network,
            sandbox_allowed_hosts=tuple(self.sandbox_allowed_hosts),
            checkpoint_file_max_mb=self.checkpoint_file_max_mb,
            checkpoint_session_max_mb=self.checkpoint_session_max_mb,
            mcp_servers=self.mcp_servers,
            mcp_startup_timeout=self.mcp_startup_timeout,
            mcp_tool_timeout=self.mcp_tool_timeout,
            lsp=self.lsp,
            lsp_discover=self.lsp_discover,
            lsp_timeout=self.lsp_timeout,
            plugin_lsp=tuple(self.plugin_lsp),
            trusted=self.trusted,
            setting_sources=tuple(self.setting_sources),
            plugins=tuple(self.plugins),
            notices=tuple(self.notices),
            tools=ToolSettings(
                search_timeout=self.search_timeout,
                web_fetch_timeout=self.web_fetch_timeout,
                web_fetch_private=self.web_fetch_private,
                output_copy_max_mb=self.output_copy_max_mb,
                output_session_max_mb=self.output_session_max_mb,
                keep_secret_env=self.keep_secret_env,
                trusted=self.trusted,
            ),
            subagent_stall_seconds=self.subagent_stall_seconds,
            plugin_clone_max_mb=self.plugin_clone_max_mb,
            steer_on_enter=self.steer_on_enter,
            notifications=self.notifications,
            theme=self.theme,
            fallback_model=self.fallback_model,
            effort=self.effort,
            partial_messages=self.partial_messages,
            host_answers_approvals=self.host_answers_approvals,
            system_prompt=self.system_prompt,
            append_system_prompt=self.append_system_prompt,
            only_tools=None if self.only_tools is None else tuple(self.only_tools),
        )


# Views of the declarations above.
SETTINGS = {f.name: f for f in dataclasses.fields(Settings) if "widens" in f.metadata}
NOT_SETTINGS = {f.name for f in dataclasses.fields(Settings)} - set(SETTINGS)  # no settings file sets them
# What a project settings file may set without the user's trust; every other setting is WIDENING.
NEUTRAL = {name for name, f in SETTINGS.items() if f.metadata["widens"] is False}
WIDENING = set(SETTINGS) - NEUTRAL
USER_ONLY_SETTINGS = tuple(name for name, f in SETTINGS.items() if f.metadata["user_only"])


ENV_SETTINGS = {
    "ANTHROPIC_MODEL": "model",
    "AGENTCLI_MODEL": "model",
    "AGENTCLI_PERMISSION_MODE": "permission_mode",
    "AGENTCLI_SUBAGENT_MAX_TURNS": "subagent_max_turns",
    "AGENTCLI_API_RETRIES": "api_retries",
    "AGENTCLI_FIRST_REPLY_TIMEOUT": "first_reply_timeout",
    "MAX_THINKING_TOKENS": "max_thinking_tokens",  # as Claude Code reads it
    "AGENTCLI_API_KEY_HELPER": "api_key_helper",
    "AGENTCLI_SANDBOX": "sandbox",
    "AGENTCLI_TOOL_SEARCH": "tool_search",
    "AGENTCLI_NOTIFICATIONS": "notifications",
}


def split_widening(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A project file's settings as (what applies untrusted, what widens): a mode above default,
    ``keep_secret_env = true``, allow rules, and any setting not known to be neutral."""
    kept: dict[str, Any] = {}
    widening: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name in NEUTRAL or name not in SETTINGS:
            kept[key] = value  # neutral, or unknown: merge names the unknown setting
        elif name == "permission_mode":
            (widening if value in MODES_ABOVE_DEFAULT else kept)[key] = value
        elif name == "web_fetch_private":
            (kept if value == "none" else widening)[key] = value
        elif name in ("keep_secret_env", "sandbox_network", "lsp_discover"):
            (widening if value is not False and str(value).lower() not in ("0", "false", "no", "off") else kept)[
                key
            ] = value
        elif name == "sandbox":
            (kept if value in ("auto", "on") else widening)[key] = value
        elif name == "permissions" and isinstance(value, dict):
            narrowing = {k: v for k, v in value.items() if k != "allow"}
            if narrowing:
                kept[key] = narrowing
            if "allow" in value:
                widening[key] = {"allow": value["allow"]}
        else:
            widening[key] = value
    return kept, widening


def describe_widening(widening: dict[str, Any]) -> list[str]:
    """Each thing a project file's widening settings ask for, as the trust prompt shows it."""
    lines: list[str] = []
    for key, value in widening.items():
        name = key.replace("-", "_")
        if name == "permission_mode":
            lines.append(f'permission_mode = "{value}" ({MODES_ABOVE_DEFAULT.get(value, "a wider mode")})')
        elif name == "hooks":
            lines += describe_hooks(value)
        elif name == "status_line" and isinstance(value, dict):
            lines.append(f"statusLine command {value.get('command')} (runs each time the status line refreshes)")
        elif name in SETTINGS and isinstance(why := SETTINGS[name].metadata["widens"], str):
            shown = "true" if SETTINGS[name].type == "bool" else repr(value)  # only true widens a switch
            lines.append(f"{name} = {shown} ({why})")
        elif name == "web_fetch_private":
            lines.append(
                f"web_fetch_private = {value!r} (web_fetch may reach your machine"
                f"{'' if value == 'loopback' else ' and local network'})"
            )
        elif name == "permissions" and isinstance(value, dict):
            rules = value.get("allow")
            for rule in rules if isinstance(rules, list) else [rules]:
                lines.append(f"allow rule {rule} (runs without asking)")
        else:
            lines.append(f"{key} = {value!r}")
    return lines


def project_settings_sources(root: Path) -> list[tuple[Path, list[str], dict[str, Any]]]:
    """For the trust check: each project settings file that asks for something widening, with
    what it asks for (one line each) and the widening content itself."""
    sources = []
    for path, values in project_files(root):
        _, widening = split_widening(values)
        if widening:
            asks = describe_widening(widening)
            if path.suffix == ".json":  # say it in the file's own words
                asks = [line.replace("permission_mode =", "permissions.defaultMode =") for line in asks]
            sources.append((path, asks, widening))
    return sources


def load_settings(
    root: Path,
    flags: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    *,
    trusted: bool = False,
    mcp_config: list[str] | tuple[str, ...] = (),
    extra: list[tuple[dict[str, Any], str]] | None = None,
    sources: tuple[str, ...] | list[str] | None = None,
    plugin_dirs: list[str] | tuple[str, ...] = (),
) -> Settings:
    """``trusted``: the user trusts this workspace, so its project files may widen permissions and
    its .mcp.json may start servers. ``mcp_config``: the values of ``--mcp-config``. ``extra``: settings
    the command line gave in other forms (``--settings``, ``--allowedTools``), each with where it came
    from; they apply like flags. ``sources``: the setting sources whose files load (None: all of SETTING_SOURCES)."""
    from .core.mcp.config import McpConfigError
    from .core.mcp.config import load as load_mcp

    settings = Settings()
    try:
        settings.mcp_servers = load_mcp(root, mcp_config, trusted=trusted).servers
    except McpConfigError as exc:
        raise ConfigError(str(exc)) from None
    sources = SETTING_SOURCES if sources is None else sources
    settings.setting_sources = [name for name in SETTING_SOURCES if name in sources]
    if "user" in sources:  # the user's own Claude Code settings, then agentcli's own files
        _add_claude_user_settings(settings)
    own_files = {"user": paths.user_config_file(), "local": paths.workspace_config_file(root)}
    for own_file in (path for name, path in own_files.items() if name in sources):
        values = read_toml(own_file)
        if values:
            settings.merge(values, str(own_file))
    for project_file, values in project_files(root, sources):
        values = {k: v for k, v in values.items() if k.replace("-", "_") not in USER_ONLY_SETTINGS}
        if isinstance(values.get("hooks"), dict):  # the workspace's own hooks run in the OS sandbox
            # (and a plugin's folder, readable in the sandbox even inside a hidden one, is only a plugin's to say)
            values["hooks"] = {
                event: [
                    {**{k: v for k, v in group.items() if k != PLUGIN_ROOT_MARK}, WORKSPACE_MARK: True}
                    if isinstance(group, dict)
                    else group
                    for group in groups
                ]
                if isinstance(groups, list)
                else groups
                for event, groups in values["hooks"].items()
            }
        if isinstance(values.get("status_line"), dict):  # so does its status line
            values["status_line"] = {**values["status_line"], WORKSPACE_MARK: True}
        kept, widening = split_widening(values)
        settings.merge(kept if not trusted else values, str(project_file))
        if widening and not trusted:  # checked all the same, so a bad value is an error either way
            Settings().merge(widening, str(project_file))
    env = secret_env.environ() if env is None else env  # AGENTCLI_API_KEY_HELPER is held as a secret
    from_env = {key: env[name] for name, key in ENV_SETTINGS.items() if env.get(name)}
    if from_env:
        settings.merge(from_env, "environment")
    for values, source in extra or []:
        settings.merge(values, source)
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    if given:
        settings.merge(given, "command line")
    settings.model = resolve_model(settings.model)
    settings.trusted = trusted
    _add_plugins(settings, root, plugin_dirs)
    return settings


def _add_claude_user_settings(settings: Settings) -> None:
    """The user's own ~/.claude/settings.json (``claude_user_settings``), part by part: what agentcli cannot use
    is left out with one notice."""
    from .claude_user_settings import shown, user_setting_parts
    from .plugins import claude_home

    where = shown(claude_home() / "settings.json")
    parts, skipped = user_setting_parts(claude_home() / "settings.json", from_claude_settings)
    for part in parts:
        try:
            settings.merge(part, where)
        except ConfigError as exc:
            skipped.append(str(exc).removeprefix(f"{where}: ").rstrip("."))
    settings.sources = [*dict.fromkeys(settings.sources)]  # read once, whatever number of parts it came in
    if skipped:
        settings.notices.append(f"Left out of {where}, which agentcli cannot use: {'; '.join(skipped)}.")


def _add_plugins(settings: Settings, root: Path, dirs: list[str] | tuple[str, ...]) -> None:
    """The enabled plugins, and their hooks, MCP servers and language servers beside the settings' own (a server
    named in a settings file wins over a plugin's of the same name); a plugin that cannot be used is left out, said once."""
    from .core.engine.plugins import UNUSED_STYLES, PluginError
    from .plugins import enabled_plugins

    for plugin in enabled_plugins(
        root, trusted=settings.trusted, dirs=dirs, sources=settings.setting_sources, warnings=settings.notices
    ):
        unknown: list[str] = []
        try:
            hooks, servers, language_servers = plugin.hooks_table(unknown), plugin.servers(), plugin.lsp_servers()
            if hooks:
                settings.merge({"hooks": hooks}, plugin.where)
        except (PluginError, ConfigError) as exc:
            settings.notices.append(f"Skipped the plugin {plugin.key}: {exc}.")
            continue
        if unknown:
            settings.notices.append(
                f"The plugin {plugin.key} has {', '.join(unknown)} hooks, events agentcli does "
                "not have yet: those hooks do not run."
            )
        styles = plugin.output_styles()
        if styles:
            settings.notices.append(
                f"The plugin {plugin.key} brings the output styles {', '.join(styles)}: {UNUSED_STYLES}."
            )
        settings.plugins.append(plugin)
        settings.mcp_servers = {**servers, **settings.mcp_servers}
        given = plugin.root in {Path(folder).resolve() for folder in dirs}  # --plugin-dir: the user named it
        provided = plugin.project or (not given and root.resolve() in plugin.root.parents)
        if language_servers and provided and not settings.trusted:  # a repository's own start as its lsp setting does
            settings.notices.append(
                f"The language servers of the plugin {plugin.key} do not start: the workspace "
                "provides the plugin, and it is not trusted."
            )
        elif language_servers:
            settings.plugin_lsp += language_servers
