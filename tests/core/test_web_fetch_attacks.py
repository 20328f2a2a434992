"""web_fetch attacked (issue 37): each test performs one way around a rule or a limit, against the local
HTTP server of test_web_fetch.py, and shows it held. A deny rule on an address is passed by no other
spelling of it (numeric IPv4 forms, IPv4-mapped IPv6) nor by a name that resolves to it; a redirect on the
same host is held to the rules on URLs; IPv6 forms that carry a private IPv4 address are private; a page
built to keep the HTML converter busy ends with the call's time, the converter with it; a NUL byte past the
first 8 kB is binary; and a host in fullwidth letters gets one sentence, not an exception's name."""

from __future__ import annotations

import psutil
import pytest

from agentcli.core.policy.web_address import canonical_host, refused_address
from tests.core.test_web_fetch import Site, fetched, site  # noqa: F401 (site: the fixture)
from tests.waiting import until

ANY_ADDRESS = {"web_fetch_private": "all"}


@pytest.mark.parametrize(
    "rule", ["WebFetch(domain:127.0.0.1)", "web_fetch(domain:127.0.0.1)", "web_fetch(domain:0x7f.1)"]
)
async def test_a_deny_rule_on_an_address_holds_for_every_spelling_of_it(server, make_session, site, rule):
    port = site.rsplit(":", 1)[1]
    spellings = [
        "2130706433",
        "127.1",
        "0177.0.0.1",
        "0x7f.0.0.1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "127.0.0.1.",
    ]
    results = await fetched(
        server,
        make_session,
        *[f"http://{host}:{port}/page" for host in spellings],
        permissions={"allow": ["web_fetch"], "deny": [rule]},
        **ANY_ADDRESS,
    )
    for host, (error, said) in zip(spellings, results, strict=True):
        assert error and f"denied by the rule `{rule}`" in said, (host, said)
    assert Site.hosts == []  # not one request reached the server


async def test_a_deny_rule_on_an_address_holds_for_a_name_that_resolves_to_it(server, make_session, site):
    port = site.rsplit(":", 1)[1]
    [(error, said)] = await fetched(
        server,
        make_session,
        f"http://localhost:{port}/page",
        permissions={"allow": ["web_fetch"], "deny": ["WebFetch(domain:127.0.0.1)"]},
        **ANY_ADDRESS,
    )
    assert error and "it resolves to an address the rule names" in said
    assert Site.hosts == []


async def test_a_same_host_redirect_is_held_to_the_rules_on_urls(server, make_session, site):
    results = await fetched(
        server,
        make_session,
        f"{site}/to-secret",
        f"{site}/moved",
        permissions={"allow": ["web_fetch(domain:127.0.0.1)"], "deny": [f"web_fetch({site}/secret*)"]},
        web_fetch_private="loopback",
    )
    (denied, said), (followed, page) = results
    assert denied and f"redirected to {site}/secret" in said and "denied by the rule" in said, (
        said,
        Site.hosts,
        Site.lines,
    )
    assert "SECRET-TEXT" not in said
    assert not followed and "# Widgets" in page  # a redirect no rule names is still followed
    assert len(Site.hosts) == 3  # /to-secret, then /moved and /page: /secret was never asked for


async def test_a_redirect_to_a_url_an_ask_rule_names_is_reported_not_followed(server, make_session, site):
    [(error, said)] = await fetched(
        server,
        make_session,
        f"{site}/to-secret",
        permissions={"allow": ["web_fetch(domain:127.0.0.1)"], "ask": [f"WebFetch({site}/secret)"]},
        web_fetch_private="loopback",
    )
    assert not error and f"redirected to {site}/secret, which web_fetch does not follow by itself" in said, (
        said,
        Site.hosts,
        Site.lines,
    )
    assert "SECRET-TEXT" not in said and len(Site.hosts) == 1


