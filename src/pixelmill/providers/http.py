"""What every provider adapter shares: one ``httpx.Client`` per provider with deadlines, retries
with exponential backoff and full jitter on 429/5xx and transport errors (``Retry-After``
honoured, via tenacity), a per-provider concurrency cap, a cancellation token checked while
waiting, and output fetching restricted to the provider's own hosts and ``data:`` URLs.

Provider URLs are operator configuration (loopback and private hosts are allowed there);
nothing a caller sends is ever turned into a provider request URL. Keys travel only in headers
to the configured base host and never appear in messages.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import email.utils
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from pixelmill.cancel import CancelToken, WorkCancelled
from pixelmill.observability.logs import operation_var
from pixelmill.observability.metrics import OTHER, PROVIDER_REQUESTS

T = TypeVar("T")

log = logging.getLogger("pixelmill.providers")

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""Answers worth another try (OpenAI and Replicate document 429 and 5xx as transient)."""

UNAVAILABLE_STATUSES = frozenset({429, 503})
"""Answers meaning "busy, come back later" (a 503 for our caller rather than a 502)."""

MAX_RETRY_AFTER_SECONDS = 60.0
"""A ``Retry-After`` longer than this is cut to it (a request never waits for minutes)."""

MAX_OUTPUT_BYTES = 64 * 1024 * 1024
"""The largest provider output we read (an image or a short video)."""


class ProviderFailure(Exception):
    """A provider call that did not produce a usable answer. ``unavailable``: the provider
    could not be reached, timed out or said it is busy (429/503); otherwise it answered
    something we cannot use. Messages name the provider and never a key."""

    def __init__(self, provider: str, message: str, *, unavailable: bool = False) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.unavailable = unavailable


class RetryableFailure(ProviderFailure):
    """A failure worth another try; ``retry_after`` is the provider's ``Retry-After``."""

    def __init__(
        self,
        provider: str,
        message: str,
        *,
        unavailable: bool = True,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(provider, message, unavailable=unavailable)
        self.retry_after = retry_after


class Cancelled(ProviderFailure, WorkCancelled):
    """The work was cancelled (the job was cancelled or the server is stopping)."""

    def __init__(self, provider: str) -> None:
        super().__init__(provider, "cancelled", unavailable=True)


@dataclass(frozen=True)
class HttpPolicy:
    """Deadlines, retries and the concurrency cap of one provider (from the settings)."""

    timeout: float = 120.0
    connect_timeout: float = 10.0
    max_attempts: int = 3
    concurrency: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 20.0


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date; None when absent or bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def decode_data_url(url: str) -> bytes:
    """The bytes of a ``data:...;base64,`` URL (raises ``ValueError`` otherwise)."""
    header, sep, payload = url.partition(",")
    if not sep or not header.startswith("data:") or ";base64" not in header:
        raise ValueError("only base64 data: URLs are accepted")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"bad base64 in a data: URL ({exc})") from None


def data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _host_port(url: httpx.URL) -> tuple[str, int | None]:
    return url.host.lower(), url.port


