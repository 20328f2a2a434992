"""``web_fetch``: GET one URL and give the model its text, HTML turned into Markdown (Claude Code's ``WebFetch``).

HTML becomes Markdown with ``markdownify`` (on BeautifulSoup), chosen over ``trafilatura``: it converts
the whole page faithfully (code blocks, tables, links and headings kept, which documentation pages are
mostly made of), is small and pure Python, and pulls in nothing but BeautifulSoup; trafilatura's
boilerplate detection guesses which part is the article, drops code and tables it judges to be clutter,
and brings lxml, justext, htmldate and courlan along. Scripts, styles and other markup that is no text
are removed before the conversion.

What a fetch may do, each refused with one sentence:

- Only ``http`` and ``https``, without credentials in the URL.
- The host is put in one spelling first (``policy.web_address``: IDNA for names, every numeric form of an
  IPv4 address as a dotted quad), and that spelling is what the rules saw, what is resolved and what
  ``Host`` says; a host IDNA cannot encode is refused.
- The host is resolved once, every address it resolves to is checked, and the connection goes to the
  checked address (the name stays in ``Host`` and in TLS's SNI and certificate check), so a DNS answer
  that changes between the check and the connection (rebinding) cannot reach another machine. Private,
  loopback, link-local and other non-public addresses are refused unless the ``web_fetch_private``
  setting allows them (``loopback``: this machine, for a local dev server or tests; ``all``).
- A deny rule that names an address the host resolves to refuses it, whatever the name.
- Redirects are followed (at most ``MAX_REDIRECTS``) only to the same host, and only when the rules
  allow the new URL as they allowed the first (``judgments.fetch_redirect``): a rule on a URL cannot be
  passed by a redirect to it. A redirect elsewhere, or to a URL a rule asks about, is reported to the
  model, whose fetch of that URL is then asked like any other.
- At most ``MAX_BYTES`` are read (a larger page is refused, not cut, so the model never reads half a
  page as the whole one); binary content (images, archives, PDFs, a NUL byte anywhere) is refused;
  the text the model gets is capped at ``MAX_CHARS``.
- HTML is turned into Markdown in a process of its own (``system.worker``), at most ``MAX_HTML_BYTES``
  of it (the rest is cut, and the text says so), and that process is killed when the call's time is
  up or the call is cancelled: a page built to keep the converter busy for minutes cannot outlive its
  call. The call's time is the ``web_fetch_timeout`` setting (30 s).

Whether a domain may be fetched at all is the permissions' question (``permissions.Permissions``): the
first fetch of a domain asks, a rule such as ``web_fetch(domain:docs.python.org)`` allows it, and -p
refuses without one. Web search is not built in: it needs a provider, which an MCP server can give.
"""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from ..errors import ToolError
from ..policy.judgments import fetch_denial, fetch_redirect
from ..policy.web_address import LOOPBACK, canonical_host, fetch_host, refused_address
from ..system.worker import WorkerError, WorkerTimeout, run_in_worker
from .base import Tool, ToolContext

if TYPE_CHECKING:
    from ..policy.permissions import Permissions

MAX_BYTES = 5 * 1024 * 1024  # of the response body
MAX_CHARS = 60_000  # of the text the model gets
MAX_HTML_BYTES = 1024 * 1024  # of HTML turned into Markdown: seconds for most pages; the call's time ends the rest
MAX_REDIRECTS = 5
TIMEOUT = 30.0  # seconds the HTTP client waits to connect, or for each read (the whole fetch: web_fetch_timeout)
TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/xhtml+xml",
    "application/javascript",
    "application/ld+json",
    "application/rss+xml",
    "application/atom+xml",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
)
HTML_TYPES = ("text/html", "application/xhtml+xml")
NOT_TEXT_TAGS = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "head")
USER_AGENT = "agentcli (web_fetch; +https://github.com/agentcli)"


