"""The ``avatar_guided`` engine: a full-body illustrated person drawn from a text prompt.

There is no generative model. The prompt is read for a fixed set of attributes
(:mod:`~pixelmill.engines.avatar.attributes`); what it leaves open is chosen from the seed; the
person is posed (:mod:`~pixelmill.engines.avatar.skeleton`) and drawn as a flat vector
illustration (:mod:`~pixelmill.engines.avatar.figure`) on a flat backdrop
(:mod:`~pixelmill.engines.avatar.backdrops`). Because the figure is drawn from a skeleton, its
body landmarks are known exactly and are returned with every image.

Output *i* of a call uses seed ``seed + i``: outputs of one call differ, and each is the same
image whatever ``num_outputs`` is.
"""

from __future__ import annotations

from functools import partial
from typing import Any, ClassVar, NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.avatar.attributes import Look, Request, read_request, resolve
from pixelmill.engines.avatar.backdrops import PAINTERS, base_gradient
from pixelmill.engines.avatar.canvas import Canvas, Shape, ellipse
from pixelmill.engines.avatar.figure import Artist
from pixelmill.engines.avatar.skeleton import Body, build_body
from pixelmill.engines.base import (
    EngineInputs,
    EngineResult,
    MultiImageBaseEngine,
    OutputImage,
    PlannedImage,
)
from pixelmill.engines.runtime.layers import to_uint8
from pixelmill.engines.runtime.shadows import footprint_shadow

METHOD = (
    "procedural flat illustration, no generative model: attributes read from the prompt "
    "(unrecognised words listed), the rest chosen from the seed; a posed skeleton drawn as "
    "anti-aliased vector shapes with flat shading on a flat backdrop; landmarks are the "
    "skeleton's joints"
)

FLOOR = 0.93
"""Where the soles stand, as a fraction of the canvas height."""

_HEIGHT_SHARE = {"child": 0.6, "teen": 0.76}
"""How much of the canvas a standing figure fills (adults: :data:`ADULT_SHARE`): children are
drawn smaller so they read as children next to adult avatars."""
ADULT_SHARE = 0.84

_HAIR_ALLOWANCE = {"afro": 0.34, "bun": 0.32, "curly": 0.2}
"""How far (head units) the hair reaches above the skull; other styles 0.12."""


class GuidedAvatarParams(BaseModel):
    """Options for ``avatar_guided``."""

    prompt: str = Field(
        "",
        max_length=2000,
        description=(
            "who to draw, in plain words: presentation (woman, man, non-binary), age, skin "
            "tone, hair colour and style, garments and their colours, pose, build, accessories, "
            "backdrop; words that cannot be used are listed in details.unrecognised"
        ),
    )
    characteristics: dict[str, str] | None = Field(
        None,
        description=(
            "attributes by name, overriding the prompt: gender/presentation, age, skin_tone, "
            "hair_color, hair_style, clothing_color, clothing_type, pose, background, build, "
            "accessories, name, style, expression"
        ),
    )
    num_outputs: int = Field(1, ge=1, le=30, description="how many avatars (output i: seed + i)")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="chooses what the prompt leaves open")
    height: int = Field(
        1024, ge=256, le=2048, description="canvas height in pixels; the width is 3/4 of it"
    )


def variant_seed(seed: int, position: int) -> int:
    """The seed output ``position`` of a call is drawn with."""
    return (seed + position) % 2**32


def look_for(request: Request, seed: int) -> Look:
    """The complete look for one seed (cheap: no drawing)."""
    return resolve(request, np.random.default_rng([seed, 1]))


def avatar_label(look: Look) -> str:
    """A short name for an avatar, e.g. ``"Maya, casual, studio"``."""
    return f"{look.name}, {look.outfit_style}, {look.backdrop}"


def supersampling(height: int) -> int:
    """Drawing resolution factor: 3× for small canvases, 2× up to about 1.5k, then 1× (LINE_AA
    alone) so a 2048-pixel avatar stays within memory and time."""
    if height <= 600:
        return 3
    if height <= 1500:
        return 2
    return 1


