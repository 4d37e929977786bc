"""The catalogue of open models an operator may pull into ``PIXELMILL_MODELS_DIR``
(:mod:`.catalogue`), the verified pull (:mod:`.pull`), which of them are present and the runner
an engine uses for the best one (:mod:`.presence`), and the ``pixelmill models`` commands
(:mod:`.cli`). Engines ask :func:`best_runner` for their operation and fall back to their
offline method when it answers ``None``; serving never downloads anything.

For text, watermark and object removal: ``best_runner("inpaint", models_dir)`` gives an
:class:`~pixelmill.engines.runtime.families.inpainter.Inpainter` (LaMa) or ``None``;
``runner.fill(rgb, mask)`` fills the masked pixels and leaves every other pixel as it came.
"""

from pixelmill.models.catalogue import CATALOGUE, CatalogueEntry, by_file, by_name
from pixelmill.models.presence import (
    PresentModel,
    Runner,
    best,
    best_runner,
    candidates,
    present,
    runner_for,
)

__all__ = [
    "CATALOGUE",
    "CatalogueEntry",
    "PresentModel",
    "Runner",
    "best",
    "best_runner",
    "by_file",
    "by_name",
    "candidates",
    "present",
    "runner_for",
]
