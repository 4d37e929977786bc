"""Which catalogued models are in the models folder, and the runner an engine uses for one.

Presence is decided by the file's name, which costs nothing at startup; the sha256 was checked
when ``pixelmill models pull`` put the file there, and ``pixelmill models verify`` checks it again
on demand. A file that fails to open is skipped with a
warning and the next best model (or the offline engine) is used.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from pixelmill.engines.runtime.families.colorizer import Colorizer
from pixelmill.engines.runtime.families.face_restorer import FaceRestorer
from pixelmill.engines.runtime.families.inpainter import Inpainter
from pixelmill.engines.runtime.families.upscaler import Upscaler
from pixelmill.models.catalogue import CATALOGUE, CatalogueEntry, Operation

log = logging.getLogger("pixelmill.models")

Runner = Upscaler | Inpainter | Colorizer | FaceRestorer


@dataclass(frozen=True)
class PresentModel:
    """A catalogued model whose file is in the models folder."""

    entry: CatalogueEntry
    path: Path

    @property
    def name(self) -> str:
        return self.entry.name


def present(folder: Path | None) -> list[PresentModel]:
    """The catalogued files in ``folder``, in catalogue order. A file cut short or not the
    catalogued one shows when it is opened (skipped with a warning) or verified."""
    if folder is None or not folder.is_dir():
        return []
    return [
        PresentModel(entry, folder / entry.file)
        for entry in CATALOGUE
        if (folder / entry.file).is_file()
    ]


def candidates(operation: Operation, folder: Path | None) -> list[PresentModel]:
    """The present models that serve ``operation`` by themselves, best first."""
    usable = [
        m for m in present(folder) if operation in m.entry.operations and m.entry.rank is not None
    ]
    return sorted(usable, key=lambda m: -(m.entry.rank or 0))


def best(operation: Operation, folder: Path | None) -> PresentModel | None:
    """The best catalogued model present in ``folder`` for ``operation``, or ``None``."""
    found = candidates(operation, folder)
    return found[0] if found else None


def runner_for(model: PresentModel) -> Runner:
    """The (not yet loaded) runner of ``model``'s family. Raises ``ValueError`` for a family
    served elsewhere (background removal: ``engines/background/models.py``)."""
    family = model.entry.family
    if family == "real-esrgan":
        return Upscaler(model.path, model.name)
    if family == "lama":
        return Inpainter(model.path, model.name)
    if family == "ddcolor":
        return Colorizer(model.path, model.name)
    if family == "gfpgan":
        return FaceRestorer(model.path, model.name)
    raise ValueError(f"{model.name}: no runner for the {family} family here")


def best_runner(operation: Operation, folder: Path | None) -> Runner | None:
    """The loaded runner of the best present model for ``operation`` that opens and has its
    family's inputs; ``None`` when there is none (the engine then runs offline)."""
    for model in candidates(operation, folder):
        try:
            runner = runner_for(model)
            runner.load()
        except Exception as exc:  # onnxruntime raises its own exception types
            log.warning("PIXELMILL_MODELS_DIR: %s skipped: %s", model.path.name, exc)
            continue
        return runner
    return None
