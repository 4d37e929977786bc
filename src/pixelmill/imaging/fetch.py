"""Fetch user-supplied URLs without letting them reach into our own network (SSRF guard).

``image_url`` inputs and webhook endpoints are URLs chosen by API callers, fetched by the server.
Without care they would read cloud metadata (``http://169.254.169.254/``), admin consoles on
``10.x`` or services on ``127.0.0.1``. The rules, applied to every hop of every request:

1. Only ``http`` and ``https``; no credentials in the URL (``user:pass@``).
2. Ports: 80, 443, or any port from 1024 up. Well-known ports other than 80/443 (SMTP 25,
   SSH 22, ...) are refused to stop cross-protocol abuse of public services.
3. The host is resolved once with ``socket.getaddrinfo`` (bounded by the policy's timeout) and
   *every* address must be public: loopback, private (RFC 1918, ULA ``fc00::/7``), link-local
   (``169.254/16`` with the metadata address, ``fe80::/10``), carrier-grade NAT ``100.64/10``,
   multicast, unspecified, documentation and reserved ranges are refused, and so are IPv6
   forms that embed such an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``, NAT64
   ``64:ff9b::/96``, 6to4 ``2002::/16``) and the deprecated IPv4-compatible ``::a.b.c.d``.
   ``FetchPolicy.allow_loopback`` lets ``127.0.0.0/8`` and ``::1`` through (tests, local demos);
   nothing else.
4. The connection goes to the validated address itself ("pinning"): the URL's host is replaced
   by the IP, the original ``Host`` header is sent and, for https, the original name is used
   for SNI and certificate verification. No second DNS lookup happens, so DNS rebinding (a name
   that resolves to a public address for the check and to ``127.0.0.1`` for the connect)
   cannot work.
5. Redirects are followed by hand (at most ``max_redirects``), each target validated like the
   first URL, before any connection to it.
6. Time and size are bounded: one deadline covers DNS, connects, redirects and body reads;
   bodies are streamed and cut at ``max_bytes`` (``Accept-Encoding: identity`` is sent and
   compressed replies are refused, so a small gzip body cannot inflate past the limit).
7. No proxy from the environment (``trust_env=False``): a proxy would do its own resolution.

Error messages never include the address a *hostname* resolved to (that would let callers map
our internal DNS); a literal IP in the URL is echoed because the caller wrote it.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import httpx

from pixelmill.imaging.errors import ImageInputError, too_large_message

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_SCHEMES: Final = frozenset({"http", "https"})
_REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
_MAX_URL_LENGTH: Final = 8192
_USER_AGENT: Final = "pixelmill (+image fetch)"
_IMAGE_ACCEPT: Final = "image/jpeg, image/png, image/webp;q=0.9, */*;q=0.1"


@dataclass(frozen=True)
class FetchPolicy:
    """What an outbound request may do.

    ``allow_loopback``: also allow ``127.0.0.0/8`` and ``::1`` (the
    ``PIXELMILL_ALLOW_LOOPBACK_URLS`` setting); private, link-local and metadata addresses stay
    refused. ``max_bytes``: the largest response body read. ``timeout_s``: one deadline for the
    whole call (DNS, connects, every redirect hop, the body). ``max_redirects``: redirects
    followed by :func:`fetch_image_url`. ``ssl_context``: the trust store for https (``None``:
    httpx's default, the certifi bundle); tests and private CAs pass their own.
    """

    allow_loopback: bool = False
    max_bytes: int = 50 * 1024 * 1024
    timeout_s: float = 20.0
    max_redirects: int = 5
    ssl_context: ssl.SSLContext | None = None

    def __post_init__(self) -> None:
        if self.max_bytes <= 0:
            raise ValueError("FetchPolicy.max_bytes must be positive")
        if self.timeout_s <= 0:
            raise ValueError("FetchPolicy.timeout_s must be positive")
        if self.max_redirects < 0:
            raise ValueError("FetchPolicy.max_redirects must not be negative")


# ---------------------------------------------------------------------------------------------
# Address rules


def _v4_nets(*pairs: tuple[str, str]) -> tuple[tuple[ipaddress.IPv4Network, str], ...]:
    return tuple((ipaddress.IPv4Network(net), why) for net, why in pairs)


def _v6_nets(*pairs: tuple[str, str]) -> tuple[tuple[ipaddress.IPv6Network, str], ...]:
    return tuple((ipaddress.IPv6Network(net), why) for net, why in pairs)


# Written out rather than taken from ``ipaddress.is_private``/``is_global``, whose lists changed
# between Python patch releases; those flags remain as a backstop below. Sources: the IANA
# IPv4/IPv6 Special-Purpose Address Registries.
_LOOPBACK_V4: Final = ipaddress.IPv4Network("127.0.0.0/8")
_REFUSED_V4: Final = _v4_nets(
    ("0.0.0.0/8", "unspecified"),  # "this network"; Linux connects 0.0.0.0 to loopback
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "carrier-grade NAT"),  # also Alibaba's metadata 100.100.100.200
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),  # cloud metadata 169.254.169.254
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "reserved"),
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "reserved"),  # deprecated 6to4 relay anycast
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "reserved"),  # benchmarking
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),  # includes the broadcast 255.255.255.255
)
_NAT64_WELL_KNOWN: Final = ipaddress.IPv6Network("64:ff9b::/96")
_GLOBAL_UNICAST_V6: Final = ipaddress.IPv6Network("2000::/3")
_REFUSED_V6: Final = _v6_nets(
    ("64:ff9b:1::/48", "private"),  # local-use NAT64 (RFC 8215); inside ::/8, so first
    ("::/8", "reserved"),  # IPv4-compatible ::a.b.c.d and other legacy forms
    ("100::/64", "reserved"),  # discard-only
    ("2001::/23", "reserved"),  # IETF protocol assignments: Teredo, benchmarking, ORCHID
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "reserved"),  # SRv6 SIDs
    ("fc00::/7", "private"),  # unique local, e.g. AWS's metadata fd00:ec2::254
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local"),
    ("ff00::/8", "multicast"),
)


def ip_refusal_reason(ip: IPAddress, *, allow_loopback: bool = False) -> str | None:
    """Why ``ip`` may not be contacted (``"private"``, ``"loopback"``, ...), or ``None`` if it
    is a public address (or loopback with ``allow_loopback``)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return _v4_refusal_reason(ip, allow_loopback=allow_loopback)
    if ip.ipv4_mapped is not None:
        # ::ffff:a.b.c.d is a.b.c.d on a dual-stack socket: judge the IPv4 address.
        return _v4_refusal_reason(ip.ipv4_mapped, allow_loopback=allow_loopback)
    if ip == ipaddress.IPv6Address("::1"):
        return None if allow_loopback else "loopback"
    if ip.is_unspecified:
        return "unspecified"
    if ip in _NAT64_WELL_KNOWN:
        # A NAT64 gateway would connect to the embedded IPv4 address from *its* network,
        # so the loopback exception never applies here.
        embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        reason = _v4_refusal_reason(embedded, allow_loopback=False)
        return f"{reason} (NAT64)" if reason else None
    if ip.sixtofour is not None:
        reason = _v4_refusal_reason(ip.sixtofour, allow_loopback=False)
        return f"{reason} (6to4)" if reason else None
    for net, why in _REFUSED_V6:
        if ip in net:
            return why
    if ip not in _GLOBAL_UNICAST_V6 or not ip.is_global:
        return "reserved"
    return None


def _v4_refusal_reason(ip: ipaddress.IPv4Address, *, allow_loopback: bool) -> str | None:
    if allow_loopback and ip in _LOOPBACK_V4:
        return None
    for net, why in _REFUSED_V4:
        if ip in net:
            return why
    if not ip.is_global:
        return "reserved"
    return None


def validate_addresses(
    host: str, addresses: Sequence[IPAddress], policy: FetchPolicy
) -> tuple[IPAddress, ...]:
    """Check every address ``host`` resolved to; return them (deduplicated, IPv4-mapped ones
    unwrapped to IPv4) or raise ``URL_REFUSED`` if ANY is refused.

    One bad address is enough: an attacker controlling DNS could otherwise publish a public
    and a private address and hope the connection picks the private one.
    """
    if not addresses:
        raise ImageInputError("URL_FETCH_FAILED", f"The host {host!r} has no addresses.")
    literal = _is_ip_literal(host)
    allowed: list[IPAddress] = []
    for ip in addresses:
        reason = ip_refusal_reason(ip, allow_loopback=policy.allow_loopback)
        if reason is not None:
            where = f"{ip} is" if literal else f"the host {host!r} resolves to"
            raise ImageInputError(
                "URL_REFUSED",
                f"URL refused: {where} a {reason} address; only public addresses can be fetched.",
            )
        target = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
        pinned = target or ip
        if pinned not in allowed:
            allowed.append(pinned)
    return tuple(allowed)


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# URL checks and resolution


@dataclass(frozen=True)
class _Target:
    """A validated URL and the addresses it may be connected to."""

    url: httpx.URL
    host: str  # ASCII (IDNA) host, without brackets
    host_header: str  # host[:port] as the Host header must carry it
    addresses: tuple[IPAddress, ...]


class _Deadline:
    """One wall-clock budget shared by every step of a call."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left; raises ``URL_FETCH_FAILED`` once the budget is spent."""
        left = self._end - time.monotonic()
        if left <= 0:
            raise _timed_out(self.seconds)
        return left


def _timed_out(seconds: float) -> ImageInputError:
    return ImageInputError("URL_FETCH_FAILED", f"Fetching the URL timed out (limit {seconds:g} s).")


def _refused(why: str) -> ImageInputError:
    return ImageInputError("URL_REFUSED", f"URL refused: {why}.")


def _parse_url(url: str | httpx.URL) -> tuple[httpx.URL, str, int]:
    """Syntax rules (1 and 2 of the module docstring); no network. Returns (url, host, port)."""
    if isinstance(url, str):
        if len(url) > _MAX_URL_LENGTH:
            raise _refused(f"the URL is longer than {_MAX_URL_LENGTH} characters")
        try:
            url = httpx.URL(url.strip())
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise _refused("it is not a valid URL") from exc
    scheme = url.scheme.lower()
    if scheme not in _SCHEMES:
        shown = f"{scheme!r} URLs are" if scheme else "URLs without a scheme are"
        raise _refused(f"{shown} not allowed; use http or https")
    if url.userinfo:
        raise _refused("URLs may not contain credentials (user:password@)")
    host = url.raw_host.decode("ascii")
    if not host:
        raise _refused("the URL has no host")
    port = url.port if url.port is not None else (443 if scheme == "https" else 80)
    if not (port in (80, 443) or 1024 <= port <= 65535):
        raise _refused(f"port {port} is not allowed (use 80, 443 or a port from 1024 up)")
    return url, host, port


def _resolve(host: str, port: int, deadline: _Deadline) -> list[IPAddress]:
    """Addresses of ``host`` via getaddrinfo, abandoned (not cancelled) past the deadline.

    getaddrinfo has no timeout parameter and blocks for as long as the system resolver
    retries, so it runs in a daemon thread and we stop waiting when the budget is spent.
    """
    literal: IPAddress | None
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        return [literal]

    found: list[IPAddress] = []
    failure: list[BaseException] = []
    done = threading.Event()

    def lookup() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            for _family, _type, _proto, _name, sockaddr in infos:
                found.append(ipaddress.ip_address(sockaddr[0]))
        except (OSError, UnicodeError, ValueError) as exc:
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=lookup, name="pixelmill-resolve", daemon=True).start()
    if not done.wait(deadline.remaining()):
        raise _timed_out(deadline.seconds)
    if failure or not found:
        raise ImageInputError("URL_FETCH_FAILED", f"The host {host!r} could not be resolved.")
    return found


