"""Tests for ``pixelmill.imaging.fetch``: the SSRF guard and the pinned, bounded fetch.

All traffic goes to real servers on 127.0.0.1 / ::1 started here. Refusal tests also assert,
through a recording of the process's real ``connect()`` and DNS calls, that nothing was sent
to (or looked up for) the refused target.
"""

from __future__ import annotations

import gzip
import ipaddress
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote

import pytest

from pixelmill.imaging import (
    FetchPolicy,
    ImageInputError,
    check_url_allowed,
    fetch_image_url,
    ip_refusal_reason,
    pinned_request,
    validate_addresses,
)
from tests.imaging.images import array_bytes, gradient
from tests.imaging.loopback import (
    Handler,
    LoopbackHTTPServer,
    base_url,
    make_certificate,
    record_network,
    serve,
)

PNG = array_bytes(gradient(12, 10), "PNG")
LOOPBACK = FetchPolicy(allow_loopback=True, max_bytes=1_000_000, timeout_s=5.0)
STRICT = FetchPolicy(allow_loopback=False, max_bytes=1_000_000, timeout_s=5.0)


def stall(handler: Handler) -> None:
    """Accept the request, then say nothing until the server stops."""
    handler.server.stop.wait(10)


def trickle(handler: Handler) -> None:
    """Promise 10 kB, then send a byte every 50 ms: each read is quick, the total is not."""
    handler.send_response(200)
    handler.send_header("Content-Length", "10000")
    handler.end_headers()
    try:
        while not handler.server.stop.wait(0.05):
            handler.wfile.write(b"x")
            handler.wfile.flush()
    except OSError:
        return


def late_then_stall(handler: Handler) -> None:
    """Answer only after 0.45 s, send part of the body, then stall."""
    if handler.server.stop.wait(0.45):
        return
    handler.send_response(200)
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    handler.wfile.write(b"x" * 10)
    handler.wfile.flush()
    handler.server.stop.wait(10)


def endless_chunked(handler: Handler) -> None:
    """A chunked body with no declared length, far larger than any test limit."""
    handler.send_response(200)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    chunk = b"\x00" * 65536
    try:
        for _ in range(200):  # 13 MB
            handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        handler.wfile.write(b"0\r\n\r\n")
    except OSError:
        return


def loop_redirect(handler: Handler) -> None:
    handler.redirect("/loop")


@pytest.fixture
def server() -> Iterator[LoopbackHTTPServer]:
    def redirect_to_query(h: Handler) -> None:
        h.redirect(unquote(h.path.split("?", 1)[1]))

    routes = {
        "/img": lambda h: h.send_bytes(200, PNG, "image/png"),
        "/hop1": lambda h: h.redirect("/hop2", 301),
        "/hop2": lambda h: h.redirect("img", 307),
        "/redirect-to": redirect_to_query,
        "/loop": loop_redirect,
        "/missing": lambda h: h.send_bytes(404, b"nope", "text/plain"),
        "/no-location": lambda h: h.send_bytes(302, b""),
        "/big": lambda h: h.send_bytes(200, b"\x00" * 1_500_000),
        "/endless": endless_chunked,
        "/gzip": lambda h: h.send_bytes(
            200, gzip.compress(PNG), "image/png", {"Content-Encoding": "gzip"}
        ),
        "/stall": stall,
        "/trickle": trickle,
        "/late-stall": late_then_stall,
        "/hook": lambda h: h.send_bytes(201, b'{"ok": true}', "application/json"),
        "/hook-moved": lambda h: h.redirect("/hook", 308),
    }
    with serve(routes) as running:
        yield running


def fetch_error(url: str, policy: FetchPolicy = LOOPBACK) -> ImageInputError:
    with pytest.raises(ImageInputError) as caught:
        fetch_image_url(url, policy)
    return caught.value