def test_ipv6_forms_that_carry_a_private_ipv4_address_are_private():
    for address in (
        "64:ff9b::a00:1",
        "64:ff9b::7f00:1",
        "2002:a00:1::1",
        "2002:7f00:1::",
        "::a00:1",
        "::7f00:1",
        "fec0::1",
        "64:ff9b:1::a00:1",
        "::ffff:10.0.0.1",
        "::ffff:0:7f00:1",
        "::ffff:0:a00:1",
        "::ffff:0:a9fe:a9fe",
    ):  # SIIT's IPv4-translated form too
        assert refused_address(address), address
    assert refused_address("::ffff:127.0.0.1") == "a loopback address"  # the same machine: web_fetch_private=loopback
    for gateway in ("64:ff9b::7f00:1", "::ffff:0:7f00:1"):  # a NAT64 gateway's or a translator's loopback is not ours
        assert refused_address(gateway) != "a loopback address", gateway
    for address in ("64:ff9b::808:808", "2002:808:808::1", "::ffff:0:808:808", "8.8.8.8", "2606:4700::1111"):
        assert refused_address(address) == "", address


async def test_a_private_address_in_an_ipv6_form_is_refused_before_any_connection(server, make_session):
    urls = ["http://[64:ff9b::a00:1]/", "http://[2002:a00:1::1]/", "http://[::a00:1]/", "http://[fec0::1]/"]
    results = await fetched(server, make_session, *urls, permissions={"allow": ["web_fetch"]})
    for url, (error, said) in zip(urls, results, strict=True):
        assert error and "agentcli fetches only from public addresses" in said, (url, said)


def workers() -> list[psutil.Process]:
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if "agentcli.core.system.worker" in proc.cmdline():
                found.append(proc)
        except psutil.Error:
            continue
    return found


async def test_a_page_that_keeps_the_converter_busy_ends_with_the_call(server, make_session, site):
    [(error, said)] = await fetched(
        server,
        make_session,
        f"{site}/table",
        web_fetch_timeout=2,
        permissions={"allow": ["web_fetch(domain:127.0.0.1)"]},
        web_fetch_private="loopback",
    )
    assert error and "(setting web_fetch_timeout)" in said, said
    await until(lambda: not workers(), "the converter's process to be gone", detail=lambda: str(workers()))


async def test_a_nul_byte_past_the_first_8_kb_is_binary(server, make_session, site):
    [(error, said)] = await fetched(
        server,
        make_session,
        f"{site}/late-nul",
        permissions={"allow": ["web_fetch(domain:127.0.0.1)"]},
        web_fetch_private="loopback",
    )
    assert error and "is a binary file" in said


async def test_a_fullwidth_host_is_one_name_for_the_rules_and_a_bad_one_gets_a_sentence(server, make_session):
    assert canonical_host("ｅｘａｍｐｌｅ.com") == "example.com" and canonical_host("１２７．０．０．１") == "127.0.0.1"
    results = await fetched(
        server,
        make_session,
        "http://ｅｘａｍｐｌｅ.com/",
        f"http://{'ａ' * 70}.com/",
        permissions={"allow": ["web_fetch"], "deny": ["WebFetch(domain:example.com)"]},
    )
    (denied, said), (bad, sentence) = results
    assert denied and "Fetching example.com is denied by the rule" in said
    assert bad and "failed unexpectedly" not in sentence and "is not a host name that can be looked up" in sentence


async def test_html_past_the_conversion_cap_is_cut_and_the_text_says_so(server, make_session, site, monkeypatch):
    from agentcli.core.tools import web

    monkeypatch.setattr(web, "MAX_HTML_BYTES", 300)  # the page's head and the start of its body
    [(error, page)] = await fetched(
        server,
        make_session,
        f"{site}/page",
        permissions={"allow": ["web_fetch(domain:127.0.0.1)"]},
        web_fetch_private="loopback",
    )
    assert not error and "# Widget docs" in page
    assert "[… cut: the page has" in page and "bytes of HTML; only the first 300 bytes were turned into text.]" in page
    assert "| speed | 3 |" not in page  # the table came after the cut
