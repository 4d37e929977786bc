"""Background removal: salient-object and person mattes, RGBA cut-outs, and the output controls
(crop, size, scale, position, background, shadow, channels, format, presets) laid over them.

What other capabilities may use is exported here: replace-background takes the subject
``type`` and the output quality, and cuts its subject out with :func:`subject_matte`.
"""

from pixelmill.engines.background.engine import (
    BackgroundRemovalEngine,
    BackgroundRemovalParams,
    MakeTransparentEngine,
    MakeTransparentParams,
)
from pixelmill.engines.background.models import (
    KNOWN_MODELS,
    ModelFile,
    Verification,
    best_model,
    find_models,
    verify_model,
)
from pixelmill.engines.background.options import (
    PRESETS,
    CutoutOutputParams,
    FillParams,
    FormatParams,
    Preset,
    QualityParams,
    SubjectParams,
    SubjectType,
)
from pixelmill.engines.background.regions import COMPILED as REGIONS
from pixelmill.engines.background.subject import SubjectMatte, subject_matte

__all__ = [
    "KNOWN_MODELS",
    "PRESETS",
    "REGIONS",
    "BackgroundRemovalEngine",
    "BackgroundRemovalParams",
    "CutoutOutputParams",
    "FillParams",
    "FormatParams",
    "MakeTransparentEngine",
    "MakeTransparentParams",
    "ModelFile",
    "Preset",
    "QualityParams",
    "SubjectMatte",
    "SubjectParams",
    "SubjectType",
    "Verification",
    "best_model",
    "find_models",
    "subject_matte",
    "verify_model",
]
