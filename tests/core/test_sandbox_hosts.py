"""sandbox_allowed_hosts: no network in the sandbox, but a proxy outside it that connects to the listed hosts
only. Performed from inside allowed commands, against a loopback server of the host."""

from __future__ import annotations

import socket
import sys

import pytest

from agentcli.core.system.host_proxy import host_allowed
from agentcli.core.system.sandbox import Sandbox
from tests.core.test_sandbox import bash, home, make_ctx, needs_bwrap, workspace  # noqa: F401  (fixtures)
from tests.loopback import greet

# Through the proxy the variables name: CONNECT to host:port, then read one line from the far end.
THROUGH_PROXY = (
    "import os, socket, sys\n"
    "from urllib.parse import urlsplit\n"
    "host, port = sys.argv[1], sys.argv[2]\n"
    "proxy = urlsplit(os.environ['HTTPS_PROXY'])\n"
    "s = socket.create_connection((proxy.hostname, proxy.port), timeout=30)\n"
    "s.sendall(f'CONNECT {host}:{port} HTTP/1.1\\r\\nHost: {host}:{port}\\r\\n\\r\\n'.encode())\n"
    "f = s.makefile('rb')\n"
    "print(f.readline().decode().strip())\n"
    "while f.readline() not in (b'\\r\\n', b''): pass\n"
    "print(f.readline().decode().strip())\n"
)
DIRECT = "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=30); print('direct')"


@pytest.fixture
def greeter():
    """A server on the host's loopback that greets whoever connects."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield listener.getsockname()[1], greet(listener, b"hello from the host\n")
    listener.close()


def test_host_matching():
    assert host_allowed("pypi.org", ["pypi.org"]) and host_allowed("PyPI.org.", ["pypi.org"])
    assert host_allowed("files.pythonhosted.org", ["*.pythonhosted.org"])
    assert not host_allowed("pythonhosted.org", ["*.pythonhosted.org"])
    assert not host_allowed("evilpypi.org", ["pypi.org"]) and not host_allowed("pypi.org.evil.com", ["pypi.org"])
    assert not host_allowed("127.0.0.1", ["localhost"])


@needs_bwrap
async def test_only_the_allowed_hosts_are_reached(home, workspace, greeter):  # noqa: F811
    port, seen = greeter
    script = workspace / "through.py"
    script.write_text(THROUGH_PROXY)
    box = Sandbox("on", allowed_hosts=["localhost"])
    try:
        ctx = make_ctx(workspace, box)
        # A host outside the list, through the proxy: refused, and nothing reached the port.
        ok, out = await bash(ctx, f"{sys.executable} through.py 127.0.0.1 {port}")
        assert out.startswith("HTTP/1.1 403"), out
        assert "127.0.0.1 is not one of them" in out
        # Around the proxy: no network at all.
        ok, out = await bash(ctx, f'{sys.executable} -c "{DIRECT}" {port}')
        assert not ok and "direct" not in out.split("\n")
        assert not seen
        # A listed host: the proxy connects, and the command did not count the bridge as a leftover.
        ok, out = await bash(ctx, f"{sys.executable} through.py localhost {port}")
        assert ok and out.splitlines() == ["HTTP/1.1 200 Connection established", "hello from the host"], out
        assert seen == ["connection"]
    finally:
        box.close()


def test_the_setting_reaches_the_session_s_sandbox(make_session):
    session, _ = make_session(sandbox="on", sandbox_allowed_hosts=["pypi.org"])
    assert session.sandbox is not None and session.sandbox.allowed_hosts == ("pypi.org",)