class WebFetch(Tool):
    name = "web_fetch"
    claude_name = "WebFetch"
    judged_by = "address"
    brief = "read a web page or file by URL"  # its line in the index of tools on demand (on_demand.py)
    description = (
        "Fetch a web page or text file by URL (http or https) and read it: HTML comes back as Markdown. "
        "Use it for documentation, issues and references the user names or that the task needs. "
        "Redirects to another host are reported, not followed: fetch the new URL if you still want it. "
        "Binary files, very large pages and private network addresses are refused. The first fetch of a "
        "domain may ask the user."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The full URL, such as https://docs.python.org/3/"},
            "prompt": {
                "type": "string",
                "description": (
                    "Optional, and not used to filter: the page comes back whole, up to 60,000 characters."
                ),
            },
        },
        "required": ["url"],
    }
    kind = "read"  # changes nothing; which domains it may reach is decided by the permissions
    key_arg = "url"
    workspace_paths = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        url = str(args["url"]).strip()
        private, timeout = ctx.settings.web_fetch_private, ctx.settings.web_fetch_timeout
        deadline = asyncio.get_running_loop().time() + timeout
        try:
            return await asyncio.wait_for(fetch(url, private, ctx.permissions, deadline), timeout)
        except TimeoutError:
            raise ToolError(
                f"web_fetch: {url} did not arrive and turn into text within {timeout:g} seconds (setting "
                "web_fetch_timeout), so the fetch was stopped."
            ) from None


def check_url(url: str) -> tuple[str, str, int]:
    """The scheme, host and port of a URL web_fetch may open; ToolError says why not."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ToolError(f"web_fetch: {url!r} is not a valid URL ({exc}).") from None
    if parts.scheme not in ("http", "https"):
        raise ToolError(f"web_fetch only opens http and https URLs, not {url!r}.")
    if parts.username or parts.password:
        raise ToolError("web_fetch does not send credentials written in a URL; leave out the user:password@ part.")
    try:
        host = canonical_host(parts.hostname or "")
    except ValueError as exc:
        raise ToolError(f"web_fetch cannot open {url!r}: {exc}.") from None
    if not host:
        raise ToolError(f"web_fetch: {url!r} names no host.")
    return parts.scheme, host, port or (443 if parts.scheme == "https" else 80)


async def resolve(host: str, port: int, private: str) -> list[str]:
    """The checked addresses to connect to: every address ``host`` resolves to must be public (or, as
    ``private`` says, loopback or any), so no name can point one answer at the internet and the next
    at the local network."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(f"web_fetch: cannot find the host {host} ({exc}).") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise ToolError(f"web_fetch: the host {host} has no address.")
    if private != "all":
        for address in addresses:
            why = refused_address(address)
            if why and not (private == "loopback" and why == LOOPBACK):
                raise ToolError(
                    f"web_fetch refuses {host}: it resolves to {address}, {why}; agentcli fetches "
                    "only from public addresses unless the web_fetch_private setting allows more."
                )
    return addresses


async def fetch(url: str, private: str, permissions: Permissions, deadline: float) -> str:
    """The page at ``url`` as text for the model, after the checks above (``deadline``: the event loop's
    time at which the call ends)."""
    import httpx2  # the HTTP client the anthropic SDK uses: already installed, imported on the first fetch

    first, start_host = url, fetch_host(url)
    async with httpx2.AsyncClient(follow_redirects=False, trust_env=False, timeout=TIMEOUT) as client:
        for _ in range(MAX_REDIRECTS + 1):
            scheme, host, port = check_url(url)
            if host != start_host:
                return (
                    f"{start_host} redirected to {url}, on another host ({host}), which web_fetch does not "
                    "follow by itself. To read it, call web_fetch with that URL."
                )
            if url != first:
                decision = fetch_redirect(permissions, first, url, WebFetch.name)
                if decision.verdict == "refuse":
                    raise ToolError(f"web_fetch: {first} redirected to {url}. {decision.reason}")
                if decision.verdict == "ask":
                    return (
                        f"{first} redirected to {url}, which web_fetch does not follow by itself: fetching it "
                        f"needs its own approval ({decision.reason}). To read it, call web_fetch with that URL."
                    )
            addresses = await resolve(host, port, private)
            denied = fetch_denial(permissions, url, addresses, WebFetch.name)
            if denied:
                raise ToolError(denied)
            default_port = port == (443 if scheme == "https" else 80)
            headers = {
                "Host": host if default_port else f"{host}:{port}",
                "User-Agent": USER_AGENT,
                "Accept": "text/html, text/markdown, text/plain, application/json, */*;q=0.5",
            }
            extensions = {"sni_hostname": host} if scheme == "https" else {}
            for index, address in enumerate(addresses):  # the next checked address when one cannot be reached
                netloc = f"[{address}]" if ":" in address else address
                target = urlsplit(url)._replace(netloc=f"{netloc}:{port}", fragment="").geturl()
                try:
                    async with client.stream("GET", target, headers=headers, extensions=extensions) as response:
                        if not response.is_redirect:
                            return await page_text(url, response, deadline)
                        location = response.headers.get("location", "")
                        if not location:
                            raise ToolError(f"web_fetch: {url} answered with a redirect to nowhere.")
                        url = urljoin(url, location)
                        break
                except httpx2.ConnectError as exc:
                    if index + 1 < len(addresses):
                        continue
                    raise ToolError(f"web_fetch: cannot connect to {host} ({exc or type(exc).__name__}).") from None
                except httpx2.HTTPError as exc:
                    raise ToolError(f"web_fetch: fetching {url} failed: {exc or type(exc).__name__}.") from None
    raise ToolError(f"web_fetch: {start_host} redirected more than {MAX_REDIRECTS} times; stopped.")


