"""``api_key_helper``: a command of the user's that prints the API key, so the key is never exported.

It runs once at startup through ``/bin/sh -c``, with the environment bash gets (no secrets), no
standard input and a time limit. What it prints, stripped, is the key; it is kept in memory only and
never written anywhere. Because it starts a process, only the user's own config file and the
``AGENTCLI_API_KEY_HELPER`` variable may name it, never a workspace's settings.
"""

from __future__ import annotations

HELPER_TIMEOUT = 30.0  # seconds

_key: str | None = None


class KeyHelperError(Exception):
    """The helper failed; the message is one sentence."""


def helper_key() -> str | None:
    """The key the helper printed, once ``load_helper_key`` ran; None without a helper."""
    return _key


def load_helper_key(command: str, timeout: float = HELPER_TIMEOUT) -> None:
    """Run the helper and keep the key it prints. Raises KeyHelperError in one sentence."""
    global _key
    _key = run_helper(command, timeout)


def run_helper(command: str, timeout: float = HELPER_TIMEOUT) -> str:
    import subprocess

    from ..system import processes
    from ..system.secret_env import command_env

    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            env=command_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise KeyHelperError(f"api_key_helper could not be started: {exc.strerror or exc}.") from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        processes.kill_group(proc.pid)  # the shell and whatever it started
        proc.wait()
        raise KeyHelperError(f"api_key_helper did not finish within {timeout:g} s.") from None
    if proc.returncode != 0:
        lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
        detail = f": {lines[-1][:200].rstrip('.')}" if lines else ""
        raise KeyHelperError(f"api_key_helper failed with exit code {proc.returncode}{detail}.")
    key = out.decode("utf-8", "replace").strip()
    if not key:
        raise KeyHelperError("api_key_helper printed nothing; it must print the API key.")
    if "\n" in key:
        raise KeyHelperError("api_key_helper printed more than one line; it must print only the API key.")
    return key