def _resolve_target(url: str | httpx.URL, policy: FetchPolicy, deadline: _Deadline) -> _Target:
    parsed, host, port = _parse_url(url)
    addresses = validate_addresses(host, _resolve(host, port, deadline), policy)
    host_header = f"[{host}]" if ":" in host else host
    if parsed.port is not None:
        host_header += f":{parsed.port}"
    return _Target(
        url=parsed.copy_with(fragment=None),
        host=host,
        host_header=host_header,
        addresses=addresses,
    )


def check_url_allowed(url: str, policy: FetchPolicy) -> None:
    """Raise :class:`ImageInputError` (``URL_REFUSED``, or ``URL_FETCH_FAILED`` when the host
    does not resolve in time) unless ``url`` may be fetched under ``policy``.

    Resolves the host (the answer can change later: the actual request checks again and pins
    the address it checked). Use it to refuse a webhook URL at registration time.
    """
    _resolve_target(url, policy, _Deadline(policy.timeout_s))


# ---------------------------------------------------------------------------------------------
# Pinned requests


@functools.cache
def _default_ssl_context() -> ssl.SSLContext:
    """httpx's default verifying context (certifi roots), built once: loading the CA bundle
    costs tens of milliseconds and every attempt uses a fresh client. Contexts are safe to
    share between threads."""
    return httpx.create_ssl_context()