async def page_text(url: str, response: Any, deadline: float) -> str:
    """A response as the model reads it: status and type on a line, then the text (HTML as Markdown)."""
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and not kind.startswith(TEXT_TYPES):
        raise ToolError(f"web_fetch: {url} is {kind}, not text; web_fetch reads only web pages and text files.")
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BYTES:
        raise ToolError(
            f"web_fetch: {url} is {int(length):,} bytes, more than the {MAX_BYTES // 2**20} MB "
            "web_fetch reads; find a smaller page or a raw file."
        )
    body = bytearray()
    async for chunk in response.aiter_bytes():  # decoded: a small gzip bomb counts at its full size
        body += chunk
        if len(body) > MAX_BYTES:
            raise ToolError(
                f"web_fetch: {url} is larger than the {MAX_BYTES // 2**20} MB web_fetch reads; "
                "find a smaller page or a raw file."
            )
    if b"\x00" in body:
        raise ToolError(f"web_fetch: {url} is a binary file, not text; web_fetch reads only web pages and text files.")
    try:
        text = bytes(body).decode(response.charset_encoding or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        text = bytes(body).decode("utf-8", errors="replace")
    if kind.startswith(HTML_TYPES) or (not kind and "<html" in text[:1000].lower()):
        text = await converted(url, text, deadline)
    status = "" if response.status_code == 200 else f" (HTTP {response.status_code} {response.reason_phrase})"
    head = f"{url}{status} · {kind or 'no content type'}\n\n"
    if len(text) > MAX_CHARS:
        text = (
            f"{text[:MAX_CHARS]}\n\n[… cut: the page has {len(text):,} characters; only the first "
            f"{MAX_CHARS:,} are shown.]"
        )
    return head + text.strip()


async def converted(url: str, html: str, deadline: float) -> str:
    """HTML as Markdown, at most ``MAX_HTML_BYTES`` of it, in a process killed at ``deadline``."""
    cut, data = "", html.encode("utf-8", "replace")
    if len(data) > MAX_HTML_BYTES:
        html = data[:MAX_HTML_BYTES].decode("utf-8", "ignore")
        cut = (
            f"\n\n[… cut: the page has {len(data):,} bytes of HTML; only the first {MAX_HTML_BYTES:,} bytes "
            "were turned into text.]"
        )
    seconds = max(deadline - asyncio.get_running_loop().time(), 0.001)
    try:
        markdown = await run_in_worker(f"{__name__}:html_to_markdown", html, seconds)
    except WorkerTimeout:
        raise ToolError(
            f"web_fetch: {url} arrived, but turning its HTML into text did not finish within the call's "
            "time (setting web_fetch_timeout) and was stopped; find a smaller page or a raw file."
        ) from None
    except WorkerError as exc:
        raise ToolError(f"web_fetch: {url} arrived, but its HTML could not be turned into text: {exc}.") from None
    return f"{markdown}{cut}"


def html_to_markdown(html: str) -> str:
    """The page's title as a heading, then its body as Markdown, without scripts, styles and the like."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(NOT_TEXT_TAGS):
        tag.decompose()
    try:
        markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    except RecursionError:  # markup nested thousands deep: its text, without the Markdown
        markdown = soup.get_text("\n")
    lines = [line.rstrip() for line in markdown.splitlines()]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return f"# {title}\n\n{text.strip()}" if title else text.strip()