# --- address rules --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("93.184.215.14", None),
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:93.184.215.14", None),
        ("64:ff9b::808:808", None),  # NAT64 form of 8.8.8.8
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.31.255.255", "private"),
        ("192.168.0.1", "private"),
        ("fd00:ec2::254", "private"),  # AWS IPv6 metadata
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("100.100.100.200", "carrier-grade NAT"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("255.255.255.255", "reserved"),
        ("240.0.0.1", "reserved"),
        ("198.18.0.1", "reserved"),
        ("192.0.2.1", "documentation"),
        ("2001:db8::1", "documentation"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:10.0.0.1", "private"),
        ("::7f00:1", "reserved"),  # IPv4-compatible 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "link-local (NAT64)"),
        ("64:ff9b::7f00:1", "loopback (NAT64)"),
        ("64:ff9b:1::a00:1", "private"),
        ("2002:a00:1::", "private (6to4)"),
        ("2002:7f00:1::", "loopback (6to4)"),
        ("2001:0:4136:e378::1", "reserved"),  # Teredo
        ("fec0::1", "site-local"),
        ("100::1", "reserved"),
    ],
)
def test_address_rules(address: str, reason: str | None) -> None:
    assert ip_refusal_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),  # the same address as 127.0.0.1
        ("10.0.0.1", False),
        ("169.254.169.254", False),
        ("fe80::1", False),
        ("0.0.0.0", False),
        ("::", False),
        ("64:ff9b::7f00:1", False),  # loopback of a NAT64 gateway is not ours to allow
        ("2002:7f00:1::", False),
    ],
)
def test_allow_loopback_allows_loopback_only(address: str, allowed: bool) -> None:
    reason = ip_refusal_reason(ipaddress.ip_address(address), allow_loopback=True)
    assert (reason is None) is allowed


def test_one_refused_address_refuses_the_host_without_naming_it() -> None:
    public = ipaddress.ip_address("93.184.215.14")
    private = ipaddress.ip_address("10.9.8.7")
    with pytest.raises(ImageInputError) as caught:
        validate_addresses("images.example", [public, private], STRICT)
    assert caught.value.code == "URL_REFUSED"
    assert "images.example" in caught.value.message
    assert "10.9.8.7" not in caught.value.message  # internal DNS answers are not echoed


def test_validated_addresses_are_deduplicated_and_unwrapped() -> None:
    mapped = ipaddress.ip_address("::ffff:93.184.215.14")
    plain = ipaddress.ip_address("93.184.215.14")
    assert validate_addresses("images.example", [mapped, plain], STRICT) == (plain,)


# --- URL rules (no traffic at all) ----------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "ftp://93.184.215.14/a.png",
        "file:///etc/passwd",
        "gopher://93.184.215.14/",
        "data:image/png;base64,AAAA",
        "//93.184.215.14/a.png",
        "http://user:secret@93.184.215.14/a.png",
        "http://user@93.184.215.14/a.png",
        "http://93.184.215.14:22/a.png",
        "http://93.184.215.14:25/a.png",
        "https://93.184.215.14:0/a.png",
        "http:///a.png",
        "http://[::1/a.png",
        "http://" + "a" * 9000 + ".example/",
        "http://127.0.0.1/latest",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[fe80::1]/",
        "http://[fd00:ec2::254]/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://224.0.0.1/",
        "http://100.64.0.1/",
        "http://[2002:7f00:1::]/",
    ],
)
def test_refused_urls_cause_no_traffic(url: str) -> None:
    with record_network() as log, pytest.raises(ImageInputError) as caught:
        fetch_image_url(url, STRICT)
    assert (caught.value.code, caught.value.status_code) == ("URL_REFUSED", 400)
    assert caught.value.message.startswith("URL refused:")
    assert log.connects == []
    assert log.lookups == []


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8080/a.png",  # resolves (from /etc/hosts) to loopback
        "http://2130706433:8080/a.png",  # 127.0.0.1 as one decimal number
        "http://0x7f.1:8080/a.png",  # 127.0.0.1 in hex shorthand
        "http://017700000001:8080/a.png",  # octal
    ],
)
def test_names_resolving_to_loopback_are_refused_and_not_connected(url: str) -> None:
    with record_network() as log, pytest.raises(ImageInputError) as caught:
        check_url_allowed(url, STRICT)
    assert caught.value.code == "URL_REFUSED"
    assert "loopback" in caught.value.message
    assert "127.0.0.1" not in caught.value.message
    assert log.connects == []


@pytest.mark.parametrize(
    "url",
    [
        "http://93.184.215.14/a.png",
        "https://93.184.215.14/a.png",
        "http://93.184.215.14:8080/a.png",
        "https://[2606:4700:4700::1111]:8443/a.png",
    ],
)
def test_public_literal_addresses_are_allowed(url: str) -> None:
    with record_network() as log:
        check_url_allowed(url, STRICT)
    assert log.connects == []