@dataclass(frozen=True)
class _Reply:
    status_code: int
    headers: httpx.Headers
    body: bytes


def _send_pinned(
    method: str,
    target: _Target,
    policy: FetchPolicy,
    deadline: _Deadline,
    *,
    content: bytes | None,
    headers: Mapping[str, str] | None,
    read_body: Literal["always", "2xx"],
) -> _Reply:
    """One request, no redirects, connected to one of ``target.addresses``.

    Addresses are tried in resolver order, each with a fair share of the remaining time, and
    only when connecting fails (a name with both ``::1`` and ``127.0.0.1`` must work when the
    server listens on one). Each attempt uses a fresh client: a pooled TLS connection opened
    for another name on the same IP must never carry this request.
    """
    last_error: Exception | None = None
    for index, ip in enumerate(target.addresses):
        remaining = deadline.remaining()
        share = remaining / (len(target.addresses) - index)
        timeout = httpx.Timeout(remaining, connect=share)
        request_headers = httpx.Headers(headers or {})
        request_headers["Host"] = target.host_header
        request_headers.setdefault("User-Agent", _USER_AGENT)
        # Raw bytes only: a compressed body could inflate far past max_bytes in one chunk.
        request_headers["Accept-Encoding"] = "identity"
        timeouts = timeout.as_dict()
        extensions: dict[str, object] = {"timeout": timeouts}
        if target.url.scheme == "https":
            extensions["sni_hostname"] = target.host
        request = httpx.Request(
            method,
            target.url.copy_with(host=str(ip)),
            headers=request_headers,
            content=content,
            extensions=extensions,
        )
        client = httpx.Client(
            verify=policy.ssl_context or _default_ssl_context(),
            trust_env=False,
            follow_redirects=False,
        )
        try:
            try:
                response = client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                last_error = exc
                continue
            # The read timeout above was the whole remaining budget when the request started;
            # for the body it must be what is left now, or a server that answers late and then
            # stalls would hold us for nearly twice the budget. httpcore reads this same dict
            # when body reading begins; should that ever change, the deadline checked between
            # chunks still bounds the total (to at most one extra read timeout).
            timeouts["read"] = deadline.remaining()
            try:
                return _read_reply(response, policy, deadline, read_body=read_body)
            finally:
                response.close()
        except httpx.TimeoutException as exc:
            raise _timed_out(deadline.seconds) from exc
        except httpx.HTTPError as exc:
            raise ImageInputError(
                "URL_FETCH_FAILED", f"Fetching the URL failed: {_describe(exc)}."
            ) from exc
        finally:
            client.close()
    if isinstance(last_error, httpx.ConnectTimeout):
        raise _timed_out(deadline.seconds) from last_error
    reason = _describe(last_error) if last_error else "no address to connect to"
    raise ImageInputError(
        "URL_FETCH_FAILED", f"Could not connect to the URL's host: {reason}."
    ) from last_error