class ProviderHttp:
    """The HTTP side of one provider: ``request`` (retried, cancellable), ``slot`` (the
    concurrency cap), ``fetch_output`` (outputs from allowed hosts or ``data:`` URLs only)."""

    def __init__(
        self,
        provider: str,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        policy: HttpPolicy | None = None,
        output_hosts: tuple[str, ...] = (),
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.provider = provider
        self.policy = policy or HttpPolicy()
        self.base_url = httpx.URL(base_url.rstrip("/") + "/")
        if self.base_url.scheme not in ("http", "https") or not self.base_url.host:
            raise ValueError(f"{provider}: the base URL must be http(s)://host[:port]/...")
        timeout = httpx.Timeout(self.policy.timeout, connect=self.policy.connect_timeout)
        client = partial(
            httpx.Client,
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
            transport=transport,
        )
        self._client = client(headers=dict(headers or {}))
        # Long calls that a cancel must be able to abort while they are in flight: no
        # keep-alive, so every request opens its own connection, whose socket a cancel shuts
        # down (the provider sees the connection close; OpenAI-compatible servers stop work).
        self._abortable = client(
            headers=dict(headers or {}), limits=httpx.Limits(max_keepalive_connections=0)
        )
        # Output downloads from a delivery host (replicate.delivery) get no credentials.
        self._plain = client()
        self._output_hosts = tuple(h.lower() for h in output_hosts)
        self._secrets = tuple(
            v.split(" ", 1)[-1] for k, v in (headers or {}).items() if k.lower() == "authorization"
        )
        self._slots = threading.BoundedSemaphore(self.policy.concurrency)

    def close(self) -> None:
        self._client.close()
        self._abortable.close()
        self._plain.close()

    def url(self, path: str) -> httpx.URL:
        """``path`` under the base URL (``chat/completions`` under ``.../v1/``)."""
        return self.base_url.join(path.lstrip("/"))

    @contextmanager
    def slot(self, cancel: CancelToken | None = None) -> Iterator[None]:
        """Hold one of the provider's concurrency slots for a whole call (waiting for one
        while checking ``cancel``)."""
        while not self._slots.acquire(timeout=0.1):
            if cancel is not None and cancel.cancelled:
                raise Cancelled(self.provider)
        try:
            yield
        finally:
            self._slots.release()

    def poll(
        self,
        fetch: Callable[[], T],
        ended: Callable[[T], bool],
        abandon: Callable[[], None],
        *,
        what: str,
        interval: float,
        timeout: float,
        cancel: CancelToken | None,
        start: T | None = None,
    ) -> T:
        """A remote run's state (``start``, else the first ``fetch()``), fetched again every
        ``interval`` seconds until it has ``ended``. Past ``timeout`` (an unavailable failure
        naming ``what``) or on a cancel, the remote work is ``abandon()``-ed first."""
        deadline = time.monotonic() + timeout
        state = fetch() if start is None else start
        while not ended(state):
            if time.monotonic() > deadline:
                abandon()
                message = f"{what} did not end within {timeout:g} s"
                raise ProviderFailure(self.provider, message, unavailable=True)
            try:
                self._sleep(interval, cancel)
            except Cancelled:
                abandon()
                raise
            state = fetch()
        return state

    def json_object(self, response: httpx.Response, what: str = "a JSON object") -> dict[str, Any]:
        """The JSON object an answer carries (a failure naming ``what`` when it has none)."""
        try:
            body = response.json()
        except ValueError:
            raise ProviderFailure(self.provider, "the answer is not JSON") from None
        if not isinstance(body, dict):
            raise ProviderFailure(self.provider, f"the answer is not {what}")
        return body

    def _retrying(self, cancel: CancelToken | None) -> Retrying:
        """Tries on :class:`RetryableFailure`, waiting between them (cancellable)."""
        return Retrying(
            stop=stop_after_attempt(self.policy.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(lambda e: isinstance(e, RetryableFailure)),
            sleep=lambda seconds: self._sleep(seconds, cancel),
            reraise=True,
        )

    def request(
        self,
        method: str,
        path_or_url: str | httpx.URL,
        *,
        cancel: CancelToken | None = None,
        abortable: bool = False,
        **kwargs: Any,
    ) -> httpx.Response:
        """One request to the provider, retried on 429/5xx and transport errors with
        exponential backoff and full jitter (or the provider's ``Retry-After``). A 2xx answer
        is returned; anything else raises :class:`ProviderFailure`. ``abortable``: a cancel
        of ``cancel`` while the request is in flight closes its connection at once
        (:class:`Cancelled`) instead of waiting for the answer."""
        url = path_or_url if isinstance(path_or_url, httpx.URL) else self.url(path_or_url)
        outcome = "failed"
        try:
            response = self._request(method, url, cancel, abortable, **kwargs)
            outcome = "ok"
            return response
        except Cancelled:
            outcome = "cancelled"
            raise
        except ProviderFailure as exc:
            outcome = "unavailable" if exc.unavailable else "failed"
            raise
        finally:
            operation = operation_var.get() or OTHER
            PROVIDER_REQUESTS.labels(self.provider, operation, outcome).inc()

    def _request(
        self,
        method: str,
        url: httpx.URL,
        cancel: CancelToken | None,
        abortable: bool,
        **kwargs: Any,
    ) -> httpx.Response:
        for attempt in self._retrying(cancel):
            with attempt:
                if cancel is not None and cancel.cancelled:
                    raise Cancelled(self.provider)
                if abortable and cancel is not None:
                    return self._send_abortable(method, url, cancel, **kwargs)
                return self._send(self._client, method, url, **kwargs)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send_abortable(
        self, method: str, url: httpx.URL, cancel: CancelToken, **kwargs: Any
    ) -> httpx.Response:
        """``_send`` on a fresh connection whose socket is shut down when ``cancel`` fires
        (the blocked read wakes with an error; the provider sees the connection close)."""
        sockets: list[socket.socket] = []
        lock = threading.Lock()

        def shut(sock: socket.socket) -> None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

        def trace(event: str, info: dict[str, Any]) -> None:
            if event != "connection.connect_tcp.complete":
                return
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                with lock:
                    sockets.append(sock)
                if cancel.cancelled:  # cancelled while connecting
                    shut(sock)

        def abort() -> None:
            with lock:
                found = list(sockets)
            for sock in found:
                shut(sock)

        extensions = {**kwargs.pop("extensions", {}), "trace": trace}
        with cancel.on_cancel(abort):
            try:
                return self._send(self._abortable, method, url, extensions=extensions, **kwargs)
            except ProviderFailure:
                if cancel.cancelled:
                    raise Cancelled(self.provider) from None
                raise

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, RetryableFailure) and exc.retry_after is not None:
            return min(exc.retry_after, MAX_RETRY_AFTER_SECONDS)
        jitter = wait_random_exponential(
            multiplier=self.policy.backoff_base, max=self.policy.backoff_max
        )
        return float(jitter(state))

    def _sleep(self, seconds: float, cancel: CancelToken | None) -> None:
        if cancel is None:
            time.sleep(seconds)
        elif cancel.wait(seconds):
            raise Cancelled(self.provider)

    def _send(
        self, client: httpx.Client, method: str, url: httpx.URL, **kwargs: Any
    ) -> httpx.Response:
        try:
            response = client.request(method, url, **kwargs)
        except httpx.TimeoutException:
            raise RetryableFailure(
                self.provider, f"no answer within {self.policy.timeout:g} s"
            ) from None
        except httpx.TransportError as exc:
            raise RetryableFailure(
                self.provider, f"could not be reached ({type(exc).__name__})"
            ) from None
        if response.is_success:
            return response
        summary = redact(_summary(response), self._secrets)
        if response.status_code in RETRY_STATUSES:
            raise RetryableFailure(
                self.provider,
                f"HTTP {response.status_code} from {url.path}{summary}",
                unavailable=response.status_code in UNAVAILABLE_STATUSES,
                retry_after=retry_after_seconds(response.headers.get("retry-after")),
            )
        raise ProviderFailure(
            self.provider, f"HTTP {response.status_code} from {url.path}{summary}"
        )

    def allowed_output(self, url: str) -> bool:
        """Whether an output URL may be fetched: the base URL's host and port, or one of the
        provider's delivery hosts (and their subdomains) over https."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError):
            return False
        if parsed.scheme not in ("http", "https") or not parsed.host:
            return False
        if _host_port(parsed) == _host_port(self.base_url) and parsed.scheme == (
            self.base_url.scheme
        ):
            return True
        host = parsed.host.lower()
        return parsed.scheme == "https" and any(
            host == h or host.endswith("." + h) for h in self._output_hosts
        )

    def fetch_output(self, url: str, cancel: CancelToken | None = None) -> bytes:
        """An output's bytes: a ``data:`` URL decoded, or a GET of an allowed URL (the base
        host with the provider's credentials, a delivery host without any)."""
        if url.startswith("data:"):
            try:
                return decode_data_url(url)
            except ValueError as exc:
                raise ProviderFailure(self.provider, str(exc)) from None
        if not self.allowed_output(url):
            raise ProviderFailure(
                self.provider,
                "refused to fetch an output from a host that is not the provider's",
            )
        parsed = httpx.URL(url)
        same_host = _host_port(parsed) == _host_port(self.base_url)
        client = self._client if same_host else self._plain
        if cancel is not None and cancel.cancelled:
            raise Cancelled(self.provider)
        for attempt in self._retrying(cancel):
            with attempt:
                response = self._send(client, "GET", parsed)
                if len(response.content) > MAX_OUTPUT_BYTES:
                    raise ProviderFailure(self.provider, "an output is larger than 64 MB")
                return response.content
        raise AssertionError("unreachable")  # pragma: no cover


_KEYLIKE = re.compile(r"\b(?:sk|r8|pk|rk)[-_][A-Za-z0-9*_\-.]{3,}")
"""Strings shaped like API keys (OpenAI ``sk-...``, Replicate ``r8_...``), masked or not: a
provider's 401 message may echo part of the key it was sent."""


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` without the configured secrets and without anything shaped like a key."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return _KEYLIKE.sub("[redacted]", text)


def _summary(response: httpx.Response) -> str:
    """A short, key-free excerpt of an error answer (its ``error.message`` when JSON)."""
    text = ""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        err = body.get("error") or body.get("detail") or body.get("message")
        if isinstance(err, dict):
            err = err.get("message") or err.get("type")
        if isinstance(err, str):
            text = err
    return f": {redact(text)[:200]}" if text else ""
