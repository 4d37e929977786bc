"""The Replicate adapter: create a prediction, wait for it (``Prefer: wait``, then polling
``GET /v1/predictions/{id}``), fetch its outputs; ``POST /v1/predictions/{id}/cancel`` when the
work is cancelled or runs past its deadline.

A route names ``owner/model:version`` (``POST /v1/predictions`` with ``version``) or
``owner/model`` (an official model: ``POST /v1/models/{owner}/{model}/predictions``). Input
images travel as ``data:`` URLs up to 256 KiB and through ``POST /v1/files`` above that, as
Replicate documents. Outputs are fetched only from the API host or ``replicate.delivery``.

The create is not aborted by a cancel (its answer holds the id a cancel needs): it waits at
most ``Prefer: wait=10`` seconds, so a cancelled job's prediction is cancelled within about
ten seconds at worst, at once while polling.
"""

from __future__ import annotations

import contextlib
from functools import partial
from typing import Any

import httpx

from pixelmill.cancel import CancelToken
from pixelmill.providers.http import (
    HttpPolicy,
    ProviderFailure,
    ProviderHttp,
    data_url,
)
from pixelmill.providers.usage import report

NAME = "replicate"
DATA_URL_LIMIT = 256 * 1024
"""Files up to this size may be sent inline as data URLs; larger ones go through the files API."""
DELIVERY_HOSTS = ("replicate.delivery",)
TERMINAL = frozenset({"succeeded", "failed", "canceled"})


def parse_model(ref: str) -> tuple[str, str, str | None]:
    """``owner/model[:version]`` -> (owner, model, version)."""
    name, _, version = ref.partition(":")
    owner, _, model = name.partition("/")
    if not owner or not model or "/" in model:
        raise ValueError(f"a Replicate route names owner/model[:version], got {ref!r}")
    return owner, model, version or None


class ReplicateProvider:
    """Runs predictions. ``run`` returns the prediction's ``output``; ``output_urls`` and
    ``fetch`` turn it into bytes."""

    name = NAME

    def __init__(
        self,
        base_url: str,
        token: str | None,
        policy: HttpPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        *,
        poll_interval: float = 1.0,
        run_timeout: float = 600.0,
        wait_seconds: int = 10,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = ProviderHttp(
            NAME,
            base_url,
            headers=headers,
            policy=policy,
            output_hosts=DELIVERY_HOSTS,
            transport=transport,
        )
        self.poll_interval = poll_interval
        self.run_timeout = run_timeout
        self.wait_seconds = wait_seconds

    def close(self) -> None:
        self.http.close()

    def file_input(self, data: bytes, mime: str, cancel: CancelToken | None = None) -> str:
        """An input file as Replicate takes it: a data URL when small, else an upload to the
        files API (multipart ``content``) whose ``urls.get`` is passed."""
        if len(data) <= DATA_URL_LIMIT:
            return data_url(data, mime)
        ext = mime.split("/")[-1]
        response = self.http.request(
            "POST",
            "v1/files",
            files={"content": (f"input.{ext}", data, mime)},
            cancel=cancel,
        )
        try:
            url = response.json()["urls"]["get"]
        except (ValueError, KeyError, TypeError):
            raise ProviderFailure(NAME, "the files API answer has no urls.get") from None
        if not isinstance(url, str):
            raise ProviderFailure(NAME, "the files API answer has no urls.get")
        return url

    def run(self, ref: str, inputs: dict[str, Any], cancel: CancelToken | None = None) -> Any:
        """Create a prediction of ``ref`` with ``inputs`` and wait until it ends; its
        ``output`` when it succeeded, a :class:`ProviderFailure` otherwise."""
        owner, model, version = parse_model(ref)
        if version:
            path, body = "v1/predictions", {"version": version, "input": inputs}
        else:
            path, body = f"v1/models/{owner}/{model}/predictions", {"input": inputs}
        with self.http.slot(cancel):
            created = self.http.request(
                "POST",
                path,
                json=body,
                headers={"Prefer": f"wait={self.wait_seconds}"},
                cancel=cancel,
            )
            prediction = self._object(created)
            pid = prediction.get("id")
            if not isinstance(pid, str) or not pid:
                raise ProviderFailure(NAME, "the prediction answer has no id")
            prediction = self.http.poll(
                partial(self._prediction, pid, cancel),
                lambda p: p.get("status") in TERMINAL,
                partial(self._cancel, pid),
                what="the prediction",
                interval=self.poll_interval,
                timeout=self.run_timeout,
                cancel=cancel,
                start=prediction,
            )
        status = prediction.get("status")
        metrics = prediction.get("metrics")
        if isinstance(metrics, dict) and isinstance(metrics.get("predict_time"), int | float):
            report(predict_time_s=round(float(metrics["predict_time"]), 3))
        if status != "succeeded":
            error = str(prediction.get("error") or "")[:200]
            raise ProviderFailure(
                NAME, f"the prediction {status}" + (f": {error}" if error else "")
            )
        return prediction.get("output")

    def _prediction(self, pid: str, cancel: CancelToken | None) -> dict[str, Any]:
        response = self.http.request("GET", f"v1/predictions/{pid}", cancel=cancel)
        return self._object(response)

    def _object(self, response: httpx.Response) -> dict[str, Any]:
        return self.http.json_object(response, "a prediction object")

    def _cancel(self, pid: str) -> None:
        # Best effort: the prediction may have just ended.
        with contextlib.suppress(ProviderFailure):
            self.http.request("POST", f"v1/predictions/{pid}/cancel")

    def output_urls(self, output: Any) -> list[str]:
        """The file URLs of an output: a URL, a list of URLs, or an object holding them."""
        if isinstance(output, str):
            return [output]
        if isinstance(output, list):
            return [u for item in output for u in self.output_urls(item)]
        if isinstance(output, dict):
            return [u for item in output.values() for u in self.output_urls(item)]
        return []

    def fetch_files(self, output: Any, cancel: CancelToken | None = None) -> list[bytes]:
        """Every file of ``output`` (non-URL strings are skipped by the caller's decoding)."""
        urls = [u for u in self.output_urls(output) if u.startswith(("http", "data:"))]
        if not urls:
            raise ProviderFailure(NAME, "the prediction succeeded without an output file")
        return [self.http.fetch_output(u, cancel) for u in urls]