def _read_reply(
    response: httpx.Response,
    policy: FetchPolicy,
    deadline: _Deadline,
    *,
    read_body: Literal["always", "2xx"],
) -> _Reply:
    if read_body == "2xx" and not response.is_success:
        # Redirects and errors: only the status and headers matter, never read their bodies.
        return _Reply(response.status_code, response.headers, b"")
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise ImageInputError(
            "URL_FETCH_FAILED",
            f"The server sent a compressed ({encoding}) body although none was accepted.",
        )
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > policy.max_bytes:
        raise _too_large(int(declared), policy)
    body = bytearray()
    for chunk in response.iter_raw():
        body += chunk
        if len(body) > policy.max_bytes:
            raise _too_large(None, policy)
        # A server trickling bytes just inside the read timeout must not outlive the budget.
        deadline.remaining()
    return _Reply(response.status_code, response.headers, bytes(body))


def _too_large(size: int | None, policy: FetchPolicy) -> ImageInputError:
    return ImageInputError(
        "FILE_TOO_LARGE", too_large_message(size, policy.max_bytes, "The URL's content")
    )


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return "its TLS certificate could not be verified"
    return text or type(exc).__name__


def pinned_request(
    method: str,
    url: str,
    policy: FetchPolicy,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
) -> httpx.Response:
    """Send one request to ``url`` under the SSRF rules, connected to the validated address.

    For the webhook sender (and anything else posting to user-chosen URLs). Redirects are
    *not* followed: a 3xx comes back as the response. Non-2xx statuses are returned, not
    raised. The body is read (at most ``policy.max_bytes``; more raises ``FILE_TOO_LARGE``) and
    available as ``.content``. Refusals and transport failures raise :class:`ImageInputError`
    (``URL_REFUSED``, ``URL_FETCH_FAILED``); all of it within ``policy.timeout_s``.
    """
    deadline = _Deadline(policy.timeout_s)
    target = _resolve_target(url, policy, deadline)
    reply = _send_pinned(
        method.upper(),
        target,
        policy,
        deadline,
        content=content,
        headers=headers,
        read_body="always",
    )
    return httpx.Response(
        reply.status_code,
        headers=reply.headers,
        content=reply.body,
        request=httpx.Request(method.upper(), target.url),
    )


