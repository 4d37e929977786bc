"""Every Prometheus metric pixelmill exports, defined once, and the exposition of them.

The metrics are always defined and updated (a labelled counter costs well under a microsecond);
``PIXELMILL_METRICS=true`` decides whether ``/metrics`` (the API) and the worker's metrics port
expose them. Several processes (``pixelmill serve --workers N``) share one
``PROMETHEUS_MULTIPROC_DIR``: each process writes its values to its own files there and a
scrape of any of them sums the counters and histograms of all (prometheus_client's multiprocess
mode). That variable must be set before this module is first imported; ``pixelmill serve``
sets it (docs/observability.md).
"""

from __future__ import annotations

import atexit
import hmac
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from pixelmill.observability.multiproc import MULTIPROC_ENV

# No `_created` series beside every counter and histogram.
disable_created_metrics()  # type: ignore[no-untyped-call]


UNMATCHED_ROUTE = "unmatched"
"""The ``route`` label of a request no route matched (never the raw path: its values are
unbounded)."""

OTHER = "other"
"""The label of a provider call made outside a named operation."""

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
OPERATION_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

HTTP_REQUESTS = Counter(
    "pixelmill_http_requests",
    "HTTP requests answered, by route template, method and status",
    ("route", "method", "status"),
)
HTTP_DURATION = Histogram(
    "pixelmill_http_request_duration_seconds",
    "Time from a request's arrival to the end of its response, by route template",
    ("route", "method"),
    buckets=LATENCY_BUCKETS,
)
OPERATION_DURATION = Histogram(
    "pixelmill_operation_duration_seconds",
    "Engine run time of one operation (a synchronous call, or one output of a job)",
    ("operation", "engine"),
    buckets=OPERATION_BUCKETS,
)
JOBS = Counter(
    "pixelmill_jobs", "Jobs that reached a terminal status, by kind and status", ("kind", "status")
)
CREDITS_CHARGED = Counter(
    "pixelmill_credits_charged", "Credits captured for delivered work, by operation", ("operation",)
)
CREDITS_REFUNDED = Counter(
    "pixelmill_credits_refunded", "Reserved credits given back unused (failed or undelivered work)"
)
PROVIDER_REQUESTS = Counter(
    "pixelmill_provider_requests",
    "Calls to a generative provider (after retries), by provider, operation and outcome "
    "(ok, unavailable, failed, cancelled)",
    ("provider", "operation", "outcome"),
)
ADMISSION_REJECTED = Counter(
    "pixelmill_admission_rejected",
    "Synchronous image requests refused with 503 because the CPU queue was full or too slow",
)
PROCESS_RSS = Gauge(
    "pixelmill_process_resident_memory_bytes",
    "Resident memory of each pixelmill process (one series per pid in multi-process mode)",
    multiprocess_mode="liveall",
)
PROCESS_CPU = Gauge(
    "pixelmill_process_cpu_seconds",
    "CPU seconds (user + system) used by each pixelmill process so far",
    multiprocess_mode="liveall",
)

_sampler_started = False
_sampler_lock = threading.Lock()


def multiprocess_dir() -> Path | None:
    value = os.environ.get(MULTIPROC_ENV)
    return Path(value) if value else None


def sample_process() -> None:
    """Update this process's resident memory and CPU gauges."""
    PROCESS_RSS.set(resident_bytes(os.getpid()))
    times = os.times()
    PROCESS_CPU.set(times.user + times.system)


def resident_bytes(pid: int) -> int:
    """Resident set size of ``pid`` in bytes (Linux ``/proc``; 0 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def start_process_sampler(interval_s: float = 5.0) -> None:
    """Sample this process's gauges now and every ``interval_s`` in a daemon thread (once per
    process); in multi-process mode its series go when the process exits."""
    global _sampler_started
    with _sampler_lock:
        if _sampler_started:
            return
        _sampler_started = True
    sample_process()

    def loop() -> None:
        while True:
            time.sleep(interval_s)
            sample_process()

    threading.Thread(target=loop, name="metrics-sampler", daemon=True).start()
    if multiprocess_dir() is not None:
        pid = os.getpid()
        atexit.register(lambda: multiprocess.mark_process_dead(pid))  # type: ignore[no-untyped-call]


class QueueDepthCollector(Collector):
    """``pixelmill_queue_depth{lane}``, read at scrape time from the queue (tasks waiting for
    a worker: the Redis list of each lane's Celery queue, or the in-process pools' backlog)."""

    def __init__(self, depth: Callable[[], Mapping[str, int]]) -> None:
        self.depth = depth

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(
            "pixelmill_queue_depth", "Tasks waiting for a worker, by lane", labels=("lane",)
        )
        try:
            depths = self.depth()
        except Exception:  # an unreachable broker: no sample rather than a failed scrape
            depths = {}
        for lane, value in sorted(depths.items()):
            family.add_metric((lane,), float(value))
        yield family


def exposition(extra: Iterable[Collector] = ()) -> tuple[bytes, str]:
    """The text exposition of every metric (all processes' in multi-process mode) plus
    ``extra`` collectors, and its content type."""
    sample_process()
    registry = CollectorRegistry(auto_describe=False)
    if multiprocess_dir() is not None:
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        body = generate_latest(registry)
    else:
        body = generate_latest(REGISTRY)
    for collector in extra:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        body += generate_latest(registry)
    return body, CONTENT_TYPE_LATEST


def token_matches(expected: str | None, authorization: str | None) -> bool:
    """Whether ``authorization`` is ``Bearer <expected>`` (always, when no token is set)."""
    if not expected:
        return True
    if not authorization or not authorization.startswith("Bearer "):
        return False
    return hmac.compare_digest(authorization[len("Bearer ") :].encode(), expected.encode())


def serve_metrics(
    host: str,
    port: int,
    token: str | None,
    extra: Callable[[], Iterable[Collector]] = tuple,
) -> Callable[[], None]:
    """Serve ``GET /metrics`` (this process's metrics, or every process's in multi-process
    mode, plus ``extra()``) on ``host:port`` in a daemon thread, behind ``token`` when set;
    returns what stops it. A ``pixelmill worker`` has no HTTP server of its own."""
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True
        allow_reuse_address = True

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """No access lines on stderr for each scrape."""

    def app(environ: dict[str, object], start_response: Callable[..., object]) -> list[bytes]:
        auth = environ.get("HTTP_AUTHORIZATION")
        if not token_matches(token, auth if isinstance(auth, str) else None):
            start_response(
                "401 Unauthorized",
                [("Content-Type", "application/json"), ("WWW-Authenticate", "Bearer")],
            )
            return [b'{"detail": "Missing or wrong metrics token"}']
        if environ.get("PATH_INFO") not in ("/metrics", "/"):
            start_response("404 Not Found", [("Content-Type", "application/json")])
            return [b'{"detail": "Not Found"}']
        body, content_type = exposition(extra())
        start_response("200 OK", [("Content-Type", content_type)])
        return [body]

    server = make_server(host, port, app, Server, handler_class=QuietHandler)
    threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return stop
