"""The webhook tasks, thin: open a session, call the delivery service. The wiring
(``pixelmill.worker``) binds them to their names."""

from __future__ import annotations

from pixelmill.config import Settings
from pixelmill.db.session import Database
from pixelmill.queue import TaskQueue
from pixelmill.webhooks import delivery
from pixelmill.webhooks.delivery import TASK

DELIVER = TASK


def deliver(db: Database, queue: TaskQueue, settings: Settings, delivery_id: str) -> str | None:
    """``"webhooks.deliver"``: one attempt. Returns the delivery's status after it, or None
    when there was nothing to do. No transaction is open while the request is in flight."""
    with db.transaction() as session:
        attempt = delivery.claim(session, delivery_id, settings)
    if attempt is None:
        return None
    response = delivery.send(attempt, settings)
    with db.transaction() as session:
        return delivery.record(session, queue, settings, attempt, response)


def sweep(db: Database, queue: TaskQueue) -> int:
    """Overdue deliveries back on the queue."""
    with db.transaction() as session:
        return delivery.dispatch_overdue(session, queue)
