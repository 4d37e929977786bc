"""The OpenAI-compatible adapter: chat completions with image input and JSON output (OpenAI,
Ollama, vLLM, LM Studio, LocalAI all serve ``POST {base}/chat/completions``), and the images
API (``POST {base}/images/edits`` multipart, ``POST {base}/images/generations`` JSON). These
calls are abortable: a cancelled job closes the request's connection while it is in flight
(OpenAI has no cancel endpoint for them; a closed connection is how a client gives up).

Vision answers are asked for as a JSON object (``response_format: {"type": "json_object"}``,
the most widely implemented form) with the wanted fields spelled out in the system message, and
validated with the caller's Pydantic model: an answer that is not that JSON is a provider
failure, never passed through.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from pixelmill.cancel import CancelToken
from pixelmill.providers.http import (
    HttpPolicy,
    ProviderFailure,
    ProviderHttp,
    data_url,
)
from pixelmill.providers.usage import report

M = TypeVar("M", bound=BaseModel)

NAME = "openai"


def _strip_fences(text: str) -> str:
    """Some local servers wrap JSON in a Markdown code fence even in JSON mode."""
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip()


class OpenAIProvider:
    """``chat_json`` for vision-language work, ``edit_image`` for the images API.
    Thread-safe (one ``httpx.Client`` shared by every worker thread)."""

    name = NAME

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        policy: HttpPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = ProviderHttp(
            NAME, base_url, headers=headers, policy=policy, transport=transport
        )

    def close(self) -> None:
        self.http.close()

    def chat_json(
        self,
        model: str,
        instructions: str,
        text: str,
        schema: type[M],
        *,
        image_png: bytes | None = None,
        cancel: CancelToken | None = None,
    ) -> M:
        """Ask ``model`` about an image for a JSON object and validate it as ``schema``."""
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if image_png is not None:
            content.append(
                {"type": "image_url", "image_url": {"url": data_url(image_png, "image/png")}}
            )
        body = {
            "model": model,
            "messages": [
                {"role": "system", "content": instructions},
                {"role": "user", "content": content},
            ],
            "response_format": {"type": "json_object"},
            "temperature": 0.2,
        }
        with self.http.slot(cancel):
            response = self.http.request(
                "POST", "chat/completions", json=body, cancel=cancel, abortable=True
            )
        try:
            answer = response.json()
            message = answer["choices"][0]["message"]
            raw = message.get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise ProviderFailure(NAME, "the chat answer is not a chat completion") from None
        if not isinstance(raw, str) or not raw.strip():
            refusal = message.get("refusal") if isinstance(message, dict) else None
            why = f" (refused: {str(refusal)[:120]})" if refusal else ""
            raise ProviderFailure(NAME, f"the chat answer has no content{why}")
        try:
            return schema.model_validate_json(_strip_fences(raw))
        except ValidationError as exc:
            fields = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
                for e in exc.errors()[:5]
            )
            raise ProviderFailure(
                NAME, f"the model's JSON does not have the expected fields ({fields})"
            ) from None

    def edit_image(
        self,
        model: str,
        image_png: bytes,
        prompt: str,
        *,
        mask_png: bytes | None = None,
        extra_images: list[bytes] | None = None,
        cancel: CancelToken | None = None,
    ) -> bytes:
        """``POST images/edits`` (multipart: ``image`` or ``image[]``, optional ``mask``,
        ``prompt``, ``model``, ``n``); the first image of the answer, as bytes."""
        images = [image_png, *(extra_images or [])]
        field = "image" if len(images) == 1 else "image[]"
        files: list[tuple[str, tuple[str, bytes, str]]] = [
            (field, (f"image{i}.png", data, "image/png")) for i, data in enumerate(images)
        ]
        if mask_png is not None:
            files.append(("mask", ("mask.png", mask_png, "image/png")))
        data = {"model": model, "prompt": prompt, "n": "1"}
        if model.startswith("dall-e"):
            # gpt-image models always answer b64_json and refuse this field.
            data["response_format"] = "b64_json"
        with self.http.slot(cancel):
            response = self.http.request(
                "POST", "images/edits", data=data, files=files, cancel=cancel, abortable=True
            )
            return self._first_image(response, cancel)

    def generate_image(
        self, model: str, prompt: str, *, size: str, cancel: CancelToken | None = None
    ) -> bytes:
        """``POST images/generations`` (JSON: ``model``, ``prompt``, ``size`` such as
        ``"1024x1536"``, ``n``); the first image of the answer, as bytes."""
        body: dict[str, Any] = {"model": model, "prompt": prompt, "size": size, "n": 1}
        if model.startswith("dall-e"):
            body["response_format"] = "b64_json"
        with self.http.slot(cancel):
            response = self.http.request(
                "POST", "images/generations", json=body, cancel=cancel, abortable=True
            )
            return self._first_image(response, cancel)

    def speech(
        self, model: str, text: str, voice: str, *, cancel: CancelToken | None = None
    ) -> bytes:
        """``POST audio/speech`` (JSON: ``model``, ``input``, ``voice``, ``response_format``
        ``wav``); the WAV file the server answers."""
        body = {"model": model, "input": text, "voice": voice, "response_format": "wav"}
        with self.http.slot(cancel):
            response = self.http.request(
                "POST", "audio/speech", json=body, cancel=cancel, abortable=True
            )
            return response.content

    def _first_image(self, response: httpx.Response, cancel: CancelToken | None) -> bytes:
        try:
            body = response.json()
            item = body["data"][0]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ProviderFailure(NAME, "the images answer has no data[0]") from None
        usage = body.get("usage") if isinstance(body, dict) else None
        if isinstance(usage, dict):
            tokens = {k: v for k, v in usage.items() if k.endswith("tokens") and isinstance(v, int)}
            report(**tokens)
        if isinstance(item, dict) and isinstance(item.get("b64_json"), str):
            return self.http.fetch_output("data:image/png;base64," + item["b64_json"])
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            return self.http.fetch_output(item["url"], cancel)
        raise ProviderFailure(NAME, "the images answer has neither b64_json nor url")


def schema_hint(schema: type[BaseModel]) -> str:
    """The JSON schema of ``schema``, compact, for the system message."""
    return json.dumps(schema.model_json_schema(), separators=(",", ":"))
