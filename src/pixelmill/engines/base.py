"""The engine protocol, the base class every engine derives from, and the value types engines
exchange with the operation pipeline and the job runner.

Images cross this boundary as numpy arrays: ``uint8``, shape ``(H, W, 3)`` (RGB) or ``(H, W, 4)``
(RGBA). Decoding, validation, EXIF orientation and encoding are the pipeline's job
(``pixelmill.imaging``); an engine never sees bytes, files, URLs or HTTP.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast, get_args, get_origin

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from pixelmill.engines.runtime.lazy import Lazy

ImageArray = npt.NDArray[np.uint8]
"""An RGB ``(H, W, 3)`` or RGBA ``(H, W, 4)`` uint8 image."""


class EngineError(Exception):
    """The engine could not produce a result for this input (not a bug: e.g. no text found to
    remove is *not* an error, but an input the method cannot handle is). The pipeline turns it
    into a 4xx/422 for the caller and releases the reserved credits."""


@dataclass(frozen=True)
class EngineInputs:
    """What an engine is given: the main image and, for some engines, named extra images
    (for example a colour reference for colorize)."""

    image: ImageArray
    extra: dict[str, ImageArray] = field(default_factory=dict)

    @classmethod
    def none(cls) -> EngineInputs:
        """Inputs for an engine that takes no image (the guided avatar draws from its
        parameters alone): a 1×1 black RGB placeholder, which such engines ignore."""
        return cls(np.zeros((1, 1, 3), dtype=np.uint8))


@dataclass(frozen=True)
class OutputImage:
    """One image an engine produced. ``label`` names it when an engine returns several
    (enhance variants, scene names). ``preferred_format`` is a hint (``png`` when the alpha
    channel matters); the caller's requested output format wins. ``data`` holds JSON-safe facts
    about this one image (an avatar's body landmarks and attributes, say)."""

    pixels: ImageArray
    label: str = "result"
    preferred_format: str | None = None
    score: float | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OutputFile:
    """An output that is not an image: a video, an audio track, a JSON document. ``data``
    holds JSON-safe facts about it (a video's duration, its script), as for images."""

    content: bytes
    content_type: str
    extension: str
    label: str = "result"
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EngineResult:
    """Images (or ``files``: a video, an audio track) and JSON-serialisable facts. ``details``
    always carries ``method``: a short, honest description of what was done (it is shown to
    API users)."""

    images: list[OutputImage]
    details: dict[str, Any]
    files: list[OutputFile] = field(default_factory=list)

    @property
    def primary(self) -> OutputImage | None:
        return self.images[0] if self.images else None


class Engine(Protocol):
    """A capability. ``load`` is idempotent and thread-safe (models load once per process);
    ``validate`` checks parameters cheaply, before anything is charged (raises
    :class:`EngineError`); ``run`` is pure and may be called from several threads at once."""

    name: ClassVar[str]
    Params: ClassVar[type[BaseModel]]

    def load(self) -> None: ...

    def validate(self, params: BaseModel) -> None: ...

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult: ...


@dataclass(frozen=True)
class PlannedImage:
    """One output of a multi-image run, rendered on demand (so a job can store and record each
    before rendering the next, and skip the ones a previous run delivered). ``price`` is what
    delivering it captures; None means the job's even share (what it reserved / its count)."""

    position: int
    label: str
    render: Callable[[], OutputImage]
    price: int | None = None


@dataclass(frozen=True)
class PlannedFile:
    """One non-image output of a job, rendered on demand; otherwise as :class:`PlannedImage`."""

    position: int
    label: str
    render: Callable[[], OutputFile]
    price: int | None = None


Planned = PlannedImage | PlannedFile
"""One planned output of a job: an image (encoded by the runner) or a file (stored as is)."""


class MultiImageEngine(Engine, Protocol):
    """An engine whose outputs are independent images: ``plan`` does the shared preparation
    once and returns one :class:`PlannedImage` per output, in order; rendering one does not
    depend on having rendered the others."""

    def plan(self, inputs: EngineInputs, params: BaseModel) -> list[PlannedImage]: ...


P = TypeVar("P", bound=BaseModel)


class Loadable(Protocol):
    """A model holder with an idempotent, thread-safe ``load()`` (an ``OnnxModel``, say)."""

    def load(self) -> None: ...


class BaseEngine(ABC, Generic[P]):
    """What every engine shares (after immich's ``InferenceModel``): a locked, idempotent
    ``load()`` that runs the subclass's :meth:`_load` once, and ``run()`` = ``load()`` + the
    subclass's typed :meth:`_run`, with the parameters checked to be the engine's own
    ``Params`` model once, here. ``validate`` is a no-op unless :meth:`_validate` says
    otherwise.

    A subclass sets ``name`` and ``Params`` (the model ``P`` names; checked when the class is
    defined) and implements ``_run``. What it loads is either declared in ``models`` or done by
    an overridden :meth:`_load`."""

    name: ClassVar[str]
    Params: ClassVar[type[BaseModel]]
    models: ClassVar[tuple[Loadable, ...]] = ()
    """Model holders the default :meth:`_load` loads."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            origin = get_origin(base)
            if isinstance(origin, type) and issubclass(origin, BaseEngine):
                (model,) = get_args(base)
                if isinstance(model, TypeVar):  # a generic base such as MultiImageBaseEngine
                    continue
                declared = cls.__dict__.get("Params")
                if not (isinstance(declared, type) and issubclass(declared, model)):
                    raise TypeError(f"{cls.__name__}.Params must be {model.__name__}")

    def __init__(self) -> None:
        self._loaded: Lazy[None] = Lazy(self._load)

    def load(self) -> None:
        """Load what the engine needs, once per instance (idempotent, thread-safe)."""
        self._loaded.load()

    def validate(self, params: BaseModel) -> None:
        """Check ``params`` beyond what the model itself checks; raises :class:`EngineError`.
        Cheap and model-free: the pipeline calls it before reserving credits."""
        self._validate(self.typed(params))

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        """Run the engine on ``inputs`` (loading it first if needed)."""
        typed = self.typed(params)
        self.load()
        return self._run(inputs, typed)

    def typed(self, params: BaseModel) -> P:
        """``params`` as this engine's ``Params`` model (``TypeError`` for any other model:
        that is a wiring bug, not a bad request)."""
        if not isinstance(params, self.Params):
            raise TypeError(
                f"{self.name} expects {self.Params.__name__} parameters, "
                f"got {type(params).__name__}"
            )
        return cast(P, params)

    def _load(self) -> None:
        """Load the declared ``models`` (none for classical engines)."""
        for model in self.models:
            model.load()

    def _validate(self, params: P) -> None:
        """Reject parameters the model accepts but the engine cannot honour; default: none."""

    @abstractmethod
    def _run(self, inputs: EngineInputs, params: P) -> EngineResult:
        """The engine's work, on parameters already checked to be its own model."""


class Plan(Protocol):
    """What a multi-image engine's ``_plan`` returns: the planned images (``planned``) and
    whatever else its ``_run`` reports about them (a NamedTuple or a dataclass)."""

    @property
    def planned(self) -> list[PlannedImage]: ...


class MultiImageBaseEngine(BaseEngine[P]):
    """The base of every :class:`MultiImageEngine`: it owns :meth:`plan` (the parameters typed,
    the models loaded, then the subclass's :meth:`_plan`), so an engine writes only ``_plan``
    (the shared preparation, one :class:`PlannedImage` per output) and a ``_run`` built on it."""

    def plan(self, inputs: EngineInputs, params: BaseModel) -> list[PlannedImage]:
        """The outputs of this call, each rendered on demand (raises :class:`EngineError`
        when the input cannot be planned, before anything renders)."""
        typed = self.typed(params)
        self.load()
        return self._plan(inputs, typed).planned

    @abstractmethod
    def _plan(self, inputs: EngineInputs, params: P) -> Plan:
        """The shared preparation and the planned outputs, on typed parameters."""
