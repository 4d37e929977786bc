"""Creating a job is a domain call: each async domain exposes one request object per create
endpoint, built by the handler from the typed body and handed to the idempotent create
(``api/idempotent.py``), which calls :meth:`JobRequest.prepare` (the slow work outside any
transaction: the webhook URL check, fetching, decoding and storing images), then
:meth:`JobRequest.create` in the transaction that also stores the response, and
:meth:`JobRequest.discard` when the create refused (a 404, a 402...): what ``prepare`` stored
goes. :class:`JobRequestBase` holds what they share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypedDict, Unpack

from pydantic import BaseModel
from sqlalchemy.orm import Session

from pixelmill.config import Settings
from pixelmill.db.models import Job, User
from pixelmill.db.session import Database
from pixelmill.engines.base import Engine
from pixelmill.jobs.service import JobBackends, JobParams, create_job
from pixelmill.library.images import SavedImage, save_image
from pixelmill.operations.inputs import ImageSource, InputReader
from pixelmill.operations.pipeline import Pipeline
from pixelmill.queue import TaskQueue
from pixelmill.storage import ObjectStorage, UrlSigner
from pixelmill.webhooks.registry import checked_webhook_url


class JobOptions(TypedDict, total=False):
    """What a job request may add to its job (:func:`pixelmill.jobs.service.create_job`)."""

    input_key: str
    category: str
    params: JobParams
    product_id: str | None
    numbered: bool


class JobRequest(Protocol):
    """A domain's create request."""

    async def prepare(self) -> None:
        """The slow, transaction-free work: URL checks, fetching, decoding, storing images."""
        ...

    def create(self, session: Session) -> BaseModel:
        """Write the rows (reserve, the job, ...) in the transaction that also stores the
        response; raises to refuse (a 404, a 402...)."""
        ...

    def discard(self) -> None:
        """After a refused create: remove what :meth:`prepare` stored."""
        ...


class Backends(Protocol):
    """What generation's services and job requests use of the server's resources (the
    wiring's ``Resources`` is one)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def inputs(self) -> InputReader: ...
    @property
    def db(self) -> Database: ...
    @property
    def storage(self) -> ObjectStorage: ...
    @property
    def signer(self) -> UrlSigner: ...
    @property
    def library_storage(self) -> ObjectStorage: ...
    @property
    def jobs(self) -> JobBackends: ...
    @property
    def engines(self) -> Mapping[str, Engine]: ...
    @property
    def pipeline(self) -> Pipeline: ...
    @property
    def queue(self) -> TaskQueue: ...


@dataclass
class JobRequestBase:
    """What every job request holds: the server's backends, the caller, the public base URL
    of its links, and the checked ``webhook_url`` once prepared."""

    backends: Backends
    user: User
    base_url: str
    webhook_url: str | None = field(default=None, init=False)

    async def _check_webhook(self, url: str | None) -> None:
        self.webhook_url = await checked_webhook_url(url, self.backends.settings)

    async def _save(self, source: ImageSource, folder: str, name: str | None = None) -> SavedImage:
        b = self.backends
        return await save_image(b.inputs, b.library_storage, source, self.user, folder, name)

    def _create_job(
        self, session: Session, kind: str, count: int, price: int, **job: Unpack[JobOptions]
    ) -> tuple[Job, int]:
        """Reserve ``price`` (nothing for a test key) and write the caller's ``pending`` job
        (:func:`pixelmill.jobs.service.create_job`) with the checked webhook URL."""
        return create_job(
            session,
            self.backends.jobs,
            user_id=self.user.id,
            test=self.user.via_test_key,
            kind=kind,
            count=count,
            price=price,
            base_url=self.base_url,
            webhook_url=self.webhook_url,
            **job,
        )

    def _delete(self, *keys: str) -> None:
        for key in keys:
            if key:
                self.backends.library_storage.delete(key)

    def discard(self) -> None:
        return None
