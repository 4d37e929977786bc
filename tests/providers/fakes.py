"""Fake provider servers on 127.0.0.1, each speaking its provider's documented HTTP protocol and
recording every request (method, path, headers, JSON body, multipart parts) for the tests to
assert on. ``mode`` switches a server into a failure: ``"500"`` (every call a 500),
``"slow"`` (answers after the client's deadline), ``"garbage"`` (a 200 that is not what the
protocol promises), ``"429"`` (one 429 with ``Retry-After`` before answering normally);
``"stall"`` (OpenAI: no answer for 30 s, counting ``disconnected`` when the client closes the
connection), ``"hang"`` (Replicate, ComfyUI: work that never ends), ``"fail"`` (Replicate: a
prediction that fails)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from PIL import Image

from tests.support.servers import live_server

OUTPUT_COLOUR = (200, 30, 160)
"""The provider's images are this magenta (within 3), so a test can tell them from any offline
result."""


def output_png(w: int = 96, h: int = 64) -> bytes:
    """The provider's picture: :data:`OUTPUT_COLOUR` with a gentle ramp of ±3 across it (a
    picture, not a blank: the routed engines reject one flat colour)."""
    ramp = np.round(np.linspace(-3, 3, w)).astype(np.int16)[None, :, None]
    pixels = np.clip(np.asarray(OUTPUT_COLOUR, np.int16) + ramp, 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(np.broadcast_to(pixels, (h, w, 3)))).save(
        buffer, format="PNG"
    )
    return buffer.getvalue()


AD_COPY: dict[str, Any] = {
    "headline": "Cold for 24 hours, anywhere",
    "tagline": "The Trail Bottle keeps water cold on the longest hike.",
    "captions": {
        platform: {"text": f"{platform}: the Trail Bottle, cold all day.", "hashtags": ["hiking"]}
        for platform in ("instagram", "facebook", "linkedin", "pinterest", "tiktok")
    }
    | {"twitter": {"text": "Trail Bottle " * 30, "hashtags": ["#hiking", "outdoor gear"]}},
}
"""The fake chat model's ad copy: the twitter caption is too long for its 280 characters."""

PREDICT_TIME = 1.234
"""What the fake Replicate reports a prediction's compute took (``metrics.predict_time``)."""
IMAGE_USAGE = {"input_tokens": 50, "output_tokens": 4160, "total_tokens": 4210}
"""What the fake images API reports an image cost (gpt-image-1's ``usage``)."""

SPEECH_SECONDS = 1.5


