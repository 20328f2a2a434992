"""What the OS sandbox hides under $HOME (``core/system/sandbox.py``): secrets, and what the user typed.

A folder is replaced by an empty read-only one, a file by an empty file. A path that does not exist
cannot be made either: the file system is read-only, and where a writable folder holds it the sandbox
holds it (``protected_paths``: with the workspace at $HOME, $HOME's dot-entries as a whole; elsewhere, an
empty placeholder). The lists keep to well-known places; docs/permissions.md names them.
"""

from __future__ import annotations

import os
from pathlib import Path

from ... import paths

# What shells and interactive programs keep of what the user typed: passwords, tokens and commands with
# them pasted in (mysql -p…, export GITHUB_TOKEN=…, psql's \password), and the hosts they went to.
HISTORIES = (
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".histfile",
    ".sh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
    ".irb_history",
    ".lesshst",
    ".wget-hsts",
    ".ipython/profile_default/history.sqlite",
)
# Files and folders where other tools keep tokens and passwords.
TOKEN_STORES = (
    ".pgpass",
    ".my.cnf",
    ".mylogin.cnf",
    ".config/composer/auth.json",
    ".composer/auth.json",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".bundle/config",
    ".nuget/NuGet/NuGet.Config",
    ".config/helm",
    ".config/doctl",
    ".oci",
    ".config/heroku",
    ".config/hcloud",
    ".config/linode-cli",
    ".fly",
    ".pulumi/credentials.json",
    ".terraformrc",
    ".databrickscfg",
    ".config/ngrok",
    ".config/configstore",
    ".config/stripe",
    ".cloudflared",
    ".wrangler",
    ".config/.wrangler",
    ".config/sops",
    ".config/age",
)

# Under $HOME: credentials, keys and tokens of common tools, then the two lists above.
SECRET_PATHS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".docker",
    ".kube",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".config/op",
    ".1password",
    ".claude",
    ".claude.json",
    ".config/anthropic",
    ".config/openai",
    ".config/rclone",
    ".s3cfg",
    ".boto",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".thunderbird",
    *HISTORIES,
    *TOKEN_STORES,
)


def secret_paths(home: Path | None = None, homes: list[Path] | None = None) -> list[Path]:
    """What the sandbox hides: the secrets under ``home`` (default $HOME), and ``homes`` (default ``own_homes()``)."""
    home = home or Path(os.environ.get("HOME") or Path.home())
    return [*(home / name for name in SECRET_PATHS), *(own_homes() if homes is None else homes)]


def own_homes() -> list[Path]:
    """agentcli's own folders (those in use and the usual ones, when AGENTCLI_HOME or XDG_* moves them) and
    Claude Code's folder where CLAUDE_CONFIG_DIR moves it (its login, and settings and plugins whose hooks run
    as the user's own), as the environment places them now."""
    return [*paths.all_homes(), paths.claude_home()]
