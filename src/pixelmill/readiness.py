"""``/readyz``: each dependency of this process, checked now, and whether it can take traffic.

Required (down means 503, the process should get no traffic): the **database** (every
authenticated request reads it; its schema must be at the latest migration) and the **object
storage** (every result and library image is written and served there). Reported but not
required (down means ``degraded``, still 200): the **rate-limit storage** when it is Redis
(each process counts in memory meanwhile, see :mod:`pixelmill.ratelimit.limiter`) and the
**broker** when ``PIXELMILL_QUEUE=celery`` (polls, results, account reads and synchronous
calls need no broker; jobs wait for it). Taking every API node out of rotation because a shared
Redis is down would turn a partial outage into a total one. The Redis and S3 checks have short
timeouts and no retries, so the probe answers within seconds whatever is down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import text

from pixelmill.db.migrate import current_revision, head_revision
from pixelmill.resources import Resources

PROBE_TIMEOUT_SECONDS = 1.0

Status = Literal["ok", "down", "degraded"]


@dataclass(frozen=True)
class Check:
    status: Status
    required: bool
    detail: str | None = None

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": self.status, "required": self.required}
        if self.detail:
            body["detail"] = self.detail
        return body


@dataclass(frozen=True)
class Readiness:
    checks: dict[str, Check]
    migration: str | None

    @property
    def ready(self) -> bool:
        return all(c.status != "down" for c in self.checks.values() if c.required)

    @property
    def status(self) -> str:
        if not self.ready:
            return "unavailable"
        return "ready" if all(c.status == "ok" for c in self.checks.values()) else "degraded"

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "status": self.status,
            "migration": self.migration,
            "dependencies": {name: check.as_json() for name, check in self.checks.items()},
        }
        down = [
            f"{name}: {c.detail or 'down'}"
            for name, c in self.checks.items()
            if c.required and c.status == "down"
        ]
        if down:
            body["detail"] = "; ".join(down)
        return body


def check_readiness(res: Resources) -> Readiness:
    """Check every dependency this process uses (blocking: call it in a thread)."""
    checks: dict[str, Check] = {}
    checks["database"], migration = _database(res)
    if res.settings.queue == "celery":
        checks["broker"] = _broker(res.settings.redis_url or "")
    if res.limiter.shared:
        checks["rate_limit_storage"] = _rate_limit_storage(res)
    checks["object_storage"] = _object_storage(res)
    return Readiness(checks, migration)


def _database(res: Resources) -> tuple[Check, str | None]:
    try:
        with res.db.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        current = current_revision(res.db.engine)
    except Exception as exc:  # any database failure means "not ready", never a 500
        return Check("down", True, _short(exc)), None
    head = head_revision(res.db.url)
    if current != head:
        return Check("down", True, f"migrations pending: at {current}, head {head}"), current
    return Check("ok", True), current


def _broker(url: str) -> Check:
    import redis

    client = redis.Redis.from_url(
        url, socket_connect_timeout=PROBE_TIMEOUT_SECONDS, socket_timeout=PROBE_TIMEOUT_SECONDS
    )
    try:
        client.ping()
    except Exception as exc:
        return Check("down", False, f"jobs wait until it is back: {_short(exc)}")
    finally:
        client.close()
    return Check("ok", False)


def _rate_limit_storage(res: Resources) -> Check:
    if res.limiter.probe():  # if this process still counts in memory, it switches back soon
        return Check("ok", False)
    return Check("down", False, "unreachable: each process counts rate limits in its own memory")


def _object_storage(res: Resources) -> Check:
    problems = []
    for role, store in (("results", res.storage), ("library", res.library_storage)):
        try:
            store.check()
        except Exception as exc:
            problems.append(f"{role}: {_short(exc)}")
    if problems:
        return Check("down", True, "; ".join(problems))
    return Check("ok", True)


def _short(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return message[:300]
