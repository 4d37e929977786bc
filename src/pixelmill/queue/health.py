"""The health of a ``pixelmill worker`` as a container sees it (``pixelmill worker-health``, the
compose healthcheck and the Kubernetes liveness probe): the broker answers, and a worker of this
host answers a Celery ``ping`` through it within the timeout. A worker whose consumer is wedged
or stopped, or that is cut off from its broker, fails; a worker busy with long jobs passes (its
consumer answers control messages beside the task threads).

The ping goes to the workers whose node name ends in ``@`` this host's name (``pixelmill
worker`` names itself ``pixelmill-<pid>@<host>``, see :func:`node_name`) and returns at the
first answer, so its cost does not grow with the number of workers elsewhere."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import redis
from kombu.exceptions import OperationalError

from pixelmill.config import Settings
from pixelmill.queue.celery import NODE_PREFIX, make_celery


@dataclass(frozen=True)
class WorkerHealth:
    """The check's verdict and what it saw, for the probe's output."""

    healthy: bool
    detail: str


def redacted(url: str) -> str:
    """``url`` without its password (the check's output ends up in container events)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def check_worker(settings: Settings, timeout: float = 5.0, host: str | None = None) -> WorkerHealth:
    """Ask the broker, then a worker on ``host`` (default: this machine's host name, the pod's
    or container's own), whether they answer within ``timeout`` seconds."""
    if settings.queue != "celery" or not settings.redis_url:
        return WorkerHealth(False, "pixelmill worker needs PIXELMILL_QUEUE=celery")
    host = host or socket.gethostname()
    broker = redacted(settings.redis_url)
    try:
        with redis.Redis.from_url(
            settings.redis_url, socket_timeout=timeout, socket_connect_timeout=timeout
        ) as client:
            client.ping()
    except redis.RedisError as exc:
        return WorkerHealth(False, f"the broker at {broker} does not answer: {exc}")
    app = make_celery(settings)
    started = time.monotonic()
    try:
        replies = app.control.ping(
            timeout=timeout, limit=1, pattern=f"{NODE_PREFIX}*@{host}", matcher="glob"
        )
    except OperationalError as exc:
        return WorkerHealth(False, f"the broker at {broker} does not answer: {exc}")
    finally:
        app.close()
    names = sorted(name for reply in replies or [] for name in reply)
    if not names:
        return WorkerHealth(
            False,
            f"no pixelmill worker on {host} answered a ping through {broker} within "
            f"{timeout:g} s (not running, wedged, or cut off from the broker)",
        )
    return WorkerHealth(
        True, f"{names[0]} answered through {broker} in {time.monotonic() - started:.2f} s"
    )
