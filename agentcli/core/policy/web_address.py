"""Which host a web_fetch URL reaches, in one spelling, and whether an address is a public one.

A host can be written many ways that reach the same machine: ``127.0.0.1`` is also ``2130706433``,
``127.1``, ``0177.0.0.1``, ``0x7f.0.0.1`` and ``[::ffff:127.0.0.1]``, and ``ｅｘａｍｐｌｅ.com`` in
fullwidth letters is ``example.com``. Rules and address checks compare text, so every host is put in one
spelling first (``canonical_host``): a name through IDNA (which folds case and width, and turns other
scripts into ``xn--`` labels), an IPv4 address in any form the C library's ``inet_aton`` reads (the
parser the resolver uses for numeric hosts) as a dotted quad, an IPv4-mapped IPv6 address as its IPv4
address, and any other IPv6 address compressed. web_fetch resolves and connects to that spelling, so
what the rules saw is what it reaches.

An IPv6 address can carry an IPv4 one inside it (``embedded_ipv4``): mapped (``::ffff:a.b.c.d``),
IPv4-compatible (``::a.b.c.d``), NAT64 (``64:ff9b::/96``) and 6to4 (``2002::/16``). A private address
inside one is a private address (``refused_address``), and a deny rule on an IPv4 address holds for
each IPv6 form of it (``host_aliases``).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import unquote, urlsplit

from .rules import Rule

LOOPBACK = "a loopback address"
_IPV4_CHARACTERS = frozenset("0123456789abcdefx.")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIIT = ipaddress.ip_network("::ffff:0:0:0/96")  # IPv4-translated (RFC 2765): a translator's way to the IPv4 address
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # local use: where the IPv4 address sits is the network's choice


def canonical_host(host: str) -> str:
    """``host`` in the one spelling rules and checks compare (see above); ValueError, with one sentence,
    when it is no host a URL can name."""
    host = host.strip().rstrip(".")
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    else:
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ip) + (host[host.index("%") :] if "%" in host else "")
    try:
        name = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise ValueError(f"{host!r} is not a host name that can be looked up (IDNA cannot encode it)") from None
    if name and set(name) <= _IPV4_CHARACTERS:
        try:
            return socket.inet_ntoa(socket.inet_aton(name))  # 2130706433, 127.1, 0177.0.0.1, 0x7f.0.0.1
        except OSError:
            pass
    return name


def fetch_host(url: str) -> str:
    """The host a URL names, in its canonical spelling ("" when it names none or none that can be looked
    up: web_fetch refuses those itself): what a domain rule is matched against."""
    try:
        return canonical_host(urlsplit(url.strip()).hostname or "")
    except ValueError:
        return ""


def url_forms(url: str) -> tuple[str, ...]:
    """``url`` as written and, when it differs, with its host in the canonical spelling and its path
    percent-decoded: what a deny or ask rule on a URL is matched against (an allow rule matches only the
    URL as written, so no spelling widens it)."""
    try:
        parts = urlsplit(url.strip())
        host = canonical_host(parts.hostname or "")
        port = parts.port
    except ValueError:
        return (url,)
    netloc = f"[{host}]" if ":" in host else host
    netloc += f":{port}" if port is not None else ""
    plain = parts._replace(scheme=parts.scheme.lower(), netloc=netloc, path=unquote(parts.path)).geturl()
    return (url, plain) if plain != url else (url,)


def fetch_rule_hits(rule: Rule, url: str, host: str) -> bool:
    """Whether a web_fetch rule names this fetch: ``domain:HOST`` (``*`` as a wildcard, ``*.example.com``
    also ``example.com``) against the canonical host, any other pattern against the whole URL."""
    if rule.pattern is None:
        return True
    if not rule.pattern.startswith("domain:"):
        return rule.matches_text(url)
    domain = rule.pattern[len("domain:") :].strip().lower().rstrip(".")
    if "*" not in domain:
        try:
            domain = canonical_host(domain)  # WebFetch(domain:0x7f.1) is a rule on 127.0.0.1
        except ValueError:
            return False
    return Rule(rule.text, rule.name, domain).matches_text(host) or (domain.startswith("*.") and host == domain[2:])


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, IPv4-translated, IPv4-compatible, NAT64, 6to4), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or ip in _SIIT or (int(ip) >> 32 == 0 and int(ip) > 1):  # NAT64, SIIT, or ::a.b.c.d
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def host_aliases(host: str) -> tuple[str, ...]:
    """The canonical host and, for an IPv6 address that carries an IPv4 one, that IPv4 address: a deny
    or ask rule on either names it."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return (host,)
    inner = embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    return (host, str(inner)) if inner is not None else (host,)


def refused_address(address: str) -> str:
    """Why an address is no place to fetch from: "" when it is a public one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # the same machine as the IPv4 address
        elif ip in _NAT64_LOCAL or ip.is_site_local:
            return "a private network address"
        elif (inner := embedded_ipv4(ip)) is not None:
            if int(ip) >> 32 == 0:
                return "an IPv4-compatible IPv6 address, which is no public internet address"
            if refused_address(str(inner)):
                return f"a private address ({inner}) inside an IPv6 address"
    if ip.is_loopback:
        return LOOPBACK
    if ip.is_link_local:
        return "a link-local address (such as a cloud metadata service)"
    if ip.is_private:
        return "a private network address"
    if not ip.is_global or ip.is_multicast:
        return "not a public internet address"
    return ""
