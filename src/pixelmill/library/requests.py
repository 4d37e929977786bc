"""The library's create request (the idempotent create's protocol,
:class:`pixelmill.jobs.requests.JobRequest`): ``POST /api/v2/products``."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from pixelmill.db.models import User
from pixelmill.library import service
from pixelmill.library.describe import describe
from pixelmill.library.images import SavedImage, save_image
from pixelmill.library.schemas import ProductCreate, ProductOut, product_out
from pixelmill.operations.inputs import ImageSource, InputReader
from pixelmill.queue import TaskQueue
from pixelmill.storage import ObjectStorage, UrlSigner


def _stem(filename: str) -> str:
    name = filename.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


@dataclass
class ProductRequest:
    """Save a product image (free): stored and, without a description, described (CPU work,
    off the event loop) before the transaction; the analysis is queued after the commit."""

    inputs: InputReader
    store: ObjectStorage
    queue: TaskQueue
    signer: UrlSigner
    analyze: bool
    user: User
    base_url: str
    body: ProductCreate
    product_id: str = field(default_factory=lambda: str(uuid.uuid4()), init=False)
    saved: SavedImage | None = field(default=None, init=False)
    description: str = field(default="", init=False)

    async def prepare(self) -> None:
        source = ImageSource("base64", self.body.image)
        self.saved = await save_image(
            self.inputs, self.store, source, self.user, "products", self.product_id
        )
        self.description = self.body.description or ""
        if not self.description:
            self.description = await asyncio.to_thread(describe, self.saved.image.pixels)

    def create(self, session: Session) -> ProductOut:
        body = self.body
        assert self.saved is not None
        product = service.add_product(
            session,
            self.queue,
            self.user.id,
            self.saved,
            analyze=self.analyze,
            product_id=self.product_id,
            name=body.name or _stem(body.filename) or "product",
            filename=body.filename,
            category=body.category,
            description=self.description,
            description_given=bool(body.description),
            brand=body.brand,
            status=body.status,
            collection_id=body.collection_id,
        )
        return product_out(self.signer, self.base_url, product)

    def discard(self) -> None:
        if self.saved is not None:
            self.store.delete(self.saved.key)
