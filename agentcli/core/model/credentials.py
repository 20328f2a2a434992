"""Who the model client is to the server: the API key or bearer token and the base URL, as the user started agentcli
with them (secrets included), and the base URL the SDK's client resolves from them. The SDK's client and the first
request sent without it (early_request.py) both read them from here."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..system import secret_env
from .key_helper import helper_key

DEFAULT_BASE_URL = "https://api.anthropic.com"
PLACEHOLDER_KEY = "agentcli-no-key"  # sent to local servers (Ollama, vLLM) that ignore keys


class MissingCredentials(Exception):
    """Neither an API key nor a base URL is configured."""


MISSING_KEY_MESSAGE = (
    "No API key: set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-…), "
    "or point ANTHROPIC_BASE_URL at a local Anthropic-compatible server such as Ollama or vLLM."
)


@dataclass(frozen=True)
class Credentials:
    """How the model client signs in: an API key or a bearer token, and the server's address."""

    api_key: str | None
    base_url: str | None
    auth_token: str | None = None  # sent as a bearer token


def resolve_credentials(env: dict[str, str] | None = None) -> Credentials:
    """The key (api_key_helper's, else ANTHROPIC_API_KEY), bearer token and base URL; a placeholder
    key for local servers. The environment is the one the user started agentcli with, secrets included."""
    env = secret_env.environ() if env is None else env
    key = helper_key() or env.get("ANTHROPIC_API_KEY") or None
    token = None if key else env.get("ANTHROPIC_AUTH_TOKEN") or None  # the SDK takes one of the two
    secret_env.remember(key)  # a server that echoes them in an error is shown with *** instead
    secret_env.remember(token)
    base_url = env.get("ANTHROPIC_BASE_URL") or None
    if key is None and token is None and base_url is None:
        raise MissingCredentials(MISSING_KEY_MESSAGE)
    return Credentials(api_key=None if token else key or PLACEHOLDER_KEY, base_url=base_url, auth_token=token)


def base_url(creds: Credentials) -> str:
    """As the SDK's client resolves it: the one given, else ANTHROPIC_BASE_URL, else the API's."""
    return creds.base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
