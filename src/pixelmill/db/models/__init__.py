"""All tables, one module each; importing this package registers them on ``Base.metadata``."""

from pixelmill.db.models.api_key import ApiKey
from pixelmill.db.models.avatar import Avatar
from pixelmill.db.models.batch import Batch
from pixelmill.db.models.credit_ledger import CreditLedgerEntry, CreditReservation
from pixelmill.db.models.enrichment_job import EnrichmentJob
from pixelmill.db.models.idempotency_key import IdempotencyKey
from pixelmill.db.models.job import Job
from pixelmill.db.models.job_result import JobResult
from pixelmill.db.models.processing_record import ProcessingRecord
from pixelmill.db.models.product import Product
from pixelmill.db.models.public_number import PublicNumber, draw_number
from pixelmill.db.models.purchase import Purchase, StripeEvent
from pixelmill.db.models.storefront_activity import StorefrontActivity
from pixelmill.db.models.user import User
from pixelmill.db.models.webhook import WebhookEndpoint
from pixelmill.db.models.webhook_delivery import WebhookAttempt, WebhookDelivery

__all__ = [
    "ApiKey",
    "Avatar",
    "Batch",
    "CreditLedgerEntry",
    "CreditReservation",
    "EnrichmentJob",
    "IdempotencyKey",
    "Job",
    "JobResult",
    "ProcessingRecord",
    "Product",
    "PublicNumber",
    "Purchase",
    "StorefrontActivity",
    "StripeEvent",
    "User",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "draw_number",
]