def test_policy_values_are_checked() -> None:
    with pytest.raises(ValueError):
        FetchPolicy(max_bytes=0)
    with pytest.raises(ValueError):
        FetchPolicy(timeout_s=0)
    with pytest.raises(ValueError):
        FetchPolicy(max_redirects=-1)


# --- fetching from real loopback servers -------------------------------------------------------


def test_fetches_an_image_when_loopback_is_allowed(server: LoopbackHTTPServer) -> None:
    assert fetch_image_url(base_url(server) + "/img", LOOPBACK) == PNG
    request = server.seen[-1]
    assert request.headers["Accept-Encoding"] == "identity"
    assert request.headers["Host"] == f"127.0.0.1:{server.server_address[1]}"


def test_loopback_server_is_refused_by_default(server: LoopbackHTTPServer) -> None:
    with record_network() as log:
        error = fetch_error(base_url(server) + "/img", STRICT)
    assert error.code == "URL_REFUSED"
    assert server.seen == []
    assert log.connects == []


def test_hostname_is_resolved_once_and_the_checked_address_is_pinned(
    server: LoopbackHTTPServer,
) -> None:
    url = base_url(server, host="localhost") + "/img"
    with record_network() as log:
        assert fetch_image_url(url, LOOPBACK) == PNG
    assert log.lookups.count("localhost") == 1  # no second lookup that could be rebound
    assert log.connected_hosts() == {"127.0.0.1"}
    # The server still sees the name the caller used.
    assert server.seen[-1].headers["Host"] == f"localhost:{server.server_address[1]}"


def test_follows_relative_redirects(server: LoopbackHTTPServer) -> None:
    assert fetch_image_url(base_url(server) + "/hop1", LOOPBACK) == PNG
    assert [r.path for r in server.seen] == ["/hop1", "/hop2", "/img"]


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[::ffff:10.0.0.1]/",
        "http://[fd00:ec2::254]/",
        "http://0.0.0.0:{port}/img",  # would reach this very server on Linux if not refused
        "http://user:pw@127.0.0.1:{port}/img",
        "http://127.0.0.1:22/",
        "file:///etc/passwd",
    ],
)
def test_redirect_targets_are_checked_before_any_connection(
    server: LoopbackHTTPServer, target: str
) -> None:
    location = quote(target.format(port=server.server_address[1]), safe="")
    with record_network() as log:
        error = fetch_error(f"{base_url(server)}/redirect-to?{location}")
    assert error.code == "URL_REFUSED"
    assert len(log.connects) == 1  # the redirecting server, and nothing after it
    assert log.connected_hosts() == {"127.0.0.1"}
    assert len(server.seen) == 1


def test_redirects_are_bounded(server: LoopbackHTTPServer) -> None:
    policy = FetchPolicy(allow_loopback=True, max_redirects=3, timeout_s=5.0)
    error = fetch_error(base_url(server) + "/loop", policy)
    assert error.code == "URL_FETCH_FAILED"
    assert "more than 3" in error.message
    assert len(server.seen) == 4  # the first request and three redirects followed


def test_zero_redirects_means_none_followed(server: LoopbackHTTPServer) -> None:
    policy = FetchPolicy(allow_loopback=True, max_redirects=0, timeout_s=5.0)
    assert fetch_error(base_url(server) + "/hop1", policy).code == "URL_FETCH_FAILED"
    assert fetch_image_url(base_url(server) + "/img", policy) == PNG


@pytest.mark.parametrize(("path", "status"), [("/missing", "404"), ("/no-location", "302")])
def test_unsuccessful_statuses_fail_with_the_status(
    server: LoopbackHTTPServer, path: str, status: str
) -> None:
    error = fetch_error(base_url(server) + path)
    assert (error.code, error.status_code) == ("URL_FETCH_FAILED", 422)
    assert status in error.message


def test_declared_oversize_is_refused(server: LoopbackHTTPServer) -> None:
    error = fetch_error(base_url(server) + "/big")
    assert (error.code, error.status_code) == ("FILE_TOO_LARGE", 413)
    assert error.message.startswith("The URL's content is 1.5 MB; the limit is")


def test_streamed_oversize_is_cut_at_the_limit(server: LoopbackHTTPServer) -> None:
    started = time.perf_counter()
    error = fetch_error(base_url(server) + "/endless")
    assert error.code == "FILE_TOO_LARGE"
    assert time.perf_counter() - started < 2.0


def test_compressed_bodies_are_refused(server: LoopbackHTTPServer) -> None:
    error = fetch_error(base_url(server) + "/gzip")
    assert error.code == "URL_FETCH_FAILED"
    assert "gzip" in error.message