def place(body: Body, look: Look, h: int, w: int) -> Body:
    """Scale and position the figure: soles on the floor line, standing height by age group,
    shrunk if raised arms, hair or a wide pose would leave the canvas."""
    x0, y0, x1, _ = body.extent()
    sole = body.pr.sole_y
    top = min(y0, -_HAIR_ALLOWANCE.get(look.hair_style, 0.12))
    u = _HEIGHT_SHARE.get(look.age, ADULT_SHARE) * h / (sole + 0.12)
    u = min(u, (FLOOR - 0.035) * h / (sole - top), 0.94 * w / (x1 - x0))
    oy = FLOOR * h - sole * u
    ox = w / 2 - 0.5 * (x0 + x1) / 2 * u
    return body.placed(u, ox, oy)


def render_avatar(look: Look, seed: int, height: int) -> OutputImage:
    """Draw one avatar: ``height`` × ``3/4·height`` RGB, with its landmarks and attributes."""
    h, w = height, round(height * 3 / 4)
    rng = np.random.default_rng([seed, 2])
    body = place(build_body(look, float(rng.random())), look, h, w)
    color = look.backdrop_color[1]
    canvas = Canvas(base_gradient(look.backdrop, h, w, color), supersampling(height))
    PAINTERS[look.backdrop](canvas, color, FLOOR, rng)
    feet = _footprint(canvas, body)
    footprint_shadow(canvas.rgb, feet.alpha, feet.x0, feet.y0, body.s(0.06) * canvas.ss, 0.22)
    Artist(canvas, body, look).draw()
    pixels = to_uint8(canvas.result(), rng)
    data: dict[str, Any] = {
        "landmarks": body.landmarks(),
        "attributes": look.attributes(),
        "gender": look.presentation,
    }
    return OutputImage(pixels, label=avatar_label(look), data=data)


def _footprint(canvas: Canvas, body: Body) -> Shape:
    """Where the figure's shadow falls: an ellipse under the soles, as wide as the stance."""
    left, right = body.legs[-1].ankle, body.legs[1].ankle
    cx = (left[0] + right[0]) / 2
    half = (right[0] - left[0]) / 2 + 0.55
    x, y = body.p(cx, body.pr.sole_y - 0.02)
    return canvas.shape(ellipse(x, y, body.s(half), body.s(0.13)))


class _Plan(NamedTuple):
    planned: list[PlannedImage]
    request: Request
    unrecognised: list[str]


class GuidedAvatarEngine(MultiImageBaseEngine[GuidedAvatarParams]):
    """``avatar_guided``: ``num_outputs`` illustrated full-body avatars for a prompt.

    A :class:`~pixelmill.engines.base.MultiImageEngine`: :meth:`plan` reads the prompt and
    settles every avatar's look (cheap); each planned image draws one avatar on its own."""

    name: ClassVar[str] = "avatar_guided"
    Params: ClassVar[type[BaseModel]] = GuidedAvatarParams

    def _plan(self, inputs: EngineInputs, params: GuidedAvatarParams) -> _Plan:
        """One planned avatar per output (the input image is ignored)."""
        request, unrecognised = read_request(params.prompt, params.characteristics)
        planned = []
        for i in range(params.num_outputs):
            seed = variant_seed(params.seed, i)
            look = look_for(request, seed)
            planned.append(
                PlannedImage(
                    position=i,
                    label=avatar_label(look),
                    render=partial(render_avatar, look, seed, params.height),
                )
            )
        return _Plan(planned, request, unrecognised)

    def _run(self, inputs: EngineInputs, params: GuidedAvatarParams) -> EngineResult:
        planned, request, unrecognised = self._plan(inputs, params)
        images = [p.render() for p in planned]
        details: dict[str, Any] = {
            "method": METHOD,
            "attributes": request.understood(),
            "unrecognised": unrecognised,
            "seed": params.seed,
            "width": round(params.height * 3 / 4),
            "height": params.height,
            "avatars": [p.label for p in planned],
        }
        return EngineResult(images, details)
