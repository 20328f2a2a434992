"""The `agentcli` command and `python -m agentcli`."""

from __future__ import annotations


def main() -> None:
    from .core.secret_env import start_without_secrets

    start_without_secrets()  # first: the restart then costs one bare interpreter start
    from .cli import main as run_cli

    run_cli()


if __name__ == "__main__":
    main()