def speech_wav(rate: int = 24000) -> bytes:
    """The fake voice: 0.2 s of silence, a 220 Hz tone, 0.2 s of silence (16-bit mono WAV of
    :data:`SPEECH_SECONDS`), as OpenAI's ``audio/speech`` answers ``response_format: wav``."""
    import wave

    t = np.arange(int(SPEECH_SECONDS * rate)) / rate
    tone = 0.5 * np.sin(2 * np.pi * 220 * t) * ((t > 0.2) & (t < SPEECH_SECONDS - 0.2))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((tone * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    query: dict[str, str]
    json: Any = None
    form: dict[str, str] = field(default_factory=dict)
    files: dict[str, list[tuple[str, str, bytes]]] = field(default_factory=dict)


@dataclass
class Fake:
    """A running fake: its base URL, what it saw, and its behaviour switch."""

    url: str = ""
    mode: str = "ok"
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    counters: dict[str, int] = field(default_factory=dict)
    output: tuple[bytes, str, str] | None = None
    """Replicate: the output file (content, media type, extension); None: a magenta PNG."""
    running: bool = True
    """ComfyUI: whether ``GET /queue`` lists the prompt as running (else as pending)."""

    def paths(self) -> list[str]:
        return [f"{s.method} {s.path}" for s in self.seen]

    def bump(self, key: str) -> int:
        with self.lock:
            self.counters[key] = self.counters.get(key, 0) + 1
            return self.counters[key]


async def record(fake: Fake, request: Request) -> Seen:
    seen = Seen(
        request.method,
        request.url.path,
        {k.lower(): v for k, v in request.headers.items()},
        dict(request.query_params),
    )
    ctype = request.headers.get("content-type", "")
    if ctype.startswith("application/json"):
        seen.json = json.loads(await request.body())
    elif ctype.startswith("multipart/form-data"):
        form = await request.form()
        for key, value in form.multi_items():
            if isinstance(value, str):
                seen.form[key] = value
            else:
                data = await value.read()
                seen.files.setdefault(key, []).append(
                    (value.filename or "", value.content_type or "", data)
                )
    with fake.lock:
        fake.seen.append(seen)
    return seen


async def failure(fake: Fake, key: str) -> Response | None:
    """The failure the mode asks for, if any (``slow`` sleeps past the client's deadline)."""
    if fake.mode == "401":
        # OpenAI's 401 echoes part of the key it was sent.
        return JSONResponse(
            {"error": {"message": "Incorrect API key provided: sk-test-ne*****6789."}},
            status_code=401,
        )
    if fake.mode == "500":
        return JSONResponse({"error": {"message": "internal failure"}}, status_code=500)
    if fake.mode == "slow":
        # Past the routed apps' 1 s deadline (conftest.py); the server's shutdown waits for it.
        await asyncio.sleep(1.5)
    if fake.mode == "429" and fake.bump(f"429:{key}") == 1:
        return JSONResponse(
            {"error": {"message": "slow down"}}, status_code=429, headers={"Retry-After": "0"}
        )
    return None


# ---- OpenAI-compatible -----------------------------------------------------------------------

ANALYSIS = {
    "objects": ["ginger cat", "blue cushion"],
    "description": "A ginger cat curled up asleep on a blue cushion.",
    "alt_text": "A ginger cat sleeping on a blue cushion.",
    "mood": "calm and cosy",
    "categories": ["animal"],
}
PROMPTS = {
    "subject": "a ginger cat",
    "general": "A photograph of a ginger cat asleep on a blue cushion.",
    "flux": "A ginger cat sleeps curled on a blue cushion in soft window light.",
    "midjourney": "ginger cat asleep, blue cushion, soft window light",
    "stable_diffusion_positive": "ginger cat, sleeping, blue cushion, soft light",
    "stable_diffusion_negative": "blurry, lowres, watermark",
}


PRODUCT_COPY = {
    "description": "A blue ceramic mug with a ginger cat printed on its side.",
    "tags": ["mug", "Mug", " ginger  cat ", "blue", "ceramic"],
    "alt_text": "Blue ceramic mug with a ginger cat print.",
}
"""What the fake language model writes for ``product_text`` (tags with a repeat to clean)."""


async def stall(fake: Fake, request: Request, seconds: float = 30.0) -> Response:
    """Answer nothing for ``seconds``; count a client that closes the connection meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        if await request.is_disconnected():
            fake.bump("disconnected")
            return Response(status_code=499)
        await asyncio.sleep(0.05)
    return JSONResponse({"error": {"message": "stalled"}}, status_code=504)


def openai_app(fake: Fake) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        seen = await record(fake, request)
        if fake.mode == "stall":
            return await stall(fake, request)
        failed = await failure(fake, "chat")
        if failed is not None:
            return failed
        system = seen.json["messages"][0]["content"]
        if "advertising copy" in system:
            answer: dict[str, Any] = AD_COPY
        elif "product copy" in system:
            asked = json.loads(seen.json["messages"][1]["content"][0]["text"].split(": ", 1)[1])
            answer = {k: PRODUCT_COPY[k] for k in asked["write"]}
        else:
            answer = ANALYSIS if "describe images" in system else PROMPTS
        content = "this is not JSON" if fake.mode == "garbage" else json.dumps(answer)
        return JSONResponse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": seen.json["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            }
        )

    @app.post("/v1/images/edits")
    async def edits(request: Request) -> Response:
        await record(fake, request)
        failed = await failure(fake, "edits")
        if failed is not None:
            return failed
        return images_answer(fake)

    @app.post("/v1/audio/speech")
    async def speech(request: Request) -> Response:
        await record(fake, request)
        failed = await failure(fake, "speech")
        if failed is not None:
            return failed
        if fake.mode == "garbage":
            return Response(b"ID3 not a wav", media_type="audio/mpeg")
        return Response(speech_wav(), media_type="audio/wav")

    @app.post("/v1/images/generations")
    async def generations(request: Request) -> Response:
        await record(fake, request)
        failed = await failure(fake, "generations")
        if failed is not None:
            return failed
        return images_answer(fake)

    return app


def images_answer(fake: Fake) -> Response:
    """The images API's answer: ``fake.output``'s image when set, else the magenta PNG."""
    if fake.mode == "garbage":
        return JSONResponse({"data": [{"b64_json": base64.b64encode(b"nope").decode()}]})
    png = fake.output[0] if fake.output is not None else output_png()
    return JSONResponse(
        {
            "created": 1,
            "data": [{"b64_json": base64.b64encode(png).decode()}],
            "usage": IMAGE_USAGE,
        }
    )


# ---- Replicate -------------------------------------------------------------------------------


def replicate_app(fake: Fake) -> FastAPI:
    app = FastAPI()

    def prediction(pid: str, status: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": pid,
            "status": status,
            "urls": {
                "get": f"{fake.url}/v1/predictions/{pid}",
                "cancel": f"{fake.url}/v1/predictions/{pid}/cancel",
            },
            "output": None,
            "error": None,
        }
        if status == "succeeded":
            body["metrics"] = {"predict_time": PREDICT_TIME}
            ext = fake.output[2] if fake.output is not None else "png"
            body["output"] = (
                [f"{fake.url}/files/{pid}.{ext}"] if fake.mode != "garbage" else ["not a url"]
            )
        if status == "failed":
            body["error"] = "CUDA out of memory"
        return body

    @app.post("/v1/predictions")
    @app.post("/v1/models/{owner}/{model}/predictions")
    async def create(request: Request) -> Response:
        await record(fake, request)
        failed = await failure(fake, "create")
        if failed is not None:
            return failed
        pid = f"p{fake.bump('predictions')}"
        return JSONResponse(prediction(pid, "starting"), status_code=201)

    @app.get("/v1/predictions/{pid}")
    async def get(pid: str, request: Request) -> Response:
        await record(fake, request)
        polls = fake.bump(f"poll:{pid}")
        if fake.mode == "hang":
            return JSONResponse(prediction(pid, "processing"))
        if fake.mode == "fail":
            return JSONResponse(prediction(pid, "failed"))
        return JSONResponse(prediction(pid, "processing" if polls < 2 else "succeeded"))

    @app.post("/v1/predictions/{pid}/cancel")
    async def cancel(pid: str, request: Request) -> Response:
        await record(fake, request)
        return JSONResponse(prediction(pid, "canceled"))

    @app.post("/v1/files")
    async def files(request: Request) -> Response:
        await record(fake, request)
        n = fake.bump("files")
        return JSONResponse(
            {"id": f"f{n}", "urls": {"get": f"{fake.url}/v1/files/f{n}"}}, status_code=201
        )

    @app.get("/files/{name}")
    async def output(name: str, request: Request) -> Response:
        await record(fake, request)
        if fake.output is not None:
            return Response(fake.output[0], media_type=fake.output[1])
        return Response(output_png(80, 120), media_type="image/png")

    return app


# ---- ComfyUI ---------------------------------------------------------------------------------


def comfyui_app(fake: Fake) -> FastAPI:
    app = FastAPI()

    @app.post("/upload/image")
    async def upload(request: Request) -> Response:
        seen = await record(fake, request)
        name = seen.files["image"][0][0]
        return JSONResponse({"name": name, "subfolder": "", "type": "input"})

    @app.post("/prompt")
    async def prompt(request: Request) -> Response:
        await record(fake, request)
        failed = await failure(fake, "prompt")
        if failed is not None:
            return failed
        return JSONResponse({"prompt_id": "pr-1", "number": 1, "node_errors": {}})

    @app.get("/history/{pid}")
    async def history(pid: str, request: Request) -> Response:
        await record(fake, request)
        if fake.bump(f"history:{pid}") < 2 or fake.mode == "hang":
            return JSONResponse({})
        images = [
            {"filename": "preview.png", "subfolder": "", "type": "temp"},
            {"filename": "result_0001.png", "subfolder": "pixelmill", "type": "output"},
        ]
        return JSONResponse(
            {
                pid: {
                    "prompt": [],
                    "outputs": {"9": {"images": images}},
                    "status": {"status_str": "success", "completed": True, "messages": []},
                }
            }
        )

    @app.get("/view")
    async def view(request: Request) -> Response:
        await record(fake, request)
        if fake.mode == "garbage":
            return Response(b"<html>oops</html>", media_type="text/html")
        if fake.output is not None:
            return Response(fake.output[0], media_type=fake.output[1])
        return Response(output_png(64, 64), media_type="image/png")

    @app.post("/queue")
    async def queue(request: Request) -> Response:
        await record(fake, request)
        return JSONResponse({})

    @app.get("/queue")
    async def queue_state(request: Request) -> Response:
        await record(fake, request)
        entry = [1, "pr-1", {}, {"client_id": "x"}, ["9"]]
        if fake.running:
            return JSONResponse({"queue_running": [entry], "queue_pending": []})
        return JSONResponse({"queue_running": [], "queue_pending": [entry]})

    @app.post("/interrupt")
    async def interrupt(request: Request) -> Response:
        await record(fake, request)
        return JSONResponse({})

    return app


@contextmanager
def serve(kind: str) -> Iterator[Fake]:
    """Run the fake ``kind`` (openai, replicate, comfyui) on an ephemeral 127.0.0.1 port."""
    fake = Fake()
    app = {"openai": openai_app, "replicate": replicate_app, "comfyui": comfyui_app}[kind](fake)
    with live_server(app) as url:
        fake.url = url
        yield fake
