"""web_fetch against a local HTTP server (the only network here is loopback): a page as Markdown, and
each refusal performed: a redirect to a private address or another host, a huge page, a binary file,
loopback without the setting that allows it, and a new domain without a yes (-p) or with one."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from agentcli.core.events import ALLOW_SESSION, ApprovalRequested
from tests.core.test_permissions import answer_with
from tests.fakes.anthropic_server import text, tool_result_text, tool_results, tool_use
from tests.loopback import http_site

PAGE = """<!doctype html><html><head><title>Widget docs</title><style>body{color:red}</style>
<script>var secret = "SCRIPT-TEXT";</script></head><body>
<nav><a href="/">Home</a></nav><h1>Widgets</h1><p>Install with <code>pip install widget</code>.</p>
<pre><code>import widget
widget.spin()</code></pre>
<table><tr><th>Option</th><th>Default</th></tr><tr><td>speed</td><td>3</td></tr></table>
</body></html>"""


class Site(BaseHTTPRequestHandler):
    hosts: list[str] = []  # the Host header of each request: what the server was asked for
    # the first line each connection the server took brought ("" for none: it read the end of the stream first), so
    # a fetch that failed says whether its connection reached the handler at all
    lines: list[str] = []

    def handle(self) -> None:
        try:
            super().handle()
        finally:
            Site.lines.append(getattr(self, "raw_requestline", b"").decode(errors="replace").strip())

    def do_GET(self) -> None:  # noqa: N802
        Site.hosts.append(self.headers.get("Host", ""))
        address = self.server.server_address
        assert isinstance(address, tuple)
        port = address[1]
        routes: dict[str, tuple[int, dict[str, str], bytes]] = {
            "/page": (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE.encode()),
            "/moved": (302, {"Location": "/page"}, b""),
            "/to-private": (302, {"Location": "http://10.0.0.1/admin"}, b""),
            "/to-other-name": (301, {"Location": f"http://localhost:{port}/page"}, b""),
            "/huge": (200, {"Content-Type": "text/plain", "Content-Length": str(6 * 1024 * 1024)}, b""),
            "/image.png": (200, {"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64),
            "/mislabeled": (200, {"Content-Type": "text/plain"}, b"ELF\x00\x00\x00\x01binary"),
            "/loop": (302, {"Location": "/loop"}, b""),
            "/to-secret": (302, {"Location": "/secret"}, b""),
            "/secret": (200, {"Content-Type": "text/plain"}, b"SECRET-TEXT"),
            # binary after the first 8 kB of text, as a file with a text header may be
            "/late-nul": (200, {"Content-Type": "text/plain"}, b"text " * 4000 + b"\x00\x01binary"),
            # 5 MB of a table whose cells break lines: the converter takes minutes over it
            "/table": (
                200,
                {"Content-Type": "text/html"},
                b"<html><body><table>" + b"<tr><td>a<br>b<br>c</td></tr>" * 180_000 + b"</table></body></html>",
            ),
        }
        if self.path == "/endless":  # no length given: the reader must stop by itself
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(200):  # 12.5 MB at most, then the server stops too
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        status, headers, body = routes.get(self.path, (404, {"Content-Type": "text/plain"}, b"not here"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path != "/huge":
            self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site():
    Site.hosts, Site.lines = [], []
    with http_site(Site) as url:
        yield url


ALLOWED = {
    "permissions": {"allow": ["WebFetch(domain:127.0.0.1)", "web_fetch(domain:localhost)"]},
    "web_fetch_private": "loopback",
}


async def fetched(server, make_session, *urls: str, **settings: Any) -> list[tuple[bool, str]]:
    """Have the model fetch each URL in turn (headless); what each call returned."""
    server.script(*[tool_use("web_fetch", {"url": url}) for url in urls], text("Done."))
    session, _ = make_session(**settings)
    await session.send("read the docs")
    return [
        (bool(r.get("is_error")), tool_result_text(r))
        for i in range(1, len(urls) + 1)
        for r in tool_results(server.requests[i])
    ]


async def test_a_page_comes_back_as_markdown_without_scripts(server, make_session, site):
    [(error, page)] = await fetched(server, make_session, f"{site}/page", **ALLOWED)
    assert not error, page
    assert "# Widget docs" in page and "# Widgets" in page and "`pip install widget`" in page
    assert "```\nimport widget\nwidget.spin()\n```" in page  # code blocks kept
    assert "| Option | Default |" in page and "| speed | 3 |" in page  # and tables
    assert "SCRIPT-TEXT" not in page and "color:red" not in page


async def test_a_same_host_redirect_is_followed_and_the_name_is_kept_in_host(server, make_session, site):
    port = site.rsplit(":", 1)[1]
    [(error, page)] = await fetched(server, make_session, f"http://localhost:{port}/moved", **ALLOWED)
    assert not error and "# Widgets" in page
    assert Site.hosts == [f"localhost:{port}"] * 2  # connected to the checked address, asked for the name


async def test_a_redirect_elsewhere_is_reported_and_a_private_address_is_refused(server, make_session, site):
    port = site.rsplit(":", 1)[1]
    results = await fetched(
        server,
        make_session,
        f"{site}/to-private",
        "http://10.0.0.1/admin",
        f"{site}/to-other-name",
        **{**ALLOWED, "permissions": {"allow": ["web_fetch"]}},
    )
    (first_error, first), (second_error, second), (third_error, third) = results
    assert not first_error and "redirected to http://10.0.0.1/admin, on another host" in first
    assert second_error and "10.0.0.1, a private network address" in second  # refused before any connection
    assert not third_error and f"redirected to http://localhost:{port}/page" in third
    assert len(Site.hosts) == 2  # the two redirects; nothing followed them


async def test_loopback_is_refused_unless_the_setting_allows_it(server, make_session, site):
    [(error, said)] = await fetched(
        server, make_session, f"{site}/page", permissions={"allow": ["web_fetch(domain:127.0.0.1)"]}
    )
    assert error and "127.0.0.1, a loopback address" in said and "web_fetch_private" in said
    assert Site.hosts == []


async def test_a_huge_page_and_a_binary_file_are_refused(server, make_session, site):
    results = await fetched(
        server,
        make_session,
        f"{site}/huge",
        f"{site}/endless",
        f"{site}/image.png",
        f"{site}/mislabeled",
        f"{site}/loop",
        "file:///etc/passwd",
        **ALLOWED,
    )
    huge, endless, image, mislabeled, loop, local_file = results
    assert huge[0] and "6,291,456 bytes, more than the 5 MB" in huge[1]
    assert endless[0] and "larger than the 5 MB" in endless[1]
    assert image[0] and "is image/png, not text" in image[1]
    assert mislabeled[0] and "is a binary file" in mislabeled[1]
    assert loop[0] and "redirected more than 5 times" in loop[1]
    assert local_file[0] and "only opens http and https" in local_file[1]


async def test_headless_refuses_a_new_domain_without_a_rule_and_says_which_rule(server, make_session, site):
    [(error, said)] = await fetched(server, make_session, f"{site}/page", web_fetch_private="loopback")
    assert error and "needs approval" in said and "web_fetch(domain:127.0.0.1)" in said
    assert Site.hosts == []


async def test_the_first_fetch_of_a_domain_asks_and_a_yes_for_the_session_covers_the_next(server, make_session, site):
    server.script(
        tool_use("web_fetch", {"url": f"{site}/page"}), tool_use("web_fetch", {"url": f"{site}/moved"}), text("Done.")
    )
    session, events = make_session(interactive=True, web_fetch_private="loopback")
    answer_with(session, events, [ALLOW_SESSION])
    await session.send("read the docs")
    [asked] = events.of(ApprovalRequested)  # once: the second fetch of the domain did not ask
    assert asked.tool == "web_fetch" and asked.rules == ("web_fetch(domain:127.0.0.1)",)
    assert "has not fetched from 127.0.0.1 yet" in asked.reason
    assert all("# Widgets" in tool_result_text(r) for i in (1, 2) for r in tool_results(server.requests[i]))


async def test_a_deny_rule_on_a_domain_holds_even_in_bypass_mode(server, make_session, site):
    [(error, said)] = await fetched(
        server,
        make_session,
        f"{site}/page",
        permission_mode="bypassPermissions",
        web_fetch_private="loopback",
        permissions={"deny": ["WebFetch(domain:*.0.1)"]},
    )
    assert error and "denied by the rule" in said and Site.hosts == []


def test_a_repository_cannot_open_its_own_network_to_web_fetch_untrusted(tmp_path, isolated_home):
    from agentcli import config
    from agentcli.config import ConfigError, load_settings

    (tmp_path / ".agentcli").mkdir()
    settings_file = tmp_path / ".agentcli" / "settings.toml"
    settings_file.write_text('web_fetch_private = "all"\n')
    assert load_settings(tmp_path, env={}).web_fetch_private == "none"
    assert load_settings(tmp_path, env={}, trusted=True).web_fetch_private == "all"
    [(_, asks, _)] = config.project_settings_sources(tmp_path)
    assert any("web_fetch_private = 'all' (web_fetch may reach your machine and local network)" in a for a in asks)
    settings_file.write_text('web_fetch_private = "everywhere"\n')
    with pytest.raises(ConfigError, match="web_fetch_private must be one of none, loopback, all"):
        load_settings(tmp_path, env={})