@pytest.mark.parametrize("path", ["/stall", "/trickle"])
def test_slow_servers_time_out_within_the_budget(server: LoopbackHTTPServer, path: str) -> None:
    policy = FetchPolicy(allow_loopback=True, timeout_s=0.4)
    started = time.perf_counter()
    error = fetch_error(base_url(server) + path, policy)
    elapsed = time.perf_counter() - started
    assert error.code == "URL_FETCH_FAILED"
    assert "timed out" in error.message
    assert 0.35 < elapsed < 1.2


def test_one_budget_covers_a_late_answer_and_a_stalled_body(server: LoopbackHTTPServer) -> None:
    # Headers after 0.45 s of a 0.6 s budget: the body may only wait for what is left, not
    # for a fresh 0.6 s read timeout.
    policy = FetchPolicy(allow_loopback=True, timeout_s=0.6)
    started = time.perf_counter()
    error = fetch_error(base_url(server) + "/late-stall", policy)
    assert "timed out" in error.message
    assert time.perf_counter() - started < 0.9


def test_connection_refused_is_a_fetch_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound but not listening: connect is refused
        error = fetch_error(f"http://127.0.0.1:{port}/img")
    assert error.code == "URL_FETCH_FAILED"


def test_ipv6_loopback_server() -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("IPv6 loopback is not available here")
    with serve({"/img": lambda h: h.send_bytes(200, PNG)}, host="::1") as running:
        url = base_url(running) + "/img"
        assert url.startswith("http://[::1]:")
        assert fetch_image_url(url, LOOPBACK) == PNG
        assert fetch_error(url, STRICT).code == "URL_REFUSED"


# --- https: SNI and certificate checks against the name, connection to the pinned IP ----------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"), "localhost")


def test_https_uses_the_hostname_for_sni_and_verification(
    certificate: tuple[Path, Path],
) -> None:
    cert, key = certificate
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    trust = ssl.create_default_context(cafile=str(cert))
    policy = FetchPolicy(allow_loopback=True, timeout_s=5.0, ssl_context=trust)
    with serve({"/img": lambda h: h.send_bytes(200, PNG)}, tls=server_tls) as running:
        with record_network() as log:
            assert fetch_image_url(base_url(running, "https", "localhost") + "/img", policy) == PNG
        assert running.sni_names == ["localhost"]
        assert log.connected_hosts() == {"127.0.0.1"}
        # The certificate names only "localhost": reaching the same server by IP must fail
        # verification, proving the check is made against the name and not skipped.
        error = fetch_error(base_url(running, "https") + "/img", policy)
        assert error.code == "URL_FETCH_FAILED"
        assert "certificate" in error.message


# --- pinned_request (for webhooks) ----------------------------------------------------------


def test_pinned_request_posts_and_returns_the_response(server: LoopbackHTTPServer) -> None:
    response = pinned_request(
        "POST",
        base_url(server, host="localhost") + "/hook",
        LOOPBACK,
        content=b'{"event": "job.completed"}',
        headers={"Content-Type": "application/json", "Host": "evil.example"},
    )
    assert response.status_code == 201
    assert response.json() == {"ok": True}
    seen = server.seen[-1]
    assert (seen.method, seen.body) == ("POST", b'{"event": "job.completed"}')
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.headers["Host"] == f"localhost:{server.server_address[1]}"  # never overridden


def test_pinned_request_does_not_follow_redirects(server: LoopbackHTTPServer) -> None:
    response = pinned_request("POST", base_url(server) + "/hook-moved", LOOPBACK, content=b"{}")
    assert response.status_code == 308
    assert [r.path for r in server.seen] == ["/hook-moved"]


def test_pinned_request_refuses_private_targets() -> None:
    with record_network() as log, pytest.raises(ImageInputError) as caught:
        pinned_request("POST", "http://10.0.0.1:8080/hook", LOOPBACK, content=b"{}")
    assert caught.value.code == "URL_REFUSED"
    assert log.connects == []


def test_pinned_request_bounds_the_response_body(server: LoopbackHTTPServer) -> None:
    small = FetchPolicy(allow_loopback=True, max_bytes=1000, timeout_s=5.0)
    with pytest.raises(ImageInputError) as caught:
        pinned_request("GET", base_url(server) + "/endless", small)
    assert caught.value.code == "FILE_TOO_LARGE"