def fetch_image_url(url: str, policy: FetchPolicy) -> bytes:
    """GET ``url`` under the SSRF rules, following redirects by hand, and return the body.

    The bytes are not interpreted here (:func:`pixelmill.imaging.decode_image` sniffs them;
    a server's Content-Type is not trusted). Raises :class:`ImageInputError`: ``URL_REFUSED``
    (the URL or any redirect target is not allowed; nothing was sent to a refused address),
    ``FILE_TOO_LARGE``, or ``URL_FETCH_FAILED`` (DNS, connect or TLS failure, timeout,
    non-2xx status, too many redirects). Blocking: call it from a worker thread.
    """
    deadline = _Deadline(policy.timeout_s)
    target = _resolve_target(url, policy, deadline)
    redirects = 0
    while True:
        reply = _send_pinned(
            "GET",
            target,
            policy,
            deadline,
            content=None,
            headers={"Accept": _IMAGE_ACCEPT},
            read_body="2xx",
        )
        if 200 <= reply.status_code < 300:
            return reply.body
        location = reply.headers.get("Location")
        if reply.status_code not in _REDIRECT_STATUSES or not location:
            raise ImageInputError(
                "URL_FETCH_FAILED", f"The URL answered HTTP {reply.status_code}, not an image."
            )
        if redirects == policy.max_redirects:
            raise ImageInputError(
                "URL_FETCH_FAILED", f"The URL redirected more than {policy.max_redirects} times."
            )
        redirects += 1
        try:
            next_url = target.url.join(location)
        except (httpx.InvalidURL, ValueError) as exc:
            raise ImageInputError(
                "URL_FETCH_FAILED", "The URL redirected to an invalid location."
            ) from exc
        # The new target is checked (scheme, credentials, port, every address) before
        # anything is sent to it.
        target = _resolve_target(next_url, policy, deadline)
