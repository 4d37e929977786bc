"""The catalogue of open models an operator may pull into ``PIXELMILL_MODELS_DIR``
(:mod:`.catalogue`) and the verified pull (:mod:`.pull`). Both are leaves: they import nothing
of the engines, so engines may read the catalogue.

Which catalogued models are present, and the runner an engine uses for the best one, live with
the runners in :mod:`pixelmill.engines.runtime.families.presence`: engines ask its
:func:`~pixelmill.engines.runtime.families.presence.best_runner` for their operation and fall
back to their offline method when it answers ``None``; serving never downloads anything. The
``pixelmill models`` commands are wiring (:mod:`pixelmill.model_commands`, registered by
:mod:`pixelmill.cli`): they verify files by running them through the engines' runners.

For text, watermark and object removal: ``best_runner("inpaint", models_dir)`` gives an
:class:`~pixelmill.engines.runtime.families.inpainter.Inpainter` (LaMa) or ``None``;
``runner.fill(rgb, mask)`` fills the masked pixels and leaves every other pixel as it came.
"""

from pixelmill.models.catalogue import CATALOGUE, CatalogueEntry, by_file, by_name

__all__ = ["CATALOGUE", "CatalogueEntry", "by_file", "by_name"]
