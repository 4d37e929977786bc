"""The catalogue of open models an operator may pull into ``PIXELMILL_MODELS_DIR``.

Each entry names the upstream file the reference implementation downloads, its size and
sha256 as that implementation (or a published catalogue that pins the same upstream URL) gives
them, its licence and whether that licence allows commercial use. ``docs/models.md`` cites the
file and line each digest comes from. A model whose sha256 could not be found in a source is not
listed: a pull must be able to check what it fetched.

``file`` is the name the file takes in the models folder (for the background-removal models,
rembg's session name, so ``engines/background/models.py`` recognises it); ``url`` is the
upstream release. ``rank`` orders the models of one family for :func:`pixelmill.models.best`
(higher first); ``None``: listed and pullable, never chosen by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Family = Literal["u2net", "isnet", "birefnet", "bria", "lama", "real-esrgan", "gfpgan", "ddcolor"]

Operation = Literal["background_removal", "inpaint", "upscale", "enhance", "colorize"]
"""What a model serves: the engine operation, or ``inpaint`` (text, watermark and object
removal fill their masks through it: :mod:`pixelmill.engines.runtime.families.inpainter`)."""

REMBG = "https://github.com/danielgatis/rembg/releases/download/v0.0.0/"
FACEFUSION = "https://github.com/facefusion/facefusion-assets/releases/download/models-3.0.0/"


@dataclass(frozen=True)
class CatalogueEntry:
    """One pullable model file."""

    name: str
    operations: tuple[Operation, ...]
    family: Family
    file: str
    size: int | None
    """Bytes, where the source states it (``None``: the pull checks the sha256 only)."""
    sha256: str
    licence: str
    commercial_use: bool
    url: str
    digest_source: str
    """Where the sha256 (and size) come from; docs/models.md cites file and line."""
    md5: str | None = None
    """The reference implementation's own md5 where it pins one (rembg): checked as well."""
    rank: int | None = None

    def as_json(self) -> dict[str, Any]:
        """The entry as ``pixelmill models catalog --json`` prints it."""
        return {
            "name": self.name,
            "operations": list(self.operations),
            "family": self.family,
            "file": self.file,
            "size": self.size,
            "sha256": self.sha256,
            "licence": self.licence,
            "commercial_use": self.commercial_use,
            "url": self.url,
            "md5": self.md5,
            "digest_source": self.digest_source,
        }


_STRATA = "strata (Rust model catalogue pinning rembg's release URLs; docs/models.md)"

CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry(
        "birefnet-general",
        ("background_removal",),
        "birefnet",
        "birefnet-general.onnx",
        972_666_916,
        "58f621f00f5d756097615970a88a791584600dcf7c45b18a0a6267535a1ebd3c",
        "MIT",
        True,
        REMBG + "BiRefNet-general-epoch_244.onnx",
        _STRATA,
        md5="7a35a0141cbbc80de11d9c9a28f52697",
        rank=100,
    ),
    CatalogueEntry(
        "bria-rmbg",
        ("background_removal",),
        "bria",
        "bria-rmbg.onnx",
        None,
        "5b486f08200f513f460da46dd701db5fbb47d79b4be4b708a19444bcd4e79958",
        "CC BY-NC 4.0 (BRIA RMBG-2.0; commercial use needs BRIA's agreement)",
        False,
        REMBG + "bria-rmbg-2.0.onnx",
        "rembg rembg/sessions/bria_rmbg.py (sha256 in its download_models)",
        rank=90,
    ),
    CatalogueEntry(
        "isnet-general-use",
        ("background_removal",),
        "isnet",
        "isnet-general-use.onnx",
        178_648_008,
        "60920e99c45464f2ba57bee2ad08c919a52bbf852739e96947fbb4358c0d964a",
        "Apache-2.0",
        True,
        REMBG + "isnet-general-use.onnx",
        _STRATA,
        md5="fc16ebd8b0c10d971d3513d564d01e29",
        rank=80,
    ),
    CatalogueEntry(
        "birefnet-general-lite",
        ("background_removal",),
        "birefnet",
        "birefnet-general-lite.onnx",
        224_005_088,
        "5600024376f572a557870a5eb0afb1e5961636bef4e1e22132025467d0f03333",
        "MIT",
        True,
        REMBG + "BiRefNet-general-bb_swin_v1_tiny-epoch_232.onnx",
        _STRATA,
        md5="4fab47adc4ff364be1713e97b7e66334",
        rank=70,
    ),
    CatalogueEntry(
        "u2net",
        ("background_removal",),
        "u2net",
        "u2net.onnx",
        175_997_641,
        "8d10d2f3bb75ae3b6d527c77944fc5e7dcd94b29809d47a739a7a728a912b491",
        "Apache-2.0",
        True,
        REMBG + "u2net.onnx",
        "a published Rust model catalogue pinning rembg's u2net.onnx (docs/models.md)",
        md5="60024c5c889badc19c04ad937298a77b",
        rank=50,
    ),
    CatalogueEntry(
        "u2netp",
        ("background_removal",),
        "u2net",
        "u2netp.onnx",
        4_574_861,
        "309c8469258dda742793dce0ebea8e6dd393174f89934733ecc8b14c76f4ddd8",
        "Apache-2.0",
        True,
        REMBG + "u2netp.onnx",
        _STRATA + "; checked here against the rembg wheel's copy (md5 = rembg's)",
        md5="8e83ca70e441ab06c318d82300c84806",
        rank=10,
    ),
    CatalogueEntry(
        "lama",
        ("inpaint",),
        "lama",
        "lama_fp32.onnx",
        208_044_816,
        "1faef5301d78db7dda502fe59966957ec4b79dd64e16f03ed96913c7a4eb68d6",
        "Apache-2.0 (LaMa, Samsung AI; ONNX export by Carve)",
        True,
        "https://huggingface.co/Carve/LaMa-ONNX/resolve/main/lama_fp32.onnx",
        "two published catalogues pinning Carve/LaMa-ONNX lama_fp32.onnx (docs/models.md)",
        rank=100,
    ),
    CatalogueEntry(
        "real-esrgan-x2",
        ("upscale",),
        "real-esrgan",
        "real_esrgan_x2.onnx",
        None,
        "7115ba92e8a1bfa63d68558ef006ef3d91273a068d321b1439f8bb1c9179002c",
        "BSD-3-Clause (Real-ESRGAN, Xintao Wang; ONNX export by SceneWorks)",
        True,
        "https://huggingface.co/SceneWorks/real-esrgan-onnx/resolve/"
        "09f741bac80a246b407da3ee902bf5f3291b602f/real_esrgan_x2.onnx",
        "two published projects pinning SceneWorks/real-esrgan-onnx at that revision",
        rank=100,
    ),
    CatalogueEntry(
        "gfpgan-1.4",
        ("enhance",),
        "gfpgan",
        "gfpgan_1.4.onnx",
        None,
        "accc4757b26bdb89b32b4d3500d4f79c9dff97c1dd7c7104bf9dcb95e3311385",
        "Apache-2.0 (GFPGAN, TencentARC)",
        True,
        FACEFUSION + "gfpgan_1.4.onnx",
        "a published face-swap SDK's model registry pinning FaceFusion's gfpgan_1.4.onnx",
        rank=100,
    ),
    CatalogueEntry(
        "codeformer",
        ("enhance",),
        "gfpgan",
        "codeformer.onnx",
        None,
        "21710e7ab61c82683576c428e9c1b6fe1ed419586b7b39e394c3449c294b550f",
        "NTU S-Lab License 1.0 (non-commercial only)",
        False,
        FACEFUSION + "codeformer.onnx",
        "a published face-swap SDK's model registry pinning FaceFusion's codeformer.onnx",
        rank=None,
    ),
    CatalogueEntry(
        "ddcolor-artistic",
        ("colorize",),
        "ddcolor",
        "ddcolor_artistic.onnx",
        980_103_562,
        "adad4b897990d627e139e858e8a6552c1f99e39e49e811d21e8f591803c877f1",
        "Apache-2.0 (DDColor, piddnad; ONNX export by FaceFusion)",
        True,
        "https://huggingface.co/facefusion/models-3.0.0/resolve/"
        "728b9659bd9691bf32cbf7f61af478d94b7ba81e/ddcolor_artistic.onnx",
        "a published colorizer catalogue pinning facefusion/models-3.0.0 at that revision",
        rank=100,
    ),
)
"""Every pullable model, best first within each family."""

FAMILIES: tuple[Family, ...] = (
    "u2net",
    "isnet",
    "birefnet",
    "bria",
    "lama",
    "real-esrgan",
    "gfpgan",
    "ddcolor",
)


def by_name(name: str) -> CatalogueEntry | None:
    """The entry called ``name`` (case-insensitive), or ``None``."""
    wanted = name.strip().lower()
    return next((e for e in CATALOGUE if e.name == wanted), None)


def by_file(file: str) -> CatalogueEntry | None:
    """The entry whose file in the models folder is ``file``, or ``None``."""
    return next((e for e in CATALOGUE if e.file == file), None)
