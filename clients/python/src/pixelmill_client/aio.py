"""The asynchronous client (``httpx.AsyncClient``): the same methods as
:class:`pixelmill_client.Client`, awaited."""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
from pydantic import BaseModel

from pixelmill_client import models as m
from pixelmill_client._core import (
    OPERATIONS,
    USER_AGENT,
    ImageInput,
    RetryPolicy,
    b64,
    decide,
    filename_of,
    image_fields,
    is_url,
    outcome,
    prepare,
    read_local,
)
from pixelmill_client.client import _batch_items, _clean, _resolve
from pixelmill_client.errors import JobFailed, WaitTimeout, error_for

T = TypeVar("T", bound=BaseModel)
JobT = TypeVar("JobT", m.Job, m.AvatarJob, m.VideoJob, m.AdPack)


class AsyncClient:
    """A pixelmill server's API, typed, for asyncio (see :class:`~pixelmill_client.Client`).

    ``api_key`` and ``base_url`` default to ``$PIXELMILL_API_KEY`` and ``$PIXELMILL_URL``.
    Every call raises a :class:`~pixelmill_client.PixelmillError` subclass on failure; 429 and
    503 answers and connection failures are retried (see :class:`RetryPolicy`); creates carry
    a fresh ``Idempotency-Key`` (or the one you pass), so a retried create is never charged
    twice.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.api_key, self.base_url = _resolve(api_key, base_url)
        self.retry = retry or RetryPolicy()
        self._own_http = http is None
        self.http = http or httpx.AsyncClient(
            timeout=timeout, follow_redirects=True, headers={"User-Agent": USER_AGENT}
        )

    async def aclose(self) -> None:
        if self._own_http:
            await self.http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # ---- the one request path -----------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        files: Any = None,
        data: Any = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """Send a request with retries; the parsed JSON answer."""
        req = prepare(
            self.api_key,
            method,
            path,
            params=params,
            json=json,
            files=files,
            data=data,
            idempotency_key=idempotency_key,
        )
        attempt = 0
        while True:
            response: httpx.Response | None = None
            exc: Exception | None = None
            try:
                response = await self.http.request(method, self.base_url + path, **req.kwargs())
            except httpx.TransportError as err:
                exc = err
            wait = decide(req, self.retry, attempt, response, exc)
            if wait is None:
                return outcome(response, exc)
            await asyncio.sleep(wait)
            attempt += 1

    async def _get(self, model: type[T], path: str, **params: Any) -> T:
        return model.model_validate(await self.request("GET", path, params=params))

    async def _list(self, model: type[T], path: str, key: str, **params: Any) -> list[T]:
        body = await self.request("GET", path, params=params)
        items = body.get(key, []) if isinstance(body, dict) else body
        return [model.model_validate(item) for item in items]

    async def _post(self, model: type[T], path: str, body: Any, key: str | None = None) -> T:
        return model.model_validate(
            await self.request("POST", path, json=body, idempotency_key=key)
        )

    async def _image_bytes(self, image: ImageInput) -> bytes:
        """The bytes of a path, bytes or URL (downloaded here)."""
        return await self.download(str(image)) if is_url(image) else read_local(image)

    # ---- account ------------------------------------------------------------------------

    async def account(self) -> m.Account:
        """The key's account, balance and plan limits (``GET /api/v2/account``)."""
        return await self._get(m.Account, "/api/v2/account")

    async def user(self) -> m.UserInfo:
        return await self._get(m.UserInfo, "/api/v1/user")

    async def credits(self) -> m.CreditBalance:
        return await self._get(m.CreditBalance, "/api/v1/credits")

    async def history(self, limit: int = 50, offset: int = 0) -> m.History:
        """Processing history, newest first (``GET /api/v1/history``)."""
        return await self._get(m.History, "/api/v1/history", limit=limit, offset=offset)

    # ---- synchronous processing ---------------------------------------------------------

    async def process(self, operation: str, image: ImageInput, **params: Any) -> m.ProcessingResult:
        """Run one v2 operation (``remove-background``, ``upscale``, ...; see ``OPERATIONS``)
        on a path, bytes or URL. ``params`` are the operation's fields (None is left out)."""
        op = OPERATIONS[operation.replace("_", "-")]
        body = {**{k: v for k, v in params.items() if v is not None}, **image_fields(image)}
        return await self._post(m.ProcessingResult, op.path, body)

    async def remove_background(self, image: ImageInput, **params: Any) -> m.ProcessingResult:
        return await self.process("remove-background", image, **params)

    async def make_transparent(self, image: ImageInput, **params: Any) -> m.ProcessingResult:
        return await self.process("make-transparent", image, **params)

    async def upscale(
        self, image: ImageInput, scale: int = 2, quality: str | None = None, **params: Any
    ) -> m.ProcessingResult:
        return await self.process("upscale", image, scale=scale, quality=quality, **params)

    async def remove_text(self, image: ImageInput, **params: Any) -> m.ProcessingResult:
        return await self.process("remove-text", image, **params)

    async def convert(self, image: ImageInput, format: str, **params: Any) -> m.ProcessingResult:
        return await self.process("convert", image, format=format, **params)

    async def enhance(self, image: ImageInput, **params: Any) -> m.ProcessingResult:
        return await self.process("enhance", image, **params)

    async def unblur(self, image: ImageInput, **params: Any) -> m.ProcessingResult:
        return await self.process("unblur", image, **params)

    async def colorize(self, image: ImageInput, **params: Any) -> m.ProcessingResult:
        return await self.process("colorize", image, **params)

    async def style_transfer(
        self, image: ImageInput, style: str, **params: Any
    ) -> m.ProcessingResult:
        return await self.process("style-transfer", image, style=style, **params)

    async def analyze(self, image: ImageInput, **params: Any) -> m.ProcessingResult:
        return await self.process("analyze", image, **params)

    async def image_to_prompt(self, image: ImageInput, **params: Any) -> m.ProcessingResult:
        return await self.process("image-to-prompt", image, **params)

    async def edit(self, image: ImageInput, prompt: str, **params: Any) -> m.ProcessingResult:
        return await self.process("edit", image, prompt=prompt, **params)

    async def image_to_image(
        self, image: ImageInput, prompt: str, **params: Any
    ) -> m.ProcessingResult:
        return await self.process("image-to-image", image, prompt=prompt, **params)

    async def replace_background(
        self, image: ImageInput, prompt: str, **params: Any
    ) -> m.ProcessingResult:
        return await self.process("replace-background", image, prompt=prompt, **params)

    async def remove_background_v1(self, image: ImageInput) -> m.V1Result:
        """The v1 multipart endpoint (the result image comes back inline, base64)."""
        files = {"file": (filename_of(image), await self._image_bytes(image))}
        return m.V1Result.model_validate(
            await self.request("POST", "/api/v1/remove-background", files=files)
        )

    # ---- downloads ----------------------------------------------------------------------

    async def download(self, url: str, dest: str | os.PathLike[str] | None = None) -> bytes:
        """GET a result (or any) URL; result links are signed, so no key is sent. With
        ``dest`` the bytes are also written there (folders are created)."""
        response = await self.http.get(url)
        if response.status_code >= 400:
            raise error_for(response)
        if dest is not None:
            await asyncio.to_thread(_write, Path(dest), response.content)
        return response.content

    # ---- library ------------------------------------------------------------------------

    async def upload_product(
        self,
        image: ImageInput,
        *,
        name: str | None = None,
        category: str | None = None,
        description: str | None = None,
        filename: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.Product:
        """Save a product photo (path, bytes or URL) in the library."""
        body: dict[str, Any] = {
            "image": b64(await self._image_bytes(image)),
            "filename": filename or filename_of(image, "product.png"),
        }
        body.update(
            {
                k: v
                for k, v in {"name": name, "category": category, "description": description}.items()
                if v is not None
            }
        )
        return await self._post(m.Product, "/api/v2/products", body, idempotency_key)

    async def list_products(self, category: str | None = None) -> list[m.Product]:
        return await self._list(m.Product, "/api/v2/products", "products", category=category)

    async def get_product(self, product_uuid: str) -> m.Product:
        return await self._get(m.Product, f"/api/v2/products/{product_uuid}")

    async def delete_product(self, product_uuid: str) -> m.Deleted:
        return m.Deleted.model_validate(
            await self.request("DELETE", f"/api/v2/products/{product_uuid}")
        )

    async def list_avatars(self) -> list[m.Avatar]:
        return await self._list(m.Avatar, "/api/v2/avatars", "avatars")

    async def get_avatar(self, avatar_uuid: str) -> m.Avatar:
        return await self._get(m.Avatar, f"/api/v2/avatars/{avatar_uuid}")

    async def public_avatars(self) -> list[m.PublicAvatar]:
        return await self._list(m.PublicAvatar, "/api/v2/avatars/public", "avatars")

    # ---- jobs and generation ------------------------------------------------------------

    async def create_job(
        self,
        product_image: ImageInput,
        *,
        images_to_generate: int = 6,
        category: str | None = None,
        model_id: str | None = None,
        model_url: str | None = None,
        custom_prompt: str | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.JobCreated:
        """``POST /api/v2/jobs``: one product image, ``images_to_generate`` scenes."""
        body: dict[str, Any] = {
            "product_image": b64(await self._image_bytes(product_image)),
            "product_filename": filename_of(product_image, "product.png"),
            "images_to_generate": images_to_generate,
            "category": category,
            "model_id": model_id,
            "model_url": model_url,
            "custom_prompt": custom_prompt,
            "webhook_url": webhook_url,
        }
        return await self._post(m.JobCreated, "/api/v2/jobs", _clean(body), idempotency_key)

    async def generate_scenes(
        self,
        product_uuid: str,
        num_scenes: int = 6,
        *,
        category: str | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.JobCreated:
        body = {
            "product_uuid": product_uuid,
            "num_scenes": num_scenes,
            "category": category,
            "webhook_url": webhook_url,
        }
        return await self._post(
            m.JobCreated, "/api/v2/generate/scenes", _clean(body), idempotency_key
        )

    async def generate_scenes_from_url(
        self,
        image_url: str,
        num_scenes: int = 4,
        *,
        category: str | None = None,
        name: str | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.JobCreated:
        body = {
            "image_url": image_url,
            "num_scenes": num_scenes,
            "category": category,
            "name": name,
            "webhook_url": webhook_url,
        }
        path = "/api/v2/generate/scenes-from-url"
        return await self._post(m.JobCreated, path, _clean(body), idempotency_key)

    async def generate_product_photo(
        self,
        avatar_uuid: str,
        product_uuid: str,
        num_outputs: int = 6,
        *,
        prompt: str | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
        tryon: bool = False,
    ) -> m.JobCreated:
        """A saved avatar with a saved product (``tryon=True``: wearing it, clothing only)."""
        body = {
            "avatar_uuid": avatar_uuid,
            "product_uuid": product_uuid,
            "num_outputs": num_outputs,
            "prompt": prompt,
            "webhook_url": webhook_url,
        }
        path = "/api/v2/generate/tryon" if tryon else "/api/v2/generate/product-photo"
        return await self._post(m.JobCreated, path, _clean(body), idempotency_key)

    async def generate_avatar(
        self,
        prompt: str | None = None,
        *,
        reference_image: ImageInput | None = None,
        num_outputs: int = 1,
        characteristics: dict[str, str] | None = None,
        name: str | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.JobCreated:
        """Guided (from ``prompt``) or, with ``reference_image``, from a photo of a person.
        Wait with ``wait(job_id, avatar=True)``."""
        body: dict[str, Any] = {
            "generation_type": "guided" if reference_image is None else "reference",
            "prompt": prompt,
            "characteristics": characteristics,
            "num_outputs": num_outputs,
            "name": name,
            "webhook_url": webhook_url,
        }
        if reference_image is not None:
            if is_url(reference_image):
                body["reference_image_url"] = str(reference_image)
            else:
                body["reference_image_base64"] = b64(read_local(reference_image))
        path = "/api/v2/generate/avatar"
        return await self._post(m.JobCreated, path, _clean(body), idempotency_key)

    async def get_job(self, job_id: str) -> m.Job:
        return await self._get(m.Job, f"/api/v2/jobs/{job_id}")

    async def cancel_job(self, job_id: str) -> m.Job:
        """Cancel a pending, queued or processing job: it ends ``failed`` with error
        ``cancelled``; what it delivered stays charged, the rest comes back."""
        return await self._post(m.Job, f"/api/v2/jobs/{job_id}/cancel", None)

    async def get_avatar_job(self, job_id: str) -> m.AvatarJob:
        return await self._get(m.AvatarJob, f"/api/v2/jobs/avatar/{job_id}")

    async def list_jobs(
        self, limit: int = 50, offset: int = 0, status: str | None = None
    ) -> list[m.JobSummary]:
        return await self._list(
            m.JobSummary, "/api/v2/jobs", "jobs", limit=limit, offset=offset, status_filter=status
        )

    async def wait(
        self,
        job_id: str,
        *,
        progress: Callable[[m.Job], object] | None = None,
        interval: float = 1.0,
        timeout: float = 600.0,  # noqa: ASYNC109 (the same signature as Client.wait)
        raise_on_failure: bool = False,
    ) -> m.Job:
        """Poll a job until ``completed`` or ``failed``; ``progress(job)`` is called on every
        poll. Raises :class:`WaitTimeout` after ``timeout`` seconds, and :class:`JobFailed`
        for a failed job when ``raise_on_failure``."""
        return await self._wait(self.get_job, job_id, progress, interval, timeout, raise_on_failure)

    async def wait_avatar(
        self,
        job_id: str,
        *,
        progress: Callable[[m.AvatarJob], object] | None = None,
        interval: float = 1.0,
        timeout: float = 600.0,  # noqa: ASYNC109 (the same signature as Client.wait)
        raise_on_failure: bool = False,
    ) -> m.AvatarJob:
        return await self._wait(
            self.get_avatar_job, job_id, progress, interval, timeout, raise_on_failure
        )

    async def _wait(
        self,
        get: Callable[[str], Awaitable[JobT]],
        job_id: str,
        progress: Callable[[JobT], object] | None,
        interval: float,
        limit: float,
        raise_on_failure: bool,
    ) -> JobT:
        deadline = time.monotonic() + limit
        while True:
            job = await get(job_id)
            if progress is not None:
                await _call(progress, job)
            if job.finished:
                if raise_on_failure and job.status == "failed":
                    raise JobFailed(f"job {job_id} failed: {job.error}", job)
                return job
            if time.monotonic() >= deadline:
                raise WaitTimeout(f"job {job_id} still {job.status} after {limit:g} s")
            await asyncio.sleep(interval)

    # ---- video and ad packs ---------------------------------------------------------------

    async def generate_video(
        self,
        image: ImageInput,
        script: str = "",
        *,
        duration: int = 5,
        aspect: str = "9:16",
        subtitles: bool = False,
        product_name: str | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.VideoJobCreated:
        """A short talking video from one still image (50 credits; an empty ``script`` is
        written for ``duration`` seconds). Wait with ``wait_video(job_id)``."""
        body: dict[str, Any] = {
            "script": script,
            "duration": duration,
            "aspect": aspect,
            "subtitles": subtitles,
            "product_name": product_name,
            "webhook_url": webhook_url,
        }
        if is_url(image):
            body["image_url"] = str(image)
        else:
            body["image_base64"] = b64(read_local(image))
        path = "/api/v2/generate/video"
        return await self._post(m.VideoJobCreated, path, _clean(body), idempotency_key)

    async def get_video_job(self, job_id: int | str) -> m.VideoJob:
        return await self._get(m.VideoJob, f"/api/v2/jobs/video/{job_id}")

    async def wait_video(
        self,
        job_id: int | str,
        *,
        progress: Callable[[m.VideoJob], object] | None = None,
        interval: float = 1.0,
        timeout: float = 600.0,  # noqa: ASYNC109 (the same signature as Client.wait)
        raise_on_failure: bool = False,
    ) -> m.VideoJob:
        return await self._wait(
            self.get_video_job, str(job_id), progress, interval, timeout, raise_on_failure
        )

    async def create_ad_pack(
        self,
        url: str,
        *,
        include_images: bool = True,
        include_ads: bool = True,
        include_captions: bool = True,
        include_video: bool = True,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.AdPackCreated:
        """Scene photos, static ads, captions and a UGC video from a product page (each part
        charged when delivered; ``parts`` gives their prices). Wait with ``wait_ad_pack``."""
        body: dict[str, Any] = {
            "url": url,
            "include_images": include_images,
            "include_ads": include_ads,
            "include_captions": include_captions,
            "include_video": include_video,
            "webhook_url": webhook_url,
        }
        return await self._post(m.AdPackCreated, "/api/v2/ad-pack", _clean(body), idempotency_key)

    async def get_ad_pack(self, job_id: int | str) -> m.AdPack:
        return await self._get(m.AdPack, f"/api/v2/ad-pack/{job_id}")

    async def wait_ad_pack(
        self,
        job_id: int | str,
        *,
        progress: Callable[[m.AdPack], object] | None = None,
        interval: float = 1.0,
        timeout: float = 600.0,  # noqa: ASYNC109 (the same signature as Client.wait)
        raise_on_failure: bool = False,
    ) -> m.AdPack:
        return await self._wait(
            self.get_ad_pack, str(job_id), progress, interval, timeout, raise_on_failure
        )

    # ---- batches ------------------------------------------------------------------------

    async def create_batch(
        self,
        images: Mapping[str, ImageInput] | Iterable[tuple[str, ImageInput]],
        *,
        images_per_product: int = 6,
        categories: Mapping[str, str] | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.BatchCreated:
        """``images`` maps your own id (a SKU) to a path, bytes or URL."""
        items = [
            _clean({"id": ident, "image": b64(await self._image_bytes(image)), "category": cat})
            for ident, image in _batch_items(images)
            for cat in [(categories or {}).get(ident)]
        ]
        body = _clean(
            {"images": items, "images_per_product": images_per_product, "webhook_url": webhook_url}
        )
        return await self._post(m.BatchCreated, "/api/v2/batches", body, idempotency_key)

    async def get_batch(self, batch_id: str, include_images: bool = True) -> m.Batch:
        return await self._get(
            m.Batch, f"/api/v2/batches/{batch_id}", include_images=str(include_images).lower()
        )

    async def list_batches(
        self, limit: int = 20, offset: int = 0, status: str | None = None
    ) -> list[m.BatchSummary]:
        return await self._list(
            m.BatchSummary,
            "/api/v2/batches",
            "batches",
            limit=limit,
            offset=offset,
            status_filter=status,
        )

    async def cancel_batch(self, batch_id: str) -> m.Batch:
        return await self._post(m.Batch, f"/api/v2/batches/{batch_id}/cancel", None)

    async def wait_batch(
        self,
        batch_id: str,
        *,
        progress: Callable[[m.Batch], object] | None = None,
        interval: float = 1.0,
        timeout: float = 1800.0,  # noqa: ASYNC109 (the same signature as Client.wait_batch)
    ) -> m.Batch:
        """Poll a batch until ``completed`` (cancelled batches complete too)."""
        deadline = time.monotonic() + timeout
        while True:
            batch = await self.get_batch(batch_id)
            if progress is not None:
                await _call(progress, batch)
            if batch.finished:
                return batch
            if time.monotonic() >= deadline:
                raise WaitTimeout(f"batch {batch_id} still {batch.status} after {timeout:g} s")
            await asyncio.sleep(interval)

    # ---- webhooks -----------------------------------------------------------------------

    async def create_webhook(self, url: str, secret: str | None = None) -> m.Webhook:
        """Register a receiver; the answer shows the signing secret once."""
        return await self._post(
            m.Webhook, "/api/v2/webhooks", _clean({"url": url, "secret": secret})
        )

    async def list_webhooks(self) -> list[m.Webhook]:
        return await self._list(m.Webhook, "/api/v2/webhooks", "webhooks")

    async def delete_webhook(self, webhook_id: int) -> m.Deleted:
        return m.Deleted.model_validate(
            await self.request("DELETE", f"/api/v2/webhooks/{webhook_id}")
        )

    async def webhook_deliveries(
        self, status: str | None = None, limit: int = 20, offset: int = 0
    ) -> list[m.Delivery]:
        """The delivery log, newest first (``status``: pending, delivered or failed)."""
        params = _clean({"status": status, "limit": limit, "offset": offset})
        return await self._list(m.Delivery, "/api/v2/webhooks/deliveries", "deliveries", **params)

    async def webhook_delivery(self, delivery_id: str) -> m.Delivery:
        return await self._get(m.Delivery, f"/api/v2/webhooks/deliveries/{delivery_id}")

    async def signing_secret(self) -> m.SigningSecret:
        """The account's own signing secret (:class:`~pixelmill_client.models.SigningSecret`)."""
        return await self._get(m.SigningSecret, "/api/v2/webhooks/signing-secret")


async def _call(callback: Callable[[Any], object], value: Any) -> None:
    """A progress callback may be a plain function or a coroutine function."""
    result = callback(value)
    if inspect.isawaitable(result):
        await result


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
