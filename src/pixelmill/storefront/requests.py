"""The storefront's job request (:class:`pixelmill.jobs.requests.JobRequest`): an enrichment
job over inline products or library products."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from pixelmill.errors import InvalidInput
from pixelmill.jobs.requests import JobRequestBase
from pixelmill.library import service as library
from pixelmill.operations.inputs import ImageSource
from pixelmill.storefront import service as storefront
from pixelmill.storefront.schemas import EnrichmentJobCreate, EnrichmentJobCreated
from pixelmill.storefront.service import PreparedProduct


@dataclass
class EnrichmentRequest(JobRequestBase):
    """``POST /api/v2/shopify/enrichment-jobs``: a server-run job stores the products'
    base64 images first (its own inputs, deleted once the job is terminal); an app-run job
    is only recorded."""

    body: EnrichmentJobCreate = field(kw_only=True)
    stored: dict[str, str] = field(default_factory=dict, init=False)
    """Product id -> the key of its stored base64 image."""

    def __post_init__(self) -> None:
        for p in self.body.products:
            if p.image_url and not p.image_url.lower().startswith(("http://", "https://")):
                raise InvalidInput(f"product {p.id}: image_url must be an http(s) URL")

    async def prepare(self) -> None:
        await self._check_webhook(self.body.webhook_url)
        if self.body.run_by != "server":
            return
        try:
            for p in self.body.products:
                if p.image_base64:
                    source = ImageSource("base64", p.image_base64)
                    saved = await self._save(source, "inputs", f"enrich-{uuid.uuid4().hex}")
                    self.stored[p.id] = saved.key
        except Exception:
            await asyncio.to_thread(self.discard)
            raise

    def _products(self, session: Session) -> list[PreparedProduct]:
        products: list[PreparedProduct] = []
        for p in self.body.products:
            title, kind, value, category = p.title or "", None, None, "other"
            if p.product_uuid:
                saved = library.get_product(session, self.user.id, p.product_uuid)
                title = p.title or saved.name
                kind, value, category = "stored", saved.image_key, saved.category
            elif p.id in self.stored:
                kind, value = "stored", self.stored[p.id]
            elif p.image_url:
                kind, value = "url", p.image_url
            products.append(
                PreparedProduct(p.id, title, p.description, list(p.tags), kind, value, category)
            )
        return products

    def create(self, session: Session) -> EnrichmentJobCreated:
        row, remaining = storefront.create_enrichment_job(
            session,
            self.backends.jobs,
            self.body,
            self._products(session),
            user_id=self.user.id,
            test=self.user.via_test_key,
            base_url=self.base_url,
            webhook_url=self.webhook_url,
            max_bytes=self.backends.inputs.max_bytes_for(self.user),
            own_inputs=list(self.stored.values()),
        )
        return EnrichmentJobCreated(
            job_id=row.id,
            status=row.status,
            run_by=row.run_by,
            products_total=row.products_total,
            credits_reserved=row.credits_reserved,
            credits_remaining=remaining,
            poll_url=storefront.poll_url(self.base_url, row.id),
        )

    def discard(self) -> None:
        self._delete(*self.stored.values())
